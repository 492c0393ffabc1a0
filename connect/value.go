package connect

import (
	"fmt"
	"math/big"
	"time"
	"unsafe"
)

// Value is a field's value as a Struct holds it, what At returns without
// the boxing: a source filling millions of structs does not allocate an
// int64, a string header, a time.Time or a Decimal for each of its
// fields (a quarter of its allocations), and a converter reads them
// without unboxing. Like log/slog's Value, it is a small value type to
// pass and store by value; its zero value is a null. Whatever made it
// (a constructor of a kind, AnyValue of the same Go value, SetAt), Kind
// says what it holds and the accessors read it.
type Value struct {
	// Values holding the same string are not == (num and any hold the
	// string's length and pointer), so == is not allowed at all.
	_ [0]func()
	// num is an Int64's value, a Time's nanoseconds since the epoch in
	// UTC, a Decimal's unscaled value or a String's length, when any
	// says so (kindMarker, decimalScale, stringptr); any else holds the
	// Go value itself, nil for a null.
	num uint64
	any any
}

// Kind is what a Value holds: a Go value of a Connect schema type
// (see Schema), a null, or for schemaless data any other Go value.
type Kind uint8

// The kinds of value, named for the Go value a Value holds.
const (
	KindNull    Kind = iota
	KindBool         // bool
	KindInt8         // int8
	KindInt16        // int16
	KindInt32        // int32
	KindInt64        // int64
	KindFloat32      // float32
	KindFloat64      // float64
	KindString       // string
	KindBytes        // []byte
	KindTime         // time.Time: a Date, Time or Timestamp
	KindDecimal      // *Decimal
	KindStruct       // *Struct
	KindArray        // []any
	KindMap          // map[string]any or []MapEntry
	KindAny          // any other Go value
)

