package transforms

import (
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestFlattenNestedStruct(t *testing.T) {
	supported := connect.StructSchema("",
		connect.Field{Name: "int8", Schema: connect.Int8Schema},
		connect.Field{Name: "int16", Schema: connect.Int16Schema},
		connect.Field{Name: "int32", Schema: connect.Int32Schema},
		connect.Field{Name: "int64", Schema: connect.Int64Schema},
		connect.Field{Name: "float32", Schema: connect.Float32Schema},
		connect.Field{Name: "float64", Schema: connect.Float64Schema},
		connect.Field{Name: "boolean", Schema: connect.BooleanSchema},
		connect.Field{Name: "string", Schema: connect.StringSchema},
		connect.Field{Name: "bytes", Schema: connect.BytesSchema})
	one := connect.StructSchema("", connect.Field{Name: "B", Schema: supported})
	two := connect.StructSchema("", connect.Field{Name: "A", Schema: one})
	values := map[string]any{"int8": int8(8), "int16": int16(16), "int32": int32(32), "int64": int64(64), "float32": float32(32),
		"float64": float64(64), "boolean": true, "string": "stringy", "bytes": []byte("bytes")}
	s := connect.NewStruct(supported)
	for k, v := range values {
		s.Put(k, v)
	}
	value := connect.NewStruct(two).Put("A", connect.NewStruct(one).Put("B", s))

	xf := shapeConfigured(t, &Flatten{part: Value}, map[string]string{})
	out := shapeApply(t, xf, &connect.Record{Topic: "topic", ValueSchema: two, Value: value})
	st := out.Value.(*connect.Struct)
	if len(out.ValueSchema.Fields) != 9 {
		t.Fatalf("fields %+v", out.ValueSchema.Fields)
	}
	for k, v := range values {
		if got := st.Get("A.B." + k); !reflect.DeepEqual(got, v) {
			t.Errorf("A.B.%s = %#v, want %#v", k, got, v)
		}
	}
	if again := shapeApply(t, xf, &connect.Record{ValueSchema: two, Value: value}); again.ValueSchema != out.ValueSchema {
		t.Fatal("the schema was not cached")
	}
}

func TestFlattenNestedMapWithDelimiter(t *testing.T) {
	xf := shapeConfigured(t, &Flatten{part: Value}, map[string]string{"delimiter": "#"})
	in := map[string]any{"A": map[string]any{"B": map[string]any{"int8": int8(8), "string": "stringy", "bytes": []byte("b"), "n": nil,
		"list": []any{"bar", map[string]any{"baz": "lfg"}}}}, "top": int64(1)}
	out := shapeApply(t, xf, &connect.Record{Value: in})
	want := map[string]any{"A#B#int8": int8(8), "A#B#string": "stringy", "A#B#bytes": []byte("b"), "A#B#n": nil,
		"A#B#list": []any{"bar", map[string]any{"baz": "lfg"}}, "top": int64(1)}
	if out.ValueSchema != nil || !reflect.DeepEqual(out.Value, want) {
		t.Fatalf("got %#v\nwant %#v", out.Value, want)
	}
	// The key variant; a map read as entries is a map too.
	xk := shapeConfigured(t, &Flatten{part: Key}, map[string]string{})
	out = shapeApply(t, xk, &connect.Record{Key: map[string]any{"A": []connect.MapEntry{{Key: "B", Value: int32(12)}}}})
	if !reflect.DeepEqual(out.Key, map[string]any{"A.B": int32(12)}) {
		t.Fatalf("key %v", out.Key)
	}
}

func TestFlattenSharedName(t *testing.T) {
	// Kafka's LinkedHashMap keeps the value flattened last; java.util.HashMap
	// iterates "a" before "a.b" and "b" before "a".
	for _, tc := range []struct {
		in   map[string]any
		want map[string]any
	}{
		{map[string]any{"a.b": int64(1), "a": map[string]any{"b": int64(2)}}, map[string]any{"a.b": int64(1)}},
		{map[string]any{"b": map[string]any{"c": int64(1)}, "b.c": int64(2), "x": int64(3)}, map[string]any{"b.c": int64(2), "x": int64(3)}},
	} {
		out := shapeApply(t, shapeConfigured(t, &Flatten{part: Value}, nil), &connect.Record{Value: tc.in})
		if !reflect.DeepEqual(out.Value, tc.want) {
			t.Errorf("%v: %v, want %v", tc.in, out.Value, tc.want)
		}
	}
	schema := connect.StructSchema("",
		connect.Field{Name: "a.b", Schema: connect.Int32Schema},
		connect.Field{Name: "a", Schema: connect.StructSchema("", connect.Field{Name: "b", Schema: connect.Int32Schema})})
	shapeApplyError(t, shapeConfigured(t, &Flatten{part: Value}, nil), &connect.Record{ValueSchema: schema, Value: connect.NewStruct(schema)},
		"Cannot create field because of field name duplication a.b")
}

func TestFlattenOptionalAndDefaults(t *testing.T) {
	xf := shapeConfigured(t, &Flatten{part: Value}, nil)

	// Kafka's testOptionalAndDefaultValuesNested.
	schema := &connect.Schema{Type: connect.TypeStruct, Optional: true, Fields: []connect.Field{
		{Name: "req_field", Schema: connect.StringSchema},
		{Name: "opt_field", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "child_default"}},
	}}
	structSchema(schema, schema.Fields)
	schema.Default = connect.NewStruct(schema).Put("req_field", "req_default")
	out := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: connect.NewStruct(schema)})
	fs := out.ValueSchema.Fields
	if len(fs) != 2 || out.ValueSchema.Optional || out.ValueSchema.Default != nil {
		t.Fatalf("schema %+v", out.ValueSchema)
	}
	if s := fs[0].Schema; s.Type != connect.TypeString || !s.Optional || s.Default != "req_default" {
		t.Errorf("req_field %+v", s)
	}
	if s := fs[1].Schema; s.Type != connect.TypeString || !s.Optional || s.Default != "child_default" {
		t.Errorf("opt_field %+v", s)
	}

	// Kafka's testOptionalNestedStruct and testOptionalFieldStruct: a null
	// or unset child leaves its fields null.
	inner := &connect.Schema{Type: connect.TypeStruct, Optional: true, Fields: []connect.Field{{Name: "opt_int32", Schema: connect.OptionalInt32Schema}, {Name: "req", Schema: connect.Int64Schema}}}
	structSchema(inner, inner.Fields)
	outer := connect.StructSchema("", connect.Field{Name: "B", Schema: inner}, connect.Field{Name: "after", Schema: connect.StringSchema})
	out = shapeApply(t, xf, &connect.Record{ValueSchema: outer, Value: connect.NewStruct(outer).Put("after", "x")})
	st := out.Value.(*connect.Struct)
	if st.Get("B.opt_int32") != nil || st.Get("B.req") != nil || st.Get("after") != "x" || !out.ValueSchema.Field("B.req").Schema.Optional {
		t.Fatalf("value %v schema %+v", st, out.ValueSchema.Fields)
	}

	// Kafka's testOptionalStruct and tombstones: a null value passes with
	// its schema untouched.
	out = shapeApply(t, xf, &connect.Record{ValueSchema: inner})
	if out.ValueSchema != inner || out.Value != nil {
		t.Fatalf("tombstone %+v", out)
	}

	// Logical types and an array's items survive; an array is not entered.
	arr := &connect.Schema{Type: connect.TypeArray, Doc: "durk", Value: connect.StructSchema("", connect.Field{Name: "lfg", Schema: connect.StringSchema})}
	row := connect.StructSchema("", connect.Field{Name: "x", Schema: connect.StructSchema("",
		connect.Field{Name: "ts", Schema: connect.TimestampSchema()},
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "list", Schema: arr})})
	ts := time.UnixMilli(5).UTC()
	list := []any{connect.NewStruct(arr.Value).Put("lfg", "lfg")}
	v := connect.NewStruct(row).Put("x", connect.NewStruct(row.Fields[0].Schema).Put("ts", ts).Put("amount", &connect.Decimal{}).Put("list", list))
	out = shapeApply(t, xf, &connect.Record{ValueSchema: row, Value: v})
	fs = out.ValueSchema.Fields
	if fs[0].Schema.Name != connect.TimestampName || fs[0].Schema.Version != 1 || fs[1].Schema.Name != connect.DecimalName ||
		!reflect.DeepEqual(fs[1].Schema.Parameters, []connect.Parameter{{Key: "scale", Value: "2"}}) ||
		fs[2].Schema.Value != arr.Value || fs[2].Schema.Doc != "durk" {
		t.Fatalf("fields %+v", fs)
	}
	if st := out.Value.(*connect.Struct); st.Get("x.ts") != ts || !reflect.DeepEqual(st.Get("x.list"), list) {
		t.Fatalf("value %v", st)
	}
}

