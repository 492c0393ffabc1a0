package transforms

import (
	"reflect"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestValueToKeyConfigure(t *testing.T) {
	shapeConfigError(t, &ValueToKey{}, map[string]string{}, `Missing required configuration "fields" which has no default value.`)
	shapeConfigError(t, &ValueToKey{}, map[string]string{"fields": ""}, "Invalid value [] for configuration fields: Empty list")
	k := ValueToKeyConfig().Key("fields")
	if k.Type != connect.ConfigList || k.Importance != connect.High || k.Doc != "Field names on the record value to extract as the record key." {
		t.Fatalf("fields: %+v", k)
	}
}

func TestValueToKey(t *testing.T) {
	xf := shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": "a,b"})
	// Kafka's schemaless test.
	value := map[string]any{"a": int64(1), "b": int64(2), "c": int64(3)}
	out := shapeApply(t, xf, &connect.Record{Key: "old", Value: value})
	if out.KeySchema != nil || !reflect.DeepEqual(out.Key, map[string]any{"a": int64(1), "b": int64(2)}) {
		t.Fatalf("schemaless key %v", out.Key)
	}
	// A field the value lacks is a null in the key.
	xf2 := shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": "a,z"})
	if out := shapeApply(t, xf2, &connect.Record{Value: value}); !reflect.DeepEqual(out.Key, map[string]any{"a": int64(1), "z": nil}) {
		t.Fatalf("schemaless key %v", out.Key)
	}

	// Kafka's withSchema test.
	schema := connect.StructSchema("v",
		connect.Field{Name: "a", Schema: connect.Int32Schema},
		connect.Field{Name: "b", Schema: connect.Int32Schema},
		connect.Field{Name: "c", Schema: connect.Int32Schema})
	sv := connect.NewStruct(schema).Put("a", int32(1)).Put("b", int32(2)).Put("c", int32(3))
	out = shapeApply(t, xf, &connect.Record{KeySchema: connect.StringSchema, Key: "old", ValueSchema: schema, Value: sv})
	ks := out.KeySchema
	if ks.Type != connect.TypeStruct || ks.Name != "" || ks.Optional || len(ks.Fields) != 2 || ks.Fields[0].Name != "a" || ks.Fields[1].Name != "b" || ks.Fields[1].Index != 1 {
		t.Fatalf("key schema %+v", ks)
	}
	key := out.Key.(*connect.Struct)
	if key.Get("a") != int32(1) || key.Get("b") != int32(2) || out.Value != sv || out.ValueSchema != schema {
		t.Fatalf("key %v value %v", key, out.Value)
	}
	if again := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: sv}); again.KeySchema != ks {
		t.Fatal("the key schema was not cached")
	}

	for _, tc := range []struct {
		fields string
		r      *connect.Record
		msg    string
	}{
		{"not_exist", &connect.Record{ValueSchema: schema, Value: sv}, "Field does not exist: not_exist"},
		{"a,a", &connect.Record{ValueSchema: schema, Value: sv}, "Cannot create field because of field name duplication a"},
		// No null check: a tombstone fails, as in Kafka.
		{"a", &connect.Record{}, "Only Map objects supported in absence of schema for [copying fields from value to key], found: null"},
		{"a", &connect.Record{ValueSchema: schema}, "Only Struct objects supported for [copying fields from value to key], found: null"},
		{"a", &connect.Record{ValueSchema: schema, Value: connect.NewStruct(schema)}, `Invalid value: null used for required field: "a", schema type: INT32`},
	} {
		shapeApplyError(t, shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": tc.fields}), tc.r, tc.msg)
	}
}

func TestValueToKeyReplaceNullWithDefault(t *testing.T) {
	schema := connect.StructSchema("", connect.Field{Name: "optional_with_default", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "default"}})
	for _, tc := range []struct {
		replace string
		want    any
	}{{"true", "default"}, {"false", nil}} {
		xf := shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": "optional_with_default", "replace.null.with.default": tc.replace})
		out := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: connect.NewStruct(schema)})
		if got := out.Key.(*connect.Struct).GetWithoutDefault("optional_with_default"); got != tc.want {
			t.Errorf("replace=%s: %v, want %v", tc.replace, got, tc.want)
		}
	}
}

func TestValueToKeyGolden(t *testing.T) {
	xf := shapeConfigured(t, &ValueToKey{}, map[string]string{"fields": "id"})
	c := shapeJSONConverter(t, true)
	schema, value, err := c.ToConnectData("t", []byte(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":false,"name":"row"},"payload":{"id":5,"name":"n"}}`))
	if err != nil {
		t.Fatal(err)
	}
	out := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: value})
	got, err := c.FromConnectData("t", out.KeySchema, out.Key)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false},"payload":{"id":5}}`; string(got) != want {
		t.Fatalf("key JSON\n got %s\nwant %s", got, want)
	}
	c = shapeJSONConverter(t, false)
	_, value, err = c.ToConnectData("t", []byte(`{"id":5,"name":"n"}`))
	if err != nil {
		t.Fatal(err)
	}
	out = shapeApply(t, xf, &connect.Record{Value: value})
	if got, err := c.FromConnectData("t", out.KeySchema, out.Key); err != nil || string(got) != `{"id":5}` {
		t.Fatalf("schemaless key JSON %s, %v", got, err)
	}
}
