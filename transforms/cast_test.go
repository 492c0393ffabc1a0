package transforms

import (
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestCastSpecErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"", "Must specify at least one field to cast."},
		{"a:b:c", "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"},
		{"foo:faketype", "Invalid type found in casting spec: faketype"},
		{"a:", "Invalid type found in casting spec: a"},
		{"foo:bytes", "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"},
		{"foo:array", "Cast transformation does not support casting to ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"},
		{"int8,foo:int16", "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"},
		{"::", "Invalid value [::] for configuration renames: Invalid rename mapping: ::"},
	}
	for _, tc := range tests {
		err := (&Cast{part: Value}).Configure(map[string]string{"spec": tc.spec})
		if err == nil || err.Error() != tc.want {
			t.Errorf("spec %q: %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestCastWholeValue(t *testing.T) {
	tests := []struct {
		spec   string
		schema *connect.Schema
		in     any
		want   any
		errMsg string
	}{
		{"int8", nil, int64(300), int8(44), ""},
		{"int16", nil, 1.9e10, int16(-1), ""},
		{"int32", nil, "42", int32(42), ""},
		{"int32", nil, "+42", int32(42), ""},
		{"int8", nil, "128", nil, "Value (128) was out of range for requested data type"},
		{"int64", nil, " 1", nil, "Value ( 1) was out of range for requested data type"},
		{"int64", nil, math.NaN(), int64(0), ""},
		{"float32", nil, "1.5f", float32(1.5), ""},
		{"float64", nil, " 0x1p3 ", float64(8), ""},
		{"float64", nil, "inf", nil, "Value (inf) was out of range for requested data type"},
		{"boolean", nil, "TRUE", true, ""},
		{"boolean", nil, "yes", false, ""},
		{"boolean", nil, 0.5, false, ""},
		{"float64", nil, true, float64(1), ""},
		{"string", nil, 1.0, "1.0", ""},
		{"string", nil, float32(1e10), "1.0E10", ""},
		{"string", nil, []byte("hi"), "aGk=", ""},
		{"int32", nil, []byte("hi"), nil, "Unexpected type in Cast transformation: class [B"},
		{"int32", nil, []any{}, nil, "Cast transformation does not support casting from ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"},
		{"int32", nil, time.Unix(0, 0), nil, "Cast transformation was passed a value of type class java.util.Date which is not supported by Connect's data API"},
		{"int32", connect.DateSchema(), time.UnixMilli(3 * msPerDay).UTC(), int32(3), ""},
		{"string", connect.DateSchema(), time.UnixMilli(3 * msPerDay).UTC(), "1970-01-04", ""},
		{"string", connect.TimestampSchema(), time.UnixMilli(1700000000123).UTC(), "2023-11-14T22:13:20.123Z", ""},
		{"string", connect.TimeSchema(), time.UnixMilli(3723004).UTC(), "01:02:03.004Z", ""},
		{"int64", connect.TimestampSchema(), time.UnixMilli(1700000000123).UTC(), int64(1700000000123), ""},
		{"string", connect.DecimalSchema(2), &connect.Decimal{Unscaled: big.NewInt(1234), Scale: 2}, "12.34", ""},
		{"string", connect.DecimalSchema(-2), &connect.Decimal{Unscaled: big.NewInt(12), Scale: -2}, "1.2E+3", ""},
		{"int8", connect.DecimalSchema(1), &connect.Decimal{Unscaled: big.NewInt(3009), Scale: 1}, int8(44), ""},
		{"float64", connect.DecimalSchema(1), &connect.Decimal{Unscaled: big.NewInt(15), Scale: 1}, 1.5, ""},
	}
	for _, tc := range tests {
		tr := configured(t, &Cast{part: Value}, map[string]string{"spec": tc.spec})
		out, msg := applyErr(tr, valueRecord(tc.schema, tc.in))
		if msg != tc.errMsg {
			t.Errorf("%s of %#v: error %q, want %q", tc.spec, tc.in, msg, tc.errMsg)
			continue
		}
		if msg == "" && !reflect.DeepEqual(out.Value, tc.want) {
			t.Errorf("%s of %#v = %#v, want %#v", tc.spec, tc.in, out.Value, tc.want)
		}
	}
}

func TestCastWholeValueKeepsSchemaBasics(t *testing.T) {
	tr := configured(t, &Cast{part: Key}, map[string]string{"spec": "int32"})
	in := &connect.Schema{Type: connect.TypeInt64, Optional: true, Default: int64(5), Name: "n", Version: 3, Doc: "d"}
	out, err := tr.Apply(&connect.Record{KeySchema: in, Key: int64(9)})
	if err != nil {
		t.Fatal(err)
	}
	want := &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(5), Name: "n", Version: 3, Doc: "d"}
	if !reflect.DeepEqual(out.KeySchema, want) || out.Key != int32(9) {
		t.Errorf("got %+v %v", out.KeySchema, out.Key)
	}
}

func TestCastStructFields(t *testing.T) {
	schema := connect.StructSchema("s",
		connect.Field{Name: "a", Schema: connect.Int64Schema},
		connect.Field{Name: "b", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "7"}},
		connect.Field{Name: "c", Schema: connect.StringSchema},
	)
	in := connect.NewStruct(schema).Put("a", int64(1)).Put("c", "x")
	for _, replace := range []string{"true", "false"} {
		tr := configured(t, &Cast{part: Value}, map[string]string{"spec": "a:boolean,b:int32", "replace.null.with.default": replace})
		out, err := tr.Apply(valueRecord(schema, in))
		if err != nil {
			t.Fatal(err)
		}
		st := out.Value.(*connect.Struct)
		if got := out.ValueSchema.Field("b").Schema; got.Type != connect.TypeInt32 || got.Default != int32(7) || !got.Optional {
			t.Errorf("b's schema %+v", got)
		}
		wantB := any(int32(7))
		if replace == "false" {
			wantB = nil
		}
		if st.Get("a") != true || st.AtWithoutDefault(1) != wantB || st.Get("c") != "x" {
			t.Errorf("replace=%s: %v", replace, st)
		}
	}
	tr := configured(t, &Cast{part: Value}, map[string]string{"spec": "a:int8"})
	if _, msg := applyErr(tr, valueRecord(schema, map[string]any{})); msg != "Only Struct objects supported for [cast types], found: java.util.HashMap" {
		t.Errorf("map with a schema: %q", msg)
	}
}

