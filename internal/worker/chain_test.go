package worker

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/owned"
	"github.com/connectd/connectd/transforms"
	"github.com/connectd/connectd/transforms/debezium"
)

type appendTopic string

func (appendTopic) Config() *connect.ConfigDef        { return connect.NewConfigDef() }
func (appendTopic) Configure(map[string]string) error { return nil }
func (a appendTopic) Apply(r *connect.Record) (*connect.Record, error) {
	switch a {
	case "panic":
		panic("boom")
	case "drop":
		return nil, nil
	}
	r.Topic += string(a)
	return r, nil
}

type topicIs string

func (topicIs) Config() *connect.ConfigDef        { return connect.NewConfigDef() }
func (topicIs) Configure(map[string]string) error { return nil }
func (p topicIs) Test(r *connect.Record) bool     { return r.Topic == string(p) }

// A stage applies when it has no predicate, or when its predicate's
// answer differs from negate; a nil record ends the chain; a panic is the
// record's error, naming the transform's class.
func TestChainApply(t *testing.T) {
	for _, c := range []struct {
		name   string
		stages []stage
		want   string // the topic, "<dropped>" or the error's text
	}{
		{"in order", []stage{{t: appendTopic("-a")}, {t: appendTopic("-b")}}, "t-a-b"},
		{"predicate matches", []stage{{t: appendTopic("-a"), pred: topicIs("t")}}, "t-a"},
		{"predicate does not match", []stage{{t: appendTopic("-a"), pred: topicIs("x")}}, "t"},
		{"negated predicate matches", []stage{{t: appendTopic("-a"), pred: topicIs("t"), negate: true}}, "t"},
		{"negated predicate does not match", []stage{{t: appendTopic("-a"), pred: topicIs("x"), negate: true}}, "t-a"},
		{"a later predicate sees the changed record", []stage{{t: appendTopic("-a")}, {t: appendTopic("-b"), pred: topicIs("t-a")}}, "t-a-b"},
		{"dropped", []stage{{t: appendTopic("drop")}, {t: appendTopic("-b")}}, "<dropped>"},
		{"panic", []stage{{t: appendTopic("-a"), class: "com.example.A"}, {t: appendTopic("panic"), class: "com.example.Boom"}}, "panic: boom (TRANSFORMATION, com.example.Boom)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := (&chain{stages: c.stages}).apply(&connect.Record{Topic: "t"}, new(owned.State[connect.Struct]))
			var got string
			switch {
			case err != nil:
				stage, class := stageOf(err)
				got = err.Error() + " (" + string(stage) + ", " + class + ")"
			case out == nil:
				got = "<dropped>"
			default:
				got = out.Topic
			}
			if got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// A transforms config names its problems as Kafka does when the worker
// builds the chain.
func TestNewChainErrors(t *testing.T) {
	plugins, err := connect.NewPluginSet(
		connect.Plugin{Class: "test.Append", Type: connect.PluginTransformation, New: func() any { return appendTopic("-a") }},
		connect.Plugin{Class: "test.TopicIs", Type: connect.PluginPredicate, New: func() any { return topicIs("t") }},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"transforms": "a"}, `Missing required configuration "transforms.a.type" which has no default value.`},
		{map[string]string{"transforms": "a", "transforms.a.type": "nope"}, "Class nope could not be found."},
		{map[string]string{"transforms": "a", "transforms.a.type": "test.TopicIs"}, "Class test.TopicIs could not be found."},
		{map[string]string{"transforms": "a", "transforms.a.type": "test.Append", "transforms.a.negate": "true"}, "Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."},
		{map[string]string{"transforms": "a", "transforms.a.type": "test.Append", "transforms.a.predicate": "p"}, "no predicate of that alias is listed in predicates"},
	} {
		if _, err := newChain(plugins, c.config); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s", c.config, err, c.want)
		}
	}
	ch, err := newChain(plugins, map[string]string{"transforms": "a", "transforms.a.type": "Append", "transforms.a.predicate": "p", "transforms.a.negate": "true",
		"predicates": "p", "predicates.p.type": "test.TopicIs"})
	if err != nil || len(ch.stages) != 1 || ch.stages[0].pred == nil || !ch.stages[0].negate {
		t.Fatalf("chain %+v, %v", ch, err)
	}
}

// The value converter builds only the fields of the chain's first
// transform reads when that transform says which, always applies, and
// the converter can: not behind a predicate, which would pass the whole
// value on when it says no.
func TestChainValueNeeds(t *testing.T) {
	unwrap := debezium.NewExtractNewRecordState()
	if err := unwrap.Configure(map[string]string{}); err != nil {
		t.Fatal(err)
	}
	json := new(converters.JSONConverter)
	if err := json.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		stages []stage
		conv   connect.Converter
		want   bool
	}{
		{"first transform reads some fields", []stage{{t: unwrap}, {t: appendTopic("-a")}}, json, true},
		{"behind a predicate", []stage{{t: unwrap, pred: topicIs("t")}}, json, false},
		{"not first", []stage{{t: appendTopic("-a")}, {t: unwrap}}, json, false},
		{"a converter that builds every field", []stage{{t: unwrap}}, new(converters.StringConverter), false},
	} {
		if got := (&chain{stages: c.stages}).valueNeeds(c.conv) != nil; got != c.want {
			t.Errorf("%s: needs %v, want %v", c.name, got, c.want)
		}
	}
	if (*chain)(nil).valueNeeds(json) != nil {
		t.Error("no chain: needs")
	}
}

