package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pglogrepl"
)

// pollStream returns the change events read from the slot: as many as are
// ready (up to max.batch.size), else whatever arrives within
// poll.interval.ms.
func (t *Task) pollStream(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.streamErr != nil {
		return nil, t.streamErr
	}
	t.mu.Lock()
	s := t.stream
	t.mu.Unlock()
	if s == nil {
		return nil, nil // stopped
	}
	t.out = make([]*connect.SourceRecord, 0, 64)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for len(t.out) < t.cfg.maxBatch {
		if len(t.pending) > 0 {
			ev := t.pending[0]
			t.pending = t.pending[1:]
			if err := t.handle(ev); err != nil {
				t.streamErr = err
				return nil, err
			}
			continue
		}
		if len(t.out) > 0 {
			select {
			case b, ok := <-s.batches:
				if !ok {
					t.streamErr = t.endedErr(s)
					return t.out, nil
				}
				t.pending = b
				continue
			default:
			}
			break
		}
		if timer == nil {
			timer = time.NewTimer(t.pollWait())
		}
		select {
		case b, ok := <-s.batches:
			if !ok {
				t.streamErr = t.endedErr(s)
				return t.out, nil
			}
			t.pending = b
		case <-ctx.Done():
			return t.out, nil
		case <-timer.C:
			t.idleHeartbeat()
			return t.out, nil
		}
	}
	return t.out, nil
}

func (t *Task) endedErr(s *replStream) error {
	if err := s.failure(); err != nil {
		return err
	}
	if t.runCtx.Err() != nil {
		return t.runCtx.Err()
	}
	return errors.New("the replication stream ended")
}

