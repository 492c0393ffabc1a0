package source

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/pgbinary"
)

// srcKind is the Connect value a result column is turned into.
type srcKind int

const (
	srcBool srcKind = iota
	srcInt8
	srcInt16
	srcInt32
	srcInt64
	srcFloat32
	srcFloat64
	srcDecimal // Decimal with the field's scale
	srcString
	srcBytes
	srcDate
	srcTime
	srcTimestamp   // a wall clock, read in db.timezone
	srcTimestampTZ // an instant
	srcYear        // MySQL YEAR, a Date on January 1st as Connector/J reads it
)

// srcField maps one result column to a field of the record's struct.
type srcField struct {
	name   string
	col    int // index of the column in the result
	kind   srcKind
	schema *connect.Schema
	scale  int32 // srcDecimal's scale
	// exact: a NUMERIC without declared precision whose values must fit
	// scale without rounding (see srcPGField).
	exact bool
	bits  int // PostgreSQL bit(n) length
	// dbType is the column's database type name, for messages.
	dbType string
	// pgOID is the PostgreSQL type OID.
	pgOID uint32
	// strings shares the values of a text column whose values repeat.
	strings *srcInterner
}

// srcInterner hands out one shared string per distinct value of a column
// whose values repeat (statuses, countries, ...): the rows of a batch
// then share a few strings that stay in the caches, rather than each
// bringing bytes of its own to the goroutine that converts it. It stops
// caching a column whose values mostly differ, whose texts then go to the
// result's arena. One result reads it at a time.
//
// It is an open-addressing table rather than a Go map: between two rows
// of a value, the rows in between push the table out of the nearer
// caches, and a map lookup then waits on its directory, its group and
// the key's bytes in turn. Here a value of up to 16 bytes is found, and
// compared, in its slot's words alone.
type srcInterner struct {
	seed         uint64
	slots        []srcInternSlot // len srcInternSlots once used; "" marks a free slot
	n            int             // values kept
	lookups, hit int
	off          bool
}

// srcInternSlot is a kept value: s, and the words srcInternWords makes of
// its bytes.
type srcInternSlot struct {
	lo, hi uint64
	s      string
}

const (
	srcInternMax   = 1024 // distinct values kept per column
	srcInternSlots = 2 * srcInternMax
	srcInternProbe = 4096 // lookups before judging the hit rate
	srcInternLen   = 64   // longer values are not interned
)

// srcInternWords returns two words of b (1 to srcInternLen bytes long)
// that, with its length, are all of its bytes when it has at most 16:
// its first and last 8, 4, or for 1 to 3 bytes, its first, middle and
// last.
func srcInternWords(b []byte) (lo, hi uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	default:
		return uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1]), 0
	}
}

func (in *srcInterner) get(b []byte, arena *srcArena) string {
	if in == nil || in.off || len(b) > srcInternLen || len(b) == 0 {
		return arena.str(b)
	}
	if in.slots == nil {
		in.slots = make([]srcInternSlot, srcInternSlots)
		// Seeded, so that a table's values cannot be chosen to collide.
		in.seed = rand.Uint64()
	}
	in.lookups++
	lo, hi := srcInternWords(b)
	h := in.seed ^ uint64(len(b))
	for i := 8; i < len(b)-8; i += 8 {
		// The bytes between the first and last 8 of a longer value.
		h = srcMix(h, binary.LittleEndian.Uint64(b[i:]))
	}
	h = srcMix(srcMix(h, lo), hi)
	i := h & (srcInternSlots - 1)
	for ; in.slots[i].s != ""; i = (i + 1) & (srcInternSlots - 1) {
		sl := &in.slots[i]
		if sl.lo == lo && sl.hi == hi && len(sl.s) == len(b) && (len(b) <= 16 || sl.s == string(b)) {
			in.hit++
			return sl.s
		}
	}
	if in.lookups >= srcInternProbe && in.hit*4 < in.lookups {
		in.off, in.slots = true, nil
		return arena.str(b)
	}
	// An allocation of its own: the table keeps it as long as it reads
	// the column, which a chunk of the arena should not be kept for.
	s := string(b)
	if in.n < srcInternMax {
		in.slots[i] = srcInternSlot{lo: lo, hi: hi, s: s}
		in.n++
	}
	return s
}

// srcMix folds v into the hash h.
func srcMix(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v, 0x9e3779b97f4a7c15)
	return hi ^ lo
}

// srcArena holds the text values of a result's rows. The connection's
// buffer, which holds a row's bytes, is overwritten by the next row, so
// each value is copied out; here it is copied into a chunk shared by
// many values and read as a string over those bytes, which costs neither
// an allocation per value nor one to box the string (a row's text goes
// into its struct as a connect.StringValue). A chunk
// is only ever appended to, never written again where a string covers
// it, and lives as long as any of its strings does.
type srcArena struct{ buf []byte }

const (
	srcArenaChunk = 64 << 10
	// A longer value gets an allocation of its own rather than most of a
	// chunk.
	srcArenaMax = srcArenaChunk / 16
)

func (a *srcArena) str(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > srcArenaMax:
		return string(b)
	case cap(a.buf)-len(a.buf) < n:
		a.buf = make([]byte, 0, srcArenaChunk)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], n)
}

// srcPrecisionParameter is the Decimal schema parameter Confluent adds
// with the column's precision.
const srcPrecisionParameter = "connect.decimal.precision"

func srcOptional(s *connect.Schema, optional bool) *connect.Schema {
	if !optional {
		return s
	}
	return s.AsOptional()
}

