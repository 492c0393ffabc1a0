package postgrescdc

import (
	"fmt"
	"math"

	"github.com/jackc/pglogrepl"
)

// position is the connector's place in the change stream: what Debezium's
// PostgresOffsetContext holds. A zero LSN means "not set" (0/0 is never a
// valid WAL position).
type position struct {
	lsn       pglogrepl.LSN // last event handled
	lsnProc   pglogrepl.LSN // every event at and before this LSN handled
	lsnCommit pglogrepl.LSN // end of the last transaction handled
	txID      int64
	hasTxID   bool
	tsUsec    int64 // commit time of that transaction, µs since the epoch
	hasTS     bool
	msgType   string

	// Snapshot state, as stored.
	snapshot           bool // the offset was written during a snapshot
	lastSnapshotRecord bool
	snapshotCompleted  bool // Debezium 3.0.2+'s snapshot_completed
}

// snapshotDone says whether a stored offset shows a finished snapshot (or
// none at all).
func (p *position) snapshotDone() bool {
	return !p.snapshot || p.lastSnapshotRecord || p.snapshotCompleted
}

// startLSN is where streaming resumes: lsn_proc, else lsn.
func (p *position) startLSN() pglogrepl.LSN {
	if p.lsnProc != 0 {
		return p.lsnProc
	}
	return p.lsn
}

// commitLSN is the end of the last transaction the offset shows as fully
// handled: lsn_commit, else (as Debezium's loader) lsn_proc, else lsn.
func (p *position) commitLSN() pglogrepl.LSN {
	switch {
	case p.lsnCommit != 0:
		return p.lsnCommit
	case p.lsnProc != 0:
		return p.lsnProc
	}
	return p.lsn
}

// flushLSN is what may be confirmed to the slot once this offset is
// committed, as Debezium's commitOffset: lsn_commit, else lsn_proc. A
// snapshot offset flushes nothing.
func (p *position) flushLSN() pglogrepl.LSN {
	if p.lsnCommit != 0 {
		return p.lsnCommit
	}
	return p.lsnProc
}

// midTransaction says whether the offset points into a transaction whose
// first changes were handled: its later changes are still to come.
func (p *position) midTransaction() bool {
	if !p.hasTxID || p.lsnProc == 0 {
		return false
	}
	switch p.msgType {
	case "INSERT", "UPDATE", "DELETE", "TRUNCATE", "MESSAGE", "BEGIN":
		return true
	}
	return false
}

// snapshotOffset is the offset of a snapshot record, as Debezium 2.7 writes
// it: {"lsn","txId","ts_usec","snapshot":true,"last_snapshot_record"}.
func snapshotOffset(lsn pglogrepl.LSN, txID, tsUsec int64, last bool) map[string]any {
	return map[string]any{
		OffsetLSN:                int64(lsn),
		OffsetTxID:               txID,
		OffsetTsUsec:             tsUsec,
		OffsetSnapshot:           true,
		OffsetLastSnapshotRecord: last,
	}
}

// offset returns the streaming offset of a position, with Debezium's keys.
func (p *position) offset() map[string]any {
	m := make(map[string]any, 6)
	if p.lsnProc != 0 {
		m[OffsetLSNProc] = int64(p.lsnProc)
	}
	if p.msgType != "" {
		m[OffsetMessageType] = p.msgType
	}
	if p.lsnCommit != 0 {
		m[OffsetLSNCommit] = int64(p.lsnCommit)
	}
	if p.lsn != 0 {
		m[OffsetLSN] = int64(p.lsn)
	}
	if p.hasTxID {
		m[OffsetTxID] = p.txID
	}
	if p.hasTS {
		m[OffsetTsUsec] = p.tsUsec
	}
	return m
}

// parseOffset reads a stored offset with Debezium's loader's tolerance:
// the LSNs and txId may be any JSON number, ts_usec must be an integer,
// the snapshot flags booleans (or, from Debezium 3, strings).
func parseOffset(m map[string]any) (*position, error) {
	p := &position{}
	var err error
	lsnField := func(key string) pglogrepl.LSN {
		v, ok := m[key]
		if !ok || v == nil || err != nil {
			return 0
		}
		n, e := asNumber(v)
		if e != nil || n < 0 {
			err = fmt.Errorf("the offset's %q must be a non-negative number, got %v", key, v)
			return 0
		}
		return pglogrepl.LSN(n)
	}
	p.lsn = lsnField(OffsetLSN)
	p.lsnProc = lsnField(OffsetLSNProc)
	p.lsnCommit = lsnField(OffsetLSNCommit)
	if v, ok := m[OffsetTxID]; ok && v != nil {
		n, e := asNumber(v)
		if e != nil {
			return nil, fmt.Errorf("the offset's %q must be a number, got %v", OffsetTxID, v)
		}
		p.txID, p.hasTxID = n, true
	}
	if v, ok := m[OffsetTsUsec]; ok && v != nil {
		n, isInt := v.(int64)
		if !isInt {
			return nil, fmt.Errorf("the offset's %q must be a Long, got %v", OffsetTsUsec, v)
		}
		p.tsUsec, p.hasTS = n, true
	}
	if v, ok := m[OffsetMessageType]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return nil, fmt.Errorf("the offset's %q must be a string, got %v", OffsetMessageType, v)
		}
		p.msgType = s
	}
	switch v := m[OffsetSnapshot].(type) {
	case nil:
	case bool:
		p.snapshot = v
	case string:
		// Debezium 3.0.2+: "INITIAL", "BLOCKING", "INCREMENTAL"; "true"
		// and "false" as written by hand.
		p.snapshot = v != "" && v != "false" && v != "FALSE"
	default:
		return nil, fmt.Errorf("the offset's %q must be a boolean, got %v", OffsetSnapshot, v)
	}
	if v, ok := m[OffsetLastSnapshotRecord]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return nil, fmt.Errorf("the offset's %q must be a boolean, got %v", OffsetLastSnapshotRecord, v)
		}
		p.lastSnapshotRecord = b
	}
	switch v := m[OffsetSnapshotCompleted].(type) {
	case bool:
		p.snapshotCompleted = v
	case string:
		p.snapshotCompleted = v == "true"
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

func asNumber(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.Abs(x) > 1<<63 {
			return 0, fmt.Errorf("not an integer")
		}
		return int64(x), nil
	}
	return 0, fmt.Errorf("not a number")
}
