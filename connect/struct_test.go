package connect

import (
	"math"
	"math/big"
	"testing"
	"time"
)

// Values set unboxed read back from every accessor as the values
// themselves.
func TestStructUnboxedValues(t *testing.T) {
	s := StructSchema("row",
		Field{Name: "id", Schema: Int64Schema},
		Field{Name: "at", Schema: TimestampSchema()},
		Field{Name: "name", Schema: StringSchema})
	at := time.UnixMicro(1_700_000_000_123_456).UTC()
	st := NewStruct(s)
	st.SetInt64AtUnchecked(0, -42)
	st.SetUnixNanoAtUnchecked(1, at.UnixNano())
	st.SetStringAtUnchecked(2, "x")
	if v, ok := st.At(0).(int64); !ok || v != -42 {
		t.Errorf("At(0) = %#v, want int64(-42)", st.At(0))
	}
	// == on time.Time: the same instant, location and representation.
	if v, ok := st.Get("at").(time.Time); !ok || v != at {
		t.Errorf("Get(at) = %#v, want %#v", st.Get("at"), at)
	}
	if v := st.AtWithoutDefault(1); v != any(at) {
		t.Errorf("AtWithoutDefault(1) = %#v", v)
	}
	if n, ok := st.Int64At(0); !ok || n != -42 {
		t.Errorf("Int64At(0) = %d, %v", n, ok)
	}
	if tm, ok := st.TimestampAt(1); !ok || tm != at {
		t.Errorf("TimestampAt(1) = %v, %v", tm, ok)
	}
	if v, ok := st.At(2).(string); !ok || v != "x" || st.Get("name") != any("x") {
		t.Errorf("At(2) = %#v, Get(name) = %#v, want \"x\"", st.At(2), st.Get("name"))
	}
	if v, ok := st.StringAt(2); !ok || v != "x" {
		t.Errorf("StringAt(2) = %q, %v", v, ok)
	}
	if _, ok := st.StringAt(0); ok {
		t.Error("StringAt of an int64 field reported a value")
	}
	if _, ok := st.Int64At(2); ok {
		t.Error("Int64At of a string field reported a value")
	}
	if _, ok := st.TimestampAt(0); ok {
		t.Error("TimestampAt of an int64 field reported a value")
	}
	if _, ok := st.UnixMilliAt(0); ok {
		t.Error("UnixMilliAt of an int64 field reported a value")
	}
	// Milliseconds round down, as time.Time.UnixMilli and Java's
	// Date.getTime do, before the epoch too.
	for _, n := range []int64{at.UnixNano(), 0, 1, 999_999, 1_000_000, -1, -999_999, -1_000_000, -1_000_001,
		math.MinInt64, math.MaxInt64} {
		st.SetUnixNanoAtUnchecked(1, n)
		if ms, ok := st.UnixMilliAt(1); !ok || ms != time.Unix(0, n).UnixMilli() {
			t.Errorf("UnixMilliAt of %d ns = %d, %v; want %d", n, ms, ok, time.Unix(0, n).UnixMilli())
		}
	}
	st.SetUnixNanoAtUnchecked(1, at.UnixNano())
	testStructUnboxedDecimal(t)
	if err := st.Validate(); err != nil {
		t.Error(err)
	}
	want := NewStruct(s).Put("id", int64(-42)).Put("at", at).Put("name", "x")
	if st.String() != want.String() {
		t.Errorf("String() = %s, want %s", st, want)
	}
	// Overwritten with a boxed value, a field forgets its unboxed one.
	st.SetAtUnchecked(0, int64(7))
	if _, ok := st.Int64At(0); ok || st.At(0) != any(int64(7)) {
		t.Errorf("after SetAtUnchecked: At(0) = %#v", st.At(0))
	}
	st.SetAtUnchecked(2, "y")
	if _, ok := st.StringAt(2); ok || st.At(2) != any("y") {
		t.Errorf("after SetAtUnchecked: At(2) = %#v", st.At(2))
	}
	st.SetStringAtUnchecked(2, "z")
	st.Reset()
	if st.AtWithoutDefault(0) != nil || st.AtWithoutDefault(1) != nil || st.AtWithoutDefault(2) != nil {
		t.Error("Reset left values")
	}
	if st.strs[2] != "" {
		t.Error("Reset kept the unboxed string reachable")
	}
}

func testStructUnboxedDecimal(t *testing.T) {
	s := StructSchema("row", Field{Name: "amount", Schema: DecimalSchema(2)}, Field{Name: "big", Schema: DecimalSchema(40)})
	st := NewStruct(s)
	st.SetDecimalAtUnchecked(0, -12345, 2)
	// A scale no marker holds is stored boxed.
	st.SetDecimalAtUnchecked(1, 7, 40)
	if n, scale, ok := st.DecimalAt(0); !ok || n != -12345 || scale != 2 {
		t.Errorf("DecimalAt(0) = %d, %d, %v", n, scale, ok)
	}
	if _, _, ok := st.DecimalAt(1); ok {
		t.Error("a decimal of scale 40 was kept unboxed")
	}
	want := NewStruct(s).Put("amount", &Decimal{Unscaled: big.NewInt(-12345), Scale: 2}).
		Put("big", &Decimal{Unscaled: big.NewInt(7), Scale: 40})
	for i := range 2 {
		got, ok := st.At(i).(*Decimal)
		w := want.At(i).(*Decimal)
		if !ok || got.Unscaled.Cmp(w.Unscaled) != 0 || got.Scale != w.Scale {
			t.Errorf("At(%d) = %#v, want %v", i, st.At(i), w)
		}
	}
	// Each At makes its own Decimal: a reader that changes one changes
	// nothing else.
	st.At(0).(*Decimal).Unscaled.SetInt64(1)
	if st.At(0).(*Decimal).Unscaled.Int64() != -12345 {
		t.Error("At(0) handed out a shared Decimal")
	}
	if err := st.Validate(); err != nil {
		t.Error(err)
	}
	if st.String() != want.String() {
		t.Errorf("String() = %s, want %s", st, want)
	}
	if _, _, ok := NewStruct(s).DecimalAt(0); ok {
		t.Error("DecimalAt of an unset field reported a value")
	}
}