func srcPrimitive(k srcKind, optional bool) *connect.Schema {
	var s *connect.Schema
	switch k {
	case srcBool:
		s = connect.BooleanSchema
	case srcInt8:
		s = connect.Int8Schema
	case srcInt16:
		s = connect.Int16Schema
	case srcInt32:
		s = connect.Int32Schema
	case srcInt64:
		s = connect.Int64Schema
	case srcFloat32:
		s = connect.Float32Schema
	case srcFloat64:
		s = connect.Float64Schema
	case srcString:
		s = connect.StringSchema
	case srcBytes:
		s = connect.BytesSchema
	case srcDate, srcYear:
		s = connect.DateSchema()
	case srcTime:
		s = connect.TimeSchema()
	case srcTimestamp, srcTimestampTZ:
		s = connect.TimestampSchema()
	default:
		panic(fmt.Sprintf("jdbc: no primitive schema for kind %d", k))
	}
	return srcOptional(s, optional)
}

// srcDecimalSchema is Confluent's Decimal field schema: scale, then the
// column's precision as connect.decimal.precision.
func srcDecimalSchema(scale int32, precision int, optional bool) *connect.Schema {
	s := connect.DecimalSchema(scale)
	s.Parameters = append(s.Parameters, connect.Parameter{Key: srcPrecisionParameter, Value: strconv.Itoa(precision)})
	s.Optional = optional
	return s
}

// srcIntegerKind is Confluent's integer width for a NUMERIC precision.
func srcIntegerKind(precision int) srcKind {
	switch {
	case precision > 9:
		return srcInt64
	case precision > 4:
		return srcInt32
	case precision > 2:
		return srcInt16
	}
	return srcInt8
}

// srcNumeric sets f's kind and schema for a NUMERIC (isNumeric) or DECIMAL
// column, applying numeric.mapping to NUMERIC columns as Confluent's
// GenericDatabaseDialect does.
func srcNumeric(f *srcField, mapping string, isNumeric bool, precision, scale int, optional bool) {
	const maxIntegerPrecision = 18
	kind := srcDecimal
	if isNumeric {
		switch mapping {
		case srcNumericPrecisionOnly:
			if scale == 0 && precision <= maxIntegerPrecision {
				kind = srcIntegerKind(precision)
			}
		case srcNumericBestFit:
			if precision <= maxIntegerPrecision {
				if scale < 1 && scale >= -84 {
					kind = srcIntegerKind(precision)
				} else if scale > 0 {
					kind = srcFloat64
				}
			}
		case srcNumericBestFitEagerDouble:
			if scale < 1 && scale >= -84 {
				if precision <= maxIntegerPrecision {
					kind = srcIntegerKind(precision)
				}
			} else if scale > 0 {
				kind = srcFloat64
			}
		}
	}
	f.kind = kind
	if kind != srcDecimal {
		f.schema = srcPrimitive(kind, optional)
		return
	}
	if scale == -127 {
		scale = 127
	}
	f.scale = int32(scale)
	f.schema = srcDecimalSchema(int32(scale), precision, optional)
}

// srcMapping is how one result maps to a struct: the fields, the struct
// schema, and per column what to scan into.
type srcMapping struct {
	schema *connect.Schema
	fields []srcField
	// byName finds a field's index by its name.
	byName map[string]int
	// columns and pgFields describe the result the mapping was made
	// for, to notice when a table's columns change.
	columns  []string
	pgFields []pgconn.FieldDescription
}

func newSrcMapping(name string, fields []srcField) *srcMapping {
	sf := make([]connect.Field, len(fields))
	m := &srcMapping{fields: fields, byName: make(map[string]int, len(fields))}
	for i, f := range fields {
		sf[i] = connect.Field{Name: f.name, Schema: f.schema}
		if _, dup := m.byName[f.name]; !dup {
			m.byName[f.name] = i
		}
	}
	m.schema = connect.StructSchema(name, sf...)
	return m
}

// field finds a field by exact name, else ignoring case.
func (m *srcMapping) field(name string) (int, bool) {
	if i, ok := m.byName[name]; ok {
		return i, true
	}
	for i, f := range m.fields {
		if strings.EqualFold(f.name, name) {
			return i, true
		}
	}
	return -1, false
}

// srcWarnDropped logs a column whose type has no Connect mapping; as in
// Confluent's connector it is left out of the records.
func srcWarnDropped(log *slog.Logger, where, column, typ string) {
	log.Warn("JDBC source: column type not currently supported; the column is left out of the records",
		"source", where, "column", column, "type", typ)
}

// --- PostgreSQL ---------------------------------------------------------

