package sink

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL's fast path. A plain INSERT of many rows runs row by row in
// the server, several times slower than COPY, which loads rows in bulk.
// When every column of a batch has a type COPY can take our values in,
// the sink writes insert.mode=insert batches with COPY (in the same
// transaction: same rows, same constraints, same row triggers; only
// rules, which COPY ignores, differ) and tries upsert batches with COPY
// first, inside a savepoint: batches of new keys are then loaded in bulk,
// and a COPY that meets an existing key (unique_violation) is rolled back
// to the savepoint and its batches written with INSERT ... ON CONFLICT
// instead. After such a miss the next batches of the table go straight to
// ON CONFLICT, for a number of batches that doubles with each miss.

// sinkCopyTypes lists, per kind, the column types COPY takes our values in.
var sinkCopyTypes = map[sinkKind][]uint32{
	sinkKindInt:       {pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID},
	sinkKindFloat32:   {pgtype.Float4OID, pgtype.Float8OID},
	sinkKindFloat64:   {pgtype.Float4OID, pgtype.Float8OID},
	sinkKindBool:      {pgtype.BoolOID},
	sinkKindString:    {pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID},
	sinkKindBytes:     {pgtype.ByteaOID},
	sinkKindDecimal:   {pgtype.NumericOID},
	sinkKindDate:      {pgtype.DateOID},
	sinkKindTime:      {pgtype.TimeOID},
	sinkKindTimestamp: {pgtype.TimestampOID, pgtype.TimestamptzOID},
}

// sinkCanCopy reports whether every column can be loaded with COPY.
func sinkCanCopy(cfg *sinkConfig, d *jdbcdb.Dialect, cols []*sinkColumn, info *sinkTableInfo) bool {
	if d != jdbcdb.PostgreSQL || !cfg.quote || cfg.insertMode == sinkModeUpdate || info == nil || info.kind == "VIEW" {
		// Unquoted names fold to lower case; COPY's are quoted. Views
		// take INSERTs only.
		return false
	}
	for _, c := range cols {
		oid, ok := info.types[c.name]
		if !ok {
			return false
		}
		found := false
		for _, t := range sinkCopyTypes[c.kind] {
			found = found || t == oid
		}
		if !found {
			return false
		}
	}
	return true
}

// sinkCopyArg is sinkArg for the COPY path: values in the binary types
// pgx encodes for the columns sinkCanCopy accepted. INSERT ... ON
// CONFLICT takes the same values.
func sinkCopyArg(cfg *sinkConfig, c *sinkColumn, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.kind {
	case sinkKindDecimal:
		x, ok := v.(*connect.Decimal)
		if !ok || x.Unscaled == nil {
			break
		}
		return pgtype.Numeric{Int: new(big.Int).Set(x.Unscaled), Exp: -x.Scale, Valid: true}, nil
	case sinkKindDate:
		t, ok := v.(time.Time)
		if !ok {
			break
		}
		t = t.In(cfg.dateLoc)
		return pgtype.Date{Time: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), Valid: true}, nil
	case sinkKindTime:
		t, ok := v.(time.Time)
		if !ok {
			break
		}
		t = t.In(cfg.loc)
		us := int64(t.Hour())*3600_000_000 + int64(t.Minute())*60_000_000 + int64(t.Second())*1_000_000 + int64(t.Nanosecond()/1000)
		return pgtype.Time{Microseconds: us, Valid: true}, nil
	case sinkKindFloat32:
		if x, ok := v.(float32); ok {
			return float64(x), nil
		}
	}
	return sinkArg(jdbcdb.PostgreSQL, cfg, c, v)
}

// pgEpoch is PostgreSQL's epoch, 2000-01-01, in Unix microseconds.
const pgEpochMicros = 946684800_000_000

// sinkCopyEncoder writes rows in COPY's binary format, straight from the
// Connect values: no boxing of each value for a driver.
type sinkCopyEncoder struct {
	buf []byte
	m   *pgtype.Map // for numeric
}

func (e *sinkCopyEncoder) u32(v uint32) { e.buf = binary.BigEndian.AppendUint32(e.buf, v) }
func (e *sinkCopyEncoder) u64(v uint64) { e.buf = binary.BigEndian.AppendUint64(e.buf, v) }

