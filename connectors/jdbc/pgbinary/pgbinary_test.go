package pgbinary

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

func TestEpochMicros(t *testing.T) {
	if epochMicros != Epoch.UnixMicro() {
		t.Fatalf("epochMicros %d, Epoch %d", int64(epochMicros), Epoch.UnixMicro())
	}
}

// A fixed-size value of another size is refused with both sizes; the
// infinite dates and timestamps are refused, as Connect cannot hold them.
func TestFixedSizeErrors(t *testing.T) {
	three := []byte{1, 2, 3}
	for name, decode := range map[string]func([]byte) error{
		"int8":      func(b []byte) error { _, err := Int8(b); return err },
		"int4":      func(b []byte) error { _, err := Int4(b); return err },
		"int2":      func(b []byte) error { _, err := Int2(b); return err },
		"bool":      func(b []byte) error { _, err := Bool(b); return err },
		"float4":    func(b []byte) error { _, err := Float4(b); return err },
		"float8":    func(b []byte) error { _, err := Float8(b); return err },
		"date":      func(b []byte) error { _, err := Date(b); return err },
		"time":      func(b []byte) error { _, err := Time(b); return err },
		"timestamp": func(b []byte) error { _, err := Timestamp(b); return err },
	} {
		if err := decode(three); err == nil || err.Error()[:len("a 3-byte value where ")] != "a 3-byte value where " {
			t.Errorf("%s of 3 bytes: %v", name, err)
		}
	}
	be32 := func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	be64 := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	for _, b := range [][]byte{be32(math.MaxInt32), be32(math.MinInt32)} {
		if _, err := Date(b); err != errInfiniteDate {
			t.Errorf("date %x: %v", b, err)
		}
	}
	for _, b := range [][]byte{be64(math.MaxInt64), be64(math.MinInt64)} {
		if _, err := Timestamp(b); err != errInfiniteTimestamp {
			t.Errorf("timestamp %x: %v", b, err)
		}
	}
	if d, err := Date(be32(-1)); err != nil || !d.Equal(time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date -1: %v, %v", d, err)
	}
	if d, err := Time(be64(3_723_000_004)); err != nil || d != time.Hour+2*time.Minute+3*time.Second+4*time.Microsecond {
		t.Errorf("time: %v, %v", d, err)
	}
}

// UnixNano holds the instants nanoseconds since 1970 hold, the ones
// Timestamp gives, and nothing else.
func TestUnixNano(t *testing.T) {
	be := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	pgMicros := func(tm time.Time) int64 { return tm.UnixMicro() - Epoch.UnixMicro() }
	maxNanos := time.Unix(0, math.MaxInt64).UTC().Truncate(time.Microsecond)
	minNanos := time.Unix(0, math.MinInt64).UTC().Truncate(time.Microsecond).Add(time.Microsecond)
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"latest instant", be(pgMicros(maxNanos)), true},
		{"past 2262", be(pgMicros(maxNanos) + 1), false},
		{"earliest instant", be(pgMicros(minNanos)), true},
		{"before 1677", be(pgMicros(minNanos) - 1), false},
		{"epoch", be(0), true},
		{"infinity", be(math.MaxInt64), false},
		{"-infinity", be(math.MinInt64), false},
		{"null", nil, false},
	} {
		ns, ok := UnixNano(c.b)
		if ok != c.ok {
			t.Errorf("%s: %d, %v; want ok %v", c.name, ns, ok, c.ok)
			continue
		}
		if tm, err := Timestamp(c.b); ok && (err != nil || tm.UnixNano() != ns || tm.Location() != time.UTC) {
			t.Errorf("%s: UnixNano %d, Timestamp %v, %v", c.name, ns, tm, err)
		}
	}
}