// srcPGField maps a PostgreSQL result column as pgjdbc reports it and
// Confluent's PostgreSqlDatabaseDialect maps it. ok is false for types
// Confluent skips.
func srcPGField(fd pgconn.FieldDescription, optional bool, mapping string) (srcField, bool) {
	f := srcField{name: fd.Name, pgOID: fd.DataTypeOID}
	prim := func(k srcKind) (srcField, bool) {
		f.kind = k
		f.schema = srcPrimitive(k, optional)
		return f, true
	}
	switch fd.DataTypeOID {
	case pgtype.BoolOID:
		return prim(srcBool)
	case pgtype.Int2OID:
		return prim(srcInt16)
	case pgtype.Int4OID:
		return prim(srcInt32)
	case pgtype.Int8OID, pgtype.OIDOID:
		return prim(srcInt64)
	case pgtype.Float4OID:
		return prim(srcFloat32)
	case pgtype.Float8OID:
		return prim(srcFloat64)
	case pgtype.NumericOID:
		// pgjdbc reports precision 0 and scale 0 for a NUMERIC without
		// a declared precision, and Confluent maps it with those.
		precision, scale := 0, 0
		if fd.TypeModifier >= 4 {
			mod := int(fd.TypeModifier - 4)
			precision = (mod >> 16) & 0xffff
			scale = int(int16(mod&0x7ff<<5) >> 5) // 11-bit signed (PostgreSQL 15+)
		} else {
			f.exact = true
		}
		srcNumeric(&f, mapping, true, precision, scale, optional)
		return f, true
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.QCharOID,
		pgtype.JSONOID, pgtype.JSONBOID, pgtype.UUIDOID, pgtype.XMLOID:
		return prim(srcString)
	case pgtype.ByteaOID:
		return prim(srcBytes)
	case pgtype.DateOID:
		return prim(srcDate)
	case pgtype.TimeOID, pgtype.TimetzOID:
		return prim(srcTime)
	case pgtype.TimestampOID:
		return prim(srcTimestamp)
	case pgtype.TimestamptzOID:
		return prim(srcTimestampTZ)
	case pgtype.BitOID:
		// bit(1) is a boolean, bit(2..8) an INT8, longer bit strings bytes.
		f.bits = int(fd.TypeModifier)
		switch {
		case f.bits <= 1:
			return prim(srcBool)
		case f.bits <= 8:
			return prim(srcInt8)
		}
		return prim(srcBytes)
	}
	return f, false
}

// srcPGDest returns what to scan a PostgreSQL column of f into.
func srcPGDest(f *srcField) any {
	switch f.pgOID {
	case pgtype.BoolOID:
		return new(pgtype.Bool)
	case pgtype.Int2OID:
		return new(pgtype.Int2)
	case pgtype.Int4OID:
		return new(pgtype.Int4)
	case pgtype.Int8OID:
		return new(pgtype.Int8)
	case pgtype.OIDOID:
		return new(pgtype.Uint32)
	case pgtype.Float4OID:
		return new(pgtype.Float4)
	case pgtype.Float8OID:
		return new(pgtype.Float8)
	case pgtype.NumericOID:
		return new(pgtype.Numeric)
	case pgtype.JSONOID, pgtype.JSONBOID, pgtype.ByteaOID:
		return new([]byte)
	case pgtype.UUIDOID:
		return new(pgtype.UUID)
	case pgtype.DateOID:
		return new(pgtype.Date)
	case pgtype.TimeOID:
		return new(pgtype.Time)
	case pgtype.TimestampOID:
		return new(pgtype.Timestamp)
	case pgtype.TimestamptzOID:
		return new(pgtype.Timestamptz)
	case pgtype.BitOID:
		return new(pgtype.Bits)
	}
	return new(pgtype.Text)
}

// srcPGValue converts a scanned PostgreSQL value to f's Connect value.
func srcPGValue(f *srcField, dest any, loc *time.Location) (any, error) {
	switch d := dest.(type) {
	case *pgtype.Int8:
		if !d.Valid {
			return nil, nil
		}
		return d.Int64, nil
	case *pgtype.Int4:
		if !d.Valid {
			return nil, nil
		}
		return d.Int32, nil
	case *pgtype.Text:
		if !d.Valid {
			return nil, nil
		}
		if f.kind == srcTime { // timetz: its time of day in UTC
			return srcParseTimeTZ(d.String)
		}
		return d.String, nil
	case *pgtype.Int2:
		if !d.Valid {
			return nil, nil
		}
		return d.Int16, nil
	case *pgtype.Bool:
		if !d.Valid {
			return nil, nil
		}
		return d.Bool, nil
	case *pgtype.Uint32:
		if !d.Valid {
			return nil, nil
		}
		return int64(d.Uint32), nil
	case *pgtype.Float4:
		if !d.Valid {
			return nil, nil
		}
		return d.Float32, nil
	case *pgtype.Float8:
		if !d.Valid {
			return nil, nil
		}
		return d.Float64, nil
	case *pgtype.Numeric:
		if !d.Valid {
			return nil, nil
		}
		if d.NaN || d.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("the value is NaN or infinite, which Connect numbers cannot hold")
		}
		n := d.Int
		if n == nil {
			n = new(big.Int)
		}
		return srcFromDecimal(f, n, -d.Exp)
	case *[]byte:
		if *d == nil {
			return nil, nil
		}
		if f.kind == srcString { // json, jsonb
			return string(*d), nil
		}
		return *d, nil
	case *pgtype.UUID:
		if !d.Valid {
			return nil, nil
		}
		b := d.Bytes[:]
		return hex.EncodeToString(b[0:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" +
			hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:16]), nil
	case *pgtype.Date:
		if !d.Valid {
			return nil, nil
		}
		if d.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("the date is infinite, which a Connect Date cannot hold")
		}
		y, m, day := d.Time.Date()
		return time.Date(y, m, day, 0, 0, 0, 0, time.UTC), nil
	case *pgtype.Time:
		if !d.Valid {
			return nil, nil
		}
		us := d.Microseconds
		wall := time.Date(1970, 1, 1, 0, 0, 0, 0, loc).Add(time.Duration(us) * time.Microsecond)
		return srcTimeOfDay(wall), nil
	case *pgtype.Timestamp:
		if !d.Valid {
			return nil, nil
		}
		if d.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("the timestamp is infinite, which a Connect Timestamp cannot hold")
		}
		return srcWallClock(d.Time, loc), nil
	case *pgtype.Timestamptz:
		if !d.Valid {
			return nil, nil
		}
		if d.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("the timestamp is infinite, which a Connect Timestamp cannot hold")
		}
		return d.Time.UTC(), nil
	case *pgtype.Bits:
		if !d.Valid {
			return nil, nil
		}
		switch f.kind {
		case srcBool:
			return len(d.Bytes) > 0 && d.Bytes[0]&0x80 != 0, nil
		case srcInt8:
			var v uint
			for i := 0; i < int(d.Len); i++ {
				v = v<<1 | uint(d.Bytes[i/8]>>(7-i%8)&1)
			}
			return int8(v), nil
		}
		return d.Bytes, nil
	}
	return nil, fmt.Errorf("unexpected scan destination %T", dest)
}

