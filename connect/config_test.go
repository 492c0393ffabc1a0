package connect

import (
	"slices"
	"strings"
	"testing"
)

func TestConfigDefParsesAndReportsLikeKafka(t *testing.T) {
	def := NewConfigDef().
		Define(ConfigKey{Name: "topic", Type: ConfigString, Required: true, Validator: NonEmptyString()}).
		Define(ConfigKey{Name: "batch.size", Type: ConfigInt, Default: int32(2000), Validator: AtLeast(1)}).
		Define(ConfigKey{Name: "tables", Type: ConfigList, Default: ""}).
		Define(ConfigKey{Name: "mode", Type: ConfigString, Default: "bulk", Validator: OneOf("bulk", "incrementing")}).
		Define(ConfigKey{Name: "secret", Type: ConfigPassword})

	pc, err := def.Parse(map[string]string{"topic": " t ", "tables": "a , b,c", "secret": "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if pc.String("topic") != "t" || pc.Int("batch.size") != 2000 || !slices.Equal(pc.List("tables"), []string{"a", "b", "c"}) || pc.String("secret") != "pw" {
		t.Fatalf("parsed %v", pc.values)
	}
	if s := *FormatValue(pc.Get("secret")); s != "[hidden]" {
		t.Errorf("password formats as %q", s)
	}

	cases := map[string]struct {
		props map[string]string
		want  string
	}{
		"missing":  {map[string]string{}, `Missing required configuration "topic" which has no default value.`},
		"empty":    {map[string]string{"topic": ""}, "Invalid value  for configuration topic: String must be non-empty"},
		"not int":  {map[string]string{"topic": "t", "batch.size": "x"}, "Invalid value x for configuration batch.size: Not a number of type INT"},
		"too low":  {map[string]string{"topic": "t", "batch.size": "0"}, "Invalid value 0 for configuration batch.size: Value must be at least 1"},
		"bad enum": {map[string]string{"topic": "t", "mode": "x"}, "Invalid value x for configuration mode: String must be one of: bulk, incrementing"},
	}
	for name, c := range cases {
		_, err := def.Parse(c.props)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	values := def.Validate(map[string]string{"batch.size": "0"})
	if len(values) != 5 || len(values[0].Errors) != 1 || len(values[1].Errors) != 1 || len(values[2].Errors) != 0 {
		t.Fatalf("Validate gave %+v", values)
	}
}

func TestControlCharactersInNames(t *testing.T) {
	err := NonEmptyStringWithoutControlChars()("a\nb")
	if err == nil || err.Error() != "String may not contain control sequences but had the following ASCII chars: 10" {
		t.Fatalf("got %v", err)
	}
}

func TestStructValidation(t *testing.T) {
	s := StructSchema("order", Field{Name: "id", Schema: Int64Schema}, Field{Name: "note", Schema: OptionalStringSchema})
	v := NewStruct(s)
	if err := v.Validate(); err == nil {
		t.Fatal("a struct without its required field validated")
	}
	if err := v.Set("id", "not a number"); err == nil {
		t.Fatal("a string was accepted for an INT64 field")
	}
	if err := v.SetAt(1, 3); err == nil || !strings.Contains(err.Error(), "note") {
		t.Fatalf("SetAt(1, an int) on a STRING field: %v", err)
	}
	v.Put("id", int64(7))
	if err := v.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := v.SetAt(1, "fragile"); err != nil || v.Get("note") != "fragile" {
		t.Fatalf("SetAt(1, fragile): %v, note = %v", err, v.Get("note"))
	}
	if v.String() != "Struct{id=7,note=fragile}" {
		t.Fatalf("String() = %s", v.String())
	}
}

func TestDecimalString(t *testing.T) {
	for _, c := range []struct {
		unscaled int64
		scale    int32
		want     string
	}{{1250, 2, "12.50"}, {-5, 3, "-0.005"}, {42, 0, "42"}, {7, -2, "700"}} {
		d := &Decimal{Unscaled: bigInt(c.unscaled), Scale: c.scale}
		if got := d.String(); got != c.want {
			t.Errorf("%d scale %d = %s, want %s", c.unscaled, c.scale, got, c.want)
		}
	}
}

func TestAliases(t *testing.T) {
	got := Aliases("org.apache.kafka.connect.file.FileStreamSourceConnector")
	if !slices.Equal(got, []string{"FileStreamSourceConnector", "FileStreamSource"}) {
		t.Fatalf("aliases %v", got)
	}
}

func TestExtraAliases(t *testing.T) {
	set, err := NewPluginSet(Plugin{Class: "com.example.test.ThingConnector", Type: PluginSource, Aliases: []string{"Whatsit"}, New: func() any { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"com.example.test.ThingConnector", "ThingConnector", "Thing", "Whatsit"} {
		if p, err := set.Lookup(name); err != nil || p.Class != "com.example.test.ThingConnector" {
			t.Errorf("%s: %v %v", name, p.Class, err)
		}
	}
}

// A set is what a worker runs: a class it cannot tell apart from another,
// or cannot make, is refused when the set is made rather than when a
// config names it.
func TestNewPluginSetRefusesWhatItCannotRun(t *testing.T) {
	thing := Plugin{Class: "com.example.test.ThingConnector", Type: PluginSource, New: func() any { return nil }}
	other := Plugin{Class: "com.example.test.OtherConnector", Type: PluginSink, New: func() any { return nil }}
	for _, c := range []struct {
		plugins []Plugin
		want    string
	}{
		{[]Plugin{thing, other, thing}, "plugin com.example.test.ThingConnector is given twice as a source"},
		{[]Plugin{{Type: PluginSink, New: other.New}}, "a sink plugin has no class name"},
		{[]Plugin{{Class: "com.example.test.NoNew", Type: PluginSource}}, "plugin com.example.test.NoNew has no New function"},
	} {
		if _, err := NewPluginSet(c.plugins...); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.plugins, err, c.want)
		}
	}
	set, err := NewPluginSet(thing, other)
	if err != nil {
		t.Fatal(err)
	}
	got := set.Plugins()
	if len(got) != 2 || got[0].Class != other.Class || got[1].Class != thing.Class {
		t.Errorf("Plugins() = %v, want the two sorted by class", got)
	}
	if _, err := set.Lookup("com.example.test.Missing"); err == nil || err.Error() != "no plugin named com.example.test.Missing" {
		t.Errorf("a missing class: %v", err)
	}
}

// A class may be given once per type, as Kafka's JsonConverter is both a
// converter and a header converter; a lookup by type finds the one asked
// for, and an alias shared by two classes matches neither.
func TestPluginSetHoldsAClassOncePerType(t *testing.T) {
	conv := Plugin{Class: "org.example.JsonConverter", Type: PluginConverter, New: func() any { return "converter" }}
	hconv := Plugin{Class: "org.example.JsonConverter", Type: PluginHeaderConverter, New: func() any { return "header" }}
	other := Plugin{Class: "org.other.JsonConverter", Type: PluginConverter, New: func() any { return "other" }}
	set, err := NewPluginSet(conv, hconv)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		typ  PluginType
		want string
	}{
		{"org.example.JsonConverter", PluginHeaderConverter, "header"},
		{"JsonConverter", PluginConverter, "converter"},
		{"Json", PluginHeaderConverter, "header"},
	} {
		p, err := set.Lookup(c.name, c.typ)
		if err != nil || p.New() != c.want {
			t.Errorf("Lookup(%s, %s) = %v, %v; want %s", c.name, c.typ, p.Type, err, c.want)
		}
	}
	if _, err := set.Lookup("JsonConverter", PluginSource); err == nil {
		t.Error("a lookup of another type found a converter")
	}
	both, _ := NewPluginSet(conv, other)
	if _, err := both.Lookup("JsonConverter", PluginConverter); err == nil || !strings.Contains(err.Error(), "more than one plugin") {
		t.Errorf("an alias of two classes: %v", err)
	}
	if p, err := both.Lookup("org.other.JsonConverter"); err != nil || p.New() != "other" {
		t.Errorf("a full class name among shared aliases: %v", err)
	}
}
