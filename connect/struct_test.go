package connect

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/owned"
)

// A field holds a value, not a way of storing it: set by SetAt or by
// SetValueAt with a kind's constructor, it reads back the same from
// every accessor.
func TestStructValues(t *testing.T) {
	s := StructSchema("row",
		Field{Name: "id", Schema: Int64Schema},
		Field{Name: "at", Schema: TimestampSchema()},
		Field{Name: "name", Schema: StringSchema},
		Field{Name: "amount", Schema: DecimalSchema(2)})
	at := time.UnixMicro(1_700_000_000_123_456).UTC()
	// A string over bytes of its own, so that == below compares text.
	name := strings.Clone("x")
	byValue := NewStruct(s)
	byValue.SetValueAt(0, Int64Value(-42))
	byValue.SetValueAt(1, UnixNanoValue(at.UnixNano()))
	byValue.SetValueAt(2, StringValue(name))
	byValue.SetValueAt(3, DecimalValue(-12345, 2))
	byAny := NewStruct(s)
	for i, v := range []any{int64(-42), at, "x", &Decimal{Unscaled: big.NewInt(-12345), Scale: 2}} {
		if err := byAny.SetAt(i, v); err != nil {
			t.Fatal(err)
		}
	}
	byAnyValue := NewStruct(s)
	byAnyValue.SetValueAt(0, AnyValue(int64(-42)))
	byAnyValue.SetValueAt(1, TimeValue(at))
	byAnyValue.SetValueAt(2, AnyValue("x"))
	byAnyValue.SetValueAt(3, AnyValue(DecimalValue(-12345, 2)))
	for _, c := range []struct {
		name string
		st   *Struct
	}{{"SetValueAt", byValue}, {"SetAt", byAny}, {"AnyValue", byAnyValue}} {
		st := c.st
		for i, want := range []Kind{KindInt64, KindTime, KindString, KindDecimal} {
			if k := st.ValueAt(i).Kind(); k != want {
				t.Errorf("%s: ValueAt(%d).Kind() = %s, want %s", c.name, i, k, want)
			}
		}
		if v, ok := st.At(0).(int64); !ok || v != -42 || st.ValueAt(0).Int64() != -42 {
			t.Errorf("%s: At(0) = %#v, Int64() = %d, want -42", c.name, st.At(0), st.ValueAt(0).Int64())
		}
		// == on time.Time: the same instant, location and representation.
		if v, ok := st.Get("at").(time.Time); !ok || v != at || st.ValueAt(1).Time() != at || st.AtWithoutDefault(1) != any(at) {
			t.Errorf("%s: Get(at) = %#v, Time() = %#v, want %#v", c.name, st.Get("at"), st.ValueAt(1).Time(), at)
		}
		if ms := st.ValueAt(1).UnixMilli(); ms != at.UnixMilli() {
			t.Errorf("%s: UnixMilli() = %d, want %d", c.name, ms, at.UnixMilli())
		}
		if st.At(2) != any("x") || st.Get("name") != any("x") || st.ValueAt(2).String() != "x" {
			t.Errorf("%s: At(2) = %#v, String() = %q, want \"x\"", c.name, st.At(2), st.ValueAt(2).String())
		}
		if n, scale, ok := st.ValueAt(3).SmallDecimal(); !ok || n != -12345 || scale != 2 {
			t.Errorf("%s: SmallDecimal() = %d, %d, %v", c.name, n, scale, ok)
		}
		if d, ok := st.At(3).(*Decimal); !ok || d.Unscaled.Int64() != -12345 || d.Scale != 2 || st.ValueAt(3).Decimal().String() != d.String() {
			t.Errorf("%s: At(3) = %#v", c.name, st.At(3))
		}
		if err := st.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if st.String() != byAny.String() {
			t.Errorf("%s: String() = %s, want %s", c.name, st, byAny)
		}
	}
	// A Decimal made from its unscaled value is made anew by each read:
	// a reader that changes one changes nothing else.
	byValue.At(3).(*Decimal).Unscaled.SetInt64(1)
	if byValue.At(3).(*Decimal).Unscaled.Int64() != -12345 {
		t.Error("At(3) handed out a shared Decimal")
	}
	// Overwritten, a field forgets what it held, whatever it was.
	byValue.SetValueAt(0, StringValue("y"))
	if byValue.ValueAt(0).Kind() != KindString || byValue.At(0) != any("y") {
		t.Errorf("after SetValueAt: At(0) = %#v", byValue.At(0))
	}
	byValue.Reset()
	for i := range s.Fields {
		if byValue.AtWithoutDefault(i) != nil || byValue.ValueAt(i).Kind() != KindNull {
			t.Errorf("Reset left field %d: %#v", i, byValue.AtWithoutDefault(i))
		}
	}
}

// An unset field is a null to ValueAt, its default to At.
func TestStructValueAtUnset(t *testing.T) {
	s := StructSchema("row", Field{Name: "n", Schema: &Schema{Type: TypeInt64, Optional: true, Default: int64(3)}})
	st := NewStruct(s)
	if k := st.ValueAt(0).Kind(); k != KindNull || st.ValueAt(0).Any() != nil {
		t.Errorf("ValueAt of an unset field: %s %#v", k, st.ValueAt(0).Any())
	}
	if st.At(0) != any(int64(3)) {
		t.Errorf("At of an unset field = %#v, want its default", st.At(0))
	}
}