func TestCastGolden(t *testing.T) {
	tr := configured(t, &Cast{part: Value}, map[string]string{"spec": "id:string,score:int32"})
	s, v := decodeJSON(t, false, `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"double","optional":true,"field":"score"}],"optional":false},"payload":{"id":42,"score":9.75}}`)
	out, err := tr.Apply(valueRecord(s, v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int32","optional":true,"field":"score"}],"optional":false},"payload":{"id":"42","score":9}}`
	if got := encodeJSON(t, false, out.ValueSchema, out.Value); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	s, v = decodeJSON(t, true, `{"b":"12","a":1.5}`)
	tr = configured(t, &Cast{part: Value}, map[string]string{"spec": "a:int64,b:float64"})
	out, err = tr.Apply(valueRecord(s, v))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := encodeJSON(t, true, out.ValueSchema, out.Value), `{"a":1,"b":12.0}`; got != want {
		t.Errorf("schemaless: got %s, want %s", got, want)
	}
}

func FuzzParseCastSpec(f *testing.F) {
	for _, s := range []string{"a:int8,b:string", "int64", "::", "a:b:c", "x:BOOLEAN", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		l, err := connect.ParseValue("spec", connect.ConfigList, spec)
		if err != nil {
			return
		}
		casts, whole, err := ParseCastSpec(l.([]string))
		if err != nil {
			if _, ok := err.(*connect.ConfigError); !ok {
				t.Fatalf("%q: %T is not a ConfigError", spec, err)
			}
			return
		}
		if whole != "" && len(casts) > 0 {
			t.Fatalf("%q: both a whole-value cast and field casts", spec)
		}
	})
}
