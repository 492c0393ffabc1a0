package postgrescdc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// snapshotState reads the captured tables, one after the other, in the
// snapshot transaction.
type snapshotState struct {
	open   bool // the snapshot transaction is open
	lsn    pglogrepl.LSN
	txID   int64
	tables []*tableInfo
	next   int // index of the next table to read

	rr    *pgconn.ResultReader
	table *tableInfo
	first bool // the next row read is the first of its table

	cur     *snapRow // read ahead, not emitted yet
	emitted int64
}

type snapRow struct {
	table        *tableInfo
	values       row
	firstInTable bool
	tsUsec       int64
}

// beginSnapshot opens the snapshot transaction with the exported snapshot
// and lists the tables to read.
func (t *Task) beginSnapshot(ctx context.Context, exported string, lsn pglogrepl.LSN) error {
	exec := func(sql string) error {
		_, err := t.meta.PgConn().Exec(ctx, sql).ReadAll()
		return err
	}
	if err := exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("starting the snapshot transaction: %w", err)
	}
	s := &snapshotState{open: true, lsn: lsn}
	t.snap = s
	if err := exec("SET TRANSACTION SNAPSHOT " + quoteLiteral(exported)); err != nil {
		return fmt.Errorf("importing the slot's snapshot %s: %w", exported, err)
	}
	if err := t.meta.QueryRow(ctx, "SELECT txid_current()").Scan(&s.txID); err != nil {
		return fmt.Errorf("reading the snapshot's transaction id: %w", err)
	}
	refs, err := t.cat.listTables(ctx)
	if err != nil {
		return fmt.Errorf("listing the tables: %w", err)
	}
	for _, r := range refs {
		if !t.cfg.captured(r.schema, r.name) {
			continue
		}
		schema, name, cols, pk, err := t.cat.tableColumns(ctx, r.oid)
		if err != nil {
			return err
		}
		tbl, err := buildTable(t.cfg, t.types, r.oid, schema, name, cols, pk)
		if err != nil {
			return err
		}
		s.tables = append(s.tables, tbl)
	}
	names := make([]string, len(s.tables))
	for i, tb := range s.tables {
		names[i] = tb.fqn()
	}
	t.log.Info("Snapshotting", "lsn", lsn, "txId", s.txID, "tables", strings.Join(names, ", "))
	return nil
}

// nextRow reads the next row of the snapshot, moving to the next table when
// one ends; nil at the end.
func (t *Task) nextRow(ctx context.Context) (*snapRow, error) {
	s := t.snap
	for {
		if s.rr == nil {
			if s.next >= len(s.tables) {
				return nil, nil
			}
			tbl := s.tables[s.next]
			s.next++
			list := make([]string, len(tbl.allCols))
			for i, c := range tbl.allCols {
				list[i] = quoteIdent(c)
			}
			sel := "*"
			if len(list) > 0 {
				sel = strings.Join(list, ", ")
			}
			q := "SELECT " + sel + " FROM " + quoteIdent(tbl.schema) + "." + quoteIdent(tbl.name)
			t.log.Info("Exporting data from table", "table", tbl.fqn())
			s.rr = t.meta.PgConn().ExecParams(ctx, q, nil, nil, nil, nil)
			s.table, s.first = tbl, true
		}
		if s.rr.NextRow() {
			vals := s.rr.Values()
			r := make(row, len(s.table.cols))
			for i, c := range s.table.cols {
				v, err := convertText(c, vals[c.tupleIdx], true)
				if err != nil {
					return nil, fmt.Errorf("table %s, column %s: %w", s.table.fqn(), c.name, err)
				}
				r[i] = v
			}
			first := s.first
			s.first = false
			return &snapRow{table: s.table, values: r, firstInTable: first, tsUsec: time.Now().UnixMicro()}, nil
		}
		_, err := s.rr.Close()
		s.rr = nil
		if err != nil {
			return nil, fmt.Errorf("reading table %s: %w", s.table.fqn(), err)
		}
	}
}

// convertText converts a column's text; present is false for a NULL.
func convertText(c column, b []byte, present bool) (any, error) {
	if b == nil || !present {
		return nil, nil
	}
	v, err := c.conv(b)
	if err != nil {
		if isInfinity(err) {
			return nil, nil
		}
		return nil, err
	}
	return v, nil
}

// pollSnapshot returns the next snapshot records. Each carries Debezium's
// snapshot offset; the last one says last_snapshot_record=true, after
// which the task streams from the snapshot's LSN.
func (t *Task) pollSnapshot(ctx context.Context) ([]*connect.SourceRecord, error) {
	s := t.snap
	out := make([]*connect.SourceRecord, 0, min(t.cfg.maxBatch, 1024))
	if s.cur == nil && s.emitted == 0 {
		var err error
		if s.cur, err = t.nextRow(t.runCtx); err != nil {
			return nil, err
		}
	}
	for s.cur != nil && len(out) < t.cfg.maxBatch && ctx.Err() == nil {
		nxt, err := t.nextRow(t.runCtx)
		if err != nil {
			return nil, err
		}
		cur := s.cur
		lastOverall := nxt == nil
		lastInTable := lastOverall || nxt.table != cur.table
		marker := "true"
		switch {
		case lastOverall:
			marker = "last"
		case s.emitted == 0:
			marker = "first"
		case lastInTable:
			marker = "last_in_data_collection"
		case cur.firstInTable:
			marker = "first_in_data_collection"
		}
		si := &sourceInfo{tsUsec: cur.tsUsec, snapshot: marker, lsn: s.lsn, txID: s.txID, hasTxID: true}
		n := len(out)
		out = t.changeRecords(out, cur.table, "r", nil, cur.values, si)
		out[n].SourceOffset = snapshotOffset(s.lsn, s.txID, cur.tsUsec, lastOverall)
		s.emitted++
		s.cur = nxt
	}
	// transaction.boundary=connector: a snapshot's batch is a Kafka
	// transaction.
	if txn := t.ctx.TransactionContext(); txn != nil && len(out) > 0 {
		txn.CommitTransaction()
	}
	if s.cur == nil {
		if err := t.endSnapshot(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// endSnapshot commits the snapshot transaction and starts streaming from
// the snapshot's LSN (initial_only: stops).
func (t *Task) endSnapshot() error {
	s := t.snap
	if s.open {
		if _, err := t.meta.PgConn().Exec(t.runCtx, "COMMIT").ReadAll(); err != nil {
			return fmt.Errorf("ending the snapshot transaction: %w", err)
		}
		s.open = false
	}
	t.log.Info("Snapshot completed", "records", s.emitted, "lsn", s.lsn)
	if t.cfg.snapshotMode == SnapshotInitialOnly {
		t.phase = phaseIdle
		if t.repl != nil {
			t.repl.Close(context.Background())
			t.repl = nil
		}
		return nil
	}
	t.startLSN = s.lsn
	// The snapshot holds every transaction that committed before its LSN:
	// the streaming offsets say so with lsn_commit, so that a change of a
	// transaction that began before it (and so has a lower LSN) is never
	// taken for a position the slot has passed.
	t.pos = position{lsn: s.lsn, lsnCommit: s.lsn, txID: s.txID, hasTxID: true, tsUsec: time.Now().UnixMicro(), hasTS: true}
	t.resume = resumeFilter{}
	return t.startStreaming()
}
