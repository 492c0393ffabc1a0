// Package transforms holds the single message transforms and predicates
// Apache Kafka ships (org.apache.kafka.connect.transforms), under their
// class names and with their keys, behaviour and DataException messages,
// for records with and without schemas.
//
// A transform with a $Key and a $Value variant is one type here whose
// part says which side of the record it works on. Every regular
// expression matches a whole string, as Java's Matcher.matches() does.
package transforms

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
)

// Package is the package of Kafka's transforms, and PredicatesPackage that
// of its predicates.
const (
	Package           = "org.apache.kafka.connect.transforms"
	PredicatesPackage = "org.apache.kafka.connect.transforms.predicates"
)

// kafkaVersion is the version the connector-plugins API shows for Kafka's
// transforms and predicates: that of the Kafka release whose behaviour
// they have.
const kafkaVersion = "3.9.0"

// Plugins returns Kafka's transforms and predicates, for a worker's
// plugin set.
func Plugins() []connect.Plugin {
	var out []connect.Plugin
	for _, f := range families {
		out = append(out, f()...)
	}
	return out
}

// families lists the functions that return each file's plugins.
var families = []func() []connect.Plugin{
	insertFieldPlugins, replaceFieldPlugins, valueToKeyPlugins, extractFieldPlugins, hoistFieldPlugins, flattenPlugins,
	castPlugins, maskFieldPlugins, setSchemaMetadataPlugins, timestampConverterPlugins, timestampRouterPlugins,
	routePlugins,
}

// transformPlugin is the plugin of the transform class Package.name.
func transformPlugin(name string, newT func() connect.Transformation) connect.Plugin {
	return connect.Plugin{Class: Package + "." + name, Type: connect.PluginTransformation, Version: kafkaVersion, New: func() any { return newT() }}
}

// keyValuePlugins are the $Key and $Value variants of the transform class
// Package.name; newT makes one for the given part.
func keyValuePlugins(name string, newT func(p Part) connect.Transformation) []connect.Plugin {
	return []connect.Plugin{
		transformPlugin(name+"$Key", func() connect.Transformation { return newT(Key) }),
		transformPlugin(name+"$Value", func() connect.Transformation { return newT(Value) }),
	}
}

// Part is the side of a record a $Key or $Value transform works on.
type Part bool

// The two parts of a record.
const (
	Key   Part = true
	Value Part = false
)

// Get returns the part's schema and value.
func (p Part) Get(r *connect.Record) (*connect.Schema, any) {
	if p == Key {
		return r.KeySchema, r.Key
	}
	return r.ValueSchema, r.Value
}

// owned is the part's bit of owned.Parts.
func (p Part) owned() owned.Parts {
	if p == Key {
		return owned.Key
	}
	return owned.Value
}

// Set replaces the part's schema and value.
func (p Part) Set(r *connect.Record, schema *connect.Schema, value any) {
	if p == Key {
		r.KeySchema, r.Key = schema, value
		return
	}
	r.ValueSchema, r.Value = schema, value
}

// requireMap is Kafka's Requirements.requireMap: a schemaless value must
// be a map with string keys.
func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, dataError("Only Map objects supported in absence of schema for [%s], found: %s", purpose, ClassName(v))
	}
	return m, nil
}

// requireMapOrNull is requireMap that lets a nil value through.
func requireMapOrNull(v any, purpose string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return requireMap(v, purpose)
}

// requireStruct is Kafka's Requirements.requireStruct.
func requireStruct(v any, purpose string) (*connect.Struct, error) {
	s, ok := v.(*connect.Struct)
	if !ok || s == nil {
		return nil, dataError("Only Struct objects supported for [%s], found: %s", purpose, ClassName(v))
	}
	return s, nil
}

// requireStructOrNull is requireStruct that lets a nil value through.
func requireStructOrNull(v any, purpose string) (*connect.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

// requireSinkRecord is Kafka's Requirements.requireSinkRecord.
func requireSinkRecord(r *connect.Record, purpose string) error {
	if !r.Sink {
		return dataError("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", purpose)
	}
	return nil
}

// DataError is Kafka's org.apache.kafka.connect.errors.DataException: a
// record a transform cannot handle.
type DataError struct{ Message string }

func (e *DataError) Error() string { return e.Message }

func dataError(format string, args ...any) error {
	return &DataError{Message: fmt.Sprintf(format, args...)}
}

// ClassName is the Java class of the value a Go value stands for, as
// Kafka's messages name it (nullSafeClassName).
func ClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "java.lang.String"
	case bool:
		return "java.lang.Boolean"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64, int:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case []byte:
		return "[B"
	case []any:
		return "java.util.ArrayList"
	case map[string]any, []connect.MapEntry:
		return "java.util.HashMap"
	case *connect.Struct:
		return "org.apache.kafka.connect.data.Struct"
	case *connect.Decimal:
		return "java.math.BigDecimal"
	case time.Time:
		return "java.util.Date"
	}
	return reflect.TypeOf(v).String()
}

