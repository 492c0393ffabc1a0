package converters

import (
	"bytes"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

type goldenCase struct {
	name   string
	config map[string]string
	schema *connect.Schema
	value  any
	// roundTrip says that reading the output and writing what was read
	// must give the same bytes. It does not hold where a schema is written
	// without the envelope: the reader then sees maps, not structs.
	roundTrip bool
}

func dec(unscaled int64, scale int32) *connect.Decimal {
	return &connect.Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

func everythingCase() goldenCase {
	inner := connect.StructSchema("com.example.Inner",
		connect.Field{Name: "label", Schema: connect.StringSchema},
		connect.Field{Name: "weight", Schema: connect.OptionalFloat64Schema},
	)
	documented := &connect.Schema{
		Type: connect.TypeString, Optional: true, Name: "com.example.Documented", Version: 2,
		Doc:        "a \"quoted\" doc\n",
		Parameters: []connect.Parameter{{Key: "zeta", Value: "1"}, {Key: "alpha", Value: "2"}},
	}
	s := connect.StructSchema("com.example.Everything",
		connect.Field{Name: "i8", Schema: connect.Int8Schema},
		connect.Field{Name: "i16", Schema: connect.Int16Schema},
		connect.Field{Name: "i32", Schema: connect.Int32Schema},
		connect.Field{Name: "i64", Schema: connect.Int64Schema},
		connect.Field{Name: "f32", Schema: connect.Float32Schema},
		connect.Field{Name: "f64", Schema: connect.Float64Schema},
		connect.Field{Name: "bool", Schema: connect.BooleanSchema},
		connect.Field{Name: "str", Schema: connect.StringSchema},
		connect.Field{Name: "bytes", Schema: connect.BytesSchema},
		connect.Field{Name: "maybe", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "withDefault", Schema: &connect.Schema{Type: connect.TypeInt32, Default: int32(42)}},
		connect.Field{Name: "documented", Schema: documented},
		connect.Field{Name: "inner", Schema: inner},
		connect.Field{Name: "list", Schema: connect.ArrayOf(connect.Int32Schema)},
		connect.Field{Name: "byName", Schema: connect.MapOf(connect.StringSchema, connect.Int64Schema)},
		connect.Field{Name: "byId", Schema: connect.MapOf(connect.Int32Schema, connect.StringSchema)},
	)
	v := connect.NewStruct(s).
		Put("i8", int8(-8)).
		Put("i16", int16(1600)).
		Put("i32", int32(-320000)).
		Put("i64", int64(4398046511104)).
		Put("f32", float32(1.5)).
		Put("f64", 1.0).
		Put("bool", true).
		Put("str", "tab\there \"q\" é").
		Put("bytes", []byte("test-string")).
		Put("documented", "doc'd").
		Put("inner", connect.NewStruct(inner).Put("label", "x")).
		Put("list", []any{int32(1), int32(2), int32(3)}).
		Put("byName", map[string]any{"kafka_topic": int64(1), "kafka_partition": int64(2), "a": int64(3)}).
		Put("byId", []connect.MapEntry{{Key: int32(20), Value: "twenty"}, {Key: int32(1), Value: "one"}})
	return goldenCase{name: "everything", schema: s, value: v, roundTrip: true}
}

func logicalCase() goldenCase {
	s := connect.StructSchema("com.example.Logical",
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "negative", Schema: connect.DecimalSchema(3)},
		connect.Field{Name: "noAmount", Schema: connect.DecimalSchema(2).AsOptional()},
		connect.Field{Name: "day", Schema: connect.DateSchema()},
		connect.Field{Name: "time", Schema: connect.TimeSchema()},
		connect.Field{Name: "at", Schema: connect.TimestampSchema()},
	)
	v := connect.NewStruct(s).
		Put("amount", dec(1250, 2)).
		Put("negative", dec(-129, 3)).
		Put("day", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)).
		Put("time", time.Date(1970, 1, 1, 12, 34, 56, 789e6, time.UTC)).
		Put("at", time.Date(2024, 1, 2, 3, 4, 5, 678e6, time.UTC))
	return goldenCase{name: "logical", schema: s, value: v, roundTrip: true}
}