// handle applies one message of the stream.
func (t *Task) handle(ev walEvent) error {
	if ev.msg == nil {
		if ev.walEnd > t.keepalive {
			t.keepalive = ev.walEnd
		}
		return nil
	}
	switch m := ev.msg.(type) {
	case *pglogrepl.RelationMessage:
		return t.relation(m)
	case *pglogrepl.BeginMessage:
		t.tx = txState{open: true, xid: m.Xid, commitTime: m.CommitTime}
		if t.resume.commitLSN != 0 && m.FinalLSN < t.resume.commitLSN {
			t.tx.skip = true // committed before the offset's commit: handled
			return nil
		}
		if t.resume.midTx && m.Xid == t.resume.xid {
			t.tx.skipUpTo = t.resume.procLSN
		}
		t.advance(ev.walStart, "BEGIN")
	case *pglogrepl.CommitMessage:
		if t.tx.skip {
			t.tx = txState{}
			return nil
		}
		t.tx.commitTime = m.CommitTime
		t.advance(ev.walStart, "COMMIT")
		t.pos.lsnCommit = ev.walStart
		t.resume.midTx = false
		t.tx = txState{}
		if len(t.held) > 0 {
			last := t.held[len(t.held)-1]
			last.SourceOffset = t.pos.offset()
			// transaction.boundary=connector: a database transaction
			// is one Kafka transaction.
			if txn := t.ctx.TransactionContext(); txn != nil {
				txn.CommitTransactionAfter(last)
			}
			t.out = append(t.out, t.held...)
			t.held = t.held[:0]
		}
		if t.cfg.heartbeat > 0 && time.Since(t.lastBeat) >= t.cfg.heartbeat {
			t.out = append(t.out, t.heartbeat(t.pos.offset()))
			t.lastBeat = time.Now()
		}
	case *pglogrepl.InsertMessage:
		return t.change(ev.walStart, "INSERT", m.RelationID, 0, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return t.change(ev.walStart, "UPDATE", m.RelationID, m.OldTupleType, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return t.change(ev.walStart, "DELETE", m.RelationID, m.OldTupleType, m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		if t.cfg.skipped["t"] {
			// Debezium's pgoutput decoder drops the message whole: the
			// position does not move to it.
			return nil
		}
		for _, rel := range m.RelationIDs {
			if err := t.change(ev.walStart, "TRUNCATE", rel, 0, nil, nil); err != nil {
				return err
			}
		}
	}
	// ORIGIN, TYPE and logical decoding messages carry no event.
	return nil
}

// advance moves the position to a handled message at lsn.
func (t *Task) advance(lsn pglogrepl.LSN, msgType string) {
	t.pos.lsn, t.pos.lsnProc, t.pos.msgType = lsn, lsn, msgType
	t.pos.txID, t.pos.hasTxID = int64(t.tx.xid), true
	t.pos.tsUsec, t.pos.hasTS = t.tx.commitTime.UnixMicro(), true
}

// relation (re)builds a table's schemas from pgoutput's description of it,
// with the nullability and primary key the catalog has.
func (t *Task) relation(m *pglogrepl.RelationMessage) error {
	cols := make([]catalogColumn, len(m.Columns))
	for i, c := range m.Columns {
		cols[i] = catalogColumn{name: c.Name, typ: c.DataType, typmod: c.TypeModifier}
	}
	var pk []string
	if t.cfg.captured(m.Namespace, m.RelationName) {
		ctx, cancel := context.WithTimeout(t.runCtx, 30*time.Second)
		defer cancel()
		notNull, err := t.cat.notNull(ctx, m.RelationID)
		if err != nil {
			return fmt.Errorf("reading the columns of %s.%s: %w", m.Namespace, m.RelationName, err)
		}
		for i := range cols {
			cols[i].notNull = notNull[cols[i].name]
		}
		if pk, err = t.cat.primaryKey(ctx, m.RelationID); err != nil {
			return fmt.Errorf("reading the primary key of %s.%s: %w", m.Namespace, m.RelationName, err)
		}
	}
	tbl, err := buildTable(t.cfg, t.types, m.RelationID, m.Namespace, m.RelationName, cols, pk)
	if err != nil {
		return err
	}
	t.rels[m.RelationID] = tbl
	return nil
}

// change turns an insert, update or delete into records. The records are
// held until the next message shows whether a later change shares their
// LSN (a multi-row insert): only a record after which nothing at its LSN
// remains carries an offset, and the last of a transaction carries the
// commit's.
func (t *Task) change(lsn pglogrepl.LSN, msgType string, rel uint32, oldType uint8, oldTuple, newTuple *pglogrepl.TupleData) error {
	if t.tx.skip || (t.tx.skipUpTo != 0 && lsn <= t.tx.skipUpTo) {
		return nil
	}
	if len(t.held) > 0 {
		if lsn != t.heldLSN {
			t.held[len(t.held)-1].SourceOffset = t.heldOff
		}
		t.out = append(t.out, t.held...)
		t.held = t.held[:0]
	}
	lastCommit := t.pos.lsnCommit
	t.advance(lsn, msgType)
	tbl := t.rels[rel]
	if tbl == nil {
		return fmt.Errorf("change at %s for relation %d, whose description pgoutput did not send", lsn, rel)
	}
	if !tbl.captured {
		return nil
	}
	if msgType == "TRUNCATE" {
		si := &sourceInfo{tsUsec: t.pos.tsUsec, lsn: lsn, lsnCommit: lastCommit, txID: t.pos.txID, hasTxID: true}
		t.held = append(t.held, t.truncateRecord(tbl, si))
		t.heldLSN, t.heldOff = lsn, t.pos.offset()
		return nil
	}
	var before, after row
	var err error
	if oldTuple != nil && (oldType == 'K' || oldType == 'O') {
		if before, err = t.tupleRow(tbl, oldTuple, nil); err != nil {
			return fmt.Errorf("%s at %s in %s: %w", msgType, lsn, tbl.fqn(), err)
		}
	}
	if newTuple != nil {
		if after, err = t.tupleRow(tbl, newTuple, before); err != nil {
			return fmt.Errorf("%s at %s in %s: %w", msgType, lsn, tbl.fqn(), err)
		}
	}
	op := "c"
	switch msgType {
	case "UPDATE":
		op = "u"
	case "DELETE":
		op = "d"
	}
	if op == "u" && oldType == 'K' && before != nil && tbl.keySchema != nil && tbl.sameKey(before, after) {
		// Only the key columns were sent; Debezium gives no before then.
		before = nil
	}
	si := &sourceInfo{tsUsec: t.pos.tsUsec, lsn: lsn, lsnCommit: lastCommit, txID: t.pos.txID, hasTxID: true}
	t.held = t.changeRecords(t.held, tbl, op, before, after, si)
	t.heldLSN, t.heldOff = lsn, t.pos.offset()
	return nil
}

// tupleRow converts pgoutput's tuple to a row. An unchanged TOASTed value
// (not sent) is the old row's value when there is one, else Debezium's
// unavailable.value.placeholder.
func (t *Task) tupleRow(tbl *tableInfo, tup *pglogrepl.TupleData, old row) (row, error) {
	r := make(row, len(tbl.cols))
	for i, c := range tbl.cols {
		if c.tupleIdx >= len(tup.Columns) {
			continue
		}
		tc := tup.Columns[c.tupleIdx]
		switch tc.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			if old != nil && old[i] != nil {
				r[i] = old[i]
			} else {
				r[i] = t.placeholder(c)
			}
		case pglogrepl.TupleDataTypeText:
			v, err := convertText(c, tc.Data, true)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c.name, err)
			}
			r[i] = v
		default:
			return nil, fmt.Errorf("column %s: unexpected tuple data type %q", c.name, tc.DataType)
		}
	}
	return r, nil
}

func (t *Task) placeholder(c column) any {
	switch c.mapper.schema.Type {
	case connect.TypeString:
		return t.cfg.placeholder
	case connect.TypeBytes:
		if c.mapper.schema.Name == "" {
			return []byte(t.cfg.placeholder)
		}
	case connect.TypeArray:
		if c.mapper.schema.Value.Type == connect.TypeString {
			return []any{t.cfg.placeholder}
		}
	}
	return nil
}

// idleHeartbeat emits a heartbeat when the stream is idle and the
// interval passed. Every transaction that committed before the server's
// last keepalive position was received, so the heartbeat's offset moves
// there: committing it lets the slot release the WAL of changes to tables
// the connector does not capture.
func (t *Task) idleHeartbeat() {
	if t.cfg.heartbeat <= 0 || time.Since(t.lastBeat) < t.cfg.heartbeat || t.tx.open || len(t.held) > 0 {
		return
	}
	if k := t.keepalive; k > t.pos.lsnProc && k > t.pos.lsn && k > t.pos.lsnCommit {
		t.pos.lsn, t.pos.lsnProc, t.pos.lsnCommit, t.pos.msgType = k, k, k, "COMMIT"
	}
	t.out = append(t.out, t.heartbeat(t.pos.offset()))
	t.lastBeat = time.Now()
}