func TestFlattenErrors(t *testing.T) {
	xf := shapeConfigured(t, &Flatten{part: Value}, nil)
	withMap := connect.StructSchema("", connect.Field{Name: "a", Schema: connect.StructSchema("", connect.Field{Name: "m", Schema: connect.MapOf(connect.StringSchema, connect.StringSchema)})})
	for _, tc := range []struct {
		r   *connect.Record
		msg string
	}{
		{&connect.Record{ValueSchema: connect.Int32Schema, Value: int32(42)}, "Only Struct objects supported for [flattening], found: java.lang.Integer"},
		{&connect.Record{Value: int32(42)}, "Only Map objects supported in absence of schema for [flattening], found: java.lang.Integer"},
		{&connect.Record{ValueSchema: withMap, Value: connect.NewStruct(withMap)}, "Flatten transformation does not support MAP for record with schemas (for field a.m)."},
		{&connect.Record{Value: map[string]any{"a": map[string]any{"s": connect.NewStruct(withMap)}}},
			"Flatten transformation does not support class org.apache.kafka.connect.data.Struct for record without schemas (for field a.s)."},
		{&connect.Record{Value: map[string]any{"d": time.Unix(0, 0)}},
			"Flatten transformation was passed a value of type class java.util.Date which is not supported by Connect's data API"},
		{&connect.Record{Value: map[string]any{"m": []connect.MapEntry{{Key: int32(1), Value: "x"}}}},
			"Flatten transformation cannot name a field by a map key of type java.lang.Integer (for field m)."},
	} {
		shapeApplyError(t, xf, tc.r, tc.msg)
	}
}

