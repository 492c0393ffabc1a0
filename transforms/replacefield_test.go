package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestReplaceFieldConfigure(t *testing.T) {
	for _, tc := range []struct {
		cfg map[string]string
		msg string
	}{
		{map[string]string{"renames": "foo:bar,abc"}, "Invalid value [foo:bar, abc] for configuration renames: Invalid rename mapping: abc"},
		{map[string]string{"renames": "a:b:c"}, "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"},
		{map[string]string{"renames": "a:"}, "Invalid value [a:] for configuration renames: Invalid rename mapping: a:"},
		{map[string]string{"renames": "a:b,"}, "Invalid value [a:b, ] for configuration renames: Invalid rename mapping: "},
		{map[string]string{"replace.null.with.default": "x"}, "Invalid value x for configuration replace.null.with.default: Expected value to be either true or false"},
	} {
		shapeConfigError(t, &ReplaceField{part: Value}, tc.cfg, tc.msg)
	}
	var names []string
	for _, k := range ReplaceFieldConfig().Keys() {
		names = append(names, k.Name+":"+string(k.Importance))
	}
	if want := "exclude:MEDIUM blacklist:LOW include:MEDIUM whitelist:LOW renames:MEDIUM replace.null.with.default:MEDIUM"; strings.Join(names, " ") != want {
		t.Fatalf("keys %v, want %s", names, want)
	}
}

func TestReplaceFieldParseRenames(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want map[string]string
	}{
		{[]string{"foo:bar", "abc:xyz"}, map[string]string{"foo": "bar", "abc": "xyz"}},
		// Java's split drops trailing empty strings, not leading ones.
		{[]string{"a:b:"}, map[string]string{"a": "b"}},
		{[]string{"a:b::"}, map[string]string{"a": "b"}},
		{[]string{":b"}, map[string]string{"": "b"}},
		{[]string{"a:b", "a:c"}, map[string]string{"a": "c"}},
		{[]string{" a : b "}, map[string]string{" a ": " b "}},
	} {
		got, err := parseRenameMappings(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseRenameMappings(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", ":", "::", "a", "a:", "::b", "a:b:c"} {
		if _, err := parseRenameMappings([]string{bad}); err == nil || err.Error() != "Invalid rename mapping: "+bad {
			t.Errorf("parseRenameMappings(%q): %v", bad, err)
		}
	}
}

func TestReplaceFieldSchemaless(t *testing.T) {
	in := map[string]any{"dont": "whatever", "abc": int64(42), "foo": true, "etc": "etc"}
	for _, tc := range []struct {
		cfg  map[string]string
		want map[string]any
	}{
		// Kafka's schemaless test.
		{map[string]string{"exclude": "dont", "renames": "abc:xyz,foo:bar"}, map[string]any{"xyz": int64(42), "bar": true, "etc": "etc"}},
		{map[string]string{"include": "abc,foo"}, map[string]any{"abc": int64(42), "foo": true}},
		{map[string]string{"include": "abc,foo", "exclude": "foo"}, map[string]any{"abc": int64(42)}},
		// The deprecated names, as Kafka 3.9 still reads them.
		{map[string]string{"whitelist": "abc"}, map[string]any{"abc": int64(42)}},
		{map[string]string{"blacklist": "abc,foo,etc"}, map[string]any{"dont": "whatever"}},
		{map[string]string{"blacklist": "abc", "exclude": "dont,foo,etc"}, map[string]any{"abc": int64(42)}},
		{map[string]string{"whitelist": "abc", "include": "foo"}, map[string]any{"foo": true}},
		// Two fields to one name: java.util.HashMap iterates etc before
		// foo, so foo's value stays.
		{map[string]string{"renames": "etc:x,foo:x", "include": "etc,foo"}, map[string]any{"x": true}},
	} {
		xf := shapeConfigured(t, &ReplaceField{part: Value}, tc.cfg)
		out := shapeApply(t, xf, &connect.Record{Value: in})
		if out.ValueSchema != nil || !reflect.DeepEqual(out.Value, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.cfg, out.Value, tc.want)
		}
	}
	if len(in) != 4 {
		t.Fatal("the input map changed")
	}
}

