package transforms

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// shapeConfigured returns tr configured with cfg, failing the test if
// Configure refuses it.
func shapeConfigured[T connect.Transformation](t *testing.T, tr T, cfg map[string]string) T {
	t.Helper()
	if err := tr.Configure(cfg); err != nil {
		t.Fatalf("Configure(%v): %v", cfg, err)
	}
	return tr
}

// shapeConfigError checks that Configure refuses cfg with exactly msg.
func shapeConfigError(t *testing.T, tr connect.Transformation, cfg map[string]string, msg string) {
	t.Helper()
	err := tr.Configure(cfg)
	if err == nil {
		t.Fatalf("Configure(%v) accepted", cfg)
	}
	if err.Error() != msg {
		t.Fatalf("Configure(%v):\n got %q\nwant %q", cfg, err.Error(), msg)
	}
}

// shapeApplyError checks that Apply fails r with a DataException whose
// message is msg.
func shapeApplyError(t *testing.T, tr connect.Transformation, r *connect.Record, msg string) {
	t.Helper()
	out, err := tr.Apply(r)
	if err == nil {
		t.Fatalf("Apply gave %+v, want error %q", out, msg)
	}
	var de *DataError
	if !errors.As(err, &de) {
		t.Fatalf("Apply error %T %v is not a DataError", err, err)
	}
	if err.Error() != msg {
		t.Fatalf("Apply:\n got %q\nwant %q", err.Error(), msg)
	}
}

func shapeApply(t *testing.T, tr connect.Transformation, r *connect.Record) *connect.Record {
	t.Helper()
	out, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return out
}

func shapeJSONConverter(t *testing.T, schemas bool) *converters.JSONConverter {
	t.Helper()
	c := &converters.JSONConverter{}
	enable := "false"
	if schemas {
		enable = "true"
	}
	if err := c.Configure(map[string]string{"schemas.enable": enable}, false); err != nil {
		t.Fatal(err)
	}
	return c
}

// shapeGolden reads in as the JsonConverter does, runs the record through
// tr as set makes it (set puts the value where it belongs), and compares
// what the JsonConverter writes of the part with want.
func shapeGolden(t *testing.T, tr connect.Transformation, schemas bool, in, want string, part Part, base connect.Record) {
	t.Helper()
	c := shapeJSONConverter(t, schemas)
	schema, value, err := c.ToConnectData("topic", []byte(in))
	if err != nil {
		t.Fatalf("ToConnectData(%s): %v", in, err)
	}
	r := base
	part.Set(&r, schema, value)
	out := shapeApply(t, tr, &r)
	gotSchema, gotValue := part.Get(out)
	got, err := c.FromConnectData("topic", gotSchema, gotValue)
	if err != nil {
		t.Fatalf("FromConnectData: %v", err)
	}
	if string(got) != want {
		t.Fatalf("JSON of the transformed record:\n got %s\nwant %s", got, want)
	}
}

func shapeInt32(v int32) *int32 { return &v }

func TestInsertFieldConfigure(t *testing.T) {
	for _, tc := range []struct {
		cfg map[string]string
		msg string
	}{
		{map[string]string{}, "No field insertion configured"},
		{map[string]string{"static.value": "x"}, "No field insertion configured"},
		{map[string]string{"static.field": "instance"}, "Invalid value null for configuration static.value: No value specified for static field: instance"},
		{map[string]string{"topic.field": "t", "replace.null.with.default": "maybe"}, "Invalid value maybe for configuration replace.null.with.default: Expected value to be either true or false"},
	} {
		shapeConfigError(t, &InsertField{part: Value}, tc.cfg, tc.msg)
	}
	def := InsertFieldConfig()
	want := []string{"topic.field", "partition.field", "offset.field", "timestamp.field", "static.field", "static.value", "replace.null.with.default"}
	var names []string
	for _, k := range def.Keys() {
		names = append(names, k.Name)
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("keys %v, want %v", names, want)
	}
	if k := def.Key("offset.field"); k.Doc != "Field name for Kafka offset - only applicable to sink connectors.<br/>Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)." || k.Default != nil || k.Importance != connect.Medium {
		t.Fatalf("offset.field: %+v", k)
	}
}