var srcTimeTZ = regexp.MustCompile(`^(\d{2}):(\d{2}):(\d{2})(\.\d+)?([+-]\d{2})(?::?(\d{2}))?(?::?(\d{2}))?$`)

// srcParseTimeTZ reads a PostgreSQL timetz text value as its time of day
// in UTC.
func srcParseTimeTZ(s string) (any, error) {
	m := srcTimeTZ.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("cannot read %q as a time with time zone", s)
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	var ns int
	if m[4] != "" {
		frac := (m[4][1:] + "000000000")[:9]
		ns, _ = strconv.Atoi(frac)
	}
	oh, _ := strconv.Atoi(m[5])
	om, _ := strconv.Atoi(m[6])
	os, _ := strconv.Atoi(m[7])
	off := oh*3600 + om*60 + os
	if oh < 0 || m[5][0] == '-' {
		off = oh*3600 - om*60 - os
	}
	wall := time.Date(1970, 1, 1, h, mi, sec, ns, time.FixedZone("", off))
	return srcTimeOfDay(wall), nil
}

// srcTimeOfDay turns an instant on 1970-01-01 into a Connect Time: the
// milliseconds of its UTC time of day.
func srcTimeOfDay(t time.Time) time.Time {
	const day = 24 * 60 * 60 * 1000
	ms := t.UnixMilli() % day
	if ms < 0 {
		ms += day
	}
	return time.UnixMilli(ms).UTC()
}

// srcWallClock reads the wall clock of t (whatever its location) in loc.
func srcWallClock(t time.Time, loc *time.Location) time.Time {
	if loc == time.UTC && t.Location() == time.UTC {
		return t
	}
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, m, d, h, mi, s, t.Nanosecond(), loc).UTC()
}

// srcFromDecimal converts unscaled × 10^-scale to f's kind.
func srcFromDecimal(f *srcField, unscaled *big.Int, scale int32) (any, error) {
	switch f.kind {
	case srcDecimal:
		v, err := srcRescale(unscaled, scale, f.scale, f.exact)
		if err != nil {
			return nil, err
		}
		return &connect.Decimal{Unscaled: v, Scale: f.scale}, nil
	case srcFloat64:
		r := new(big.Rat).SetInt(unscaled)
		if scale > 0 {
			r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		} else if scale < 0 {
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)))
		}
		fl, _ := r.Float64()
		return fl, nil
	case srcInt8, srcInt16, srcInt32, srcInt64:
		v, err := srcRescale(unscaled, scale, 0, f.exact)
		if err != nil {
			return nil, err
		}
		return srcIntOf(f.kind, v)
	}
	return nil, fmt.Errorf("a number cannot be read as %v", f.schema.Type)
}

// srcIntOf narrows v to the Go integer of kind, refusing overflow.
func srcIntOf(kind srcKind, v *big.Int) (any, error) {
	if !v.IsInt64() {
		return nil, fmt.Errorf("the value %s does not fit the field's type", v)
	}
	return srcNarrow(kind, v.Int64())
}

func srcNarrow(kind srcKind, n int64) (any, error) {
	switch kind {
	case srcInt8:
		if n >= math.MinInt8 && n <= math.MaxInt8 {
			return int8(n), nil
		}
	case srcInt16:
		if n >= math.MinInt16 && n <= math.MaxInt16 {
			return int16(n), nil
		}
	case srcInt32:
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), nil
		}
	case srcInt64:
		return n, nil
	}
	return nil, fmt.Errorf("the value %d does not fit the field's type", n)
}

var srcTen = big.NewInt(10)

// srcRescale returns unscaled × 10^-from expressed with scale to,
// rounding half up as BigDecimal.setScale(to, HALF_UP) does; with exact
// it refuses to drop non-zero digits instead.
func srcRescale(unscaled *big.Int, from, to int32, exact bool) (*big.Int, error) {
	if from == to {
		return unscaled, nil
	}
	if to > from {
		p := new(big.Int).Exp(srcTen, big.NewInt(int64(to-from)), nil)
		return new(big.Int).Mul(unscaled, p), nil
	}
	p := new(big.Int).Exp(srcTen, big.NewInt(int64(from-to)), nil)
	q, r := new(big.Int).QuoRem(unscaled, p, new(big.Int))
	if r.Sign() != 0 {
		if exact {
			return nil, fmt.Errorf("the value %s has digits beyond the field's scale %d: the column is a NUMERIC "+
				"without declared precision and scale, which Confluent's connector maps to scale %d and rounds; declare "+
				"it NUMERIC(p,s) (or cast it in a query) so that no digit is lost",
				(&connect.Decimal{Unscaled: unscaled, Scale: from}).String(), to, to)
		}
		// Half up: away from zero when the dropped part is at least half.
		twice := new(big.Int).Abs(r)
		twice.Lsh(twice, 1)
		if twice.Cmp(p) >= 0 {
			if unscaled.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return q, nil
}

// srcParseDecimal reads a decimal in plain or exponent notation.
func srcParseDecimal(s string) (*big.Int, int32, error) {
	s = strings.TrimSpace(s)
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return nil, 0, fmt.Errorf("cannot read %q as a decimal", s)
		}
		mant, exp = s[:i], e
	}
	scale := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		scale = len(mant) - i - 1
		mant = mant[:i] + mant[i+1:]
	}
	v, ok := new(big.Int).SetString(mant, 10)
	if !ok {
		return nil, 0, fmt.Errorf("cannot read %q as a decimal", s)
	}
	return v, int32(scale - exp), nil
}

