package converters

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func mustFrom(t *testing.T, c *JSONConverter, s *connect.Schema, v any) string {
	t.Helper()
	b, err := c.FromConnectData("topic", s, v)
	if err != nil {
		t.Fatalf("FromConnectData(%v): %v", v, err)
	}
	return string(b)
}

func mustTo(t *testing.T, c *JSONConverter, data string) (*connect.Schema, any) {
	t.Helper()
	s, v, err := c.ToConnectData("topic", []byte(data))
	if err != nil {
		t.Fatalf("ToConnectData(%s): %v", data, err)
	}
	return s, v
}

func TestEnvelopeRequired(t *testing.T) {
	c := newJSON(t, nil)
	for _, in := range []string{
		`{"a":1}`,
		`{"schema":null}`,
		`{"payload":1}`,
		`{"schema":null,"payload":1,"extra":true}`,
		`{"schema":null,"extra":true}`,
		`[1,2]`,
		`42`,
		`"text"`,
		`null`,
	} {
		_, _, err := c.ToConnectData("topic", []byte(in))
		if err == nil || err.Error() != envelopeError {
			t.Errorf("ToConnectData(%s) error = %v, want the envelope error", in, err)
		}
	}
	want := `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`
	if envelopeError != want {
		t.Errorf("envelope error text = %q, want Kafka's %q", envelopeError, want)
	}
	// A repeated member counts once, as in Jackson's ObjectNode.
	if _, v := mustTo(t, c, `{"schema":null,"payload":1,"payload":2}`); v != int64(2) {
		t.Errorf("repeated payload read as %v, want the last one, 2", v)
	}
}

func TestTombstones(t *testing.T) {
	for _, config := range []map[string]string{nil, {"schemas.enable": "false"}} {
		c := newJSON(t, config)
		b, err := c.FromConnectData("topic", nil, nil)
		if err != nil || b != nil {
			t.Errorf("%v: FromConnectData(nil, nil) = %q, %v; want nil bytes", config, b, err)
		}
		for _, data := range [][]byte{nil, {}, []byte(" \n")} {
			s, v, err := c.ToConnectData("topic", data)
			if s != nil || v != nil || err != nil {
				t.Errorf("%v: ToConnectData(%q) = %v, %v, %v; want all nil", config, data, s, v, err)
			}
		}
	}
	// An envelope with null schema and payload is not a tombstone on the
	// wire but reads as one.
	s, v := mustTo(t, newJSON(t, nil), `{"schema":null,"payload":null}`)
	if s != nil || v != nil {
		t.Errorf("null envelope read as %v, %v", s, v)
	}
}

// TestKafkaTestMessages reads messages taken from the shapes Kafka's own
// JsonConverterTest uses, with their whitespace.
func TestKafkaTestMessages(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct {
		in   string
		want any
		typ  connect.Type
	}{
		{`{ "schema": { "type": "boolean" }, "payload": true }`, true, connect.TypeBoolean},
		{`{ "schema": { "type": "int8" }, "payload": 12 }`, int8(12), connect.TypeInt8},
		{`{ "schema": { "type": "int16" }, "payload": 12 }`, int16(12), connect.TypeInt16},
		{`{ "schema": { "type": "int32" }, "payload": 12 }`, int32(12), connect.TypeInt32},
		{`{ "schema": { "type": "int64" }, "payload": 4398046511104 }`, int64(4398046511104), connect.TypeInt64},
		{`{ "schema": { "type": "float" }, "payload": 12.34 }`, float32(12.34), connect.TypeFloat32},
		{`{ "schema": { "type": "double" }, "payload": 12.34 }`, 12.34, connect.TypeFloat64},
		{`{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }`, []byte("test-string"), connect.TypeBytes},
		{`{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }`, "foo-bar-baz", connect.TypeString},
		{`{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }`,
			[]any{int32(1), int32(2), int32(3)}, connect.TypeArray},
		{`{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } }, "payload": { "key1": 12, "key2": 15} }`,
			map[string]any{"key1": int32(12), "key2": int32(15)}, connect.TypeMap},
		{`{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } }, "payload": [ [1, 12], [2, 15] ] }`,
			[]connect.MapEntry{{Key: int32(1), Value: int32(12)}, {Key: int32(2), Value: int32(15)}}, connect.TypeMap},
	}
	for _, tc := range cases {
		s, v := mustTo(t, c, tc.in)
		if s.Type != tc.typ || s.Optional {
			t.Errorf("%s: schema %+v", tc.in, s)
		}
		if !reflect.DeepEqual(v, tc.want) {
			t.Errorf("%s: value %#v, want %#v", tc.in, v, tc.want)
		}
	}

	s, v := mustTo(t, c, `{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, "doc": "the documentation", "parameters": { "foo": "bar" }}, "payload": true }`)
	if s.Name != "bool" || s.Version != 2 || s.Doc != "the documentation" || !reflect.DeepEqual(s.Parameters, []connect.Parameter{{Key: "foo", Value: "bar"}}) || v != true {
		t.Errorf("metadata read as %+v, %v", s, v)
	}

	s, v = mustTo(t, c, `{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", "optional": true }, {  "field": "required", "type": "string" }] }, "payload": { "required": "required" } }`)
	st := v.(*connect.Struct)
	if st.Schema() != s || st.Get("optional") != nil || st.Get("required") != "required" {
		t.Errorf("struct read as %v with schema %+v", st, s)
	}
	if len(s.Fields) != 2 || s.Fields[1].Index != 1 || !s.Fields[0].Schema.Optional {
		t.Errorf("struct schema fields %+v", s.Fields)
	}
}

