package sink

import (
	"errors"

	"github.com/connectd/connectd/connect"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// refusedRow tells whether the database refused a row for what it holds
// (a constraint it breaks, a value it cannot take) rather than for the
// connection or the statement: writing the rows one by one then finds
// which, and the others can be written.
func refusedRow(err error) bool {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		// Class 22: data exception; class 23: integrity constraint
		// violation.
		return len(pe.Code) == 5 && (pe.Code[:2] == "22" || pe.Code[:2] == "23")
	}
	if me, ok := errors.AsType[*mysql.MySQLError](err); ok {
		switch me.Number {
		case 1048, // ER_BAD_NULL_ERROR
			1062,       // ER_DUP_ENTRY
			1264,       // ER_WARN_DATA_OUT_OF_RANGE
			1292,       // ER_TRUNCATED_WRONG_VALUE
			1366,       // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
			1406,       // ER_DATA_TOO_LONG
			1451, 1452, // foreign keys
			1690, // ER_DATA_OUT_OF_RANGE
			3819, // MySQL's ER_CHECK_CONSTRAINT_VIOLATED
			4025: // MariaDB's ER_CONSTRAINT_FAILED
			return true
		}
		return false
	}
	if se, ok := errors.AsType[*sqlite.Error](err); ok {
		switch se.Code() & 0xff {
		case 19, 20: // SQLITE_CONSTRAINT, SQLITE_MISMATCH
			return true
		}
	}
	return false
}

// isolate writes the uncommitted records one by one, each in a
// transaction of its own, after their batch failed with err, a row the
// database refused: each record it refuses again goes to the errant
// record reporter and is passed over, its offset committed with the
// others. It returns the first other failure of a write, or what the
// reporter returned (errors.tolerance=none), with the records from that
// one on still uncommitted.
func (t *Task) isolate(reporter connect.ErrantRecordReporter, err error) (writeErr, reportErr error) {
	t.log.Warn("JDBC sink batch refused; writing its records one by one to report the failing ones", "records", len(t.uncommitted), "error", err)
	all := t.uncommitted
	t.uncommitted = nil
	for i := range all {
		t.uncommitted = append(t.uncommitted[:0], all[i])
		t.processed = 0
		werr := t.flushAndCommit()
		if werr == nil {
			continue
		}
		t.rollback()
		if !refusedRow(werr) {
			t.uncommitted = append(t.uncommitted[:0], all[i:]...)
			return werr, nil
		}
		r := all[i]
		if rerr := reporter.Report(r, werr); rerr != nil {
			t.uncommitted = append(t.uncommitted[:0], all[i:]...)
			return nil, rerr
		}
		tp := connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if off, ok := t.committed[tp]; !ok || r.Offset+1 > off {
			t.committed[tp] = r.Offset + 1
		}
	}
	t.uncommitted = t.uncommitted[:0]
	t.processed = 0
	return nil, nil
}