func TestReplaceFieldWithSchema(t *testing.T) {
	schema := &connect.Schema{Type: connect.TypeStruct, Name: "n", Version: 3, Optional: true, Fields: []connect.Field{
		{Name: "dont", Schema: connect.StringSchema},
		{Name: "abc", Schema: connect.Int32Schema},
		{Name: "foo", Schema: connect.BooleanSchema},
		{Name: "etc", Schema: connect.StringSchema},
	}}
	structSchema(schema, schema.Fields)
	value := connect.NewStruct(schema).Put("dont", "whatever").Put("abc", int32(42)).Put("foo", true).Put("etc", "etc")
	xf := shapeConfigured(t, &ReplaceField{part: Value}, map[string]string{"exclude": "dont", "renames": "abc:xyz,foo:bar"})
	out := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: value})
	s := out.ValueSchema
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "xyz,bar,etc" || s.Name != "n" || s.Version != 3 || s.Optional {
		t.Fatalf("schema %+v", s)
	}
	st := out.Value.(*connect.Struct)
	if st.Get("xyz") != int32(42) || st.Get("bar") != true || st.Get("etc") != "etc" {
		t.Fatalf("value %v", st)
	}
	if again := shapeApply(t, xf, &connect.Record{ValueSchema: schema, Value: value}); again.ValueSchema != s {
		t.Fatal("the updated schema was not cached")
	}

	// Tombstones pass, with their schema.
	for _, s := range []*connect.Schema{nil, schema} {
		out := shapeApply(t, xf, &connect.Record{ValueSchema: s})
		if out.ValueSchema != s || out.Value != nil {
			t.Errorf("tombstone with schema %v: %+v", s, out)
		}
	}

	small := connect.StructSchema("", connect.Field{Name: "b", Schema: connect.StringSchema})
	for _, tc := range []struct {
		cfg map[string]string
		r   *connect.Record
		msg string
	}{
		{map[string]string{"renames": "abc:foo"}, &connect.Record{ValueSchema: schema, Value: value},
			"Cannot create field because of field name duplication foo"},
		// Kafka reads b back as a, which the input does not have.
		{map[string]string{"renames": "a:b"}, &connect.Record{ValueSchema: small, Value: connect.NewStruct(small).Put("b", "x")},
			"a is not a valid field name"},
		{map[string]string{}, &connect.Record{ValueSchema: schema, Value: "x"},
			"Only Struct objects supported for [field replacement], found: java.lang.String"},
		{map[string]string{}, &connect.Record{Value: []any{}},
			"Only Map objects supported in absence of schema for [field replacement], found: java.util.ArrayList"},
	} {
		shapeApplyError(t, shapeConfigured(t, &ReplaceField{part: Value}, tc.cfg), tc.r, tc.msg)
	}
}

func TestReplaceFieldReplaceNullWithDefault(t *testing.T) {
	schema := connect.StructSchema("", connect.Field{Name: "optional_with_default", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "default"}})
	for _, part := range []Part{Key, Value} {
		for _, tc := range []struct {
			replace string
			want    any
		}{{"true", "default"}, {"false", nil}} {
			xf := shapeConfigured(t, &ReplaceField{part: part}, map[string]string{"replace.null.with.default": tc.replace})
			r := &connect.Record{}
			part.Set(r, schema, connect.NewStruct(schema))
			_, v := part.Get(shapeApply(t, xf, r))
			if got := v.(*connect.Struct).GetWithoutDefault("optional_with_default"); got != tc.want {
				t.Errorf("%v replace=%s: %v, want %v", part, tc.replace, got, tc.want)
			}
		}
	}
}

func TestReplaceFieldGolden(t *testing.T) {
	cfg := map[string]string{"exclude": "dont", "renames": "abc:xyz"}
	xf := shapeConfigured(t, &ReplaceField{part: Key}, cfg)
	shapeGolden(t, xf, true,
		`{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"dont"},{"type":"int32","optional":true,"default":7,"field":"abc"},{"type":"boolean","optional":false,"field":"foo"}],"optional":false,"name":"k","doc":"d"},"payload":{"dont":"x","abc":null,"foo":true}}`,
		`{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":7,"field":"xyz"},{"type":"boolean","optional":false,"field":"foo"}],"optional":false,"name":"k","doc":"d"},"payload":{"xyz":7,"foo":true}}`,
		Key, connect.Record{Topic: "t"})
	// java.util.HashMap iterates id, ts, name.
	xf = shapeConfigured(t, &ReplaceField{part: Value}, map[string]string{"renames": "first:name", "exclude": "secret"})
	shapeGolden(t, xf, false, `{"first":"ann","id":1,"secret":"s","ts":2}`, `{"name":"ann","id":1,"ts":2}`, Value, connect.Record{Topic: "t"})
}

func FuzzReplaceFieldRenames(f *testing.F) {
	for _, s := range []string{"a:b", "a:b,c:d", ":b", "a:", "a:b:", "::", ",", "a:b , c:d", "a\x00:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, renames string) {
		xf := &ReplaceField{part: Value}
		err := xf.Configure(map[string]string{"renames": renames})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Invalid value [") || !strings.Contains(err.Error(), "for configuration renames: Invalid rename mapping: ") {
				t.Fatalf("renames %q: %v", renames, err)
			}
			return
		}
		in := map[string]any{}
		for old := range xf.renames {
			in[old] = old
		}
		out, err := xf.Apply(&connect.Record{Value: in})
		if err != nil {
			t.Fatalf("renames %q: %v", renames, err)
		}
		for k, v := range out.Value.(map[string]any) {
			if xf.renamed(v.(string)) != k {
				t.Fatalf("renames %q: %s holds %v", renames, k, v)
			}
		}
	})
}