func TestLogicalTypesRead(t *testing.T) {
	c := newJSON(t, nil)
	decimal := `{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1, "parameters": { "scale": "2" } }, "payload": %s }`
	for payload, want := range map[string]*connect.Decimal{
		`"AJw="`:   dec(156, 2),   // base64 of {0, -100}
		`1.56`:     dec(156, 2),   // a number keeps its own scale...
		`1.5600`:   dec(15600, 4), // ...trailing zeros included
		`1.5E+3`:   dec(15, -2),
		`7`:        dec(7, 0),
		`-00012.5`: dec(-125, 1), // Kafka's Jackson allows leading zeros
	} {
		_, v := mustTo(t, c, strings.Replace(decimal, "%s", payload, 1))
		got := v.(*connect.Decimal)
		if got.Unscaled.Cmp(want.Unscaled) != 0 || got.Scale != want.Scale {
			t.Errorf("Decimal payload %s read as %s (scale %d), want %s", payload, got, got.Scale, want)
		}
	}
	_, v := mustTo(t, c, `{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"30"}},"payload":1.23456789123456789012345678901234}`)
	if got := v.(*connect.Decimal).String(); got != "1.23456789123456789012345678901234" {
		t.Errorf("high-precision decimal read as %s", got)
	}

	_, v = mustTo(t, c, `{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 }, "payload": 10000 }`)
	if want := time.Date(1997, 5, 19, 0, 0, 0, 0, time.UTC); !v.(time.Time).Equal(want) {
		t.Errorf("Date read as %v, want %v", v, want)
	}
	_, v = mustTo(t, c, `{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1 }, "payload": 14400000 }`)
	if want := time.Date(1970, 1, 1, 4, 0, 0, 0, time.UTC); !v.(time.Time).Equal(want) {
		t.Errorf("Time read as %v, want %v", v, want)
	}
	_, v = mustTo(t, c, `{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1 }, "payload": 4000000000 }`)
	if want := time.UnixMilli(4000000000); !v.(time.Time).Equal(want) {
		t.Errorf("Timestamp read as %v, want %v", v, want)
	}
	s, v := mustTo(t, c, `{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1, "default": 42 }, "payload": null }`)
	if !v.(time.Time).Equal(time.UnixMilli(42)) || !s.Default.(time.Time).Equal(time.UnixMilli(42)) {
		t.Errorf("Timestamp default read as %v (schema default %v)", v, s.Default)
	}

	errs := map[string]string{
		`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":1.5}`:                              "Invalid type for Date, underlying representation should be integer but was NUMBER",
		`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":3000000000}`:                       "Invalid type for Date, underlying representation should be integer but was NUMBER",
		`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time"},"payload":-1}`:                               "Time values must use number of milliseconds greater than 0 and less than 86400000",
		`{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp"},"payload":"x"}`:                         "Invalid type for Timestamp, underlying representation should be integral but was STRING",
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal"},"payload":true}`:                          "Invalid type for Decimal, underlying representation should be numeric or bytes but was BOOLEAN",
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal"},"payload":"AJw="}`:                        "Invalid bytes for Decimal field",
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":""}`: "Invalid bytes for Decimal field",
	}
	for in, want := range errs {
		if _, _, err := c.ToConnectData("topic", []byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ToConnectData(%s) error = %v, want %q", in, err, want)
		}
	}
}

func TestDecimalNumeric(t *testing.T) {
	numeric := newJSON(t, map[string]string{"decimal.format": "numeric"}) // case-insensitive
	base64 := newJSON(t, nil)
	schema := connect.DecimalSchema(2)

	out := mustFrom(t, numeric, schema, dec(1250, 2))
	want := `{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":12.50}`
	if out != want {
		t.Errorf("NUMERIC output\n got %s\nwant %s", out, want)
	}
	// Either converter reads either form.
	for _, c := range []*JSONConverter{numeric, base64} {
		_, v := mustTo(t, c, out)
		if d := v.(*connect.Decimal); d.Scale != 2 || d.Unscaled.Int64() != 1250 {
			t.Errorf("read back %s scale %d", d, d.Scale)
		}
	}
	// NUMERIC writes a Decimal whatever its scale; BASE64 needs the
	// schema's, as Java's Decimal.fromLogical does.
	if got := mustFrom(t, numeric, schema, dec(15, -2)); !strings.HasSuffix(got, `"payload":1.5E+3}`) {
		t.Errorf("NUMERIC with a negative scale: %s", got)
	}
	_, err := base64.FromConnectData("topic", schema, dec(15, 1))
	var de *decimalError
	if !errors.As(err, &de) || err.Error() != "BigDecimal has mismatching scale value for given Decimal schema" {
		t.Errorf("BASE64 with the wrong scale: %v", err)
	}
	if _, err := base64.FromConnectData("topic", &connect.Schema{Type: connect.TypeBytes, Name: connect.DecimalName}, dec(1, 0)); err == nil ||
		err.Error() != "Invalid Decimal schema: scale parameter not found." {
		t.Errorf("BASE64 without a scale parameter: %v", err)
	}
	if _, err := base64.FromConnectData("topic", schema, 1.5); err == nil || !strings.HasPrefix(err.Error(), "Invalid type for Decimal, expected BigDecimal but was") {
		t.Errorf("a float for a Decimal: %v", err)
	}
}

