package connect

import (
	"fmt"
	"slices"
	"sort"
	"strings"
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

// Plugin describes a connector or converter under its Java-style class
// name, so that configs written for Apache Kafka Connect name it as they
// always did. A worker knows the plugins of the PluginSet it is given.
type Plugin struct {
	// Class is the fully qualified class name, e.g.
	// org.apache.kafka.connect.file.FileStreamSourceConnector.
	Class   string
	Type    PluginType
	Version string
	// Aliases are short names beyond those derived from the class name
	// (see Aliases), for plugins known by another name.
	Aliases []string
	// New returns a fresh instance: a SourceConnector, a SinkConnector, a
	// Converter, a HeaderConverter, a Transformation or a Predicate, as
	// Type says. A class that is both a Converter and a HeaderConverter
	// (as Kafka's JsonConverter is) is given once for each type.
	New func() any
}

// PluginSet is the plugins a worker knows: the runtime looks the classes
// of configs up in it, and the connector-plugins API lists it. It has no
// global counterpart, so that each worker (and each test) runs exactly the
// plugins it was given. It is immutable, hence safe for concurrent use.
type PluginSet struct {
	plugins []Plugin // sorted by class name
}

// NewPluginSet makes a set of the given plugins. A class given twice with
// one type, or a plugin without a class or a New, is an error naming it.
func NewPluginSet(plugins ...Plugin) (*PluginSet, error) {
	s := &PluginSet{plugins: slices.Clone(plugins)}
	sort.SliceStable(s.plugins, func(i, j int) bool { return s.plugins[i].Class < s.plugins[j].Class })
	for i, p := range s.plugins {
		switch {
		case p.Class == "":
			return nil, fmt.Errorf("a %s plugin has no class name", p.Type)
		case p.New == nil:
			return nil, fmt.Errorf("plugin %s has no New function", p.Class)
		}
		for _, q := range s.plugins[:i] {
			if q.Class == p.Class && q.Type == p.Type {
				return nil, fmt.Errorf("plugin %s is given twice as a %s", p.Class, p.Type)
			}
		}
	}
	return s, nil
}

// Plugins returns the set's plugins, sorted by class name.
func (s *PluginSet) Plugins() []Plugin { return slices.Clone(s.plugins) }

// Lookup finds a plugin of one of the given types (any type when none is
// given) by its class name or an alias: the simple class name, or the
// simple name without a "Connector" (or "Converter") suffix, as Kafka
// Connect allows. An alias shared by two classes is ambiguous and matches
// neither. A class of several types matches the first of types, or
// without types the first of the set's.
func (s *PluginSet) Lookup(name string, types ...PluginType) (Plugin, error) {
	var found []Plugin
	for _, p := range s.plugins {
		if len(types) > 0 && !slices.Contains(types, p.Type) {
			continue
		}
		if p.Class == name || slices.Contains(Aliases(p.Class), name) || slices.Contains(p.Aliases, name) {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return Plugin{}, fmt.Errorf("no plugin named %s", name)
	}
	for _, p := range found {
		if p.Class == name {
			return s.firstOfType(p.Class, found, types), nil
		}
	}
	for _, p := range found[1:] {
		if p.Class != found[0].Class {
			return Plugin{}, fmt.Errorf("more than one plugin matches the alias %s", name)
		}
	}
	return s.firstOfType(found[0].Class, found, types), nil
}

// firstOfType picks, among the plugins found of one class, the one whose
// type comes first in types.
func (s *PluginSet) firstOfType(class string, found []Plugin, types []PluginType) Plugin {
	best := -1
	for i, p := range found {
		if p.Class != class {
			continue
		}
		if best < 0 || slices.Index(types, p.Type) < slices.Index(types, found[best].Type) {
			best = i
		}
	}
	return found[best]
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
