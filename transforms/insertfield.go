package transforms

import (
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
)

func insertFieldPlugins() []connect.Plugin {
	return keyValuePlugins("InsertField", func(p Part) connect.Transformation { return &InsertField{part: p} })
}

const insertFieldPurpose = "field insertion"

const insertFieldOptionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

// InsertFieldConfig is the ConfigDef of Kafka's InsertField.
func InsertFieldConfig() *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, k := range []struct{ name, doc string }{
		{"topic.field", "Field name for Kafka topic. " + insertFieldOptionalityDoc},
		{"partition.field", "Field name for Kafka partition. " + insertFieldOptionalityDoc},
		{"offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>" + insertFieldOptionalityDoc},
		{"timestamp.field", "Field name for record timestamp. " + insertFieldOptionalityDoc},
		{"static.field", "Field name for static data field. " + insertFieldOptionalityDoc},
		{"static.value", "Static field value, if field name configured."},
	} {
		d.Define(connect.ConfigKey{Name: k.name, Type: connect.ConfigString, Importance: connect.Medium, Doc: k.doc})
	}
	return d.Define(replaceNullWithDefaultKey)
}

// insertionSpec is a field InsertField adds: its name and whether its
// schema is optional.
type insertionSpec struct {
	name     string
	optional bool
}

// parseInsertionSpec reads a field spec as Kafka's InsertionSpec.parse: a
// trailing "?" or nothing makes the field optional, a trailing "!"
// required. A null spec (the key unset) inserts nothing.
func parseInsertionSpec(v any) *insertionSpec {
	spec, ok := v.(string)
	if !ok {
		return nil
	}
	if name, found := strings.CutSuffix(spec, "?"); found {
		return &insertionSpec{name: name, optional: true}
	}
	if name, found := strings.CutSuffix(spec, "!"); found {
		return &insertionSpec{name: name}
	}
	return &insertionSpec{name: spec, optional: true}
}

// InsertField is Kafka's InsertField$Key and InsertField$Value: it adds
// the record's topic, partition, offset (sink records only), timestamp
// and a static string to a struct or map.
type InsertField struct {
	part                                     Part
	topic, partition, offset, timestamp, stc *insertionSpec
	staticValue                              string
	staticValueV                             connect.Value // staticValue, made once
	replaceNullWithDefault                   bool
	cache                                    schemaCache
}

// Config returns Kafka's keys for InsertField.
func (t *InsertField) Config() *connect.ConfigDef { return InsertFieldConfig() }

// Configure reads the field specs; at least one must be set, and a
// static field needs its value.
func (t *InsertField) Configure(config map[string]string) error {
	pc, err := InsertFieldConfig().Parse(config)
	if err != nil {
		return err
	}
	t.topic = parseInsertionSpec(pc.Get("topic.field"))
	t.partition = parseInsertionSpec(pc.Get("partition.field"))
	t.offset = parseInsertionSpec(pc.Get("offset.field"))
	t.timestamp = parseInsertionSpec(pc.Get("timestamp.field"))
	t.stc = parseInsertionSpec(pc.Get("static.field"))
	staticValue, hasStatic := pc.Get("static.value").(string)
	t.staticValue = staticValue
	t.staticValueV = connect.StringValue(staticValue)
	t.replaceNullWithDefault = pc.Bool(replaceNullWithDefaultKey.Name)
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.stc == nil {
		return &connect.ConfigError{Message: "No field insertion configured"}
	}
	if t.stc != nil && !hasStatic {
		// Kafka names the field by its InsertionSpec's identity hash, which
		// says nothing; the field's name does.
		return &connect.ConfigError{Name: "static.value", Message: "Invalid value null for configuration static.value: No value specified for static field: " + t.stc.name}
	}
	t.cache = schemaCache{}
	return nil
}

// Apply inserts the configured fields; a null key or value (a tombstone)
// passes untouched.
func (t *InsertField) Apply(r *connect.Record) (*connect.Record, error) {
	return t.ApplyOwned(r, new(owned.State[connect.Struct]))
}

// ApplyOwned is Apply in a worker's chain (internal/owned): a struct the
// record owns gets the inserted fields in place when it has room for
// them, and what the part ends up holding is the record's own.
func (t *InsertField) ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if value == nil {
		return r, nil
	}
	var err error
	if schema == nil {
		r, err = t.applySchemaless(r, value)
	} else {
		r, err = t.applyWithSchema(r, value, st.Parts&t.part.owned() != 0)
	}
	if err != nil {
		return nil, err
	}
	st.Parts |= t.part.owned()
	return r, nil
}