// --- MySQL, MariaDB and SQLite through database/sql ---------------------

var srcDeclParams = regexp.MustCompile(`\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?\)`)

// srcSQLField maps a MySQL/MariaDB or SQLite result column as their JDBC
// drivers report them and Confluent's generic dialect maps them. nullable
// is nil when unknown (the field is then optional, as Confluent treats
// an unknown nullability).
func srcSQLField(d *jdbcdb.Dialect, ct *sql.ColumnType, nullable *bool, mapping string) (srcField, bool) {
	optional := nullable == nil || *nullable
	typ := strings.ToUpper(ct.DatabaseTypeName())
	f := srcField{name: ct.Name(), dbType: typ}
	prim := func(k srcKind) (srcField, bool) {
		f.kind = k
		f.schema = srcPrimitive(k, optional)
		return f, true
	}
	if d == jdbcdb.SQLite {
		return srcSQLiteField(f, typ, optional, mapping)
	}
	switch typ {
	case "TINYINT", "BIT":
		return prim(srcInt8)
	case "UNSIGNED TINYINT", "SMALLINT":
		return prim(srcInt16)
	case "UNSIGNED SMALLINT", "MEDIUMINT", "INT":
		return prim(srcInt32)
	case "UNSIGNED MEDIUMINT", "UNSIGNED INT", "BIGINT", "UNSIGNED BIGINT":
		return prim(srcInt64)
	case "FLOAT":
		return prim(srcFloat32)
	case "DOUBLE":
		return prim(srcFloat64)
	case "DECIMAL":
		p, s, ok := ct.DecimalSize()
		if !ok {
			p, s = 65, 30
		}
		srcNumeric(&f, mapping, false, int(p), int(s), optional)
		return f, true
	case "CHAR", "VARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET", "JSON":
		return prim(srcString)
	case "BINARY", "VARBINARY", "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB":
		return prim(srcBytes)
	case "DATE":
		return prim(srcDate)
	case "YEAR":
		return prim(srcYear)
	case "TIME":
		return prim(srcTime)
	case "DATETIME", "TIMESTAMP":
		return prim(srcTimestamp)
	}
	return f, false
}

// srcSQLiteField maps by the declared type, as SQLite's JDBC driver does.
func srcSQLiteField(f srcField, typ string, optional bool, mapping string) (srcField, bool) {
	prim := func(k srcKind) (srcField, bool) {
		f.kind = k
		f.schema = srcPrimitive(k, optional)
		return f, true
	}
	base := typ
	if i := strings.IndexByte(base, '('); i >= 0 {
		base = strings.TrimSpace(base[:i])
	}
	switch base {
	case "BOOLEAN", "BOOL":
		return prim(srcBool)
	case "TINYINT":
		return prim(srcInt8)
	case "SMALLINT", "INT2":
		return prim(srcInt16)
	case "DATE":
		return prim(srcDate)
	case "DATETIME", "TIMESTAMP":
		return prim(srcTimestamp)
	case "TIME":
		return prim(srcTime)
	case "NUMERIC", "DECIMAL":
		if m := srcDeclParams.FindStringSubmatch(typ); m != nil {
			p, _ := strconv.Atoi(m[1])
			s := 0
			if m[2] != "" {
				s, _ = strconv.Atoi(m[2])
			}
			srcNumeric(&f, mapping, base == "NUMERIC", p, s, optional)
			return f, true
		}
		return prim(srcFloat64)
	}
	// SQLite's type affinity rules (https://sqlite.org/datatype3.html).
	switch {
	case strings.Contains(base, "INT"):
		return prim(srcInt64)
	case strings.Contains(base, "CHAR"), strings.Contains(base, "CLOB"), strings.Contains(base, "TEXT"):
		return prim(srcString)
	case strings.Contains(base, "BLOB"):
		return prim(srcBytes)
	case strings.Contains(base, "REAL"), strings.Contains(base, "FLOA"), strings.Contains(base, "DOUB"):
		return prim(srcFloat64)
	case base == "":
		// An expression: its values are written as text.
		return prim(srcString)
	}
	return f, false
}

// srcSQLDest returns what to scan a database/sql column of f into.
func srcSQLDest(d *jdbcdb.Dialect, f *srcField) any {
	if d == jdbcdb.SQLite {
		return new(any)
	}
	switch f.kind {
	case srcInt8:
		if f.dbType == "BIT" {
			return new([]byte)
		}
		return new(sql.NullInt64)
	case srcInt16, srcInt32, srcInt64, srcYear:
		return new(sql.NullInt64)
	case srcFloat32, srcFloat64:
		if f.dbType == "DECIMAL" {
			return new(sql.NullString)
		}
		return new(sql.NullFloat64)
	case srcBytes:
		return new([]byte)
	case srcDate, srcTimestamp:
		return new(sql.NullTime)
	}
	return new(sql.NullString) // strings, decimals, TIME
}

