package transforms

import (
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

func configure(t *testing.T, c interface {
	Configure(map[string]string) error
}, config map[string]string) {
	t.Helper()
	if err := c.Configure(config); err != nil {
		t.Fatal(err)
	}
}

func TestRouteClassesAreKafkas(t *testing.T) {
	set, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for class, typ := range map[string]connect.PluginType{
		"org.apache.kafka.connect.transforms.RegexRouter":                  connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.Filter":                       connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.DropHeaders":                  connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.InsertHeader":                 connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.HeaderFrom$Key":               connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.HeaderFrom$Value":             connect.PluginTransformation,
		"org.apache.kafka.connect.transforms.predicates.TopicNameMatches":  connect.PluginPredicate,
		"org.apache.kafka.connect.transforms.predicates.HasHeaderKey":      connect.PluginPredicate,
		"org.apache.kafka.connect.transforms.predicates.RecordIsTombstone": connect.PluginPredicate,
	} {
		p, err := set.Lookup(class, typ)
		if err != nil {
			t.Errorf("%s: %v", class, err)
			continue
		}
		switch p.New().(type) {
		case connect.Transformation, connect.Predicate:
		default:
			t.Errorf("%s makes a %T", class, p.New())
		}
	}
}

func TestRegexRouter(t *testing.T) {
	var rr RegexRouter
	configure(t, &rr, map[string]string{"regex": `(.*)\.public\.(.*)`, "replacement": "$2"})
	p := int32(3)
	headers := []connect.Header{{Key: "h", Value: "v"}}
	for topic, want := range map[string]string{"db.public.orders": "orders", "db.public.": "", "public.orders": "public.orders", "xdb.public.orders.y": "orders.y"} {
		r := &connect.Record{Topic: topic, Partition: &p, Key: "k", Value: "v", Headers: headers}
		out, err := rr.Apply(r)
		if err != nil || out.Topic != want || out.Partition != &p || out.Key != "k" || !reflect.DeepEqual(out.Headers, headers) {
			t.Errorf("%s: got %+v, %v; want topic %q", topic, out, err, want)
		}
	}
}

func TestConfigErrorsAreKafkas(t *testing.T) {
	for _, c := range []struct {
		t      interface{ Configure(map[string]string) error }
		config map[string]string
		want   string
	}{
		{new(RegexRouter), map[string]string{"replacement": "x"}, `Missing required configuration "regex" which has no default value.`},
		{new(RegexRouter), map[string]string{"regex": "(a", "replacement": "x"}, "Invalid value (a for configuration regex: Invalid regex: "},
		{new(RegexRouter), map[string]string{"regex": "(a)", "replacement": "$2"}, "Invalid value $2 for configuration replacement: No group 2"},
		{new(DropHeaders), map[string]string{"headers": ""}, "Invalid value [] for configuration headers: Empty list"},
		{&HeaderFrom{part: Value}, map[string]string{"fields": "a,b", "headers": "x", "operation": "copy"}, "'fields' config must have the same number of elements as 'headers' config."},
		{&HeaderFrom{part: Value}, map[string]string{"fields": "a", "headers": "x", "operation": "steal"}, "Invalid value steal for configuration operation: String must be one of: move, copy"},
		{new(InsertHeader), map[string]string{"header": "h"}, `Missing required configuration "value.literal" which has no default value.`},
		{new(TopicNameMatches), map[string]string{"pattern": ""}, "Invalid value  for configuration pattern: String must be non-empty"},
		{new(TopicNameMatches), map[string]string{"pattern": "a(?=b)"}, "Invalid value a(?=b) for configuration pattern: Invalid regex: "},
		{new(HasHeaderKey), map[string]string{"name": ""}, "Invalid value  for configuration name: String must be non-empty"},
	} {
		err := c.t.Configure(c.config)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%T %v: err = %v, want %q", c.t, c.config, err, c.want)
		}
	}
}

func TestFilterDropsEverything(t *testing.T) {
	var f Filter
	configure(t, &f, map[string]string{})
	if out, err := f.Apply(&connect.Record{Topic: "t", Value: "v"}); out != nil || err != nil {
		t.Fatalf("got %v, %v", out, err)
	}
}

