package converters

import (
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// testPlugins is the converters and a source connector.
func testPlugins(t *testing.T) *connect.PluginSet {
	t.Helper()
	set, err := connect.NewPluginSet(append(Plugins(), connect.Plugin{
		Class: "com.example.converters.test.NotAConverterConnector",
		Type:  connect.PluginSource,
		New:   func() any { return struct{}{} },
	})...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestRegistered(t *testing.T) {
	plugins := testPlugins(t)
	for class, want := range map[string]any{
		"org.apache.kafka.connect.json.JsonConverter":            &JSONConverter{},
		"org.apache.kafka.connect.storage.StringConverter":       &StringConverter{},
		"org.apache.kafka.connect.converters.ByteArrayConverter": &ByteArrayConverter{},
	} {
		p, err := plugins.Lookup(class)
		if err != nil {
			t.Errorf("%s: %v", class, err)
			continue
		}
		if p.Type != connect.PluginConverter || p.Version != "3.9.0" {
			t.Errorf("%s registered as %s %s", class, p.Type, p.Version)
		}
		if got := p.New(); reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Errorf("%s makes a %T, want %T", class, got, want)
		}
	}
}

func TestNew(t *testing.T) {
	plugins := testPlugins(t)
	for _, name := range []string{JSONConverterClass, "JsonConverter", "Json"} {
		c, err := New(plugins, name, map[string]string{"schemas.enable": "false"}, false)
		if err != nil {
			t.Fatalf("New(%s): %v", name, err)
		}
		out, err := c.FromConnectData("topic", nil, map[string]any{"a": int64(1)})
		if err != nil || string(out) != `{"a":1}` {
			t.Errorf("New(%s) is not configured: %s, %v", name, out, err)
		}
	}
	c, err := New(plugins, "StringConverter", nil, true)
	if _, ok := c.(*StringConverter); !ok || err != nil {
		t.Errorf("New(StringConverter) = %T, %v", c, err)
	}
	c, err = New(plugins, "ByteArray", nil, false)
	if _, ok := c.(*ByteArrayConverter); !ok || err != nil {
		t.Errorf("New(ByteArray) = %T, %v", c, err)
	}
	if _, err := New(plugins, "com.example.NoSuchConverter", nil, false); err == nil || !strings.Contains(err.Error(), "com.example.NoSuchConverter") {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := New(plugins, "com.example.converters.test.NotAConverterConnector", nil, false); err == nil || !strings.Contains(err.Error(), "Failed to find any class that implements Converter and which name matches com.example.converters.test.NotAConverterConnector") {
		t.Errorf("connector class as a converter: %v", err)
	}
	if _, err := New(plugins, JSONConverterClass, map[string]string{"decimal.format": "HEX"}, false); err == nil {
		t.Error("a bad setting was accepted")
	}
}
