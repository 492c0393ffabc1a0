package connect

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// PluginType is the kind of a plugin, as the connector-plugins API names it.
type PluginType string

// The plugin kinds.
const (
	PluginSource          PluginType = "source"
	PluginSink            PluginType = "sink"
	PluginConverter       PluginType = "converter"
	PluginHeaderConverter PluginType = "header_converter"
	PluginTransformation  PluginType = "transformation"
	PluginPredicate       PluginType = "predicate"
)

// Plugin registers a connector or converter under its Java-style class
// name, so that configs written for Apache Kafka Connect name it as they
// always did.
type Plugin struct {
	// Class is the fully qualified class name, e.g.
	// org.apache.kafka.connect.file.FileStreamSourceConnector.
	Class   string
	Type    PluginType
	Version string
	// Aliases are short names beyond those derived from the class name
	// (see Aliases), for plugins known by another name.
	Aliases []string
	// New returns a fresh instance: a SourceConnector, a SinkConnector or
	// a Converter, as Type says.
	New func() any
}

var registry struct {
	sync.RWMutex
	plugins []Plugin
}

// Register makes a plugin available to the runtime. Registering a class
// twice panics.
func Register(p Plugin) {
	registry.Lock()
	defer registry.Unlock()
	for _, q := range registry.plugins {
		if q.Class == p.Class {
			panic("connect: plugin " + p.Class + " registered twice")
		}
	}
	registry.plugins = append(registry.plugins, p)
}

// Plugins returns every registered plugin, sorted by class name.
func Plugins() []Plugin {
	registry.RLock()
	defer registry.RUnlock()
	out := append([]Plugin(nil), registry.plugins...)
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out
}

// LookupPlugin finds a plugin by its class name or an alias: the simple
// class name, or the simple name without a "Connector" (or "Converter")
// suffix, as Kafka Connect allows. An alias shared by two plugins is
// ambiguous and matches neither.
func LookupPlugin(name string) (Plugin, error) {
	registry.RLock()
	defer registry.RUnlock()
	var found []Plugin
	for _, p := range registry.plugins {
		if p.Class == name {
			return p, nil
		}
		if slices.Contains(Aliases(p.Class), name) || slices.Contains(p.Aliases, name) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Plugin{}, fmt.Errorf("no plugin named %s", name)
	}
	return Plugin{}, fmt.Errorf("more than one plugin matches the alias %s", name)
}

// Aliases returns the short names a class may be configured by.
func Aliases(class string) []string {
	simple := class[strings.LastIndex(class, ".")+1:]
	out := []string{simple}
	for _, suffix := range []string{"Connector", "Converter"} {
		if short, ok := strings.CutSuffix(simple, suffix); ok && short != "" {
			out = append(out, short)
		}
	}
	return out
}

// Converter turns Connect data into the bytes of a Kafka record key or
// value, and back. Configure is called once before any other method, with
// the converter's settings (the worker's key.converter.* or the
// connector's, prefix removed). After that its methods must be safe for
// concurrent use: a sink task converts a large poll on several
// goroutines (Kafka's converters are called by one task thread only).
type Converter interface {
	Configure(config map[string]string, isKey bool) error
	FromConnectData(topic string, schema *Schema, value any) ([]byte, error)
	ToConnectData(topic string, data []byte) (*Schema, any, error)
}

// AppendConverter is a Converter that can also write into a buffer its
// caller owns, sparing an allocation per record: a source task's records
// are written one after the other into a block that is reused once Kafka
// has acknowledged them all. For a non-nil value, AppendFromConnectData
// appends to dst exactly the bytes FromConnectData returns and gives back
// the extended buffer; on an error, what it appended is undefined and the
// caller drops it. The worker converts nil values with FromConnectData,
// where nil bytes (a tombstone) differ from empty ones.
type AppendConverter interface {
	Converter
	AppendFromConnectData(dst []byte, topic string, schema *Schema, value any) ([]byte, error)
}