func TestFlattenGolden(t *testing.T) {
	xf := shapeConfigured(t, &Flatten{part: Value}, map[string]string{"delimiter": "_"})
	shapeGolden(t, xf, true,
		`{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"default":"none","field":"name"}],"optional":true,"name":"row","field":"after"},{"type":"string","optional":false,"field":"op"},{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"tags"}],"optional":false,"name":"envelope","version":2},"payload":{"after":{"id":1,"name":null},"op":"c","tags":[1,2]}}`,
		`{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"field":"after_id"},{"type":"string","optional":true,"default":"none","field":"after_name"},{"type":"string","optional":false,"field":"op"},{"type":"array","items":{"type":"int32","optional":false},"optional":false,"field":"tags"}],"optional":false,"name":"envelope","version":2},"payload":{"after_id":1,"after_name":"none","op":"c","tags":[1,2]}}`,
		Value, connect.Record{Topic: "t"})
	// Kafka writes its LinkedHashMap in the order it flattened: op, then
	// after's name and id, java.util.HashMap's orders at each level. For
	// these names that is also the HashMap order of the flattened names,
	// in which the map[string]any is written.
	xf = shapeConfigured(t, &Flatten{part: Value}, nil)
	shapeGolden(t, xf, false, `{"after":{"id":1,"name":"n"},"op":"c"}`, `{"op":"c","after.name":"n","after.id":1}`, Value, connect.Record{Topic: "t"})
}

func TestShapePlugins(t *testing.T) {
	classes := map[string]bool{}
	for _, p := range Plugins() {
		classes[p.Class] = true
		if p.Type == connect.PluginPredicate {
			continue
		}
		if p.Type != connect.PluginTransformation || p.Version != kafkaVersion {
			t.Errorf("%s: %v %s", p.Class, p.Type, p.Version)
		}
		if _, ok := p.New().(connect.Transformation); !ok {
			t.Errorf("%s makes a %T", p.Class, p.New())
		}
	}
	for _, c := range []string{"InsertField$Key", "InsertField$Value", "ReplaceField$Key", "ReplaceField$Value", "ValueToKey",
		"ExtractField$Key", "ExtractField$Value", "HoistField$Key", "HoistField$Value", "Flatten$Key", "Flatten$Value"} {
		if !classes[Package+"."+c] {
			t.Errorf("no plugin %s", c)
		}
	}
}

// TestShapeConcurrentApply runs each transform from several goroutines
// over more schemas than the cache holds; the race detector checks it.
func TestShapeConcurrentApply(t *testing.T) {
	transforms := []connect.Transformation{
		shapeConfigured(t, &InsertField{part: Value}, map[string]string{"topic.field": "topic"}),
		shapeConfigured(t, &ReplaceField{part: Value}, map[string]string{"renames": "a:b"}),
		shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": "a"}),
		shapeConfigured(t, &ExtractField{part: Value}, map[string]string{"field": "a"}),
		shapeConfigured(t, &HoistField{part: Value}, map[string]string{"field": "h"}),
		shapeConfigured(t, &Flatten{part: Value}, nil),
	}
	schemas := make([]*connect.Schema, 40)
	for i := range schemas {
		schemas[i] = connect.StructSchema("", connect.Field{Name: "a", Schema: connect.Int64Schema})
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 200 {
				s := schemas[(i+g)%len(schemas)]
				for _, tr := range transforms {
					if _, err := tr.Apply(&connect.Record{Topic: "t", ValueSchema: s, Value: connect.NewStruct(s).Put("a", int64(i))}); err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
