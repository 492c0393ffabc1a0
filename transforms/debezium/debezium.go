// Package debezium holds the single message transforms of Debezium
// (io.debezium.transforms) that pipelines around Debezium's change events
// rely on: ExtractNewRecordState, which flattens a change event's envelope
// into the row it carries, and ByLogicalTableRouter, which sends the
// events of several physical tables to one topic. Both behave as
// Debezium 3.6's do, with its keys, defaults and messages, on the
// envelopes connectd's PostgreSQL CDC source emits and on those a
// JsonConverter reads back from Kafka.
package debezium

import (
	"container/list"
	"fmt"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/transforms"
)

// Package is the Java package of Debezium's transforms.
const Package = "io.debezium.transforms"

// Version is the Debezium release whose transforms these are, as the
// connector-plugins API shows it: 3.6.1 is the last release in which
// ByLogicalTableRouter is a transform of its own rather than an alias of
// ToLogicalTopicRouter.
const Version = "3.6.1.Final"

// Plugins returns Debezium's transforms, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{Class: Package + ".ExtractNewRecordState", Type: connect.PluginTransformation, Version: Version, New: func() any { return NewExtractNewRecordState() }},
		{Class: Package + ".ByLogicalTableRouter", Type: connect.PluginTransformation, Version: Version, New: func() any { return NewByLogicalTableRouter() }},
	}
}

// dataError is Kafka's DataException, which fails the record.
func dataError(format string, args ...any) error {
	return &transforms.DataError{Message: fmt.Sprintf(format, args...)}
}

// configError is the ConfigException Debezium's validation raises for a
// key: "Invalid value <v> for configuration <k>: <problem>".
func configError(name, value, problem string) error {
	return &connect.ConfigError{Name: name, Message: fmt.Sprintf("Invalid value %s for configuration %s: %s", value, name, problem)}
}

// enumLiterals is the list Debezium's EnumRecommender names in "Value must
// be one of ...": the values lower-cased, in the order of the HashSet that
// holds them.
func enumLiterals(values ...string) string {
	lower := make([]string, len(values))
	for i, v := range values {
		lower[i] = strings.ToLower(v)
	}
	return strings.Join(javajson.HashMapOrder(lower), ", ")
}

// parseEnum reads an enumerated key as Debezium does: trimmed, in any
// case. It returns the value in lower case.
func parseEnum(name, raw string, values ...string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(raw))
	for _, x := range values {
		if v == x {
			return v, nil
		}
	}
	return "", configError(name, raw, "Value must be one of "+enumLiterals(values...))
}

// rawString is a string key as Debezium's Configuration reads it: the
// value as given (not trimmed), or the default when the key is absent.
func rawString(config map[string]string, name, def string) string {
	if v, ok := config[name]; ok {
		return v
	}
	return def
}

// isBlank is Debezium's Strings.isNullOrBlank for a Go string.
func isBlank(s string) bool { return javaTrim(s) == "" }

