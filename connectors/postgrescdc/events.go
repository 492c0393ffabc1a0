package postgrescdc

import (
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pglogrepl"
)

// sourceInfo is what an event's source block says.
type sourceInfo struct {
	tsUsec    int64 // commit (or snapshot read) time
	snapshot  string
	lsn       pglogrepl.LSN
	lsnCommit pglogrepl.LSN
	txID      int64
	hasTxID   bool
}

// sequence is Debezium's source.sequence: a JSON array of the last commit
// LSN and the event's LSN, as strings (either may be null).
func sequence(lastCommit, lsn pglogrepl.LSN) string {
	b := make([]byte, 0, 48)
	b = append(b, '[')
	for i, l := range []pglogrepl.LSN{lastCommit, lsn} {
		if i > 0 {
			b = append(b, ',')
		}
		if l == 0 {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '"')
		b = strconv.AppendUint(b, uint64(l), 10)
		b = append(b, '"')
	}
	return string(append(b, ']'))
}

func (t *Task) sourceStruct(tbl *tableInfo, si *sourceInfo) *connect.Struct {
	s := connect.NewStruct(sourceSchema)
	s.Put("version", Version)
	s.Put("connector", "postgresql")
	s.Put("name", t.cfg.prefix)
	s.Put("ts_ms", floorDiv(si.tsUsec, 1000))
	if si.snapshot != "" {
		s.Put("snapshot", si.snapshot)
	}
	s.Put("db", t.cfg.dbname)
	s.Put("sequence", sequence(si.lsnCommit, si.lsn))
	s.Put("ts_us", si.tsUsec)
	s.Put("ts_ns", si.tsUsec*1000)
	s.Put("schema", tbl.schema)
	s.Put("table", tbl.name)
	if si.hasTxID {
		s.Put("txId", si.txID)
	}
	if si.lsn != 0 {
		s.Put("lsn", int64(si.lsn))
	}
	return s
}

// envelope builds a change event's value.
func (t *Task) envelope(tbl *tableInfo, op string, before, after *connect.Struct, si *sourceInfo) *connect.Struct {
	e := connect.NewStruct(tbl.envelopeSchema)
	if before != nil {
		e.Put("before", before)
	}
	if after != nil {
		e.Put("after", after)
	}
	e.Put("source", t.sourceStruct(tbl, si))
	e.Put("op", op)
	now := time.Now()
	us := now.UnixMicro()
	e.Put("ts_ms", now.UnixMilli())
	e.Put("ts_us", us)
	e.Put("ts_ns", now.UnixNano())
	return e
}

// changeRecords appends the records of one change: the event, and after
// a delete its tombstone. An update that changed the primary key becomes,
// as in Debezium, a delete of the old key (with its tombstone) and a
// create of the new one.
func (t *Task) changeRecords(dst []*connect.SourceRecord, tbl *tableInfo, op string, before, after row, si *sourceInfo) []*connect.SourceRecord {
	if op == "u" && before != nil && tbl.keySchema != nil && !tbl.sameKey(before, after) {
		dst = t.changeRecords(dst, tbl, "d", before, nil, si)
		return t.changeRecords(dst, tbl, "c", nil, after, si)
	}
	// skipped.operations applies to streaming only: Debezium's snapshot
	// dispatch does not look at it, so "r" there skips nothing.
	if op != "r" && t.cfg.skipped[op] {
		return dst
	}
	var b, a *connect.Struct
	if before != nil {
		b = tbl.valueStruct(before)
	}
	if after != nil {
		a = tbl.valueStruct(after)
	}
	keyRow := after
	if keyRow == nil {
		keyRow = before
	}
	var key any
	var keySchema *connect.Schema
	if tbl.keySchema != nil && keyRow != nil {
		key, keySchema = tbl.keyStruct(keyRow), tbl.keySchema
	}
	dst = append(dst, &connect.SourceRecord{
		SourcePartition: t.partition,
		Topic:           tbl.topic,
		KeySchema:       keySchema,
		Key:             key,
		ValueSchema:     tbl.envelopeSchema,
		Value:           t.envelope(tbl, op, b, a, si),
	})
	if op == "d" && t.cfg.tombstones {
		dst = append(dst, &connect.SourceRecord{
			SourcePartition: t.partition,
			Topic:           tbl.topic,
			KeySchema:       keySchema,
			Key:             key,
		})
	}
	return dst
}

// truncateRecord is Debezium's truncate event: no key (nor key schema),
// an envelope with neither before nor after.
func (t *Task) truncateRecord(tbl *tableInfo, si *sourceInfo) *connect.SourceRecord {
	e := connect.NewStruct(tbl.envelopeSchema)
	e.Put("source", t.sourceStruct(tbl, si))
	e.Put("op", "t")
	now := time.Now()
	e.Put("ts_ms", now.UnixMilli())
	e.Put("ts_us", now.UnixMicro())
	e.Put("ts_ns", now.UnixNano())
	return &connect.SourceRecord{
		SourcePartition: t.partition,
		Topic:           tbl.topic,
		ValueSchema:     tbl.envelopeSchema,
		Value:           e,
	}
}

// heartbeat returns a heartbeat record carrying offset, which is a
// committed position: with transaction.boundary=connector its own Kafka
// transaction ends after it, so that an idle database's heartbeats do not
// hold one open.
func (t *Task) heartbeat(offset map[string]any) *connect.SourceRecord {
	k := connect.NewStruct(heartbeatKeySchema).Put("serverName", t.cfg.prefix)
	v := connect.NewStruct(heartbeatValueSchema).Put("ts_ms", time.Now().UnixMilli())
	zero := int32(0)
	rec := &connect.SourceRecord{
		SourcePartition: t.partition,
		SourceOffset:    offset,
		Topic:           t.cfg.heartbeatTopicStr,
		Partition:       &zero,
		KeySchema:       heartbeatKeySchema,
		Key:             k,
		ValueSchema:     heartbeatValueSchema,
		Value:           v,
	}
	if txn := t.ctx.TransactionContext(); txn != nil {
		txn.CommitTransactionAfter(rec)
	}
	return rec
}