var kindNames = [...]string{"Null", "Bool", "Int8", "Int16", "Int32", "Int64", "Float32", "Float64", "String",
	"Bytes", "Time", "Decimal", "Struct", "Array", "Map", "Any"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

type (
	// kindMarker is an Int64 or a Time held in num.
	kindMarker Kind
	// decimalScale is the scale of a Decimal whose unscaled value is in
	// num.
	decimalScale int32
	// stringptr is a String's data, of length num.
	stringptr *byte
)

// Int64Value returns a Value of KindInt64.
func Int64Value(n int64) Value { return Value{num: uint64(n), any: kindMarker(KindInt64)} }

// StringValue returns a Value of KindString.
func StringValue(s string) Value {
	return Value{num: uint64(len(s)), any: stringptr(unsafe.StringData(s))}
}

// UnixNanoValue returns a Value of KindTime: the time n nanoseconds after
// the epoch, in UTC, as time.Unix(0, n).UTC().
func UnixNanoValue(n int64) Value { return Value{num: uint64(n), any: kindMarker(KindTime)} }

// TimeValue returns a Value of KindTime holding t.
func TimeValue(t time.Time) Value {
	// Only a UTC time survives the trip through nanoseconds as the same
	// time.Time (==); others, and those out of that range, stay as they
	// are.
	if n := t.UnixNano(); t.Location() == time.UTC && time.Unix(0, n).UTC() == t {
		return UnixNanoValue(n)
	}
	return Value{any: t}
}

// DecimalValue returns a Value of KindDecimal: unscaled × 10^-scale.
func DecimalValue(unscaled int64, scale int32) Value {
	return Value{num: uint64(unscaled), any: decimalScale(scale)}
}

// AnyValue returns a Value holding v (a Value is returned as it is): its
// Kind is that of v's Go type, and Any returns v itself.
func AnyValue(v any) Value {
	if x, ok := v.(Value); ok {
		return x
	}
	return Value{any: v}
}

// Kind returns the kind of v's value.
func (v Value) Kind() Kind {
	switch x := v.any.(type) {
	case kindMarker:
		return Kind(x)
	case stringptr:
		return KindString
	case decimalScale:
		return KindDecimal
	}
	return kindOf(v.any)
}

func kindOf(v any) Kind {
	switch v.(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case int8:
		return KindInt8
	case int16:
		return KindInt16
	case int32:
		return KindInt32
	case int64:
		return KindInt64
	case float32:
		return KindFloat32
	case float64:
		return KindFloat64
	case string:
		return KindString
	case []byte:
		return KindBytes
	case time.Time:
		return KindTime
	case *Decimal:
		return KindDecimal
	case *Struct:
		return KindStruct
	case []any:
		return KindArray
	case map[string]any, []MapEntry:
		return KindMap
	}
	return KindAny
}

// Any returns v's value as a Go value: what At returns (a new Decimal
// each time for a Decimal made by DecimalValue), nil for a null.
func (v Value) Any() any {
	switch x := v.any.(type) {
	case kindMarker:
		if Kind(x) == KindInt64 {
			return int64(v.num)
		}
		return time.Unix(0, int64(v.num)).UTC()
	case stringptr:
		return unsafe.String(x, v.num)
	case decimalScale:
		return &Decimal{Unscaled: big.NewInt(int64(v.num)), Scale: int32(x)}
	}
	return v.any
}

// Int64 returns v's int64. It panics if v is not of KindInt64.
func (v Value) Int64() int64 {
	if k, ok := v.any.(kindMarker); ok && Kind(k) == KindInt64 {
		return int64(v.num)
	}
	if n, ok := v.any.(int64); ok {
		return n
	}
	panic(v.badKind(KindInt64))
}

// String returns v's string when it is of KindString, else v's value
// formatted as fmt.Sprint does: unlike the other accessors, it never
// panics.
func (v Value) String() string {
	if p, ok := v.any.(stringptr); ok {
		return unsafe.String(p, v.num)
	}
	if s, ok := v.any.(string); ok {
		return s
	}
	return fmt.Sprint(v.Any())
}

// Time returns v's time.Time. It panics if v is not of KindTime.
func (v Value) Time() time.Time {
	if k, ok := v.any.(kindMarker); ok && Kind(k) == KindTime {
		return time.Unix(0, int64(v.num)).UTC()
	}
	if t, ok := v.any.(time.Time); ok {
		return t
	}
	panic(v.badKind(KindTime))
}

// UnixMilli returns v's time as milliseconds since the epoch, rounded
// down as java.util.Date.getTime() has it: what a Timestamp is written
// as, without making the time.Time. It panics if v is not of KindTime.
func (v Value) UnixMilli() int64 {
	if k, ok := v.any.(kindMarker); !ok || Kind(k) != KindTime {
		return v.Time().UnixMilli()
	}
	n := int64(v.num)
	ms := n / 1e6
	if n%1e6 < 0 {
		ms--
	}
	return ms
}

// Decimal returns v's *Decimal (a new one each time for a Value made by
// DecimalValue). It panics if v is not of KindDecimal.
func (v Value) Decimal() *Decimal {
	if s, ok := v.any.(decimalScale); ok {
		return &Decimal{Unscaled: big.NewInt(int64(v.num)), Scale: int32(s)}
	}
	if d, ok := v.any.(*Decimal); ok {
		return d
	}
	panic(v.badKind(KindDecimal))
}

// SmallDecimal returns v's unscaled value and scale, without making a
// Decimal, and true when v is a Decimal whose unscaled value an int64
// holds; false for any other value.
func (v Value) SmallDecimal() (unscaled int64, scale int32, ok bool) {
	if s, isSmall := v.any.(decimalScale); isSmall {
		return int64(v.num), int32(s), true
	}
	if d, isDec := v.any.(*Decimal); isDec && d != nil && d.Unscaled != nil && d.Unscaled.IsInt64() {
		return d.Unscaled.Int64(), d.Scale, true
	}
	return 0, 0, false
}

func (v Value) badKind(want Kind) string {
	return fmt.Sprintf("connect: a Value of kind %s read as %s", v.Kind(), want)
}