// keepValue is a transformation, or a predicate, of someone else's that
// keeps the values it is shown, as connect.Transformation lets it.
type keepValue struct{ kept *[]any }

func (keepValue) Config() *connect.ConfigDef        { return connect.NewConfigDef() }
func (keepValue) Configure(map[string]string) error { return nil }
func (k keepValue) Apply(r *connect.Record) (*connect.Record, error) {
	*k.kept = append(*k.kept, r.Value)
	return r, nil
}
func (k keepValue) Test(r *connect.Record) bool {
	*k.kept = append(*k.kept, r.Value)
	return true
}

// Kafka's transformations build each struct after the first in the one
// before it (internal/owned), but never in one that a transformation or
// predicate of someone else's was shown: what it kept stays as it was.
func TestChainOwnedStructs(t *testing.T) {
	var kept []any
	plugins, err := connect.NewPluginSet(append(transforms.Plugins(),
		connect.Plugin{Class: "test.Keep", Type: connect.PluginTransformation, New: func() any { return keepValue{&kept} }},
		connect.Plugin{Class: "test.Keep", Type: connect.PluginPredicate, New: func() any { return keepValue{&kept} }},
	)...)
	if err != nil {
		t.Fatal(err)
	}
	// Short class names, as a copied config may give them.
	steps := map[string]string{
		"transforms.hoist.type":          "HoistField$Value",
		"transforms.hoist.field":         "order",
		"transforms.insert.type":         "InsertField$Value",
		"transforms.insert.static.field": "shop",
		"transforms.insert.static.value": "eu",
		"transforms.rename.type":         "ReplaceField$Value",
		"transforms.rename.renames":      "order:placed",
		"transforms.route.type":          "RegexRouter",
		"transforms.route.regex":         "raw\\.(.*)",
		"transforms.route.replacement":   "eip.$1",
		"transforms.keep.type":           "test.Keep",
		"predicates.shown.type":          "test.Keep",
	}
	chainOf := func(aliases string, extra map[string]string) *chain {
		config := map[string]string{"transforms": aliases}
		for _, m := range []map[string]string{steps, extra} {
			for k, v := range m {
				config[k] = v
			}
		}
		ch, err := newChain(plugins, config)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	var line any = "a line"
	for _, c := range []struct {
		name, transforms string
		extra            map[string]string
	}{
		{"a transformation keeps the hoisted struct", "hoist,keep,insert,rename,route", nil},
		{"a predicate keeps the hoisted struct", "hoist,insert,rename,route", map[string]string{"predicates": "shown", "transforms.insert.predicate": "shown"}},
		{"a transformation keeps the inserted struct", "hoist,insert,keep,rename,route", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			kept = nil
			out, err := chainOf(c.transforms, c.extra).apply(&connect.Record{Topic: "raw.orders", ValueSchema: connect.StringSchema, Value: line}, new(owned.State[connect.Struct]))
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Value.(*connect.Struct).String(); out.Topic != "eip.orders" || got != "Struct{placed=a line,shop=eu}" {
				t.Fatalf("the chain made %s on %s", got, out.Topic)
			}
			if len(kept) != 1 {
				t.Fatalf("kept %d values", len(kept))
			}
			want := "Struct{order=a line}"
			if strings.Contains(c.transforms, "insert,keep") {
				want = "Struct{order=a line,shop=eu}"
			}
			if got := kept[0].(*connect.Struct).String(); got != want {
				t.Fatalf("the kept struct became %s, want %s", got, want)
			}
		})
	}

	// Without anyone else's, the chain makes one struct a record, and
	// none when it is handed the last record's, as a source task does
	// once it converted that record.
	ch := chainOf("hoist,insert,rename,route", nil)
	var sc chainScratch
	for _, c := range []struct {
		name   string
		spare  bool
		allocs float64
	}{{"alone", false, 1}, {"handed the last struct", true, 0}} {
		allocs := testing.AllocsPerRun(100, func() {
			sc.rec = connect.Record{Topic: "raw.orders", ValueSchema: connect.StringSchema, Value: line}
			out, err := ch.apply(&sc.rec, &sc.own)
			if err != nil {
				t.Fatal(err)
			}
			if sc.own.Parts != owned.Value {
				t.Fatalf("the chain's value is not its own: %b", sc.own.Parts)
			}
			if c.spare {
				sc.own.Spare = out.Value.(*connect.Struct)
			}
		})
		if allocs != c.allocs {
			t.Errorf("%s: %v allocations a record, want %v", c.name, allocs, c.allocs)
		}
	}
}