// TestDecimalSchemaScale checks the short digit strings read without
// strconv against Integer.parseInt's answers.
func TestDecimalSchemaScale(t *testing.T) {
	for _, c := range []struct {
		param string
		want  int32
		ok    bool
	}{
		{"0", 0, true}, {"2", 2, true}, {"9", 9, true}, {"10", 10, true}, {"38", 38, true},
		{"07", 7, true}, {"+5", 5, true}, {"-3", -3, true}, {"123", 123, true},
		{"", 0, false}, {"x", 0, false}, {"1x", 0, false}, {"2147483648", 0, false},
	} {
		s := connect.DecimalSchema(0)
		s.Parameters = []connect.Parameter{{Key: connect.DecimalScaleParameter, Value: c.param}}
		got, err := decimalSchemaScale(s)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("scale %q: got %d, %v; want %d, ok %t", c.param, got, err, c.want, c.ok)
		}
	}
}

func TestReplaceNullWithDefault(t *testing.T) {
	schema := &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(5)}
	replace := newJSON(t, nil)
	keep := newJSON(t, map[string]string{"replace.null.with.default": "false"})

	if got := mustFrom(t, replace, schema, nil); got != `{"schema":{"type":"int32","optional":true,"default":5},"payload":5}` {
		t.Errorf("replacing: %s", got)
	}
	if got := mustFrom(t, keep, schema, nil); got != `{"schema":{"type":"int32","optional":true,"default":5},"payload":null}` {
		t.Errorf("keeping null: %s", got)
	}
	in := `{"schema":{"type":"int32","optional":true,"default":5},"payload":null}`
	if _, v := mustTo(t, replace, in); v != int32(5) {
		t.Errorf("replacing on read: %v", v)
	}
	if _, v := mustTo(t, keep, in); v != nil {
		t.Errorf("keeping null on read: %v", v)
	}
	// A required schema with a default cannot keep a null.
	required := `{"schema":{"type":"int32","default":5},"payload":null}`
	if _, _, err := keep.ToConnectData("topic", []byte(required)); err == nil || err.Error() != "Invalid null value for required INT32 field" {
		t.Errorf("required null kept: %v", err)
	}

	// A struct field left unset is read without its default
	// (getWithoutDefault), on the first record and on those after it.
	st := connect.StructSchema("s", connect.Field{Name: "n", Schema: schema})
	for i := 1; i <= 3; i++ {
		if got := mustFrom(t, replace, st, connect.NewStruct(st)); !strings.HasSuffix(got, `"payload":{"n":5}}`) {
			t.Errorf("record %d, replacing a struct field: %s", i, got)
		}
		if got := mustFrom(t, keep, st, connect.NewStruct(st)); !strings.HasSuffix(got, `"payload":{"n":null}}`) {
			t.Errorf("record %d, keeping a struct field's null: %s", i, got)
		}
	}
	reqSt := connect.StructSchema("r", connect.Field{Name: "n", Schema: &connect.Schema{Type: connect.TypeInt32, Default: int32(5)}})
	if _, err := keep.FromConnectData("topic", reqSt, connect.NewStruct(reqSt)); err == nil ||
		err.Error() != "Conversion error: null value for field that is required and has no default value" {
		t.Errorf("keeping a required struct field's null: %v", err)
	}
}