func TestDropHeadersLeavesTheGivenHeadersAlone(t *testing.T) {
	var d DropHeaders
	configure(t, &d, map[string]string{"headers": "a, c"})
	in := []connect.Header{{Key: "a"}, {Key: "b", Value: "1"}, {Key: "c"}, {Key: "a"}, {Key: "d"}}
	r := &connect.Record{Topic: "t", Headers: in}
	out, _ := d.Apply(r)
	if !reflect.DeepEqual(out.Headers, []connect.Header{{Key: "b", Value: "1"}, {Key: "d"}}) {
		t.Errorf("headers = %v", out.Headers)
	}
	if len(in) != 5 || in[0].Key != "a" || in[1].Key != "b" {
		t.Errorf("the record's header slice changed: %v", in)
	}
}

// InsertHeader then SimpleHeaderConverter: the header bytes a Java worker
// writes for each literal.
func TestInsertHeaderWritesWhatAJavaWorkerWrites(t *testing.T) {
	var hc converters.SimpleHeaderConverter
	for _, c := range []struct {
		literal string
		schema  *connect.Schema
		want    []byte
	}{
		{"42", connect.Int8Schema, []byte("42")},
		{"  hello world ", connect.StringSchema, []byte("hello world")},
		{"1.10", connect.Float32Schema, []byte("1.1")},
		{"true", connect.BooleanSchema, []byte("true")},
		{"[1, 2,  300]", connect.ArrayOf(connect.Int16Schema), []byte("[1,2,300]")},
		{`{"foo":"123", "bar":"baz"}`, connect.MapOf(connect.StringSchema, connect.StringSchema), []byte(`{"foo":"123","bar":"baz"}`)},
		{"2019-08-23T14:34:54.346Z", connect.TimestampSchema(), []byte("2019-08-23T14:34:54.346Z")},
		{"2019-08-23", connect.DateSchema(), []byte("2019-08-23")},
		{"[1, null]", connect.StringSchema, []byte("[1, null]")},
		{"null", nil, nil},
	} {
		var ih InsertHeader
		configure(t, &ih, map[string]string{"header": "src", "value.literal": c.literal})
		old := []connect.Header{{Key: "x", Schema: connect.StringSchema, Value: "y"}}
		out, err := ih.Apply(&connect.Record{Topic: "t", Headers: old})
		if err != nil || len(out.Headers) != 2 || len(old) != 1 {
			t.Fatalf("%q: %v, %v", c.literal, out, err)
		}
		h := out.Headers[1]
		if h.Key != "src" || !reflect.DeepEqual(h.Schema, c.schema) {
			t.Errorf("%q: header %+v, want schema %v", c.literal, h, c.schema)
		}
		b, err := hc.FromConnectHeader("t", h.Key, h.Schema, h.Value)
		if err != nil || string(b) != string(c.want) || (b == nil) != (c.want == nil) {
			t.Errorf("%q: bytes %q, %v; want %q", c.literal, b, err, c.want)
		}
	}
}

func TestHeaderFromSchemaless(t *testing.T) {
	for _, c := range []struct {
		op        string
		wantValue map[string]any
	}{
		{"copy", map[string]any{"a": "1", "b": int64(2)}},
		{"move", map[string]any{"b": int64(2)}},
	} {
		h := &HeaderFrom{part: Value}
		configure(t, h, map[string]string{"fields": "a,missing", "headers": "ha,hm", "operation": c.op})
		value := map[string]any{"a": "1", "b": int64(2)}
		out, err := h.Apply(&connect.Record{Topic: "t", Value: value, Headers: []connect.Header{{Key: "old"}}})
		if err != nil {
			t.Fatal(err)
		}
		want := []connect.Header{{Key: "old"}, {Key: "ha", Value: "1"}, {Key: "hm"}}
		if !reflect.DeepEqual(out.Headers, want) || !reflect.DeepEqual(out.Value, c.wantValue) {
			t.Errorf("%s: %v %v", c.op, out.Headers, out.Value)
		}
		if len(value) != 2 {
			t.Errorf("%s changed the record's map", c.op)
		}
	}
	h := &HeaderFrom{part: Key}
	configure(t, h, map[string]string{"fields": "a", "headers": "ha", "operation": "move"})
	_, err := h.Apply(&connect.Record{Topic: "t", Key: "str"})
	if err == nil || err.Error() != "Only Map objects supported in absence of schema for [header move], found: java.lang.String" {
		t.Errorf("err = %v", err)
	}
}