// Numeric64 takes a NUMERIC of at most four base-10000 digits whose
// rescale is exact, and gives what the general path (ParseNumeric) does.
func TestNumeric64(t *testing.T) {
	for _, c := range []struct {
		in   string
		to   int32
		want int64
		ok   bool
	}{
		{"123.45", 2, 12345, true},
		{"-0.01", 2, -1, true},
		{"0", 2, 0, true},
		{"1.5", 2, 150, true},
		{"-999999999999.99", 2, -99999999999999, true}, // four base-10000 digits, the most it takes
		{"1.234", 2, 0, false},                         // not exact at scale 2
		{"12345678901234567.89", 2, 0, false},          // more than 16 digits
		{"1.234", 3, 1234, true},                       // digits of scale 4, one place over
		{"1.2345", 3, 0, false},                        // not exact at scale 3
		{"1.5", 1, 15, true},                           // three places over
		{"1.55", 1, 0, false},
		{"-12345678.9", 1, -123456789, true},
		{"1000000000000000", 0, 1000000000000000, true},
		{"-7", 0, -7, true},
		{"42", 0, 42, true},
		{"1.5", 10, 15000000000, true}, // rescaled up
		{"99999999", 12, 0, false},     // up, past an int64
		{"NaN", 2, 0, false},
	} {
		b := jdbctest.PGNumeric(t, c.in)
		got, ok := Numeric64(b, c.to)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s at scale %d: %d, %v; want %d, %v", c.in, c.to, got, ok, c.want, c.ok)
		}
		if ok {
			checkNumeric64(t, b, c.to, got)
		}
	}
	if _, ok := Numeric64(nil, 0); ok {
		t.Error("a null NUMERIC was read")
	}
	if _, err := ParseNumeric(jdbctest.PGNumeric(t, "NaN")); err == nil {
		t.Error("NaN was parsed")
	}
}

// checkNumeric64 fails t unless ParseNumeric reads b as v at scale to.
func checkNumeric64(t *testing.T, b []byte, to int32, v int64) {
	t.Helper()
	n, err := ParseNumeric(b)
	if err != nil {
		t.Fatalf("Numeric64 read %x as %d, ParseNumeric refuses it: %v", b, v, err)
	}
	u := n.Unscaled()
	ten := big.NewInt(10)
	for s := n.Scale; s < to; s++ {
		u.Mul(u, ten)
	}
	for s := n.Scale; s > to; s-- {
		var m big.Int
		u.QuoRem(u, ten, &m)
		if m.Sign() != 0 {
			t.Fatalf("Numeric64 read %x as %d at scale %d, which drops digits of %v", b, v, to, n.Unscaled())
		}
	}
	if !u.IsInt64() || u.Int64() != v {
		t.Fatalf("Numeric64 read %x as %d at scale %d, ParseNumeric as %v", b, v, to, u)
	}
}

// FuzzPGBinary feeds arbitrary bytes to the decoders: none may panic, and
// the unboxed readers (Numeric64, UnixNano) give what the general ones
// (ParseNumeric, Timestamp) do.
func FuzzPGBinary(f *testing.F) {
	for _, s := range []string{"123.45", "-0.01", "0", "12345678901234567.89", "NaN"} {
		f.Add(uint8(2), jdbctest.PGNumeric(f, s))
	}
	f.Add(uint8(0), binary.BigEndian.AppendUint64(nil, 1<<62))
	f.Fuzz(func(t *testing.T, to uint8, b []byte) {
		scale := int32(to % 40)
		if v, ok := Numeric64(b, scale); ok {
			checkNumeric64(t, b, scale, v)
		}
		if ns, ok := UnixNano(b); ok {
			if tm, err := Timestamp(b); err != nil || tm.UnixNano() != ns {
				t.Fatalf("UnixNano %d, Timestamp %v, %v", ns, tm, err)
			}
		}
		for _, decode := range []func([]byte){
			func(b []byte) { Int8(b) }, func(b []byte) { Int4(b) }, func(b []byte) { Int2(b) },
			func(b []byte) { Bool(b) }, func(b []byte) { Float4(b) }, func(b []byte) { Float8(b) },
			func(b []byte) { Date(b) }, func(b []byte) { Time(b) },
		} {
			decode(b)
		}
	})
}