// TestPlannedWritesMatchPlain writes each value with a converter seeing its
// schema for the first time (the plain path) and with one that has seen it
// twice in a row (the schema's plan): bytes and errors must be the same,
// including where the plan hands a field back to the plain path.
func TestPlannedWritesMatchPlain(t *testing.T) {
	s := connect.StructSchema("p",
		connect.Field{Name: "i8", Schema: connect.OptionalInt8Schema},
		connect.Field{Name: "i16", Schema: connect.Int16Schema},
		connect.Field{Name: "i32", Schema: &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(9)}},
		connect.Field{Name: "i64", Schema: connect.Int64Schema},
		connect.Field{Name: "s\"q", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "b", Schema: connect.BooleanSchema},
		connect.Field{Name: "f", Schema: connect.Float64Schema},
		connect.Field{Name: "dec", Schema: connect.DecimalSchema(2).AsOptional()},
		connect.Field{Name: "at", Schema: connect.TimestampSchema().AsOptional()},
		connect.Field{Name: "day", Schema: connect.DateSchema().AsOptional()},
		connect.Field{Name: "raw", Schema: connect.OptionalBytesSchema},
		connect.Field{Name: "inner", Schema: connect.StructSchema("in", connect.Field{Name: "x", Schema: connect.Int32Schema}).AsOptional()},
	)
	full := func() *connect.Struct {
		return connect.NewStruct(s).Put("i8", int8(-1)).Put("i16", int16(2)).Put("i32", int32(-3)).Put("i64", int64(1)<<40).
			Put("s\"q", "é\"\n").Put("b", true).Put("f", 0.1).Put("dec", dec(-12345, 2)).
			Put("at", time.UnixMilli(1700000000123).UTC()).Put("day", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)).
			Put("raw", []byte{0, 255})
	}
	sparse := connect.NewStruct(s).Put("i16", int16(0)).Put("i64", int64(0)).Put("b", false).Put("f", 1e300)
	large := full()
	large.Put("dec", &connect.Decimal{Unscaled: new(big.Int).Lsh(big.NewInt(1), 70), Scale: 2})
	wrongScale := full()
	wrongScale.Put("dec", dec(1, 3))
	// An equal schema built separately: Java's equals, not the plan's.
	twin := connect.StructSchema("p", s.Fields...)
	twinValue := connect.NewStruct(twin)
	for i := range s.Fields {
		if v := full().AtWithoutDefault(i); v != nil {
			twinValue.Put(s.Fields[i].Name, v)
		}
	}
	// Values a source set from their kinds' constructors, one of a scale
	// the schema does not have and one of a type it does not allow, which
	// SetValueAt does not check.
	byValue := connect.NewStruct(s)
	byValue.SetValueAt(3, connect.Int64Value(1<<40))
	byValue.SetValueAt(4, connect.StringValue("é\"\n"))
	byValue.SetValueAt(7, connect.DecimalValue(-12345, 3))
	byValue.SetValueAt(8, connect.UnixNanoValue(-1_500_001))
	wrongType := connect.NewStruct(s)
	wrongType.SetValueAt(1, connect.Int64Value(5))
	values := map[string]any{
		"by value": byValue, "wrong type by value": wrongType,
		"full": full(), "sparse": sparse, "unset": connect.NewStruct(s), "large decimal": large,
		"decimal of another scale": wrongScale, "equal schema": twinValue, "null": nil,
		"not a struct": map[string]any{"i8": int8(1)}, "typed nil": (*connect.Struct)(nil),
	}
	for _, config := range []map[string]string{
		nil, {"schemas.enable": "false"}, {"decimal.format": "NUMERIC"}, {"replace.null.with.default": "false"},
	} {
		for name, v := range values {
			plain, perr := newJSON(t, config).FromConnectData("topic", s, v)
			warm := newJSON(t, config)
			for range 2 {
				if _, err := warm.FromConnectData("topic", s, full()); err != nil {
					t.Fatal(err)
				}
			}
			if warm.plans.last.Load() == nil {
				t.Fatalf("%v: no plan after two records with the same schema", config)
			}
			planned, err := warm.FromConnectData("topic", s, v)
			if fmt.Sprint(err) != fmt.Sprint(perr) || !bytes.Equal(planned, plain) {
				t.Errorf("%v, %s: planned %s (%v), plain %s (%v)", config, name, planned, err, plain, perr)
			}
			if v == nil || perr != nil {
				continue
			}
			// Appending, planned or not, writes the same bytes after
			// what the buffer holds.
			for _, c := range []*JSONConverter{warm, newJSON(t, config)} {
				prefix := []byte("earlier record")
				out, err := c.AppendFromConnectData(prefix[:len(prefix):len(prefix)], "topic", s, v)
				if err != nil || !bytes.Equal(out, append([]byte("earlier record"), plain...)) {
					t.Errorf("%v, %s: appended %s (%v), want %q then %s", config, name, out, err, prefix, plain)
				}
			}
		}
	}
}

func TestStringConverterAppends(t *testing.T) {
	var c StringConverter
	if err := c.Configure(nil, false); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"é", int32(7), true, []byte("raw")} {
		want, _ := c.FromConnectData("t", nil, v)
		out, err := c.AppendFromConnectData([]byte("x"), "t", nil, v)
		if err != nil || string(out) != "x"+string(want) {
			t.Errorf("%v: appended %q (%v), want %q", v, out, err, "x"+string(want))
		}
	}
}