func TestInsertFieldParseSpec(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		name     string
		optional bool
	}{
		{"f", "f", true}, {"f?", "f", true}, {"f!", "f", false}, {"f!?", "f!", true}, {"f?!", "f?", false},
		{"!", "", false}, {"", "", true}, {"a.b", "a.b", true},
	} {
		s := parseInsertionSpec(tc.spec)
		if s == nil || s.name != tc.name || s.optional != tc.optional {
			t.Errorf("parseInsertionSpec(%q) = %+v, want %q optional=%v", tc.spec, s, tc.name, tc.optional)
		}
	}
	if parseInsertionSpec(nil) != nil {
		t.Error("an unset key inserts a field")
	}
}

// insertFieldKafkaConfig is the config of Kafka's
// copySchemaAndInsertConfiguredFields test.
var insertFieldKafkaConfig = map[string]string{
	"topic.field":     "topic_field!",
	"partition.field": "partition_field",
	"timestamp.field": "timestamp_field?",
	"static.field":    "instance_id",
	"static.value":    "my-instance-id",
}

func TestInsertFieldWithSchema(t *testing.T) {
	xf := shapeConfigured(t, &InsertField{part: Value}, insertFieldKafkaConfig)
	in := &connect.Schema{Type: connect.TypeStruct, Name: "name", Version: 1, Doc: "doc", Optional: true,
		Fields: []connect.Field{{Name: "magic", Schema: connect.OptionalInt64Schema}}}
	value := connect.NewStruct(in).Put("magic", int64(42))
	r := &connect.Record{Topic: "test", Partition: shapeInt32(0), ValueSchema: in, Value: value}
	out := shapeApply(t, xf, r)
	s := out.ValueSchema
	if s.Name != "name" || s.Version != 1 || s.Doc != "doc" || s.Optional {
		t.Fatalf("schema basics: %+v (Kafka copies name, version and doc, not optionality)", s)
	}
	want := []struct {
		name     string
		typ      connect.Type
		optional bool
		logical  string
		value    any
	}{
		{"magic", connect.TypeInt64, true, "", int64(42)},
		{"topic_field", connect.TypeString, false, "", "test"},
		{"partition_field", connect.TypeInt32, true, "", int32(0)},
		{"timestamp_field", connect.TypeInt64, true, connect.TimestampName, nil},
		{"instance_id", connect.TypeString, true, "", "my-instance-id"},
	}
	if len(s.Fields) != len(want) {
		t.Fatalf("fields %+v", s.Fields)
	}
	st := out.Value.(*connect.Struct)
	for i, w := range want {
		f := s.Fields[i]
		if f.Name != w.name || f.Index != i || f.Schema.Type != w.typ || f.Schema.Optional != w.optional || f.Schema.Name != w.logical {
			t.Errorf("field %d: %+v %+v, want %+v", i, f, f.Schema, w)
		}
		if got := st.Get(w.name); !reflect.DeepEqual(got, w.value) {
			t.Errorf("%s = %#v, want %#v", w.name, got, w.value)
		}
	}
	if value.Schema() != in || len(value.Schema().Fields) != 1 {
		t.Fatal("the input struct changed")
	}

	// The schema is derived once per input schema.
	again := shapeApply(t, xf, &connect.Record{Topic: "test", Timestamp: time.UnixMilli(1234).Add(567), ValueSchema: in, Value: connect.NewStruct(in).Put("magic", int64(1))})
	if again.ValueSchema != s {
		t.Fatal("the updated schema was not cached")
	}
	st = again.Value.(*connect.Struct)
	if st.Get("partition_field") != nil {
		t.Fatalf("partition of a record without one: %v", st.Get("partition_field"))
	}
	if got := st.Get("timestamp_field"); got != time.UnixMilli(1234).UTC() {
		t.Fatalf("timestamp_field = %v, want the record's timestamp in milliseconds", got)
	}
}

func TestInsertFieldSchemaless(t *testing.T) {
	xf := shapeConfigured(t, &InsertField{part: Value}, insertFieldKafkaConfig)
	in := map[string]any{"magic": int64(42)}
	out := shapeApply(t, xf, &connect.Record{Topic: "test", Partition: shapeInt32(0), Value: in})
	want := map[string]any{"magic": int64(42), "topic_field": "test", "partition_field": int32(0), "instance_id": "my-instance-id"}
	if out.ValueSchema != nil || !reflect.DeepEqual(out.Value, want) {
		t.Fatalf("got %v %#v, want %#v", out.ValueSchema, out.Value, want)
	}
	if len(in) != 1 {
		t.Fatal("the input map changed")
	}
	out = shapeApply(t, xf, &connect.Record{Topic: "test", Timestamp: time.UnixMilli(1700000000123), Value: map[string]any{}})
	if got := out.Value.(map[string]any)["timestamp_field"]; got != int64(1700000000123) {
		t.Fatalf("timestamp_field = %#v, want the raw long", got)
	}
}

