package sink

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// sinkReporter records the records reported to it, and answers err.
type sinkReporter struct {
	mu      sync.Mutex
	offsets []int64
	errs    []error
	err     error
}

func (r *sinkReporter) Report(rec connect.SinkRecord, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offsets = append(r.offsets, rec.Offset)
	r.errs = append(r.errs, err)
	return r.err
}

// sinkRefusedBatch is a batch whose second record breaks a check and
// whose third a primary key.
func sinkRefusedBatch() []connect.SinkRecord {
	return []connect.SinkRecord{
		sinkOrder(0, 0, 1, "apple", 10),
		sinkOrder(0, 1, 2, "pear", -5),
		sinkOrder(0, 2, 1, "again", 11),
		sinkOrder(0, 3, 3, "plum", 30),
	}
}

func sinkRefusingTable(t *testing.T, db *jdbctest.DB) {
	db.Exec(t, "CREATE TABLE orders (id INT PRIMARY KEY, name VARCHAR(100), qty BIGINT CHECK (qty >= 0))")
}

// Rows the database refuses go to the errant record reporter, and the
// batch's other rows are written and committed.
func TestSinkReportsRefusedRows(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkRefusingTable(t, db)
		task, ctx := sinkStart(t, db, sinkProps(db, "pk.mode", "record_key", "batch.size", "10"))
		rep := &sinkReporter{}
		ctx.reporter = rep
		sinkPut(t, task, sinkRefusedBatch()...)
		offs := sinkCommit(t, task)
		if got := offs[connect.TopicPartition{Topic: "orders", Partition: 0}]; got != 4 {
			t.Errorf("committed offset %d, want 4", got)
		}
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty FROM orders"), "1|apple|10", "3|plum|30")
		if !slices.Equal(rep.offsets, []int64{1, 2}) {
			t.Fatalf("reported offsets %v, want [1 2]", rep.offsets)
		}
		for _, err := range rep.errs {
			if !refusedRow(err) {
				t.Errorf("reported %v, not the database's refusal", err)
			}
		}
		// The task goes on writing as before.
		sinkPut(t, task, sinkOrder(0, 4, 4, "fig", 40))
		sinkCommit(t, task)
		if n := sinkCount(t, db, "orders"); n != 3 {
			t.Errorf("%d rows, want 3", n)
		}
	})
}

// Without a reporter a refused row fails the task, as before; a reporter
// that answers an error (errors.tolerance=none) fails it once the row
// was reported, and nothing of the batch after it is committed.
func TestSinkRefusedRowsWithoutTolerance(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkRefusingTable(t, db)
		task, ctx := sinkStart(t, db, sinkProps(db, "pk.mode", "record_key", "batch.size", "10"))
		sinkPut(t, task, sinkRefusedBatch()...)
		if _, err := task.PreCommit(nil); err == nil || !refusedRow(err) {
			t.Fatalf("PreCommit without a reporter: %v", err)
		}
		if n := sinkCount(t, db, "orders"); n != 0 {
			t.Errorf("%d rows after the failure", n)
		}
		rep := &sinkReporter{err: errors.New("Tolerance exceeded in error handler")}
		ctx.reporter = rep
		sinkPut(t, task, sinkRefusedBatch()...)
		if _, err := task.PreCommit(nil); err == nil || err.Error() != "Tolerance exceeded in error handler" {
			t.Fatalf("PreCommit with tolerance none: %v", err)
		}
		if !slices.Equal(rep.offsets, []int64{1}) {
			t.Errorf("reported offsets %v, want [1]", rep.offsets)
		}
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty FROM orders"), "1|apple|10")
		if got := ctx.rewinds[connect.TopicPartition{Topic: "orders", Partition: 0}]; got != 1 {
			t.Errorf("rewound to %d, want 1", got)
		}
	})
}

func TestRefusedRow(t *testing.T) {
	if refusedRow(errors.New("connection reset")) || refusedRow(nil) {
		t.Error("a connection's failure is not a refused row")
	}
}