func TestRequiredNull(t *testing.T) {
	c := newJSON(t, nil)
	s := connect.StructSchema("s", connect.Field{Name: "id", Schema: connect.Int32Schema})
	if _, err := c.FromConnectData("topic", connect.StringSchema, nil); err == nil ||
		err.Error() != "Conversion error: null value for field that is required and has no default value" {
		t.Errorf("required null written: %v", err)
	}
	if _, err := c.FromConnectData("topic", s, connect.NewStruct(s)); err == nil {
		t.Error("a struct missing a required field was written")
	}
	for _, in := range []string{
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"}]},"payload":{}}`,
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"id"}]},"payload":{"id":null}}`,
		`{"schema":{"type":"string"},"payload":null}`,
		`{"schema":{"type":"string","default":null},"payload":"x"}`, // Java reads the default against a required schema
	} {
		if _, _, err := c.ToConnectData("topic", []byte(in)); err == nil || !strings.HasPrefix(err.Error(), "Invalid null value for required") {
			t.Errorf("ToConnectData(%s) error = %v", in, err)
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	c := newJSON(t, nil)
	errs := map[string]string{
		`{"schema":{},"payload":1}`:                                                                                      "Schema must contain 'type' field",
		`{"schema":"int32","payload":1}`:                                                                                 "Schema must contain 'type' field",
		`{"schema":{"type":"int128"},"payload":1}`:                                                                       "Unknown schema type: int128",
		`{"schema":{"type":"array"},"payload":[]}`:                                                                       "Array schema did not specify the element type",
		`{"schema":{"type":"array","items":null},"payload":[]}`:                                                          "Array schema did not specify the element type",
		`{"schema":{"type":"map","values":{"type":"string"}},"payload":{}}`:                                              "Map schema did not specify the key type",
		`{"schema":{"type":"map","keys":{"type":"string"}},"payload":{}}`:                                                "Map schema did not specify the value type",
		`{"schema":{"type":"struct"},"payload":{}}`:                                                                      `Struct schema's "fields" argument is not an array.`,
		`{"schema":{"type":"struct","fields":[{"type":"int32"}]},"payload":{}}`:                                          "Struct schema's field name not specified properly",
		`{"schema":{"type":"string","parameters":{"a":1}},"payload":"x"}`:                                                "Schema parameters must have string values.",
		`{"schema":{"type":"struct","fields":[{"type":"int32","field":"a"},{"type":"int32","field":"a"}]},"payload":{}}`: "Cannot create field because of field name duplication a",
		`{"schema":{"type":"struct","fields":[]},"payload":[]}`:                                                          "Structs should be encoded as JSON objects, but found ARRAY",
		`{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}},"payload":[]}`:                      "Maps with string fields should be encoded as JSON objects, but found ARRAY",
		`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":{}}`:                       "Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT",
		`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":[1]}`:                      "Found invalid map entry instead of array tuple: NUMBER",
		`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":[[1,2,3]]}`:                "Found invalid map entry, expected length 2 but found :3",
		`{"schema":{"type":"bytes"},"payload":"not base64!"}`:                                                            "Invalid bytes field",
		`{"schema":{"type":"int32"},"payload":"12"}`:                                                                     "Invalid value for INT32 schema: JSON STRING",
		`{"schema":{"type":"string"},"payload":12}`:                                                                      "Invalid value for STRING schema: JSON NUMBER",
	}
	for in, want := range errs {
		if _, _, err := c.ToConnectData("topic", []byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ToConnectData(%s) error = %v, want %q", in, err, want)
		}
	}
}

// TestNumberNarrowing checks the Java narrowing Jackson applies when a
// schema asks for a smaller type than the JSON number holds.
func TestNumberNarrowing(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct {
		typ, payload string
		want         any
	}{
		{"int32", "3000000000", int32(-1294967296)},
		{"int8", "300", int8(44)},
		{"int16", "1.9", int16(1)},
		{"int32", "-1.9", int32(-1)},
		{"int64", "1e2", int64(100)},
		{"int64", "1E-5", int64(0)},
		{"int64", "1e64", int64(0)},
		{"int64", "18446744073709551617", int64(1)},
		{"int64", "-9223372036854775809", int64(math.MaxInt64)},
		{"int32", "007", int32(7)},
		{"double", "-0.0", 0.0},
		{"double", "1e400", math.Inf(1)},
		{"double", "12", 12.0},
		{"float", "16777217", float32(16777216)},
		{"double", `"NaN"`, math.NaN()},
		{"float", `"-Infinity"`, float32(math.Inf(-1))},
	}
	for _, tc := range cases {
		in := `{"schema":{"type":"` + tc.typ + `"},"payload":` + tc.payload + `}`
		_, v := mustTo(t, c, in)
		if f, ok := v.(float64); ok && math.IsNaN(f) && math.IsNaN(tc.want.(float64)) {
			continue
		}
		if v != tc.want {
			t.Errorf("%s: read %#v, want %#v", in, v, tc.want)
		}
		if f, ok := v.(float64); ok && f == 0 && math.Signbit(f) {
			t.Errorf("%s: read negative zero; BigDecimal has none", in)
		}
	}
}