// srcSQLValue converts a value scanned from database/sql to f's value.
func srcSQLValue(f *srcField, dest any, loc *time.Location) (any, error) {
	switch d := dest.(type) {
	case *sql.NullInt64:
		if !d.Valid {
			return nil, nil
		}
		if f.kind == srcYear {
			return time.Date(int(d.Int64), 1, 1, 0, 0, 0, 0, time.UTC), nil
		}
		return srcNarrow(f.kind, d.Int64)
	case *sql.NullString:
		if !d.Valid {
			return nil, nil
		}
		return srcFromText(f, d.String, loc)
	case *sql.NullFloat64:
		if !d.Valid {
			return nil, nil
		}
		if f.kind == srcFloat32 {
			return float32(d.Float64), nil
		}
		return d.Float64, nil
	case *[]byte:
		if *d == nil {
			return nil, nil
		}
		if f.kind == srcInt8 { // BIT(n)
			var v uint64
			for _, b := range *d {
				v = v<<8 | uint64(b)
			}
			return int8(v), nil
		}
		return *d, nil
	case *sql.NullTime:
		if !d.Valid {
			return nil, nil
		}
		if f.kind == srcDate {
			y, m, day := d.Time.Date()
			return time.Date(y, m, day, 0, 0, 0, 0, time.UTC), nil
		}
		return srcWallClock(d.Time, loc), nil
	case *any:
		return srcAnyValue(f, *d, loc)
	}
	return nil, fmt.Errorf("unexpected scan destination %T", dest)
}

// srcFromText reads a value a driver handed over as text.
func srcFromText(f *srcField, s string, loc *time.Location) (any, error) {
	switch f.kind {
	case srcString:
		return s, nil
	case srcDecimal, srcFloat64, srcInt8, srcInt16, srcInt32, srcInt64:
		if f.kind == srcFloat64 && f.dbType != "DECIMAL" && !strings.HasPrefix(f.dbType, "NUMERIC") {
			return strconv.ParseFloat(strings.TrimSpace(s), 64)
		}
		v, scale, err := srcParseDecimal(s)
		if err != nil {
			return nil, err
		}
		return srcFromDecimal(f, v, scale)
	case srcTime:
		return srcParseTimeOfDay(s, loc)
	case srcDate, srcTimestamp:
		t, err := srcParseDateTime(s)
		if err != nil {
			return nil, err
		}
		if f.kind == srcDate {
			y, m, d := t.Date()
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
		}
		return srcWallClock(t, loc), nil
	case srcBytes:
		return []byte(s), nil
	case srcBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "1", "true", "t", "yes", "y", "on":
			return true, nil
		case "0", "false", "f", "no", "n", "off":
			return false, nil
		}
		return nil, fmt.Errorf("cannot read %q as a boolean", s)
	}
	return nil, fmt.Errorf("cannot read %q as %v", s, f.schema.Type)
}

// srcParseTimeOfDay reads HH:MM:SS[.fraction] as a Connect Time, the time
// of day taken in loc.
func srcParseTimeOfDay(s string, loc *time.Location) (any, error) {
	var h, m, sec int
	var frac string
	main, fr, _ := strings.Cut(strings.TrimSpace(s), ".")
	if n, err := fmt.Sscanf(main, "%d:%d:%d", &h, &m, &sec); n != 3 || err != nil {
		return nil, fmt.Errorf("cannot read %q as a time of day", s)
	}
	frac = (fr + "000000000")[:9]
	ns, _ := strconv.Atoi(frac)
	if h < 0 || h > 23 {
		return nil, fmt.Errorf("the time %q is not a time of day, which a Connect Time must be", s)
	}
	return srcTimeOfDay(time.Date(1970, 1, 1, h, m, sec, ns, loc)), nil
}

var srcDateTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// srcParseDateTime reads the text forms of dates and timestamps SQLite's
// date functions accept; the result's wall clock is what the text says.
func srcParseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range srcDateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a date or timestamp", s)
}

// srcAnyValue converts a value SQLite handed over untyped.
func srcAnyValue(f *srcField, v any, loc *time.Location) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case int64:
		switch f.kind {
		case srcBool:
			return x != 0, nil
		case srcFloat64:
			return float64(x), nil
		case srcFloat32:
			return float32(x), nil
		case srcString:
			return strconv.FormatInt(x, 10), nil
		case srcDecimal:
			return srcFromDecimal(f, big.NewInt(x), 0)
		case srcTimestamp, srcTimestampTZ:
			return time.UnixMilli(x).UTC(), nil
		}
		return srcNarrow(f.kind, x)
	case float64:
		switch f.kind {
		case srcFloat64:
			return x, nil
		case srcFloat32:
			return float32(x), nil
		case srcString:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		}
		return srcFromText(f, strconv.FormatFloat(x, 'f', -1, 64), loc)
	case string:
		return srcFromText(f, x, loc)
	case []byte:
		if f.kind == srcBytes {
			return x, nil
		}
		return srcFromText(f, string(x), loc)
	case bool:
		if f.kind == srcBool {
			return x, nil
		}
	case time.Time:
		switch f.kind {
		case srcDate:
			y, m, d := x.Date()
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
		case srcTimestamp:
			if _, off := x.Zone(); off != 0 {
				return x.UTC(), nil // the text named its offset: an instant
			}
			return srcWallClock(x, loc), nil
		case srcTime:
			h, m, s := x.Clock()
			return srcTimeOfDay(time.Date(1970, 1, 1, h, m, s, x.Nanosecond(), loc)), nil
		case srcString:
			return x.Format("2006-01-02 15:04:05.999999999"), nil
		}
	}
	return nil, fmt.Errorf("cannot read a %T as %v", v, f.schema.Type)
}