// field appends one value of column c, whose type is oid.
func (e *sinkCopyEncoder) field(cfg *sinkConfig, c *sinkColumn, oid uint32, v any) error {
	if v == nil {
		e.u32(0xffffffff)
		return nil
	}
	bad := func() error {
		return sinkDataErrorf("Field '%s' has schema %s but holds a %T value", c.name, sinkSchemaDesc(c.schema), v)
	}
	switch c.kind {
	case sinkKindInt:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case int32:
			n = int64(x)
		case int16:
			n = int64(x)
		case int8:
			n = int64(x)
		default:
			return bad()
		}
		switch oid {
		case pgtype.Int2OID:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return sinkDataErrorf("Field '%s' holds %d, out of range for a smallint column", c.name, n)
			}
			e.u32(2)
			e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(n))
		case pgtype.Int4OID:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return sinkDataErrorf("Field '%s' holds %d, out of range for an integer column", c.name, n)
			}
			e.u32(4)
			e.u32(uint32(n))
		default:
			e.u32(8)
			e.u64(uint64(n))
		}
	case sinkKindFloat32, sinkKindFloat64:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			if oid == pgtype.Float4OID {
				e.u32(4)
				e.u32(math.Float32bits(x))
				return nil
			}
			f = float64(x)
		default:
			return bad()
		}
		if oid == pgtype.Float4OID {
			e.u32(4)
			e.u32(math.Float32bits(float32(f)))
		} else {
			e.u32(8)
			e.u64(math.Float64bits(f))
		}
	case sinkKindBool:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		e.u32(1)
		if x {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	case sinkKindString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		if strings.IndexByte(x, 0) >= 0 {
			x = strings.ReplaceAll(x, "\x00", "")
		}
		e.u32(uint32(len(x)))
		e.buf = append(e.buf, x...)
	case sinkKindBytes:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		e.u32(uint32(len(x)))
		e.buf = append(e.buf, x...)
	case sinkKindDecimal:
		num, err := sinkCopyArg(cfg, c, v)
		if err != nil {
			return err
		}
		at := len(e.buf)
		e.u32(0)
		out, err := e.m.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, num, e.buf)
		if err != nil {
			return sinkDataErrorf("Field '%s': %v", c.name, err)
		}
		e.buf = out
		binary.BigEndian.PutUint32(e.buf[at:], uint32(len(e.buf)-at-4))
	case sinkKindDate, sinkKindTime, sinkKindTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		switch {
		case c.kind == sinkKindDate:
			t = t.In(cfg.dateLoc)
			days := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Unix()/86400 - 10957
			e.u32(4)
			e.u32(uint32(int32(days)))
		case c.kind == sinkKindTime:
			t = t.In(cfg.loc)
			us := int64(t.Hour())*3600_000_000 + int64(t.Minute())*60_000_000 + int64(t.Second())*1_000_000 + int64(t.Nanosecond()/1000)
			e.u32(8)
			e.u64(uint64(us))
		case oid == pgtype.TimestamptzOID:
			e.u32(8)
			e.u64(uint64(t.UnixMicro() - pgEpochMicros))
		default:
			// TIMESTAMP keeps the wall clock of db.timezone.
			t = t.In(cfg.loc)
			wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
			e.u32(8)
			e.u64(uint64(wall.UnixMicro() - pgEpochMicros))
		}
	default:
		return bad()
	}
	return nil
}

