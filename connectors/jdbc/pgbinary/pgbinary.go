// Package pgbinary decodes PostgreSQL's binary wire format values, as a
// result row brings them: integers, floats, booleans, dates, times,
// timestamps and NUMERIC, each from its bytes alone. What a value becomes
// in a record (which Connect type, at which scale, boxed or not) is the
// JDBC source's to decide (connectors/jdbc/source); the decoders here are
// small enough to inline into its row loop.
package pgbinary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"
)

// Epoch is PostgreSQL's epoch for dates and timestamps.
var Epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// epochMicros is Epoch in microseconds since 1970.
const epochMicros = 946_684_800_000_000

// The infinite dates and timestamps, which Connect's types cannot hold.
var (
	errInfiniteDate      = errors.New("the date is infinite, which a Connect Date cannot hold")
	errInfiniteTimestamp = errors.New("the timestamp is infinite, which a Connect Timestamp cannot hold")
)

// sizeError is b, a value of a fixed-size type, of another size than n.
func sizeError(b []byte, n int) error {
	return fmt.Errorf("a %d-byte value where %d bytes were expected", len(b), n)
}

// Int8 decodes a BIGINT.
func Int8(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, sizeError(b, 8)
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// Int4 decodes an INTEGER.
func Int4(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, sizeError(b, 4)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// Int2 decodes a SMALLINT.
func Int2(b []byte) (int16, error) {
	if len(b) != 2 {
		return 0, sizeError(b, 2)
	}
	return int16(binary.BigEndian.Uint16(b)), nil
}

// Bool decodes a BOOLEAN.
func Bool(b []byte) (bool, error) {
	if len(b) != 1 {
		return false, sizeError(b, 1)
	}
	return b[0] != 0, nil
}

// Float4 decodes a REAL.
func Float4(b []byte) (float32, error) {
	if len(b) != 4 {
		return 0, sizeError(b, 4)
	}
	return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
}

// Float8 decodes a DOUBLE PRECISION.
func Float8(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, sizeError(b, 8)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// Date decodes a DATE, days since Epoch, as midnight UTC; the infinite
// dates are refused.
func Date(b []byte) (time.Time, error) {
	if len(b) != 4 {
		return time.Time{}, sizeError(b, 4)
	}
	days := int32(binary.BigEndian.Uint32(b))
	if days == math.MaxInt32 || days == math.MinInt32 {
		return time.Time{}, errInfiniteDate
	}
	return Epoch.AddDate(0, 0, int(days)), nil
}

// Time decodes a TIME: how long after midnight.
func Time(b []byte) (time.Duration, error) {
	if len(b) != 8 {
		return 0, sizeError(b, 8)
	}
	return time.Duration(int64(binary.BigEndian.Uint64(b))) * time.Microsecond, nil
}

// Timestamp decodes a TIMESTAMP or TIMESTAMPTZ, microseconds since Epoch,
// in UTC (a TIMESTAMP's wall clock then reads as UTC's); the infinite
// timestamps are refused.
func Timestamp(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, sizeError(b, 8)
	}
	us := int64(binary.BigEndian.Uint64(b))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return time.Time{}, errInfiniteTimestamp
	}
	return time.UnixMicro(us + epochMicros).UTC(), nil
}

// UnixNano decodes a TIMESTAMP or TIMESTAMPTZ as nanoseconds since 1970
// when that does not overflow (from 1677 to 2262); ok is false otherwise,
// for the infinities, and for a value Timestamp refuses.
func UnixNano(b []byte) (ns int64, ok bool) {
	if len(b) != 8 {
		return 0, false
	}
	v := int64(binary.BigEndian.Uint64(b))
	us := v + epochMicros
	if v > math.MaxInt64-epochMicros || us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
		return 0, false
	}
	return us * 1000, true
}

// Numeric is a binary NUMERIC whose header was checked: ndigits
// base-10000 digits after the 8-byte header of b, read as one integer of
// the given scale.
type Numeric struct {
	b       []byte
	ndigits int
	// Scale is the scale of the integer the digits make.
	Scale int32
	neg   bool
}

func (n Numeric) digit(i int) uint16 { return binary.BigEndian.Uint16(n.b[8+2*i:]) }

// Unscaled is the integer of n's digits, of scale n.Scale.
func (n Numeric) Unscaled() *big.Int {
	u := new(big.Int)
	w := big.NewInt(10000)
	for i := range n.ndigits {
		u.Mul(u, w)
		u.Add(u, big.NewInt(int64(n.digit(i))))
	}
	if n.neg {
		u.Neg(u)
	}
	return u
}

// ParseNumeric checks PostgreSQL's binary NUMERIC header: ndigits,
// weight, sign, dscale, then base-10000 digits, the first of weight
// 10000^weight. NaN and the infinities are refused.
func ParseNumeric(b []byte) (Numeric, error) {
	if len(b) < 8 {
		return Numeric{}, fmt.Errorf("a %d-byte numeric", len(b))
	}
	ndigits := int(int16(binary.BigEndian.Uint16(b)))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	if sign != 0 && sign != 0x4000 {
		return Numeric{}, fmt.Errorf("the value is NaN or infinite, which Connect numbers cannot hold")
	}
	if len(b) != 8+2*ndigits {
		return Numeric{}, fmt.Errorf("a %d-byte numeric of %d digits", len(b), ndigits)
	}
	n := Numeric{b: b, ndigits: ndigits, neg: sign == 0x4000}
	if ndigits > 0 {
		n.Scale = int32(4 * (ndigits - 1 - weight))
	}
	return n, nil
}

// Numeric64 is b, a binary NUMERIC that ParseNumeric accepts, as an int64
// at scale to (Rescale64), when it has at most four base-10000 digits (16
// decimal digits) and the rescale is exact; ok is false otherwise, and
// for a null. It reads the header and the digits in one pass, for it runs
// for nearly every value of a row.
func Numeric64(b []byte, to int32) (int64, bool) {
	if len(b) < 8 {
		return 0, false
	}
	head := binary.BigEndian.Uint64(b)
	ndigits, weight, sign := int(int16(head>>48)), int(int16(head>>32)), uint16(head>>16)
	if ndigits > 4 || len(b) != 8+2*ndigits || sign&^0x4000 != 0 {
		return 0, false
	}
	var u int64
	for i := 8; i < len(b); i += 2 {
		u = u*10000 + int64(binary.BigEndian.Uint16(b[i:]))
	}
	if sign != 0 {
		u = -u
	}
	from := 0
	if ndigits > 0 {
		from = 4 * (ndigits - 1 - weight)
	}
	// The digits are base 10000, so a value usually comes with a scale a
	// few places above the column's: those divisors are constants here.
	switch int(to) - from {
	case 0:
		return u, true
	case -1:
		return u / 10, u%10 == 0
	case -2:
		return u / 100, u%100 == 0
	case -3:
		return u / 1000, u%1000 == 0
	}
	return Rescale64(u, int32(from), to)
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return
}()

// Rescale64 rescales u (of scale from) to scale to when that is exact and
// fits an int64; ok is false otherwise (the caller then takes the general
// path, which rounds or refuses).
func Rescale64(u int64, from, to int32) (int64, bool) {
	switch d := int(to) - int(from); {
	case d == 0:
		return u, true
	case d > 0 && d < len(pow10):
		p := pow10[d]
		if u > math.MaxInt64/p || u < math.MinInt64/p {
			return 0, false
		}
		return u * p, true
	case d < 0 && -d < len(pow10):
		p := pow10[-d]
		if u%p != 0 {
			return 0, false
		}
		return u / p, true
	}
	return 0, false
}