func goldenCases() []goldenCase {
	numeric := map[string]string{"decimal.format": "NUMERIC"}
	schemaless := map[string]string{"schemas.enable": "false"}
	withDefault := &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(7)}
	status := connect.StructSchema("",
		connect.Field{Name: "state", Schema: connect.StringSchema},
		connect.Field{Name: "trace", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "worker_id", Schema: connect.StringSchema},
		connect.Field{Name: "generation", Schema: connect.Int32Schema},
	)
	return []goldenCase{
		everythingCase(),
		logicalCase(),
		{name: "decimal", schema: connect.DecimalSchema(2), value: dec(1250, 2), roundTrip: true},
		{name: "decimal_numeric", config: numeric, schema: connect.ArrayOf(connect.DecimalSchema(2)),
			value: []any{dec(1250, 2), dec(-5, 2), dec(0, 2)}, roundTrip: true},
		// BigDecimal.toString turns to E notation for a negative scale or
		// a value under 1E-6; Jackson writes exactly that.
		{name: "decimal_numeric_exponent", config: numeric, schema: connect.ArrayOf(connect.DecimalSchema(0).AsOptional()),
			value: []any{dec(1, -2), dec(5, 10), dec(0, 7), dec(1, 6), dec(1, 7), dec(-123, 10), nil}, roundTrip: true},
		{name: "doubles", schema: connect.ArrayOf(connect.Float64Schema),
			value: []any{1.0, 1e10, 0.1, 100.0, 1e7, 0.001, 1e-4, -2.5e-5, 123456789.0}, roundTrip: true},
		{name: "floats", schema: connect.ArrayOf(connect.Float32Schema),
			value: []any{float32(1), float32(0.1), float32(3e10), float32(3.4028235e38)}, roundTrip: true},
		{name: "default_replaces_null", schema: withDefault, value: nil, roundTrip: true},
		{name: "optional_null", schema: connect.OptionalStringSchema, value: nil, roundTrip: true},
		{name: "null_schema", value: map[string]any{
			"kafka_topic": "t", "kafka_partition": int64(0), "offset": int64(42),
			"list": []any{int64(1), "two", true, nil, 2.5, []byte("hi")},
		}, roundTrip: true},
		{name: "schemaless_map", config: schemaless, value: map[string]any{
			"kafka_topic": "t", "kafka_partition": int64(0), "nested": map[string]any{"a": 1.0, "b": nil},
		}, roundTrip: true},
		{name: "schemaless_struct", config: schemaless, schema: status,
			value: connect.NewStruct(status).Put("state", "RUNNING").Put("worker_id", "w1:8083").Put("generation", int32(3))},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := newJSON(t, tc.config)
			got, err := c.FromConnectData("topic", tc.schema, tc.value)
			if err != nil {
				t.Fatalf("FromConnectData: %v", err)
			}
			// The second record in a row with a schema is written by
			// its plan: the bytes must not change.
			for i := 2; i <= 3; i++ {
				if again, err := c.FromConnectData("topic", tc.schema, tc.value); err != nil || !bytes.Equal(again, got) {
					t.Fatalf("record %d with the same schema: %v\n got: %s\nfirst: %s", i, err, again, got)
				}
			}
			path := filepath.Join("testdata", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s\n got: %s\nwant: %s", path, got, want)
			}
			if !tc.roundTrip {
				return
			}
			schema, value, err := c.ToConnectData("topic", got)
			if err != nil {
				t.Fatalf("ToConnectData: %v", err)
			}
			again, err := c.FromConnectData("topic", schema, value)
			if err != nil {
				t.Fatalf("FromConnectData after the round trip: %v", err)
			}
			if !bytes.Equal(again, got) {
				t.Errorf("round trip changed the bytes\nfirst: %s\nagain: %s", got, again)
			}
		})
	}
}

// TestGoldenPins checks, independently of the golden files, the pieces of
// Java output that the brief and the spec spell out, so that an -update
// run cannot silently bless a regression in them.
func TestGoldenPins(t *testing.T) {
	pins := map[string][]string{
		"decimal": {`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"BOI="}`},
		"everything": {
			`{"schema":{"type":"struct","fields":[{"type":"int8","optional":false,"field":"i8"},`,
			`{"type":"float","optional":false,"field":"f32"},{"type":"double","optional":false,"field":"f64"},`,
			`{"type":"int32","optional":false,"default":42,"field":"withDefault"}`,
			`{"type":"string","optional":true,"name":"com.example.Documented","version":2,"doc":"a \"quoted\" doc\n","parameters":{"zeta":"1","alpha":"2"},"field":"documented"}`,
			`{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"list"}`,
			`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":false,"field":"byName"}`,
			`],"optional":false,"name":"com.example.Everything"},"payload":{"i8":-8,"i16":1600,"i32":-320000,"i64":4398046511104,"f32":1.5,"f64":1.0,"bool":true,`,
			`"bytes":"dGVzdC1zdHJpbmc=","maybe":null,"withDefault":42,`,
			`"inner":{"label":"x","weight":null}`,
			`"byName":{"a":3,"kafka_partition":2,"kafka_topic":1}`,
			`"byId":[[20,"twenty"],[1,"one"]]}}`,
		},
		"logical": {
			`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"amount"}`,
			`{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"day"}`,
			`"payload":{"amount":"BOI=","negative":"/38=","noAmount":null,"day":19724,"time":45296789,"at":1704164645678}`,
		},
		"decimal_numeric":          {`"payload":[12.50,-0.05,0.00]`},
		"decimal_numeric_exponent": {`"payload":[1E+2,5E-10,0E-7,0.000001,1E-7,-1.23E-8,null]`},
		"doubles":                  {`"payload":[1.0,1.0E10,0.1,100.0,1.0E7,0.001,1.0E-4,-2.5E-5,1.23456789E8]`},
		"floats":                   {`"payload":[1.0,0.1,3.0E10,3.4028235E38]`},
		"default_replaces_null":    {`{"schema":{"type":"int32","optional":true,"default":7},"payload":7}`},
		"optional_null":            {`{"schema":{"type":"string","optional":true},"payload":null}`},
		"null_schema":              {`{"schema":null,"payload":{"kafka_partition":0,`, `"list":[1,"two",true,null,2.5,"aGk="]`},
		"schemaless_map":           {`{"kafka_partition":0,"kafka_topic":"t","nested":{"a":1.0,"b":null}}`},
		"schemaless_struct":        {`{"state":"RUNNING","trace":null,"worker_id":"w1:8083","generation":3}`},
	}
	for _, tc := range goldenCases() {
		want, ok := pins[tc.name]
		if !ok {
			t.Errorf("case %s has no pins", tc.name)
			continue
		}
		got, err := os.ReadFile(filepath.Join("testdata", tc.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(got), w) {
				t.Errorf("%s: output lacks %s\nin: %s", tc.name, w, got)
			}
		}
	}
}

func newJSON(t testing.TB, config map[string]string) *JSONConverter {
	t.Helper()
	c := new(JSONConverter)
	if err := c.Configure(config, false); err != nil {
		t.Fatalf("Configure(%v): %v", config, err)
	}
	return c
}