// copyRecords loads the records with COPY, in the transaction, in the
// background: it returns once PostgreSQL's connection took the rows, and
// the next settle reports the outcome.
//
// Batches stream: the COPY stays open, and the next batches of the same
// table and columns go into it, until anything else needs the connection
// (settle ends it). PostgreSQL then loads rows as they come, with no
// round trip or statement start per batch. Upsert batches (with a
// fallback: tried with COPY in case their keys are all new) stream inside
// a savepoint: on a key that exists already, the COPY is rolled back to
// it, and settle has the fallbacks of every batch in it write them again,
// in order.
func (t *Task) copyRecords(tb *sinkTable, cols []*sinkColumn, recs []*connect.SinkRecord, fallback func() error) error {
	info := t.infos[tb.id]
	if info == nil {
		return fmt.Errorf("no definition of table %s", t.describeName(tb.id))
	}
	e := &t.copyEnc
	if e.m == nil {
		e.m = pgtype.NewMap()
	}
	e.buf = e.buf[:0]
	oids := make([]uint32, len(cols))
	for i, c := range cols {
		oids[i] = info.types[c.name]
	}
	for _, r := range recs {
		e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(len(cols)))
		for i, c := range cols {
			if err := e.field(t.cfg, c, oids[i], c.value(tb.fields, r)); err != nil {
				return err
			}
		}
	}
	var q strings.Builder
	q.WriteString("COPY ")
	q.WriteString(jdbcdb.PostgreSQL.QuoteTable(jdbcdb.TableID{Schema: tb.id.Schema, Table: tb.id.Table}))
	q.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString(jdbcdb.PostgreSQL.Quote(c.name))
	}
	q.WriteString(") FROM STDIN (FORMAT binary)")
	query := q.String()
	hook := func(suffix string) error {
		if t.execHook == nil {
			return nil
		}
		return t.execHook("COPY "+t.describeName(tb.id)+suffix, make([]any, len(recs)*len(cols)))
	}
	defer func() {
		if cap(e.buf) > 4<<20 {
			e.buf = nil // do not keep a huge buffer
		}
	}()
	// write hands the rows to the COPY; Write returns once the COPY took
	// them, so e.buf is free again. After a failed write, settle reports
	// the COPY's error, or has the fallbacks (this batch's among them)
	// write every batch again.
	write := func(c *sinkCopy, data []byte) error {
		if fallback != nil {
			c.fallbacks = append(c.fallbacks, fallback)
		}
		_, err := c.stream.Write(data)
		if err == nil {
			return nil
		}
		if serr := t.settle(); serr != nil || fallback != nil {
			return serr
		}
		return err
	}
	// The stream goes on before begin, which would end it: the
	// transaction is open while a COPY runs in it.
	if c := t.copying; c != nil && c.table == tb && c.query == query && (fallback != nil) == (c.fallbacks != nil) {
		if err := hook(" (continued)"); err != nil {
			return err
		}
		return write(c, e.buf)
	}
	// The connection is free once the COPY before this one is done, which
	// begin waits for.
	if err := t.begin(); err != nil {
		return err
	}
	if fallback != nil {
		if err := t.exec("SAVEPOINT connectd_copy", nil); err != nil {
			return err
		}
	}
	if err := hook(""); err != nil {
		return err
	}
	pr, pw := io.Pipe()
	c := &sinkCopy{done: make(chan error, 1), table: tb, query: query, stream: pw}
	t.copying = c
	upsert := fallback != nil
	go func() {
		err := t.conn.Raw(func(dc any) error {
			sc, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("COPY needs a pgx connection, not %T", dc)
			}
			_, err := sc.Conn().PgConn().CopyFrom(context.Background(), pr, query)
			return err
		})
		// A write after a failure gets it rather than blocking.
		pr.CloseWithError(cmp.Or(err, errCopyEnded))
		if upsert {
			switch {
			case err == nil:
				err = t.txExec("RELEASE SAVEPOINT connectd_copy")
			case isUniqueViolation(err):
				if err = t.txExec("ROLLBACK TO SAVEPOINT connectd_copy"); err == nil {
					err = errCopyConflict
				}
			}
		}
		c.done <- err
	}()
	return write(c, append(copyHeader[:len(copyHeader):len(copyHeader)], e.buf...))
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// copyHeader starts COPY's binary format: signature, flags, header
// extension length; copyTrailer ends it.
var (
	copyHeader  = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	copyTrailer = []byte{0xff, 0xff}
)

var (
	// errCopyConflict: an upsert batch met a key that exists; it was
	// rolled back to its savepoint.
	errCopyConflict = errors.New("a key exists already")
	// errCopyEnded: the streaming COPY is over; nothing more goes in.
	errCopyEnded = errors.New("the COPY has ended")
)

// sinkCopy is a COPY running in the background, open for the next
// batches.
type sinkCopy struct {
	done   chan error
	table  *sinkTable
	query  string
	stream *io.PipeWriter
	// fallbacks write the batches of an upsert COPY with statements
	// instead, in order.
	fallbacks []func() error
}

// settle ends the COPY in flight, if any, waits for it and returns its
// error; an upsert batch that met existing keys is written by its
// fallback, and COPY is not tried for the table's next few batches.
func (t *Task) settle() error {
	c := t.copying
	if c == nil {
		return nil
	}
	t.copying = nil
	// Errors here are the COPY's, which done reports.
	c.stream.Write(copyTrailer)
	c.stream.Close()
	tb := c.table
	switch err := <-c.done; {
	case err == nil:
		tb.copyBackoff = 0
		return nil
	case errors.Is(err, errCopyConflict):
		tb.copyBackoff = min(max(2*tb.copyBackoff, 4), 64)
		tb.copySkip = tb.copyBackoff
		for _, f := range c.fallbacks {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	default:
		return &sinkTableError{table: t.describeName(tb.id), err: err}
	}
}

// abandonCopy stops the COPY in flight, if any, whose outcome no longer
// matters: the transaction is being rolled back.
func (t *Task) abandonCopy() {
	if c := t.copying; c != nil {
		t.copying = nil
		// pgx then sends CopyFail: PostgreSQL drops the rows.
		c.stream.CloseWithError(errCopyAbandoned)
		<-c.done
	}
}

var errCopyAbandoned = errors.New("abandoned: the transaction is rolled back")