func TestSchemaless(t *testing.T) {
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	s, v := mustTo(t, c, `{ "a": "", "b": null, "n": 12, "f": 12.24, "l": [1, "2", 3], "big": 18446744073709551617, "o": {"x": true}}`)
	want := map[string]any{
		"a": "", "b": nil, "n": int64(12), "f": 12.24, "l": []any{int64(1), "2", int64(3)},
		"big": int64(1), "o": map[string]any{"x": true},
	}
	if s != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("read %v, %#v\nwant %#v", s, v, want)
	}
	// Without the envelope, a schema still shapes the output.
	schema := connect.StructSchema("", connect.Field{Name: "b", Schema: connect.Int32Schema}, connect.Field{Name: "a", Schema: connect.OptionalStringSchema})
	if got := mustFrom(t, c, schema, connect.NewStruct(schema).Put("b", int32(1))); got != `{"b":1,"a":null}` {
		t.Errorf("struct without envelope: %s", got)
	}
	if got := mustFrom(t, c, nil, true); got != `true` {
		t.Errorf("bare boolean: %s", got)
	}
	if got := mustFrom(t, c, connect.OptionalStringSchema, nil); got != `null` {
		t.Errorf("optional null without envelope: %s", got)
	}
}

func TestSchemalessWrite(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct {
		value any
		want  string
	}{
		{[]any{1, "string", true}, `[1,"string",true]`},
		{[]any{int8(1), int16(2), int32(3), int64(4), float32(0.5), 0.25, []byte{0xFF}, nil}, `[1,2,3,4,0.5,0.25,"/w==",null]`},
		{[]connect.MapEntry{{Key: "string", Value: int32(12)}, {Key: int32(52), Value: "string"}, {Key: false, Value: true}},
			`[["string",12],[52,"string"],[false,true]]`},
		{[]connect.MapEntry{{Key: "b", Value: 1}, {Key: "a", Value: 2}}, `{"b":1,"a":2}`},
		{math.NaN(), `"NaN"`},
	}
	for _, tc := range cases {
		if got := mustFrom(t, c, nil, tc.value); got != `{"schema":null,"payload":`+tc.want+`}` {
			t.Errorf("schemaless %#v written as %s, want payload %s", tc.value, got, tc.want)
		}
	}
	s := connect.StructSchema("s", connect.Field{Name: "a", Schema: connect.Int32Schema})
	for v, want := range map[any]string{
		connect.NewStruct(s).Put("a", int32(1)): "Mismatching schema.",
		dec(1, 0):                               "Go type *connect.Decimal does not have corresponding schema type.",
		struct{}{}:                              "Go type struct {} does not have corresponding schema type.",
	} {
		if _, err := c.FromConnectData("topic", nil, v); err == nil || err.Error() != want {
			t.Errorf("schemaless %T: error %v, want %q", v, err, want)
		}
	}
}

func TestWriteTypeMismatch(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct {
		schema *connect.Schema
		value  any
		want   string
	}{
		{connect.Float64Schema, true, "Invalid type for FLOAT64: bool"},
		{connect.Int32Schema, int64(1), "Invalid type for INT32: int64"},
		{connect.Int64Schema, 1, "Invalid type for INT64: int"},
		{connect.BytesSchema, "x", "Invalid type for bytes type: string"},
		{connect.DateSchema(), time.Date(2024, 1, 2, 3, 0, 0, 0, time.UTC), "Kafka Connect Date type should not have any time fields set to non-zero values"},
		{connect.TimeSchema(), time.Date(2024, 1, 2, 3, 0, 0, 0, time.UTC), "Kafka Connect Time type should not have any date fields set to non-zero values."},
		{connect.TimestampSchema(), int64(5), "Invalid type for Timestamp, expected Date but was int64"},
	}
	for _, tc := range cases {
		if _, err := c.FromConnectData("topic", tc.schema, tc.value); err == nil || err.Error() != tc.want {
			t.Errorf("%s with %T: error %v, want %q", tc.schema.Type, tc.value, err, tc.want)
		}
	}
	// A struct of an equal schema built separately is accepted, as Java's
	// ConnectSchema.equals allows; a different one is not.
	a := connect.StructSchema("s", connect.Field{Name: "x", Schema: connect.Int32Schema})
	b := connect.StructSchema("s", connect.Field{Name: "x", Schema: connect.Int32Schema})
	other := connect.StructSchema("s", connect.Field{Name: "x", Schema: connect.OptionalInt32Schema})
	if got := mustFrom(t, c, a, connect.NewStruct(b).Put("x", int32(1))); !strings.HasSuffix(got, `"payload":{"x":1}}`) {
		t.Errorf("equal schema: %s", got)
	}
	if _, err := c.FromConnectData("topic", a, connect.NewStruct(other).Put("x", int32(1))); err == nil || err.Error() != "Mismatching schema." {
		t.Errorf("different schema: %v", err)
	}
}

func TestRoundTripSchemaless(t *testing.T) {
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	for _, in := range []string{
		`{"kafka_partition":0,"kafka_topic":"t"}`,
		`[1,-2,3.5,1.0E10,"s",true,false,null,{},[]]`,
		`{"a":{"b":{"c":[{"d":"\u0001\"\\"}]}}}`,
		`"Infinity"`,
		`123`,
	} {
		_, v := mustTo(t, c, in)
		out, err := c.FromConnectData("topic", nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("schemaless round trip of %s gave %s", in, out)
		}
	}
}