func TestInsertFieldPassesNulls(t *testing.T) {
	schema := connect.StructSchema("", connect.Field{Name: "magic", Schema: connect.OptionalInt64Schema})
	for _, tc := range []struct {
		part   Part
		schema *connect.Schema
	}{{Value, nil}, {Value, schema}, {Key, nil}, {Key, schema}} {
		xf := shapeConfigured(t, &InsertField{part: tc.part}, insertFieldKafkaConfig)
		r := &connect.Record{Topic: "test", Partition: shapeInt32(0)}
		tc.part.Set(r, tc.schema, nil)
		other := Key
		if tc.part == Key {
			other = Value
		}
		other.Set(r, nil, map[string]any{"x": int64(1)})
		out := shapeApply(t, xf, r)
		s, v := tc.part.Get(out)
		if s != tc.schema || v != nil {
			t.Errorf("%v %v: got %v %v", tc.part, tc.schema, s, v)
		}
	}
	// The key variant works on the key and leaves the value alone.
	xf := shapeConfigured(t, &InsertField{part: Key}, map[string]string{"topic.field": "t"})
	out := shapeApply(t, xf, &connect.Record{Topic: "test", Key: map[string]any{}, Value: "v"})
	if !reflect.DeepEqual(out.Key, map[string]any{"t": "test"}) || out.Value != "v" {
		t.Fatalf("key %v value %v", out.Key, out.Value)
	}
}

func TestInsertFieldOffset(t *testing.T) {
	xf := shapeConfigured(t, &InsertField{part: Value}, map[string]string{"offset.field": "off!"})
	schema := connect.StructSchema("", connect.Field{Name: "a", Schema: connect.StringSchema})
	shapeApplyError(t, xf, &connect.Record{Topic: "t", Value: map[string]any{}},
		"Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord")
	shapeApplyError(t, xf, &connect.Record{Topic: "t", ValueSchema: schema, Value: connect.NewStruct(schema).Put("a", "x")},
		"Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord")
	out := shapeApply(t, xf, &connect.Record{Topic: "t", Sink: true, Offset: 99, ValueSchema: schema, Value: connect.NewStruct(schema).Put("a", "x")})
	f := out.ValueSchema.Field("off")
	if f == nil || f.Schema.Type != connect.TypeInt64 || f.Schema.Optional || out.Value.(*connect.Struct).Get("off") != int64(99) {
		t.Fatalf("offset field %+v in %v", f, out.Value)
	}
	out = shapeApply(t, xf, &connect.Record{Topic: "t", Sink: true, Offset: 5, Value: map[string]any{}})
	if out.Value.(map[string]any)["off"] != int64(5) {
		t.Fatalf("schemaless offset: %v", out.Value)
	}
}

