package servertest

import (
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// PGSchema gives the test a schema of its own, named after prefix, in the
// machine's PostgreSQL (127.0.0.1:5432, database test, trust auth), or
// skips when it is unreachable (fails under CI=true). The schema is
// dropped with the test.
func PGSchema(t testing.TB, prefix string) (*sql.DB, string) {
	t.Helper()
	db, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:5432/test")
	if err == nil {
		err = db.Ping()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is unreachable under CI: %v", err)
		}
		t.Skipf("PostgreSQL is unreachable: %v", err)
	}
	schema := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	return db, schema
}

// MustExec runs a statement or fails the test.
func MustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