// --- results ---------------------------------------------------------------

// srcResult is an open result set being turned into structs.
type srcResult interface {
	// next reads the next row into vals (one per mapping field); false
	// at the end of the result, or on error (see err).
	next(vals []connect.Value) bool
	// recycle takes the values of st, a struct of the result's schema
	// that the runtime released, for next to fill again.
	recycle(st *connect.Struct)
	err() error
	close()
}

type srcPGResult struct {
	decs  srcDecimals
	rows  pgx.Rows
	dests []any // per result column; nil skips the column
	fast  []bool
	scan  bool // some column is scanned by pgx
	m     *srcMapping
	loc   *time.Location
	fail  error
	arena srcArena
}

// srcPGPrim decodes f's binary value b as a connect.Value that boxes
// nothing, when it is a BIGINT, a timestamp read in UTC that nanoseconds
// since the epoch hold, a NUMERIC read as a Decimal whose unscaled value an
// int64 holds, or a text (interned, or into arena): boxing them for each
// row costs the table read about a tenth of its CPU.
func srcPGPrim(f *srcField, b []byte, loc *time.Location, arena *srcArena) (connect.Value, bool) {
	switch f.pgOID {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		if b == nil {
			return connect.Value{}, false // null
		}
		return connect.StringValue(f.strings.get(b, arena)), true
	case pgtype.NumericOID:
		if f.kind != srcDecimal {
			return connect.Value{}, false
		}
		if v, ok := pgbinary.Numeric64(b, f.scale); ok {
			return connect.DecimalValue(v, f.scale), true
		}
		return connect.Value{}, false
	}
	if len(b) != 8 {
		return connect.Value{}, false // null, or srcPGDecode's error
	}
	switch f.pgOID {
	case pgtype.Int8OID:
		return connect.Int64Value(int64(binary.BigEndian.Uint64(b))), true
	case pgtype.TimestampOID, pgtype.TimestamptzOID:
		if f.pgOID == pgtype.TimestampOID && loc != time.UTC {
			return connect.Value{}, false
		}
		// The infinities, and the instants nanoseconds since 1970 cannot
		// hold, are read boxed (and the infinities refused).
		if ns, ok := pgbinary.UnixNano(b); ok {
			return connect.UnixNanoValue(ns), true
		}
	}
	return connect.Value{}, false
}

func (r *srcPGResult) next(vals []connect.Value) bool {
	if r.fail != nil || !r.rows.Next() {
		return false
	}
	if r.scan {
		if err := r.rows.Scan(r.dests...); err != nil {
			r.fail = &srcValueError{err: err}
			return false
		}
	}
	raw := r.rows.RawValues()
	for i := range r.m.fields {
		f := &r.m.fields[i]
		var v any
		var err error
		if r.fast[i] {
			if p, ok := srcPGPrim(f, raw[f.col], r.loc, &r.arena); ok {
				vals[i] = p
				continue
			}
			v, err = srcPGDecode(f, raw[f.col], r.loc, &r.decs)
		} else {
			v, err = srcPGValue(f, r.dests[f.col], r.loc)
		}
		if err != nil {
			r.fail = &srcValueError{field: f.name, err: err}
			return false
		}
		vals[i] = connect.AnyValue(v)
	}
	return true
}

func (r *srcPGResult) err() error {
	if r.fail != nil {
		return r.fail
	}
	return r.rows.Err()
}

func (r *srcPGResult) close() { r.rows.Close() }

type srcSQLResult struct {
	d     *jdbcdb.Dialect
	rows  *sql.Rows
	dests []any
	m     *srcMapping
	loc   *time.Location
	fail  error
}

func (r *srcSQLResult) next(vals []connect.Value) bool {
	if r.fail != nil || !r.rows.Next() {
		return false
	}
	if err := r.rows.Scan(r.dests...); err != nil {
		// A value the driver cannot convert (an UNSIGNED BIGINT over
		// 2^63-1, ...): the data's problem, retrying will not help.
		r.fail = &srcValueError{err: err}
		return false
	}
	for i := range r.m.fields {
		f := &r.m.fields[i]
		v, err := srcSQLValue(f, r.dests[f.col], r.loc)
		if err != nil {
			r.fail = &srcValueError{field: f.name, err: err}
			return false
		}
		vals[i] = connect.AnyValue(v)
	}
	return true
}

func (r *srcSQLResult) recycle(*connect.Struct) {}

func (r *srcSQLResult) err() error {
	if r.fail != nil {
		return r.fail
	}
	return r.rows.Err()
}

func (r *srcSQLResult) close() { r.rows.Close() }

// srcValueError is a value that cannot be turned into its field's value:
// a data problem, not a database one, so the task fails rather than
// retrying.
type srcValueError struct {
	field string
	err   error
}

func (e *srcValueError) Error() string {
	if e.field == "" {
		return e.err.Error()
	}
	return "column " + e.field + ": " + e.err.Error()
}
func (e *srcValueError) Unwrap() error { return e.err }

// --- PostgreSQL binary values, decoded without pgx's scan ---------------