// A Value's kind is that of the Go value it holds.
func TestValueKinds(t *testing.T) {
	for _, c := range []struct {
		v    any
		want Kind
	}{
		{nil, KindNull}, {true, KindBool}, {int8(1), KindInt8}, {int16(1), KindInt16}, {int32(1), KindInt32},
		{int64(1), KindInt64}, {float32(1), KindFloat32}, {float64(1), KindFloat64}, {"s", KindString},
		{[]byte("b"), KindBytes}, {time.Now(), KindTime}, {&Decimal{Unscaled: big.NewInt(1)}, KindDecimal},
		{NewStruct(StructSchema("s")), KindStruct}, {[]any{1}, KindArray}, {map[string]any{}, KindMap},
		{[]MapEntry{}, KindMap}, {7, KindAny},
	} {
		if k := AnyValue(c.v).Kind(); k != c.want {
			t.Errorf("AnyValue(%#v).Kind() = %s, want %s", c.v, k, c.want)
		}
	}
	// A time that nanoseconds in UTC cannot give back as it is stays as
	// it is.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range []time.Time{time.Now(), time.Date(2024, 1, 2, 3, 4, 5, 6, ny), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if got := TimeValue(tm).Time(); got != tm {
			t.Errorf("TimeValue(%v).Time() = %v", tm, got)
		}
	}
	// Milliseconds round down, as time.Time.UnixMilli and Java's
	// Date.getTime do, before the epoch too.
	for _, n := range []int64{0, 1, 999_999, 1_000_000, -1, -999_999, -1_000_000, -1_000_001, math.MinInt64, math.MaxInt64} {
		if ms := UnixNanoValue(n).UnixMilli(); ms != time.Unix(0, n).UnixMilli() {
			t.Errorf("UnixMilli of %d ns = %d, want %d", n, ms, time.Unix(0, n).UnixMilli())
		}
	}
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	if _, _, ok := AnyValue(&Decimal{Unscaled: huge, Scale: 2}).SmallDecimal(); ok {
		t.Error("SmallDecimal of a 30-digit unscaled value reported one")
	}
	if _, _, ok := Int64Value(1).SmallDecimal(); ok {
		t.Error("SmallDecimal of an Int64 reported one")
	}
	if s := Int64Value(12).String(); s != "12" {
		t.Errorf("Int64Value(12).String() = %q", s)
	}
}

// Reading a Value as a kind it is not panics, naming both.
func TestValueWrongKind(t *testing.T) {
	for name, read := range map[string]func(){
		"Int64":     func() { StringValue("x").Int64() },
		"Time":      func() { Int64Value(1).Time() },
		"UnixMilli": func() { AnyValue("x").UnixMilli() },
		"Decimal":   func() { Int64Value(1).Decimal() },
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "kind") || !strings.Contains(msg, "read as") {
					t.Errorf("%s of the wrong kind: panic %q", name, msg)
				}
			}()
			read()
		}()
	}
}

// Setting and reading an int64, a time, a decimal of an int64's unscaled
// value or a string allocates nothing: a source fills millions of fields.
func TestStructValuesDoNotAllocate(t *testing.T) {
	s := StructSchema("row",
		Field{Name: "id", Schema: Int64Schema},
		Field{Name: "at", Schema: TimestampSchema()},
		Field{Name: "name", Schema: StringSchema},
		Field{Name: "amount", Schema: DecimalSchema(2)})
	st := NewStruct(s)
	name := strings.Repeat("n", 20)
	var sink int64
	allocs := testing.AllocsPerRun(100, func() {
		st.SetValueAt(0, Int64Value(1_000_000))
		st.SetValueAt(1, UnixNanoValue(1_700_000_000_000_000_000))
		st.SetValueAt(2, StringValue(name))
		st.SetValueAt(3, DecimalValue(1_000_000, 2))
		n, _, _ := st.ValueAt(3).SmallDecimal()
		sink += st.ValueAt(0).Int64() + st.ValueAt(1).UnixMilli() + int64(len(st.ValueAt(2).String())) + n
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record", allocs)
	}
	_ = sink
}

// owned.Reshape gives a struct another schema's fields in place, keeping
// the values of the fields it had; a field it gains is null, even one it
// had before and lost; a struct without room for the fields stays as it
// was.
func TestStructReshape(t *testing.T) {
	one := StructSchema("one", Field{Name: "a", Schema: StringSchema})
	two := StructSchema("two", Field{Name: "b", Schema: StringSchema}, Field{Name: "c", Schema: OptionalInt64Schema})
	three := StructSchema("three", Field{Name: "a", Schema: StringSchema}, Field{Name: "b", Schema: StringSchema}, Field{Name: "c", Schema: OptionalInt64Schema})

	s := NewStruct(one).Put("a", "x")
	if !owned.Reshape(s, two) {
		t.Fatal("a struct of one field has no room for two")
	}
	if s.Schema() != two || s.Get("b") != "x" || s.Get("c") != nil {
		t.Fatalf("after growing: %v", s)
	}
	s.Put("c", int64(7))
	if !owned.Reshape(s, one) || s.Get("a") != "x" || s.Get("c") != nil {
		t.Fatalf("after shrinking: %v", s)
	}
	if !owned.Reshape(s, two) || s.Get("c") != nil {
		t.Fatalf("the field lost came back with its value: %v", s)
	}
	if owned.Reshape(s, three) {
		t.Fatalf("a struct made for one field took three: %v", s)
	}
	if s.Schema() != two || s.Get("b") != "x" {
		t.Fatalf("a reshape refused changed the struct: %v", s)
	}
	if owned.Reshape(s, Int64Schema) {
		t.Fatal("reshaped to an INT64 schema")
	}
}
