package jdbctest

import "testing"

func TestTestDatabasesAnswer(t *testing.T) {
	Each(t, func(t *testing.T, db *DB) {
		db.Exec(t, "CREATE TABLE ping (id INT)")
		db.Exec(t, "INSERT INTO ping VALUES (1)")
		var n int
		if err := db.DB.QueryRow("SELECT COUNT(*) FROM ping").Scan(&n); err != nil || n != 1 {
			t.Fatalf("count = %d, %v", n, err)
		}
	})
}