// srcPGFast says whether f's column, sent in format, is decoded by
// srcPGDecode rather than scanned by pgx.
func srcPGFast(f *srcField, format int16) bool {
	switch f.pgOID {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		return true // the same bytes in both formats
	case pgtype.BoolOID, pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.Float4OID, pgtype.Float8OID,
		pgtype.NumericOID, pgtype.ByteaOID, pgtype.DateOID, pgtype.TimeOID, pgtype.TimestampOID, pgtype.TimestamptzOID:
		return format == pgx.BinaryFormatCode
	}
	return false
}

// srcPGDecode decodes a binary (or text, for strings) PostgreSQL value.
func srcPGDecode(f *srcField, b []byte, loc *time.Location, decs *srcDecimals) (any, error) {
	if b == nil {
		return nil, nil
	}
	switch f.pgOID {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		return string(b), nil
	case pgtype.Int8OID:
		return srcBoxed(pgbinary.Int8(b))
	case pgtype.Int4OID:
		return srcBoxed(pgbinary.Int4(b))
	case pgtype.Int2OID:
		return srcBoxed(pgbinary.Int2(b))
	case pgtype.BoolOID:
		return srcBoxed(pgbinary.Bool(b))
	case pgtype.Float4OID:
		return srcBoxed(pgbinary.Float4(b))
	case pgtype.Float8OID:
		return srcBoxed(pgbinary.Float8(b))
	case pgtype.ByteaOID:
		return bytes.Clone(b), nil
	case pgtype.DateOID:
		return srcBoxed(pgbinary.Date(b))
	case pgtype.TimeOID:
		d, err := pgbinary.Time(b)
		if err != nil {
			return nil, err
		}
		return srcTimeOfDay(time.Date(1970, 1, 1, 0, 0, 0, 0, loc).Add(d)), nil
	case pgtype.TimestampOID, pgtype.TimestamptzOID:
		t, err := pgbinary.Timestamp(b)
		if err != nil {
			return nil, err
		}
		if f.pgOID == pgtype.TimestampOID && loc != time.UTC {
			return srcWallClock(t, loc), nil
		}
		return t, nil
	case pgtype.NumericOID:
		return srcPGNumeric(f, b, decs)
	}
	return nil, fmt.Errorf("no binary decoder for type oid %d", f.pgOID)
}

// srcBoxed is a decoded value, boxed, or its error with no value: a
// failed decoder's zero would otherwise box as a value.
func srcBoxed[T any](v T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// srcDecimalBox holds a Decimal and its small unscaled value in one
// allocation.
type srcDecimalBox struct {
	d connect.Decimal
	i big.Int
	w [1]big.Word
}

// srcDecimals are decimals of released records, for the next rows'
// decimals: at one per row and decimal column, their allocations are a
// good part of a large read's garbage.
type srcDecimals []*connect.Decimal

// srcMaxDecimals bounds the decimals kept. A row takes back one decimal
// per decimal column of the released row it replaces, but a value too
// large for small takes none: those would otherwise pile up.
const srcMaxDecimals = 64

// small returns the decimal of unscaled value v and scale, filling one of
// ds when it holds any.
func (ds *srcDecimals) small(v int64, scale int32) *connect.Decimal {
	n := len(*ds)
	if n == 0 {
		return srcSmallDecimal(v, scale)
	}
	// Every decimal here was made by a decoder, with its Unscaled.
	d := (*ds)[n-1]
	(*ds)[n-1] = nil
	*ds = (*ds)[:n-1]
	d.Unscaled.SetInt64(v)
	d.Scale = scale
	return d
}

func (r *srcPGResult) recycle(st *connect.Struct) {
	for i := range r.m.fields {
		if r.m.fields[i].kind != srcDecimal || len(r.decs) == srcMaxDecimals {
			continue
		}
		v := st.ValueAt(i)
		if _, _, small := v.SmallDecimal(); small {
			continue // next made it without a Decimal; Any would make one
		}
		if d, ok := v.Any().(*connect.Decimal); ok {
			r.decs = append(r.decs, d)
		}
	}
}

func srcSmallDecimal(v int64, scale int32) *connect.Decimal {
	box := &srcDecimalBox{}
	u := uint64(v)
	if v < 0 {
		u = uint64(-v)
	}
	if bits.UintSize == 32 && u > math.MaxUint32 {
		return &connect.Decimal{Unscaled: big.NewInt(v), Scale: scale}
	}
	box.w[0] = big.Word(u)
	box.i.SetBits(box.w[:])
	if v < 0 {
		box.i.Neg(&box.i)
	}
	box.d = connect.Decimal{Unscaled: &box.i, Scale: scale}
	return &box.d
}

// srcPGNumeric decodes PostgreSQL's binary numeric (pgbinary.ParseNumeric)
// as f's kind: through an int64 when its value fits one, else a big.Int.
func srcPGNumeric(f *srcField, b []byte, decs *srcDecimals) (any, error) {
	switch f.kind {
	case srcDecimal:
		if v, ok := pgbinary.Numeric64(b, f.scale); ok {
			return decs.small(v, f.scale), nil
		}
	case srcInt8, srcInt16, srcInt32, srcInt64:
		if v, ok := pgbinary.Numeric64(b, 0); ok {
			return srcNarrow(f.kind, v)
		}
	}
	n, err := pgbinary.ParseNumeric(b)
	if err != nil {
		return nil, err
	}
	return srcFromDecimal(f, n.Unscaled(), n.Scale)
}
