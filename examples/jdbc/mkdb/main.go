// Command mkdb creates the quickstart's SQLite database: a shop with an
// orders table, so that the JDBC pipeline has something to read without a
// database server installed. Run it again to start over.
package main

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"
)

func main() {
	path := filepath.Join("connectd-data", "jdbc", "shop.db")
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	os.Remove(path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE orders (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			customer TEXT NOT NULL,
			amount DECIMAL(10,2) NOT NULL,
			updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
		)`,
	}
	for i := 1; i <= 1042; i++ {
		stmts = append(stmts, fmt.Sprintf(
			`INSERT INTO orders (customer, amount, updated_at) VALUES ('customer-%d', %d.%02d, '2024-07-10 14:30:00')`,
			i%97, 10+i%90, i%100))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			log.Fatalf("%s: %v", s, err)
		}
	}
	fmt.Printf("created %s with 1042 orders\n", path)
}