func TestRoundTripDefaultsAndNesting(t *testing.T) {
	c := newJSON(t, nil)
	for _, in := range []string{
		`{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"string","optional":false,"field":"x"}],"optional":true,"default":{"x":"dflt"},"field":"inner"}],"optional":false},"payload":{"inner":{"x":"dflt"}}}`,
		`{"schema":{"type":"map","keys":{"type":"struct","fields":[{"type":"int8","optional":false,"field":"k"}],"optional":false},"values":{"type":"array","items":{"type":"bytes","optional":true},"optional":false},"optional":false},"payload":[[{"k":1},["AA==",null]],[{"k":2},[]]]}`,
		`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"default":"AJw="},"payload":"/38="}`,
		`{"schema":{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Time","version":1,"default":86400000},"payload":86400000}`,
		`{"schema":{"type":"string","optional":false,"doc":"é` + "\u2028" + `"},"payload":"\u0000\t"}`,
	} {
		s, v := mustTo(t, c, in)
		if out := mustFrom(t, c, s, v); out != in {
			t.Errorf("round trip of\n%s\ngave\n%s", in, out)
		}
	}
}

func TestParserStrictness(t *testing.T) {
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	for _, in := range []string{
		`{"a":1} x`, `{"a":1,}`, `[1,]`, `01.`, `.5`, `+1`, `1e`, `NaN`, `"\x"`, "\"a\x01\"",
		"\"\xff\"", `{"a" 1}`, `tru`, `"unterminated`, `{"a":1`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
		"1" + strings.Repeat("0", 1000),
		"1e99999999999",
	} {
		if _, _, err := c.ToConnectData("topic", []byte(in)); err == nil ||
			!strings.HasPrefix(err.Error(), "Converting byte[] to Kafka Connect data failed due to serialization error: ") {
			t.Errorf("ToConnectData(%.40q) error = %v", in, err)
		}
	}
	ok := map[string]any{
		`"\ud83d\ude00 \ud83d x"`: "😀 \uFFFD x",
		`"\/\b\f\n\r\t\""`:        "/\b\f\n\r\t\"",
		`-0`:                      int64(0),
		`0012`:                    int64(12),
	}
	for in, want := range ok {
		_, v := mustTo(t, c, in)
		if v != want {
			t.Errorf("ToConnectData(%s) = %#v, want %#v", in, v, want)
		}
	}
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	if _, _, err := c.ToConnectData("topic", []byte(deep)); err != nil {
		t.Errorf("nesting at Jackson's limit refused: %v", err)
	}
}

func TestConfigure(t *testing.T) {
	for _, tc := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"schemas.enable": "maybe"}, "Invalid value maybe for configuration schemas.enable: Expected value to be either true or false"},
		{map[string]string{"replace.null.with.default": "1"}, "Invalid value 1 for configuration replace.null.with.default: Expected value to be either true or false"},
		{map[string]string{"decimal.format": "hex"}, "Invalid value hex for configuration decimal.format: String must be one of (case insensitive): BASE64, NUMERIC"},
		{map[string]string{"schemas.cache.size": "lots"}, "Invalid value lots for configuration schemas.cache.size: Not a number of type INT"},
	} {
		if err := new(JSONConverter).Configure(tc.config, false); err == nil || err.Error() != tc.want {
			t.Errorf("Configure(%v) = %v, want %q", tc.config, err, tc.want)
		}
	}
	c := newJSON(t, map[string]string{"schemas.enable": " FALSE ", "schemas.cache.size": "10", "decimal.format": "Numeric", "replace.null.with.default": "False"})
	if !c.schemaless || !c.numericDecimals || !c.keepNulls {
		t.Errorf("configured as %+v", *c)
	}
	// Configure starts from the defaults each time.
	if err := c.Configure(nil, true); err != nil || c.schemaless || c.numericDecimals || c.keepNulls {
		t.Errorf("reconfigured as %+v, %v", *c, err)
	}
	if c.schemas == nil || c.schemas.max != 1000 {
		t.Errorf("schemas cache %+v, want one of 1000 schemas by default", c.schemas)
	}
}

func TestTwosComplement(t *testing.T) {
	// Expected bytes are BigInteger.toByteArray output.
	cases := map[int64][]byte{
		0: {0}, 1: {1}, 127: {0x7F}, 128: {0, 0x80}, 156: {0, 0x9C}, 255: {0, 0xFF}, 256: {1, 0},
		-1: {0xFF}, -128: {0x80}, -129: {0xFF, 0x7F}, -256: {0xFF, 0}, -32768: {0x80, 0},
		math.MinInt64: {0x80, 0, 0, 0, 0, 0, 0, 0},
	}
	for n, want := range cases {
		got := twosComplement(big.NewInt(n))
		if !bytes.Equal(got, want) {
			t.Errorf("twosComplement(%d) = % X, want % X", n, got, want)
		}
		if got, want := appendBase64Int64(nil, n), appendBase64(nil, want); !bytes.Equal(got, want) {
			t.Errorf("appendBase64Int64(%d) = %s, want %s", n, got, want)
		}
		back, err := fromTwosComplement(got)
		if err != nil || back.Int64() != n {
			t.Errorf("fromTwosComplement(% X) = %v, %v; want %d", got, back, err, n)
		}
	}
}

