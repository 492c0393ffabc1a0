package transforms

import (
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestMaskFieldConfigErrors(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"fields": ""}, "Invalid value [] for configuration fields: Empty list"},
		{map[string]string{"fields": "a", "replacement": ""}, "Invalid value  for configuration replacement: String must be non-empty"},
	}
	for _, tc := range tests {
		if err := (&MaskField{}).Configure(tc.props); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
}

func TestMaskFieldSchemaless(t *testing.T) {
	in := map[string]any{"i": int64(5), "f": 1.5, "b": true, "s": "x", "l": []any{1}, "m": map[string]any{"k": 1}, "d": time.Unix(9, 0), "keep": "y"}
	tests := []struct {
		repl   string
		fields string
		want   map[string]any
		errMsg string
	}{
		{"", "i,f,b,s,l,m,d", map[string]any{"i": int64(0), "f": 0.0, "b": false, "s": "", "l": []any{}, "m": map[string]any{}, "d": time.UnixMilli(0).UTC(), "keep": "y"}, ""},
		{"123", "i,f,s,absent", map[string]any{"i": int64(123), "f": 123.0, "s": "123", "b": true, "l": []any{1}, "m": map[string]any{"k": 1}, "d": time.Unix(9, 0), "keep": "y", "absent": nil}, ""},
		{"1e2", "i", nil, ""},
		{"abc", "i", nil, "Unable to convert abc (class java.lang.String) to a number"},
		{"abc", "b", nil, "Cannot mask value of type class java.lang.Boolean with custom replacement."},
	}
	for _, tc := range tests {
		props := map[string]string{"fields": tc.fields}
		if tc.repl != "" {
			props["replacement"] = tc.repl
		}
		tr := configured(t, &MaskField{part: Value}, props)
		out, msg := applyErr(tr, valueRecord(nil, in))
		if msg != tc.errMsg {
			t.Errorf("%v: error %q, want %q", props, msg, tc.errMsg)
			continue
		}
		if tc.want != nil && !reflect.DeepEqual(out.Value, tc.want) {
			t.Errorf("%v: got %#v", props, out.Value)
		}
		if tc.repl == "1e2" && out.Value.(map[string]any)["i"] != int64(100) {
			t.Errorf("1e2 as a Long: %v", out.Value)
		}
	}
	if in["i"] != int64(5) {
		t.Error("the input map was changed")
	}
	tr := configured(t, &MaskField{part: Value}, map[string]string{"fields": "a"})
	if _, msg := applyErr(tr, valueRecord(nil, nil)); msg != "Only Map objects supported in absence of schema for [mask fields], found: null" {
		t.Errorf("null value: %q", msg)
	}
	if _, msg := applyErr(tr, valueRecord(nil, map[string]any{"a": []byte("x")})); msg != "Cannot mask value of type: class [B" {
		t.Errorf("bytes: %q", msg)
	}
}

func TestMaskFieldWithSchema(t *testing.T) {
	schema := connect.StructSchema("s",
		connect.Field{Name: "n", Schema: connect.Int32Schema},
		connect.Field{Name: "dec", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "opt", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "def"}},
		connect.Field{Name: "keep", Schema: connect.StringSchema},
	)
	in := connect.NewStruct(schema).Put("n", int32(3)).Put("dec", &connect.Decimal{Unscaled: big.NewInt(5), Scale: 2}).Put("keep", "k")
	tr := configured(t, &MaskField{part: Value}, map[string]string{"fields": "n,dec,opt"})
	out, err := tr.Apply(valueRecord(schema, in))
	if err != nil {
		t.Fatal(err)
	}
	st := out.Value.(*connect.Struct)
	if out.ValueSchema != schema || st.Get("n") != int32(0) || st.Get("dec").(*connect.Decimal).Unscaled.Sign() != 0 || st.AtWithoutDefault(2) != "" || st.Get("keep") != "k" {
		t.Errorf("got %v", st)
	}
	tr = configured(t, &MaskField{part: Value}, map[string]string{"fields": "opt", "replace.null.with.default": "false"})
	out, err = tr.Apply(valueRecord(schema, in))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Value.(*connect.Struct).AtWithoutDefault(2); got != nil {
		t.Errorf("unset optional field masked to %v", got)
	}
}

func TestMaskFieldGolden(t *testing.T) {
	s, v := decodeJSON(t, false, `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"ssn"},{"type":"int32","optional":false,"field":"age"}],"optional":false},"payload":{"ssn":"123-45-6789","age":42}}`)
	tr := configured(t, &MaskField{part: Value}, map[string]string{"fields": "ssn,age", "replacement": "0"})
	out, err := tr.Apply(valueRecord(s, v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"ssn"},{"type":"int32","optional":false,"field":"age"}],"optional":false},"payload":{"ssn":"0","age":0}}`
	if got := encodeJSON(t, false, out.ValueSchema, out.Value); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