// schemaCache keeps what a transform derived from an input schema (Kafka's
// SynchronizedCache over an LRUCache of 16): schemas are immutable once a
// record carries them, so the pointer is the key. It is safe for
// concurrent use.
type schemaCache struct {
	// last is the pair got or put last: a connector's records mostly
	// share their schema, and reading it takes no lock.
	last  atomic.Pointer[[2]*connect.Schema]
	mu    sync.Mutex
	order []*connect.Schema // least recently used first
	m     map[*connect.Schema]*connect.Schema
}

const schemaCacheSize = 16

func (c *schemaCache) get(in *connect.Schema) *connect.Schema {
	if last := c.last.Load(); last != nil && last[0] == in {
		return last[1]
	}
	out := c.getLocked(in)
	if out != nil {
		c.last.Store(&[2]*connect.Schema{in, out})
	}
	return out
}

func (c *schemaCache) getLocked(in *connect.Schema) *connect.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, ok := c.m[in]
	if ok && c.order[len(c.order)-1] != in {
		c.touch(in)
	}
	return out
}

func (c *schemaCache) put(in, out *connect.Schema) {
	c.last.Store(&[2]*connect.Schema{in, out})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[*connect.Schema]*connect.Schema{}
	}
	if _, ok := c.m[in]; ok {
		c.m[in] = out
		c.touch(in)
		return
	}
	if len(c.order) == schemaCacheSize {
		delete(c.m, c.order[0])
		c.order = append(c.order[:0], c.order[1:]...)
	}
	c.m[in] = out
	c.order = append(c.order, in)
}

// touch moves in to the end of order. The caller holds c.mu.
func (c *schemaCache) touch(in *connect.Schema) {
	for i, s := range c.order {
		if s == in {
			copy(c.order[i:], c.order[i+1:])
			c.order[len(c.order)-1] = in
			return
		}
	}
}

// copySchemaBasics is Kafka's SchemaUtil.copySchemaBasics: a new schema
// of type t with in's name, version, doc and parameters; not its
// optionality, fields or default, which each transform decides.
func copySchemaBasics(in *connect.Schema, t connect.Type) *connect.Schema {
	out := &connect.Schema{Type: t, Name: in.Name, Version: in.Version, Doc: in.Doc}
	if len(in.Parameters) > 0 {
		out.Parameters = append([]connect.Parameter(nil), in.Parameters...)
	}
	return out
}

// structSchema builds a STRUCT schema of fields, indexing them in order.
func structSchema(base *connect.Schema, fields []connect.Field) *connect.Schema {
	for i := range fields {
		fields[i].Index = i
	}
	base.Fields = fields
	return base
}

// getField reads a struct's field, with its schema's default when
// replaceNullWithDefault (Kafka's KIP-1040 replace.null.with.default),
// else as stored.
func getField(s *connect.Struct, f *connect.Field, replaceNullWithDefault bool) any {
	if replaceNullWithDefault {
		return s.At(f.Index)
	}
	return s.AtWithoutDefault(f.Index)
}

// copyField sets out's field i to in's field src, as Kafka's
// out.put(name, in.get(src)) does: a value the struct holds goes over as
// it is, without boxing or checking it again, when both fields have the
// same schema, or the same primitive type without a logical one; anything else
// takes getField and structPut.
func copyField(out *connect.Struct, i int, in *connect.Struct, src *connect.Field, replaceNullWithDefault bool) error {
	v := in.ValueAt(src.Index)
	to := out.Schema().Fields[i].Schema
	if v.Kind() != connect.KindNull && (to == src.Schema || to.Type == src.Schema.Type && to.Name == "" && src.Schema.Name == "" && to.Type.IsPrimitive()) {
		out.SetValueAt(i, v)
		return nil
	}
	return structPut(out, i, getField(in, src, replaceNullWithDefault))
}

// copyFields is a struct of schema whose first fields, in's own in order
// and with their schemas, take in's values as copyField sets them, and
// whose others are null: in itself, given schema in place, when the
// record owns it (inPlace) and it has room (owned.Reshape), a new struct
// else. In place, only a null can change (to its default), since each
// field keeps its schema.
func copyFields(in *connect.Struct, schema *connect.Schema, replaceNullWithDefault, inPlace bool) (*connect.Struct, error) {
	fields := in.Schema().Fields
	if inPlace && owned.Reshape(in, schema) {
		// A value copyField would set as it is is already there.
		for i := range fields {
			if in.ValueAt(i).Kind() == connect.KindNull {
				if err := copyField(in, i, in, &fields[i], replaceNullWithDefault); err != nil {
					return nil, err
				}
			}
		}
		return in, nil
	}
	out := connect.NewStruct(schema)
	for i := range fields {
		if err := copyField(out, i, in, &fields[i], replaceNullWithDefault); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replaceNullWithDefaultKey is the key KIP-1040 added to several
// transforms, with its documentation.
var replaceNullWithDefaultKey = connect.ConfigKey{
	Name: "replace.null.with.default", Type: connect.ConfigBoolean, Default: true, Importance: connect.Medium,
	Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
}
