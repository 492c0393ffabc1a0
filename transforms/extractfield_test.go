package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestFieldPathV2 holds Kafka's FieldPathNotationTest cases.
func TestFieldPathV2(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"..", []string{"", "", ""}},
		{"foo..", []string{"foo", "", ""}},
		{".bar.", []string{"", "bar", ""}},
		{"..baz", []string{"", "", "baz"}},
		{"", nil},
		{"foobarbaz", []string{"foobarbaz"}},
		{"foo.bar.baz", []string{"foo", "bar", "baz"}},
		{"foo`bar`baz", []string{"foo`bar`baz"}},
		{"`foo.bar.baz`", []string{"foo.bar.baz"}},
		{"foo.`bar.baz`", []string{"foo", "bar.baz"}},
		{"`foo.bar`.baz", []string{"foo.bar", "baz"}},
		{"foo.`bar`.baz", []string{"foo", "bar", "baz"}},
		{"foo.``bar.baz`", []string{"foo", "`bar.baz"}},
		{"foo.`bar.baz``", []string{"foo", "bar.baz`"}},
		{"foo.`ba`r.baz`", []string{"foo", "ba`r.baz"}},
		{"foo.ba`r.baz", []string{"foo", "ba`r", "baz"}},
		{"foo.``bar``.baz", []string{"foo", "`bar`", "baz"}},
		{"``foo.bar.baz``", []string{"`foo.bar.baz`"}},
		{"foo.`bar\\`.baz`", []string{"foo", "bar`.baz"}},
		{"foo.`bar.`baz`", []string{"foo", "bar.`baz"}},
		{"foo.`bar\\`.`baz`", []string{"foo", "bar`.`baz"}},
		{"foo.`bar\\\\`.\\`baz`", []string{"foo", "bar\\`.\\`baz"}},
		{"`a.b`.", []string{"a.b", ""}},
	} {
		got, err := parseFieldPath(tc.path, true)
		if err != nil || !reflect.DeepEqual([]string(got), tc.want) {
			t.Errorf("parseFieldPath(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ path, msg string }{
		{"`foo.bar.baz", "Incomplete backtick pair in path: [`foo.bar.baz], consider adding a backslash before backtick at position 0 to escape it"},
		{"foo.`bar.baz", "Incomplete backtick pair in path: [foo.`bar.baz], consider adding a backslash before backtick at position 4 to escape it"},
		{"foo.bar.`baz", "Incomplete backtick pair in path: [foo.bar.`baz], consider adding a backslash before backtick at position 8 to escape it"},
		{"foo.bar.`baz\\`", "Incomplete backtick pair in path: [foo.bar.`baz\\`], consider adding a backslash before backtick at position 8 to escape it"},
		// Java counts UTF-16 code units: é is one, 😀 two.
		{"é😀.`x", "Incomplete backtick pair in path: [é😀.`x], consider adding a backslash before backtick at position 4 to escape it"},
	} {
		if _, err := parseFieldPath(tc.path, true); err == nil || err.Error() != tc.msg {
			t.Errorf("parseFieldPath(%q): %v, want %q", tc.path, err, tc.msg)
		}
	}
	for _, p := range []string{"foo.bar.baz", "foo`bar`", "foo.`bar.baz`", ""} {
		if got, err := parseFieldPath(p, false); err != nil || !reflect.DeepEqual([]string(got), []string{p}) {
			t.Errorf("V1 %q: %q, %v", p, got, err)
		}
	}
}

func TestExtractFieldConfigure(t *testing.T) {
	shapeConfigError(t, &ExtractField{part: Value}, map[string]string{}, `Missing required configuration "field" which has no default value.`)
	shapeConfigError(t, &ExtractField{part: Value}, map[string]string{"field": "a", "field.syntax.version": "V3"},
		"Invalid value V3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2")
	shapeConfigError(t, &ExtractField{part: Value}, map[string]string{"field": "`a", "field.syntax.version": "v2"},
		"Incomplete backtick pair in path: [`a], consider adding a backslash before backtick at position 0 to escape it")
	shapeConfigError(t, &ExtractField{part: Value}, map[string]string{"field": "", "field.syntax.version": "V2"},
		"Invalid value  for configuration field: a field path of field.syntax.version V2 needs at least one field name")
	var keys []string
	for _, k := range ExtractFieldConfig().Keys() {
		keys = append(keys, k.Name)
	}
	if strings.Join(keys, ",") != "field,replace.null.with.default,field.syntax.version" {
		t.Fatalf("keys %v", keys)
	}
	if k := ExtractFieldConfig().Key("field.syntax.version"); k.Default != "V1" || k.Importance != connect.High {
		t.Fatalf("field.syntax.version %+v", k)
	}
}

func TestExtractFieldSchemaless(t *testing.T) {
	nested := map[string]any{"magic": map[string]any{"foo": int64(42)}, "flat": int64(1), "a.b": "dotted", "n": nil, "i": int64(3)}
	for _, tc := range []struct {
		cfg   map[string]string
		value any
		want  any
		msg   string
	}{
		{map[string]string{"field": "flat"}, nested, int64(1), ""},
		{map[string]string{"field": "a.b"}, nested, "dotted", ""},
		{map[string]string{"field": "magic.foo", "field.syntax.version": "V2"}, nested, int64(42), ""},
		{map[string]string{"field": "`a.b`", "field.syntax.version": "V2"}, nested, "dotted", ""},
		{map[string]string{"field": "nonexistent"}, nested, nil, ""},
		{map[string]string{"field": "magic.nonexistent", "field.syntax.version": "V2"}, nested, nil, ""},
		{map[string]string{"field": "n.x", "field.syntax.version": "V2"}, nested, nil, ""},
		{map[string]string{"field": "magic"}, nil, nil, ""},
		{map[string]string{"field": "i.x", "field.syntax.version": "V2"}, nested, nil,
			"Only Map objects supported in absence of schema for [nested field access], found: java.lang.Long"},
		{map[string]string{"field": "magic"}, "s", nil, "Only Map objects supported in absence of schema for [field extraction], found: java.lang.String"},
	} {
		xf := shapeConfigured(t, &ExtractField{part: Key}, tc.cfg)
		r := &connect.Record{Key: tc.value, Value: "v"}
		if tc.msg != "" {
			shapeApplyError(t, xf, r, tc.msg)
			continue
		}
		out := shapeApply(t, xf, r)
		if out.KeySchema != nil || !reflect.DeepEqual(out.Key, tc.want) || out.Value != "v" {
			t.Errorf("%v: %v, want %v", tc.cfg, out.Key, tc.want)
		}
	}
}

func TestExtractFieldWithSchema(t *testing.T) {
	inner := connect.StructSchema("inner", connect.Field{Name: "foo", Schema: connect.Int32Schema})
	optInner := inner.AsOptional()
	schema := connect.StructSchema("outer",
		connect.Field{Name: "magic", Schema: inner},
		connect.Field{Name: "flat", Schema: connect.Int32Schema},
		connect.Field{Name: "maybe", Schema: optInner})
	value := connect.NewStruct(schema).Put("magic", connect.NewStruct(inner).Put("foo", int32(42))).Put("flat", int32(1))
	for _, tc := range []struct {
		cfg        map[string]string
		value      any
		wantSchema *connect.Schema
		want       any
		msg        string
	}{
		{map[string]string{"field": "flat"}, value, connect.Int32Schema, int32(1), ""},
		{map[string]string{"field": "magic.foo", "field.syntax.version": "V2"}, value, connect.Int32Schema, int32(42), ""},
		{map[string]string{"field": "magic"}, value, inner, value.Get("magic"), ""},
		{map[string]string{"field": "maybe.foo", "field.syntax.version": "V2"}, value, connect.Int32Schema, nil, ""},
		// A null value keeps the field's schema.
		{map[string]string{"field": "magic"}, nil, inner, nil, ""},
		{map[string]string{"field": "nonexistent"}, value, nil, nil, "Unknown field: nonexistent"},
		{map[string]string{"field": "magic.nonexistent", "field.syntax.version": "V2"}, value, nil, nil, "Unknown field: magic.nonexistent"},
		{map[string]string{"field": "magic.foo"}, value, nil, nil, "Unknown field: magic.foo"},
		{map[string]string{"field": "flat.x", "field.syntax.version": "V2"}, value, nil, nil, "Cannot look up fields on non-struct type"},
		{map[string]string{"field": "flat"}, "s", nil, nil, "Only Struct objects supported for [field extraction], found: java.lang.String"},
	} {
		xf := shapeConfigured(t, &ExtractField{part: Value}, tc.cfg)
		r := &connect.Record{ValueSchema: schema, Value: tc.value}
		out, err := xf.Apply(r)
		if tc.msg != "" {
			if err == nil || err.Error() != tc.msg {
				t.Errorf("%v: %v, want %q", tc.cfg, err, tc.msg)
			}
			continue
		}
		if err != nil || out.ValueSchema != tc.wantSchema || !reflect.DeepEqual(out.Value, tc.want) {
			t.Errorf("%v: %v %v %v, want %v %v", tc.cfg, out, err, out.Value, tc.wantSchema, tc.want)
		}
	}
}

func TestExtractFieldReplaceNullWithDefault(t *testing.T) {
	def := &connect.Schema{Type: connect.TypeString, Optional: true, Default: "default"}
	schema := connect.StructSchema("", connect.Field{Name: "optional_with_default", Schema: def})
	for _, part := range []Part{Key, Value} {
		for _, tc := range []struct {
			replace string
			want    any
		}{{"true", "default"}, {"false", nil}} {
			xf := shapeConfigured(t, &ExtractField{part: part}, map[string]string{"field": "optional_with_default", "replace.null.with.default": tc.replace})
			r := &connect.Record{}
			part.Set(r, schema, connect.NewStruct(schema))
			s, v := part.Get(shapeApply(t, xf, r))
			if s != def || v != tc.want {
				t.Errorf("%v replace=%s: %v %v, want %v", part, tc.replace, s, v, tc.want)
			}
		}
	}
}

func TestExtractFieldGolden(t *testing.T) {
	xf := shapeConfigured(t, &ExtractField{part: Value}, map[string]string{"field": "after.id", "field.syntax.version": "V2"})
	shapeGolden(t, xf, true,
		`{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"id"}],"optional":true,"field":"after"}],"optional":false},"payload":{"after":{"id":1700000000123}}}`,
		`{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},"payload":1700000000123}`,
		Value, connect.Record{Topic: "t"})
	shapeGolden(t, xf, false, `{"after":{"id":[1,{"x":null}]}}`, `[1,{"x":null}]`, Value, connect.Record{Topic: "t"})
}

func FuzzExtractFieldPath(f *testing.F) {
	for _, s := range []string{"a.b", "`a.b`.c", "`a", "a.`b\\`.c`", "..", "", "``", "`\\`", "a.`b`c`.d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		steps, err := parseFieldPath(path, true)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Incomplete backtick pair in path: [") {
				t.Fatalf("%q: %v", path, err)
			}
			return
		}
		if path != "" && len(steps) == 0 {
			t.Fatalf("%q has no steps", path)
		}
		// A path without backticks is its steps joined with dots.
		if !strings.Contains(path, "`") && strings.Join(steps, ".") != path {
			t.Fatalf("%q: %q", path, steps)
		}
		// Configure reads the value trimmed, as Kafka's ConfigDef does.
		xf := &ExtractField{part: Value}
		if err := xf.Configure(map[string]string{"field": path, "field.syntax.version": "V2"}); err != nil {
			trimmed := strings.TrimSpace(path)
			if _, perr := parseFieldPath(trimmed, true); trimmed == "" || perr != nil {
				return
			}
			t.Fatalf("Configure(%q): %v", path, err)
		}
		if _, err := xf.Apply(&connect.Record{Value: map[string]any{"a": map[string]any{"b": int64(1)}}}); err != nil {
			if _, ok := err.(*DataError); !ok {
				t.Fatalf("%q: %T %v", path, err, err)
			}
		}
	})
}