// The int64 shortcut agrees with the big.Int path around every byte
// boundary (every length of the encoding, so every padding).
func TestAppendBase64Int64Boundaries(t *testing.T) {
	for shift := range 64 {
		for _, d := range []int64{-2, -1, 0, 1} {
			for _, n := range []int64{int64(1)<<shift + d, -(int64(1) << shift) + d} {
				want := appendBase64([]byte("x"), twosComplement(big.NewInt(n)))
				if got := appendBase64Int64([]byte("x"), n); !bytes.Equal(got, want) {
					t.Errorf("appendBase64Int64(%d) = %s, want %s", n, got, want)
				}
			}
		}
	}
}

func TestSchemaCache(t *testing.T) {
	rec := func(typ string) []byte {
		return []byte(`{"schema":{"type":"struct","fields":[{"field":"a","type":"` + typ + `"}]},"payload":{"a":1}}`)
	}
	read := func(c *JSONConverter, data []byte) *connect.Schema {
		t.Helper()
		s, v, err := c.ToConnectData("t", data)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.(*connect.Struct).At(0); got == nil {
			t.Fatalf("%s read as %v", data, v)
		}
		return s
	}
	c := newJSON(t, map[string]string{"schemas.cache.size": "2"})
	if a, b := read(c, rec("int32")), read(c, rec("int32")); a != b {
		t.Error("the same schema text was read twice: not cached")
	}
	for _, typ := range []string{"int8", "int16", "int64"} {
		read(c, rec(typ))
	}
	if n := len(c.schemas.items); n != 2 {
		t.Errorf("cache of 2 holds %d schemas", n)
	}
	off := newJSON(t, map[string]string{"schemas.cache.size": "0"})
	if a, b := read(off, rec("int32")), read(off, rec("int32")); a == b || off.schemas != nil {
		t.Error("schemas.cache.size=0 still caches")
	}
}

// TestPlansConcurrently writes records of two schemas from several
// goroutines at once, as a sink's converter is used (run under -race):
// plans replace each other, and every record is still written right.
func TestPlansConcurrently(t *testing.T) {
	a := connect.StructSchema("a", connect.Field{Name: "id", Schema: connect.Int64Schema})
	b := connect.StructSchema("b", connect.Field{Name: "name", Schema: connect.StringSchema})
	va, vb := connect.NewStruct(a).Put("id", int64(7)), connect.NewStruct(b).Put("name", "x")
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				s, v, want := a, any(va), `{"id":7}`
				if (i/3+g)%2 == 1 {
					s, v, want = b, vb, `{"name":"x"}`
				}
				if got, err := c.FromConnectData("t", s, v); err != nil || string(got) != want {
					errs <- fmt.Sprintf("goroutine %d, record %d: %s, %v; want %s", g, i, got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A struct whose values a source set by SetValueAt from their kinds'
// constructors converts to the same bytes as one set with Put, by the
// general writer and by a plan.
func TestJSONUnboxedStructValues(t *testing.T) {
	s := connect.StructSchema("orders",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "customer", Schema: connect.StringSchema},
		connect.Field{Name: "updated_at", Schema: connect.TimestampSchema()},
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)})
	// After the epoch, and before it with a part of a millisecond, which
	// rounds down.
	for _, at := range []time.Time{time.UnixMicro(1_700_000_000_123_456).UTC(), time.Unix(0, -1_500_001).UTC()} {
		testJSONUnboxed(t, s, at)
	}
}

func testJSONUnboxed(t *testing.T, s *connect.Schema, at time.Time) {
	// A string with what JSON escapes, as Jackson does.
	const customer = "c \"q\" \\ \u00e9\n\u2028"
	boxed := connect.NewStruct(s).Put("id", int64(-7)).Put("customer", customer).Put("updated_at", at).
		Put("amount", &connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2})
	unboxed := connect.NewStruct(s)
	unboxed.SetValueAt(0, connect.Int64Value(-7))
	unboxed.SetValueAt(1, connect.StringValue(customer))
	unboxed.SetValueAt(2, connect.UnixNanoValue(at.UnixNano()))
	unboxed.SetValueAt(3, connect.DecimalValue(-12345, 2))
	for _, cfg := range []map[string]string{
		{"schemas.enable": "false"}, {"schemas.enable": "true"}, {"schemas.enable": "false", "decimal.format": "NUMERIC"},
	} {
		c := newJSON(t, cfg)
		want, err := c.FromConnectData("t", s, boxed)
		if err != nil {
			t.Fatal(err)
		}
		// The first conversions take the general writer; a plan is made
		// the second time in a row a schema comes.
		for i := 0; i < 3; i++ {
			got, err := c.FromConnectData("t", s, unboxed)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("%v, conversion %d: %s, want %s", cfg, i, got, want)
			}
		}
	}
}
