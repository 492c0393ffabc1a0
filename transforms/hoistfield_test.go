package transforms

import (
	"reflect"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestHoistField(t *testing.T) {
	shapeConfigError(t, &HoistField{part: Key}, map[string]string{}, `Missing required configuration "field" which has no default value.`)
	xf := shapeConfigured(t, &HoistField{part: Key}, map[string]string{"field": "magic"})

	// Kafka's schemaless test, and a null, which is wrapped too.
	for _, v := range []any{int64(42), nil} {
		out := shapeApply(t, xf, &connect.Record{Key: v, Value: "v"})
		if out.KeySchema != nil || !reflect.DeepEqual(out.Key, map[string]any{"magic": v}) || out.Value != "v" {
			t.Fatalf("schemaless %v: %v", v, out.Key)
		}
	}

	// Kafka's withSchema test.
	out := shapeApply(t, xf, &connect.Record{KeySchema: connect.Int32Schema, Key: int32(42)})
	s := out.KeySchema
	if s.Type != connect.TypeStruct || s.Name != "" || s.Optional || len(s.Fields) != 1 || s.Fields[0].Name != "magic" || s.Fields[0].Schema != connect.Int32Schema {
		t.Fatalf("schema %+v", s)
	}
	if out.Key.(*connect.Struct).Get("magic") != int32(42) {
		t.Fatalf("key %v", out.Key)
	}
	if again := shapeApply(t, xf, &connect.Record{KeySchema: connect.Int32Schema, Key: int32(1)}); again.KeySchema != s {
		t.Fatal("the schema was not cached")
	}
	// An optional schema's null is wrapped; a required one's is refused.
	if out := shapeApply(t, xf, &connect.Record{KeySchema: connect.OptionalStringSchema}); out.Key.(*connect.Struct).Get("magic") != nil {
		t.Fatalf("null key %v", out.Key)
	}
	shapeApplyError(t, xf, &connect.Record{KeySchema: connect.StringSchema}, `Invalid value: null used for required field: "magic", schema type: STRING`)
	shapeApplyError(t, shapeConfigured(t, &HoistField{part: Value}, map[string]string{"field": ""}),
		&connect.Record{ValueSchema: connect.StringSchema, Value: "x"}, "fieldName cannot be null.")
}

func TestHoistFieldGolden(t *testing.T) {
	xf := shapeConfigured(t, &HoistField{part: Value}, map[string]string{"field": "line"})
	shapeGolden(t, xf, true, `{"schema":{"type":"string","optional":false},"payload":"hello"}`,
		`{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"line"}],"optional":false},"payload":{"line":"hello"}}`,
		Value, connect.Record{Topic: "t"})
	shapeGolden(t, xf, false, `[1,2]`, `{"line":[1,2]}`, Value, connect.Record{Topic: "t"})
}
