package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The databases this machine runs (see the README): PostgreSQL with trust
// auth and MariaDB with an empty root password, each with a database
// named test. A test needing one skips when it is unreachable, except
// under CI=true, where that is a failure.

var testDBSeq atomic.Int64

func unreachable(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is unreachable under CI: %v", what, err)
	}
	t.Skipf("%s is unreachable: %v", what, err)
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), testDBSeq.Add(1))
}

// testDB is a fresh place in one database for one test: its JDBC URL,
// credentials and a connection, dropped at the end of the test.
type testDB struct {
	Dialect  *Dialect
	URL      string
	User     string
	Password string
	DB       *sql.DB
	// Schema is the PostgreSQL schema or MySQL database that holds the
	// test's tables; empty for SQLite.
	Schema string
}

// postgresDB gives the test its own schema in the test database; tables
// are created there (search_path points at it).
func postgresDB(t *testing.T) *testDB {
	t.Helper()
	base := "jdbc:postgresql://127.0.0.1:5432/test"
	db, _, err := Open(context.Background(), base, "postgres", "")
	if err != nil {
		unreachable(t, "PostgreSQL on 127.0.0.1:5432", err)
	}
	schema := uniqueName("t")
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	db.Close()
	url := base + "?search_path=" + schema
	db, d, err := Open(context.Background(), url, "postgres", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if admin, _, err := Open(context.Background(), base, "postgres", ""); err == nil {
			admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		}
	})
	return &testDB{Dialect: d, URL: url, User: "postgres", DB: db, Schema: schema}
}

// mariaDB gives the test its own database.
func mariaDB(t *testing.T) *testDB {
	t.Helper()
	base := "jdbc:mariadb://127.0.0.1:3306/test"
	db, _, err := Open(context.Background(), base, "root", "")
	if err != nil {
		unreachable(t, "MariaDB on 127.0.0.1:3306", err)
	}
	name := uniqueName("t")
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	db.Close()
	url := "jdbc:mariadb://127.0.0.1:3306/" + name
	db, d, err := Open(context.Background(), url, "root", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if admin, _, err := Open(context.Background(), base, "root", ""); err == nil {
			admin.Exec("DROP DATABASE " + name)
			admin.Close()
		}
	})
	return &testDB{Dialect: d, URL: url, User: "root", DB: db, Schema: name}
}

// sqliteDB gives the test a fresh database file.
func sqliteDB(t *testing.T) *testDB {
	t.Helper()
	url := "jdbc:sqlite:" + filepath.Join(t.TempDir(), "test.db")
	db, d, err := Open(context.Background(), url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &testDB{Dialect: d, URL: url, DB: db}
}

// eachDB runs fn against every dialect, as subtests.
func eachDB(t *testing.T, fn func(t *testing.T, db *testDB)) {
	for _, open := range []struct {
		name string
		fn   func(*testing.T) *testDB
	}{{"postgres", postgresDB}, {"mariadb", mariaDB}, {"sqlite", sqliteDB}} {
		t.Run(open.name, func(t *testing.T) { fn(t, open.fn(t)) })
	}
}

func (db *testDB) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.DB.ExecContext(ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", strings.SplitN(query, "\n", 2)[0], err)
	}
}

func TestTestDatabasesAnswer(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE ping (id INT)")
		db.exec(t, "INSERT INTO ping VALUES (1)")
		var n int
		if err := db.DB.QueryRow("SELECT COUNT(*) FROM ping").Scan(&n); err != nil || n != 1 {
			t.Fatalf("count = %d, %v", n, err)
		}
	})
}
