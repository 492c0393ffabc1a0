package source

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// srcFuzzOIDs are the types the PostgreSQL reader decodes from their
// binary form itself (srcPGDecode), the fuzz input choosing one.
var srcFuzzOIDs = []uint32{pgtype.TextOID, pgtype.Int8OID, pgtype.Int4OID, pgtype.Int2OID, pgtype.BoolOID,
	pgtype.Float4OID, pgtype.Float8OID, pgtype.ByteaOID, pgtype.DateOID, pgtype.TimeOID, pgtype.TimestampOID,
	pgtype.TimestamptzOID, pgtype.NumericOID}

// FuzzSourcePGBinary feeds arbitrary bytes, as PostgreSQL's binary form of
// a column, to the source's decoders: none may panic, and a value decoded
// unboxed (srcPGPrim) must be the one the boxed decoder gives.
func FuzzSourcePGBinary(f *testing.F) {
	be := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	for _, s := range []string{"123.45", "-0.01", "0", "1.5", "-999999999999.99", "12345678901234567.89", "NaN"} {
		b := jdbctest.PGNumeric(f, s)
		f.Add(uint8(12), uint8(2), false, b)
		f.Add(uint8(12), uint8(0), true, b)
	}
	f.Add(uint8(1), uint8(0), false, be(-42))
	f.Add(uint8(10), uint8(0), false, be(0))
	f.Add(uint8(11), uint8(0), true, be(1<<62))
	f.Add(uint8(0), uint8(0), false, []byte("customer-1"))
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, oidSel, scale uint8, asInt bool, b []byte) {
		fld := &srcField{name: "c", pgOID: srcFuzzOIDs[int(oidSel)%len(srcFuzzOIDs)], strings: &srcInterner{}}
		if fld.pgOID == pgtype.NumericOID {
			fld.kind, fld.scale, fld.schema = srcDecimal, int32(scale%40), connect.DecimalSchema(int32(scale%40))
			if asInt {
				fld.kind, fld.scale, fld.schema = srcInt64, 0, connect.Int64Schema
			}
		}
		loc := time.UTC
		if asInt && fld.pgOID == pgtype.TimestampOID {
			loc = ny
		}
		var decs srcDecimals
		boxed, err := srcPGDecode(fld, b, loc, &decs)
		var arena srcArena
		p, ok := srcPGPrim(fld, b, loc, &arena)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("oid %d: unboxed %s, but the boxed decoder fails: %v", fld.pgOID, srcValueText(p), err)
		}
		if p.Kind() != connect.KindDecimal && p.Any() != boxed {
			t.Fatalf("oid %d: unboxed %s %v, boxed %#v", fld.pgOID, p.Kind(), p.Any(), boxed)
		}
		switch p.Kind() {
		case connect.KindInt64, connect.KindString:
		case connect.KindTime:
			if tm := boxed.(time.Time); tm.Location() != time.UTC {
				t.Fatalf("oid %d: unboxed %v, boxed %#v", fld.pgOID, p.Time(), boxed)
			}
		case connect.KindDecimal:
			n, scale, _ := p.SmallDecimal()
			d, isDec := boxed.(*connect.Decimal)
			if !isDec || !d.Unscaled.IsInt64() || d.Unscaled.Int64() != n || d.Scale != fld.scale || scale != fld.scale {
				t.Fatalf("numeric: unboxed %d at scale %d, boxed %v", n, scale, boxed)
			}
		default:
			t.Fatalf("oid %d: unboxed as kind %s", fld.pgOID, p.Kind())
		}
	})
}
