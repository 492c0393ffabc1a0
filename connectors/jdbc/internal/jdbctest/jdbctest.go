// Package jdbctest gives a test of the JDBC connectors a fresh place in
// each database this machine runs (see the README): PostgreSQL with trust
// auth and MariaDB with an empty root password, each with a database
// named test, and SQLite in a file. A test needing one skips when it is
// unreachable, except under CI=true, where that is a failure.
package jdbctest

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

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

var testDBSeq atomic.Int64

// Unreachable skips t, or fails it under CI=true, for what it cannot reach.
func Unreachable(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is unreachable under CI: %v", what, err)
	}
	t.Skipf("%s is unreachable: %v", what, err)
}

// UniqueName is a name of prefix no other test of any process takes.
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), testDBSeq.Add(1))
}

// DB is a fresh place in one database for one test: its JDBC URL,
// credentials and a connection, dropped at the end of the test.
type DB struct {
	Dialect  *jdbcdb.Dialect
	URL      string
	User     string
	Password string
	DB       *sql.DB
	// Schema is the PostgreSQL schema or MySQL database that holds the
	// test's tables; empty for SQLite.
	Schema string
}

// Postgres gives the test its own schema in the test database; tables
// are created there (search_path points at it).
func Postgres(t *testing.T) *DB {
	t.Helper()
	base := "jdbc:postgresql://127.0.0.1:5432/test"
	db, _, err := jdbcdb.Open(context.Background(), base, "postgres", "")
	if err != nil {
		Unreachable(t, "PostgreSQL on 127.0.0.1:5432", err)
	}
	schema := UniqueName("t")
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	db.Close()
	url := base + "?search_path=" + schema
	db, d, err := jdbcdb.Open(context.Background(), url, "postgres", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if admin, _, err := jdbcdb.Open(context.Background(), base, "postgres", ""); err == nil {
			admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			admin.Close()
		}
	})
	return &DB{Dialect: d, URL: url, User: "postgres", DB: db, Schema: schema}
}

// MariaDB gives the test its own database.
func MariaDB(t *testing.T) *DB {
	t.Helper()
	base := "jdbc:mariadb://127.0.0.1:3306/test"
	db, _, err := jdbcdb.Open(context.Background(), base, "root", "")
	if err != nil {
		Unreachable(t, "MariaDB on 127.0.0.1:3306", err)
	}
	name := UniqueName("t")
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	db.Close()
	url := "jdbc:mariadb://127.0.0.1:3306/" + name
	db, d, err := jdbcdb.Open(context.Background(), url, "root", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if admin, _, err := jdbcdb.Open(context.Background(), base, "root", ""); err == nil {
			admin.Exec("DROP DATABASE " + name)
			admin.Close()
		}
	})
	return &DB{Dialect: d, URL: url, User: "root", DB: db, Schema: name}
}

// SQLite gives the test a fresh database file.
func SQLite(t *testing.T) *DB {
	t.Helper()
	url := "jdbc:sqlite:" + filepath.Join(t.TempDir(), "test.db")
	db, d, err := jdbcdb.Open(context.Background(), url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &DB{Dialect: d, URL: url, DB: db}
}

// Each runs fn against every dialect, as subtests.
func Each(t *testing.T, fn func(t *testing.T, db *DB)) {
	for _, open := range []struct {
		name string
		fn   func(*testing.T) *DB
	}{{"postgres", Postgres}, {"mariadb", MariaDB}, {"sqlite", SQLite}} {
		t.Run(open.name, func(t *testing.T) { fn(t, open.fn(t)) })
	}
}

// Exec runs query on db, failing t if it fails.
func (db *DB) Exec(t *testing.T, query string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.DB.ExecContext(ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", strings.SplitN(query, "\n", 2)[0], err)
	}
}

// HeldPIDs are the backend PIDs, as pid reads them, of the connections p
// holds for db.
func HeldPIDs[T any](p *jdbcdb.HandOver[T], db *DB, pid func(T) uint32) []uint32 {
	var pids []uint32
	for _, v := range p.Held(jdbcdb.ConnKey(db.URL, db.User, db.Password)) {
		pids = append(pids, pid(v))
	}
	return pids
}

// PGNumeric is PostgreSQL's binary form of the NUMERIC s, as pgx
// encodes it.
func PGNumeric(tb testing.TB, s string) []byte {
	tb.Helper()
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		tb.Fatal(err)
	}
	b, err := pgtype.NewMap().Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, n, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