func TestInsertFieldErrors(t *testing.T) {
	schema := connect.StructSchema("", connect.Field{Name: "magic", Schema: connect.Int64Schema})
	value := connect.NewStruct(schema).Put("magic", int64(1))
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		r    *connect.Record
		msg  string
	}{
		{"schema without struct", map[string]string{"topic.field": "t"}, &connect.Record{ValueSchema: connect.StringSchema, Value: "x"},
			"Only Struct objects supported for [field insertion], found: java.lang.String"},
		{"schemaless without map", map[string]string{"topic.field": "t"}, &connect.Record{Value: int64(3)},
			"Only Map objects supported in absence of schema for [field insertion], found: java.lang.Long"},
		{"duplicate name", map[string]string{"topic.field": "magic"}, &connect.Record{ValueSchema: schema, Value: value},
			"Cannot create field because of field name duplication magic"},
		{"empty name", map[string]string{"static.field": "!", "static.value": "v"}, &connect.Record{ValueSchema: schema, Value: value},
			"fieldName cannot be null."},
		{"null in a required field", map[string]string{"topic.field": "t"}, &connect.Record{ValueSchema: schema, Value: connect.NewStruct(schema)},
			`Invalid value: null used for required field: "magic", schema type: INT64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shapeApplyError(t, shapeConfigured(t, &InsertField{part: Value}, tc.cfg), tc.r, tc.msg)
		})
	}
}

func TestInsertFieldReplaceNullWithDefault(t *testing.T) {
	optional := &connect.Schema{Type: connect.TypeString, Optional: true, Default: "default"}
	required := &connect.Schema{Type: connect.TypeString, Default: "default"}
	for _, tc := range []struct {
		replace string
		schema  *connect.Schema
		want    any
		msg     string
	}{
		{"true", optional, "default", ""},
		{"false", optional, nil, ""},
		{"true", required, "default", ""},
		// Kafka's Struct.put refuses the null, default or not.
		{"false", required, nil, `Invalid value: null used for required field: "optional_with_default", schema type: STRING`},
	} {
		schema := connect.StructSchema("", connect.Field{Name: "optional_with_default", Schema: tc.schema})
		xf := shapeConfigured(t, &InsertField{part: Value}, map[string]string{"topic.field": "topic", "replace.null.with.default": tc.replace})
		r := &connect.Record{Topic: "test", ValueSchema: schema, Value: connect.NewStruct(schema)}
		if tc.msg != "" {
			shapeApplyError(t, xf, r, tc.msg)
			continue
		}
		out := shapeApply(t, xf, r)
		if got := out.Value.(*connect.Struct).GetWithoutDefault("optional_with_default"); got != tc.want {
			t.Errorf("replace=%s optional=%v: %v, want %v", tc.replace, tc.schema.Optional, got, tc.want)
		}
	}
}

func TestInsertFieldGolden(t *testing.T) {
	cfg := map[string]string{"topic.field": "topic", "partition.field": "partition!", "timestamp.field": "ts", "offset.field": "offset?"}
	base := connect.Record{Topic: "orders", Partition: shapeInt32(3), Sink: true, Offset: 7, Timestamp: time.UnixMilli(1700000000123)}
	shapeGolden(t, shapeConfigured(t, &InsertField{part: Value}, cfg), true,
		`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"magic"}],"optional":true,"name":"m"},"payload":{"magic":42}}`,
		`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"magic"},{"type":"string","optional":true,"field":"topic"},`+
			`{"type":"int32","optional":false,"field":"partition"},{"type":"int64","optional":true,"field":"offset"},`+
			`{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"ts"}],"optional":false,"name":"m"},`+
			`"payload":{"magic":42,"topic":"orders","partition":3,"offset":7,"ts":1700000000123}}`,
		Value, base)
	// java.util.HashMap iterates magic, partition, topic, ts.
	cfg = map[string]string{"topic.field": "topic", "partition.field": "partition!", "timestamp.field": "ts"}
	shapeGolden(t, shapeConfigured(t, &InsertField{part: Value}, cfg), false,
		`{"magic":42}`, `{"magic":42,"partition":3,"topic":"orders","ts":1700000000123}`, Value, base)
}

func FuzzInsertFieldSpec(f *testing.F) {
	for _, s := range []string{"f", "f!", "f?", "!", "?", "", "a!?", " x! "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		xf := &InsertField{part: Value}
		if err := xf.Configure(map[string]string{"topic.field": spec}); err != nil {
			t.Fatalf("Configure(%q): %v", spec, err)
		}
		trimmed := strings.TrimSpace(spec)
		if xf.topic.name+"!" != trimmed && xf.topic.name+"?" != trimmed && xf.topic.name != trimmed {
			t.Fatalf("spec %q gave name %q", spec, xf.topic.name)
		}
		schema := connect.StructSchema("", connect.Field{Name: "magic", Schema: connect.Int64Schema})
		out, err := xf.Apply(&connect.Record{Topic: "t", ValueSchema: schema, Value: connect.NewStruct(schema).Put("magic", int64(1))})
		if err == nil {
			if out.Value.(*connect.Struct).Get(xf.topic.name) != "t" {
				t.Fatalf("spec %q: %v", spec, out.Value)
			}
		} else if _, ok := err.(*DataError); !ok {
			t.Fatalf("spec %q: %T %v", spec, err, err)
		}
	})
}