func (t *InsertField) applySchemaless(r *connect.Record, value any) (*connect.Record, error) {
	m, err := requireMap(value, insertFieldPurpose)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m)+5)
	for k, v := range m {
		out[k] = v
	}
	if t.topic != nil {
		out[t.topic.name] = r.Topic
	}
	if t.partition != nil && r.Partition != nil {
		out[t.partition.name] = *r.Partition
	}
	if t.offset != nil {
		if err := requireSinkRecord(r, insertFieldPurpose); err != nil {
			return nil, err
		}
		out[t.offset.name] = r.Offset
	}
	if t.timestamp != nil && !r.Timestamp.IsZero() {
		// Without a schema Kafka inserts the record's timestamp as it
		// holds it: a Long of epoch milliseconds.
		out[t.timestamp.name] = r.Timestamp.UnixMilli()
	}
	if t.stc != nil {
		out[t.stc.name] = t.staticValue
	}
	t.part.Set(r, nil, out)
	return r, nil
}

func (t *InsertField) applyWithSchema(r *connect.Record, value any, inPlace bool) (*connect.Record, error) {
	in, err := requireStruct(value, insertFieldPurpose)
	if err != nil {
		return nil, err
	}
	schema := t.cache.get(in.Schema())
	if schema == nil {
		if schema, err = t.updatedSchema(in.Schema()); err != nil {
			return nil, err
		}
		t.cache.put(in.Schema(), schema)
	}
	// The inserted fields follow the copied ones in this order, as
	// updatedSchema appends them. Each value is made only for a field
	// that is inserted: boxing it is an allocation per record.
	i := len(in.Schema().Fields)
	out, err := copyFields(in, schema, t.replaceNullWithDefault, inPlace)
	if err != nil {
		return nil, err
	}
	if t.topic != nil {
		if err := structPut(out, i, r.Topic); err != nil {
			return nil, err
		}
		i++
	}
	if t.partition != nil {
		if r.Partition != nil {
			if err := structPut(out, i, *r.Partition); err != nil {
				return nil, err
			}
		}
		i++
	}
	if t.offset != nil {
		if err := requireSinkRecord(r, insertFieldPurpose); err != nil {
			return nil, err
		}
		if err := structPut(out, i, r.Offset); err != nil {
			return nil, err
		}
		i++
	}
	if t.timestamp != nil {
		if !r.Timestamp.IsZero() {
			// A java.util.Date holds milliseconds: finer digits are lost.
			out.SetValueAt(i, connect.TimeValue(time.UnixMilli(r.Timestamp.UnixMilli()).UTC()))
		}
		i++
	}
	if t.stc != nil {
		out.SetValueAt(i, t.staticValueV)
	}
	t.part.Set(r, schema, out)
	return r, nil
}

var insertedOptionalTimestampSchema = connect.TimestampSchema().AsOptional()

// updatedSchema is in's fields followed by the inserted ones, each
// optional unless its spec ends in "!".
func (t *InsertField) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	b := newFieldsBuilder(len(in.Fields) + 5)
	for _, f := range in.Fields {
		if err := b.add(f.Name, f.Schema); err != nil {
			return nil, err
		}
	}
	for _, x := range []struct {
		spec               *insertionSpec
		required, optional *connect.Schema
	}{
		{t.topic, connect.StringSchema, connect.OptionalStringSchema},
		{t.partition, connect.Int32Schema, connect.OptionalInt32Schema},
		{t.offset, connect.Int64Schema, connect.OptionalInt64Schema},
		{t.timestamp, insertedTimestampSchema, insertedOptionalTimestampSchema},
		{t.stc, connect.StringSchema, connect.OptionalStringSchema},
	} {
		if x.spec == nil {
			continue
		}
		s := x.required
		if x.spec.optional {
			s = x.optional
		}
		if err := b.add(x.spec.name, s); err != nil {
			return nil, err
		}
	}
	return b.build(copySchemaBasics(in, connect.TypeStruct)), nil
}

var insertedTimestampSchema = connect.TimestampSchema()

// fieldsBuilder collects a struct schema's fields, refusing the names
// Kafka's SchemaBuilder.field refuses, with its messages.
type fieldsBuilder struct {
	fields []connect.Field
	names  map[string]struct{}
}

func newFieldsBuilder(n int) *fieldsBuilder {
	return &fieldsBuilder{fields: make([]connect.Field, 0, n), names: make(map[string]struct{}, n)}
}

func (b *fieldsBuilder) add(name string, s *connect.Schema) error {
	if name == "" {
		return dataError("fieldName cannot be null.")
	}
	if _, dup := b.names[name]; dup {
		return dataError("Cannot create field because of field name duplication %s", name)
	}
	b.names[name] = struct{}{}
	b.fields = append(b.fields, connect.Field{Name: name, Schema: s})
	return nil
}

func (b *fieldsBuilder) build(base *connect.Schema) *connect.Schema {
	return structSchema(base, b.fields)
}

// structPut sets field i of s as Kafka's Struct.put does: a null is refused
// for a required field even when the field has a default, since
// ConnectSchema.validateValue refuses it.
func structPut(s *connect.Struct, i int, v any) error {
	f := &s.Schema().Fields[i]
	if v == nil {
		if !f.Schema.Optional {
			return dataError("Invalid value: null used for required field: \"%s\", schema type: %s", f.Name, f.Schema.Type)
		}
		return nil
	}
	if err := s.SetAt(i, v); err != nil {
		return &DataError{Message: err.Error()}
	}
	return nil
}