func TestHeaderFromWithSchema(t *testing.T) {
	withDefault := &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(5)}
	schema := connect.StructSchema("k",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "n", Schema: withDefault},
		connect.Field{Name: "s", Schema: connect.StringSchema})
	key := connect.NewStruct(schema).Put("id", int64(9)).Put("s", "x")
	for _, c := range []struct {
		op, replace string
		wantN       any
		moved       bool
	}{
		{"copy", "true", int32(5), false},
		{"copy", "false", nil, false},
		{"move", "true", int32(5), true},
	} {
		h := &HeaderFrom{part: Key}
		configure(t, h, map[string]string{"fields": "id,n", "headers": "hid,hn", "operation": c.op, "replace.null.with.default": c.replace})
		out, err := h.Apply(&connect.Record{Topic: "t", KeySchema: schema, Key: key, Value: "v"})
		if err != nil {
			t.Fatal(err)
		}
		want := []connect.Header{{Key: "hid", Schema: connect.Int64Schema, Value: int64(9)}, {Key: "hn", Schema: withDefault, Value: c.wantN}}
		if !reflect.DeepEqual(out.Headers, want) {
			t.Errorf("%+v: headers %v", c, out.Headers)
		}
		k := out.Key.(*connect.Struct)
		if !c.moved {
			if k != key || out.KeySchema != schema {
				t.Errorf("%+v: copy changed the key", c)
			}
			continue
		}
		if len(out.KeySchema.Fields) != 1 || out.KeySchema.Fields[0].Name != "s" || out.KeySchema.Name != "k" || k.Get("s") != "x" {
			t.Errorf("%+v: key %v with schema %+v", c, k, out.KeySchema)
		}
		// The moved schema is cached per input schema.
		again, _ := h.Apply(&connect.Record{Topic: "t", KeySchema: schema, Key: key})
		if again.KeySchema != out.KeySchema {
			t.Error("the moved schema was built again")
		}
	}
	h := &HeaderFrom{part: Key}
	configure(t, h, map[string]string{"fields": "nope", "headers": "h", "operation": "copy"})
	if _, err := h.Apply(&connect.Record{Topic: "t", KeySchema: schema, Key: key}); err == nil || err.Error() != "nope is not a valid field name" {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := h.Apply(&connect.Record{Topic: "t", KeySchema: schema, Key: "x"}); err == nil || err.Error() != "Only Struct objects supported for [header copy], found: java.lang.String" {
		t.Errorf("not a struct: %v", err)
	}
}

func TestPredicates(t *testing.T) {
	var tm TopicNameMatches
	configure(t, &tm, map[string]string{"pattern": "orders|items-.*"})
	var hk HasHeaderKey
	configure(t, &hk, map[string]string{"name": "trace"})
	var tomb RecordIsTombstone
	configure(t, &tomb, map[string]string{})
	for _, c := range []struct {
		r                    connect.Record
		topic, header, tombs bool
	}{
		{connect.Record{Topic: "orders", Value: "v"}, true, false, false},
		{connect.Record{Topic: "orders2", Headers: []connect.Header{{Key: "x"}, {Key: "trace"}}}, false, true, true},
		{connect.Record{Topic: "items-1", Value: map[string]any{}, Headers: []connect.Header{{Key: "Trace"}}}, true, false, false},
	} {
		if got := tm.Test(&c.r); got != c.topic {
			t.Errorf("TopicNameMatches(%s) = %v", c.r.Topic, got)
		}
		if got := hk.Test(&c.r); got != c.header {
			t.Errorf("HasHeaderKey(%v) = %v", c.r.Headers, got)
		}
		if got := tomb.Test(&c.r); got != c.tombs {
			t.Errorf("RecordIsTombstone(%v) = %v", c.r.Value, got)
		}
	}
}

func FuzzRegexRouter(f *testing.F) {
	f.Add(`(.*)\.public\.(.*)`, "$2", "db.public.orders")
	f.Add(`(?<t>.*)`, "${t}-x", "a")
	f.Fuzz(func(t *testing.T, regex, replacement, topic string) {
		var rr RegexRouter
		if rr.Configure(map[string]string{"regex": regex, "replacement": replacement}) != nil {
			return
		}
		if _, err := rr.Apply(&connect.Record{Topic: topic}); err != nil {
			t.Fatalf("a configured router failed: %v", err)
		}
	})
}
