package postgrescdc

import "testing"

// TestDB exposes a throwaway database to the package's external tests.
type TestDB struct{ d *testDB }

// NewTestDB creates a database of its own in the shared throwaway cluster.
func NewTestDB(tb testing.TB) *TestDB { return &TestDB{d: newDB(tb)} }

// Exec runs a statement.
func (t *TestDB) Exec(sql string, args ...any) { t.d.exec(sql, args...) }

// Config is a connector config for the database.
func (t *TestDB) Config(prefix, slot string) map[string]string { return t.d.config(prefix, slot) }

// ConfirmedFlush is the slot's confirmed_flush_lsn.
func (t *TestDB) ConfirmedFlush(slot string) int64 { return t.d.confirmedFlush(slot) }
