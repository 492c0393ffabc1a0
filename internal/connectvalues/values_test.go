package connectvalues

import (
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func ts(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	if err != nil {
		panic(err)
	}
	return t
}

// The cases of Kafka's ValuesTest and SimpleHeaderConverterTest, and the
// quirks their code has.
func TestParseStringAsKafka(t *testing.T) {
	entries := func(kv ...any) []connect.MapEntry {
		out := []connect.MapEntry{}
		for i := 0; i < len(kv); i += 2 {
			out = append(out, connect.MapEntry{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	for _, c := range []struct {
		in     string
		schema *connect.Schema
		value  any
	}{
		{"", connect.StringSchema, ""},
		{"\uFFFF", connect.StringSchema, "\uFFFF"},
		{"{foo: 3}", connect.StringSchema, "{foo: 3}"},
		{"{3: foo}", connect.StringSchema, "{3: foo}"},
		{"[foo]", connect.StringSchema, "[foo]"},
		{"null=", connect.StringSchema, "null="},
		{"true}", connect.StringSchema, "true}"},
		{"false]", connect.StringSchema, "false]"},
		{" \t true \n", connect.BooleanSchema, true},
		{" false ", connect.BooleanSchema, false},
		{" null ", nil, nil},
		{"null", nil, nil},
		{"[true, false]", connect.ArrayOf(connect.BooleanSchema), []any{true, false}},
		{"{true: false, false: true}", &connect.Schema{Type: connect.TypeMap, Key: connect.BooleanSchema, Value: connect.BooleanSchema}, entries(true, false, false, true)},
		{"{6:9 4:20}", connect.StringSchema, "{6:9 4:20}"},
		{"[0 1 2]", connect.StringSchema, "[0 1 2]"},
		{"{}", &connect.Schema{Type: connect.TypeMap}, entries()},
		{"[]", &connect.Schema{Type: connect.TypeArray}, []any{}},
		{"{null: 3}", connect.StringSchema, "{null: 3}"},
		{"{3: null}", &connect.Schema{Type: connect.TypeMap, Key: connect.Int8Schema}, entries(int8(3), nil)},
		{"[null]", &connect.Schema{Type: connect.TypeArray}, []any{nil}},
		{"[1, null]", connect.StringSchema, "[1, null]"},
		{"[null, 1]", connect.StringSchema, "[null, 1]"},
		{"[1, 2, 3,,,]", connect.StringSchema, "[1, 2, 3,,,]"},
		{"[300, \"four\", 1, 2]", &connect.Schema{Type: connect.TypeArray}, []any{int16(300), "four", int8(1), int8(2)}},
		{"[1, 300, 70000]", connect.ArrayOf(connect.Int32Schema), []any{int32(1), int32(300), int32(70000)}},
		{"[1, 1.5]", connect.ArrayOf(connect.Float32Schema), []any{float32(1), float32(1.5)}},
		{"{1:1, 2:1, 300:300, 4:\"four\"}", &connect.Schema{Type: connect.TypeMap, Key: connect.Int16Schema},
			entries(int16(1), int8(1), int16(2), int8(1), int16(300), int16(300), int16(4), "four")},
		{"{\"foo\":\"123\",\"bar\":\"baz\"}", &connect.Schema{Type: connect.TypeMap, Key: connect.StringSchema, Value: connect.StringSchema}, entries("foo", "123", "bar", "baz")},
		{" { \"foo\" :  12345 , \"bar\" : 0,  \"baz\" : -4321 }  ", &connect.Schema{Type: connect.TypeMap, Key: connect.StringSchema, Value: connect.Int16Schema},
			entries("foo", int16(12345), "bar", int16(0), "baz", int16(-4321))},
		{"[[]]", connect.ArrayOf(&connect.Schema{Type: connect.TypeArray}), []any{[]any{}}},
		// A top-level value ends with its first token.
		{"1,2", connect.Int8Schema, int8(1)},
		{"[1]x", connect.ArrayOf(connect.Int8Schema), []any{int8(1)}},
		{"1.0", connect.Int8Schema, int8(1)},
		{"1.1", connect.Float32Schema, float32(1.1)},
		{"300.0", connect.Int16Schema, int16(300)},
		{"66000.0008", connect.Float32Schema, float32(66000.0008)},
		{"-9223372036854775808", connect.Int64Schema, int64(-9223372036854775808)},
		{"9223372036854775808", connect.DecimalSchema(0), &connect.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 63), Scale: 0}},
		{"1e-50", connect.Float32Schema, float32(0)},
		{"1e39", connect.Float64Schema, 1e39},
		{"1e2147483647", connect.DecimalSchema(-2147483647), &connect.Decimal{Unscaled: big.NewInt(1), Scale: -2147483647}},
		{"1e2147483648", connect.StringSchema, "1e2147483648"},
		{"١٢", connect.Int8Schema, int8(12)},
		{"123abc", connect.StringSchema, "123abc"},
		{"2019-08-23T14:34:54.346Z", connect.TimestampSchema(), ts("2019-08-23T14:34:54.346Z")},
		{"2019-08-23T14\\:34\\:54.346Z", connect.TimestampSchema(), ts("2019-08-23T14:34:54.346Z")},
		{"2019-08-23", connect.DateSchema(), ts("2019-08-23T00:00:00.000Z")},
		{"14:34:54.346Z", connect.TimeSchema(), ts("1970-01-01T14:34:54.346Z")},
		// SimpleDateFormat is lenient.
		{"2019-13-32", connect.DateSchema(), ts("2020-02-01T00:00:00.000Z")},
		{"[2019-08-23T14:34:54.346Z,   2019-01-23T15:12:34.567Z]", connect.ArrayOf(connect.TimestampSchema()),
			[]any{ts("2019-08-23T14:34:54.346Z"), ts("2019-01-23T15:12:34.567Z")}},
		{"{\"k1\":\"14:34:54.346Z\"}", &connect.Schema{Type: connect.TypeMap, Key: connect.StringSchema, Value: connect.TimeSchema()},
			entries("k1", ts("1970-01-01T14:34:54.346Z"))},
		{"[5, 2019-08-23]", connect.ArrayOf(connect.DateSchema()), []any{ts("1970-01-06T00:00:00.000Z"), ts("2019-08-23T00:00:00.000Z")}},
		// Quoted strings keep their escapes.
		{`["a\"b"]`, connect.ArrayOf(connect.StringSchema), []any{`a\"b`}},
		{"{1:a, 1:b}", connect.StringSchema, "{1:a, 1:b}"},
		{"{1:\"a\", 1:\"b\"}", &connect.Schema{Type: connect.TypeMap, Key: connect.Int8Schema, Value: connect.StringSchema}, entries(int8(1), "b")},
	} {
		schema, value, err := ParseString(c.in)
		if err != nil {
			t.Errorf("ParseString(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(schema, c.schema) || !reflect.DeepEqual(value, c.value) {
			t.Errorf("ParseString(%q) = %#v, %#v; want %#v, %#v", c.in, schema, value, c.schema, c.value)
		}
	}
}

func TestParseStringRefusesDeepNesting(t *testing.T) {
	deep := ""
	for range MaxDepth + 1 {
		deep += "["
	}
	if _, _, err := ParseString(deep); err != ErrTooDeep {
		t.Fatalf("err = %v, want ErrTooDeep", err)
	}
	if _, _, err := ParseString(deep[:MaxDepth-1]); err != nil {
		t.Fatalf("nesting within the bound: %v", err)
	}
}

func TestConvertToStringAsKafka(t *testing.T) {
	st := connect.StructSchema("s",
		connect.Field{Name: "a", Schema: connect.StringSchema},
		connect.Field{Name: "n", Schema: &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(7)}})
	for _, c := range []struct {
		value any
		want  string
	}{
		{"simple", "simple"},
		{"three\"blind\\\"mice", "three\"blind\\\"mice"},
		{[]any{"three\"blind\\\"mice"}, `["three\"blind\\\"mice"]`},
		{int8(-5), "-5"}, {int64(1) << 40, "1099511627776"},
		{float32(1.1), "1.1"}, {1e21, "1.0E21"}, {float64(1), "1.0"},
		{&connect.Decimal{Unscaled: big.NewInt(1), Scale: 8}, "1E-8"},
		{true, "true"},
		{[]byte("hi"), "aGk="}, {[]any{[]byte("hi"), nil}, `["aGk=",null]`},
		{map[string]any{"foo": "123", "bar": "baz"}, `{"bar":"baz","foo":"123"}`},
		{[]connect.MapEntry{{Key: "foo", Value: int16(1)}, {Key: "bar", Value: nil}}, `{"foo":1,"bar":null}`},
		{connect.NewStruct(st).Put("a", "x"), `{"a":"x","n":7}`},
		{ts("1970-01-01T14:34:54.346Z"), "14:34:54.346Z"},
		{ts("2019-08-23T00:00:00.000Z"), "2019-08-23"},
		{ts("2019-08-23T14:34:54.346Z"), "2019-08-23T14:34:54.346Z"},
		{ts("1969-12-31T23:00:00.000Z"), "23:00:00.000Z"},
	} {
		got, err := ConvertToString(nil, c.value)
		if err != nil || got != c.want {
			t.Errorf("ConvertToString(%#v) = %q, %v; want %q", c.value, got, err, c.want)
		}
	}
	if _, err := ConvertToString(nil, uint8(1)); err == nil {
		t.Error("a uint8 was written")
	}
}

func FuzzParseString(f *testing.F) {
	for _, s := range []string{"", "null", "[1, 2]", `{"a":[1.5,"x"]}`, "2019-08-23T14:34:54.346Z", "1e5", "[[", `{"\"":1}`, "[null, 1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		schema, value, err := ParseString(s)
		if err != nil {
			return
		}
		if schema == nil {
			if value != nil {
				t.Fatalf("a value without a schema: %#v", value)
			}
			return
		}
		if err := connect.ValidateValue(schema, value); err != nil && schema.Type != connect.TypeArray && schema.Type != connect.TypeMap {
			t.Fatalf("ParseString(%q) = %v that its schema %v refuses: %v", s, value, schema, err)
		}
		if _, err := ConvertToString(schema, value); err != nil {
			t.Fatalf("ParseString(%q) gave %#v, which does not convert back: %v", s, value, err)
		}
	})
}