// javaTrim is Java's String.trim: it strips the characters up to and
// including the space, and no other white space.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// javaSplit is Java's String.split with a one-character literal
// separator: trailing empty strings are removed, so that "a," is ["a"]
// and ":" is [] (an empty input stays [""]).
func javaSplit(s string, sep string) []string {
	parts := strings.Split(s, sep)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// lru is a cache of at most size entries that forgets the least recently
// used one first (Kafka's LRUCache behind a SynchronizedCache); a size of
// 0 keeps nothing. It is safe for concurrent use.
type lru[K comparable, V any] struct {
	mu   sync.Mutex
	size int
	m    map[K]*list.Element
	l    list.List // of *lruEntry, most recently used first
}

type lruEntry[K comparable, V any] struct {
	k K
	v V
}

func newLRU[K comparable, V any](size int) *lru[K, V] {
	return &lru[K, V]{size: size, m: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.l.MoveToFront(e)
	return e.Value.(*lruEntry[K, V]).v, true
}

func (c *lru[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size <= 0 {
		return
	}
	if e, ok := c.m[k]; ok {
		e.Value.(*lruEntry[K, V]).v = v
		c.l.MoveToFront(e)
		return
	}
	c.m[k] = c.l.PushFront(&lruEntry[K, V]{k, v})
	if c.l.Len() > c.size {
		last := c.l.Back()
		c.l.Remove(last)
		delete(c.m, last.Value.(*lruEntry[K, V]).k)
	}
}

// structBuilder builds a STRUCT schema field by field, refusing a name
// twice as Kafka's SchemaBuilder does.
type structBuilder struct {
	s *connect.Schema
}

// newStructLike is Kafka's SchemaUtil.copySchemaBasics(in,
// SchemaBuilder.struct()): in's name, version, doc and parameters on a
// required struct without fields.
func newStructLike(in *connect.Schema) *structBuilder {
	out := &connect.Schema{Type: connect.TypeStruct, Name: in.Name, Version: in.Version, Doc: in.Doc}
	if len(in.Parameters) > 0 {
		out.Parameters = append([]connect.Parameter(nil), in.Parameters...)
	}
	return &structBuilder{s: out}
}

func (b *structBuilder) field(name string, schema *connect.Schema) error {
	if b.s.Field(name) != nil {
		return dataError("Cannot create field because of field name duplication %s", name)
	}
	b.s.Fields = append(b.s.Fields, connect.Field{Name: name, Index: len(b.s.Fields), Schema: schema})
	return nil
}

// optionalCopy is SchemaUtil.copySchemaBasics(s).optional().build(): the
// type, name, version, doc and parameters of s (an array's items too, a
// struct's fields not), optional, without a default.
func optionalCopy(s *connect.Schema) *connect.Schema {
	out := &connect.Schema{Type: s.Type, Optional: true, Name: s.Name, Version: s.Version, Doc: s.Doc}
	if len(s.Parameters) > 0 {
		out.Parameters = append([]connect.Parameter(nil), s.Parameters...)
	}
	switch s.Type {
	case connect.TypeArray:
		out.Value = s.Value
	case connect.TypeMap:
		// Java's builder would have neither; a map schema needs both.
		out.Key, out.Value = s.Key, s.Value
	}
	return out
}

// put sets a field of a struct Kafka's Struct.put would, as a DataException
// when the value does not fit the field's schema.
func put(s *connect.Struct, field string, v any) error {
	if err := s.Set(field, v); err != nil {
		return dataError("%v", err)
	}
	return nil
}

// copied sets out's field i to in's field j when in holds a value there
// that out's field takes as it is (the same schema, or the same primitive
// type and logical name), as put would, without boxing and checking the
// value again; false leaves it to put.
func copied(out *connect.Struct, i int, in *connect.Struct, j int) bool {
	v := in.ValueAt(j)
	to, from := out.Schema().Fields[i].Schema, in.Schema().Fields[j].Schema
	if v.Kind() == connect.KindNull || to != from && (to.Type != from.Type || to.Name != "" || from.Name != "" || !to.Type.IsPrimitive()) {
		return false
	}
	out.SetValueAt(i, v)
	return true
}

// getString is Kafka's Struct.getString: the field's value or default,
// which must be a STRING field of the struct.
func getString(s *connect.Struct, field string) (string, bool, error) {
	f := s.Schema().Field(field)
	if f == nil {
		return "", false, dataError("%s is not a valid field name", field)
	}
	if f.Schema.Type != connect.TypeString {
		return "", false, dataError("Field '%s' is not of type %s", field, connect.TypeString)
	}
	// As At reads it, but as a Value: At would box the string, an
	// allocation a record.
	switch v := s.ValueAt(f.Index); v.Kind() {
	case connect.KindString:
		return v.String(), true, nil
	case connect.KindNull:
		d, ok := f.Schema.Default.(string)
		return d, ok, nil
	}
	return "", false, nil
}

// requireStruct is Kafka's Requirements.requireStruct.
func requireStruct(v any, purpose string) (*connect.Struct, error) {
	s, ok := v.(*connect.Struct)
	if !ok || s == nil {
		return nil, dataError("Only Struct objects supported for [%s], found: %s", purpose, transforms.ClassName(v))
	}
	return s, nil
}
