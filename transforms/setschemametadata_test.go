package transforms

import (
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestSetSchemaMetadataConfigErrors(t *testing.T) {
	for props, want := range map[string]string{
		"":    "Neither schema name nor version configured",
		"abc": "Invalid value abc for configuration schema.version: Not a number of type INT",
	} {
		cfg := map[string]string{}
		if props != "" {
			cfg["schema.version"] = props
		}
		if err := (&SetSchemaMetadata{}).Configure(cfg); err == nil || err.Error() != want {
			t.Errorf("%v: %v, want %q", cfg, err, want)
		}
	}
}

func TestSetSchemaMetadata(t *testing.T) {
	schema := connect.StructSchema("old", connect.Field{Name: "a", Schema: &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(4)}})
	schema.Doc = "doc"
	in := connect.NewStruct(schema)
	tr := configured(t, &SetSchemaMetadata{part: Value}, map[string]string{"schema.name": "new", "schema.version": "3"})
	out, err := tr.Apply(valueRecord(schema, in))
	if err != nil {
		t.Fatal(err)
	}
	if s := out.ValueSchema; s.Name != "new" || s.Version != 3 || s.Doc != "doc" || len(s.Fields) != 1 {
		t.Errorf("schema %+v", s)
	}
	st := out.Value.(*connect.Struct)
	if st.Schema() != out.ValueSchema || st.AtWithoutDefault(0) != int32(4) {
		t.Errorf("struct %v on %p, schema %p", st, st.Schema(), out.ValueSchema)
	}
	if schema.Name != "old" {
		t.Error("the input schema was changed")
	}

	tr = configured(t, &SetSchemaMetadata{part: Key}, map[string]string{"schema.version": "2", "replace.null.with.default": "false"})
	out, err = tr.Apply(&connect.Record{KeySchema: schema, Key: in})
	if err != nil {
		t.Fatal(err)
	}
	if out.KeySchema.Name != "old" || out.KeySchema.Version != 2 || out.Key.(*connect.Struct).AtWithoutDefault(0) != nil {
		t.Errorf("key %+v %v", out.KeySchema, out.Key)
	}

	if _, msg := applyErr(tr, &connect.Record{Key: "x"}); msg != "Schema required for [updating schema metadata]" {
		t.Errorf("schemaless: %q", msg)
	}
	if r, msg := applyErr(tr, &connect.Record{}); msg != "" || r.Key != nil {
		t.Errorf("null key without schema: %v %q", r, msg)
	}
}

func TestSetSchemaMetadataGolden(t *testing.T) {
	s, v := decodeJSON(t, false, `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"n"}],"optional":false,"name":"a.B"},"payload":{"n":"x"}}`)
	tr := configured(t, &SetSchemaMetadata{part: Value}, map[string]string{"schema.name": "c.D", "schema.version": "7"})
	out, err := tr.Apply(valueRecord(s, v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"n"}],"optional":false,"name":"c.D","version":7},"payload":{"n":"x"}}`
	if got := encodeJSON(t, false, out.ValueSchema, out.Value); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
