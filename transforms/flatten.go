package transforms

import (
	"github.com/connectd/connectd/connect"
)

func flattenPlugins() []connect.Plugin {
	return keyValuePlugins("Flatten", func(p Part) connect.Transformation { return &Flatten{part: p} })
}

const flattenPurpose = "flattening"

// FlattenConfig is the ConfigDef of Kafka's Flatten.
func FlattenConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "delimiter", Type: connect.ConfigString, Default: ".", Importance: connect.Medium,
			Doc: "Delimiter to insert between field names from the input record when generating field names for the output record"})
}

// Flatten is Kafka's Flatten$Key and Flatten$Value: nested structs (with
// a schema) or maps (without) become top-level fields named by their path,
// joined with the delimiter. Arrays are left as they are.
//
// Without a schema, Kafka builds a LinkedHashMap, which its JsonConverter
// writes in the order the fields were flattened; the map[string]any made
// here is written in HashMap order instead, the order of every other
// schemaless map. Which value a name shared by two fields gets ("a.b"
// and "a" holding "b") is Kafka's: the one flattened last.
type Flatten struct {
	part      Part
	delimiter string
	cache     schemaCache
}

// Config returns Kafka's keys for Flatten.
func (t *Flatten) Config() *connect.ConfigDef { return FlattenConfig() }

// Configure reads the delimiter.
func (t *Flatten) Configure(config map[string]string) error {
	pc, err := FlattenConfig().Parse(config)
	if err != nil {
		return err
	}
	t.delimiter = pc.String("delimiter")
	t.cache = schemaCache{}
	return nil
}

func (t *Flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

// Apply flattens the part; a null key or value passes.
func (t *Flatten) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if value == nil {
		return r, nil
	}
	if schema == nil {
		m, err := requireMap(value, flattenPurpose)
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		collided, err := t.flattenMap(m, "", out, false)
		if err != nil {
			return nil, err
		}
		if collided {
			// Only the order of Kafka's HashMaps says which value a shared
			// name keeps; finding it costs a sort, so only now.
			clear(out)
			if _, err := t.flattenMap(m, "", out, true); err != nil {
				return nil, err
			}
		}
		t.part.Set(r, nil, out)
		return r, nil
	}
	in, err := requireStructOrNull(value, flattenPurpose)
	if err != nil {
		return nil, err
	}
	updated := t.cache.get(schema)
	if updated == nil {
		if schema.Type != connect.TypeStruct {
			return nil, dataError("Cannot list fields on non-struct type")
		}
		b := newFieldsBuilder(len(schema.Fields))
		parentDefault, _ := schema.Default.(*connect.Struct)
		if err := t.buildSchema(schema, "", b, schema.Optional, parentDefault); err != nil {
			return nil, err
		}
		updated = b.build(copySchemaBasics(schema, connect.TypeStruct))
		t.cache.put(schema, updated)
	}
	out := connect.NewStruct(updated)
	next := 0
	if err := t.flattenStruct(in, "", out, &next); err != nil {
		return nil, err
	}
	t.part.Set(r, updated, out)
	return r, nil
}

// flattenMap puts m's entries into out under their flattened names, in
// Java's HashMap order when ordered. It reports whether two entries had
// the same flattened name.
func (t *Flatten) flattenMap(m map[string]any, prefix string, out map[string]any, ordered bool) (bool, error) {
	collided := false
	visit := func(k string, v any) error {
		name := t.name(prefix, k)
		switch x := v.(type) {
		case nil, int8, int16, int32, int64, int, float32, float64, bool, string, []byte, []any:
			if _, dup := out[name]; dup {
				collided = true
			}
			out[name] = v
		case map[string]any:
			c, err := t.flattenMap(x, name, out, ordered)
			if err != nil {
				return err
			}
			collided = collided || c
		case []connect.MapEntry:
			// A map whose keys are all strings, read as entries: the same
			// as a map[string]any to Kafka, whose Maps have no key type.
			sub := make(map[string]any, len(x))
			for _, e := range x {
				key, ok := e.Key.(string)
				if !ok {
					return dataError("Flatten transformation cannot name a field by a map key of type %s (for field %s).", ClassName(e.Key), name)
				}
				sub[key] = e.Value
			}
			c, err := t.flattenMap(sub, name, out, ordered)
			if err != nil {
				return err
			}
			collided = collided || c
		case *connect.Struct:
			return dataError("Flatten transformation does not support class %s for record without schemas (for field %s).", ClassName(v), name)
		default:
			return dataError("Flatten transformation was passed a value of type class %s which is not supported by Connect's data API", ClassName(v))
		}
		return nil
	}
	if ordered {
		for _, k := range javaHashMapKeys(m) {
			if err := visit(k, m[k]); err != nil {
				return false, err
			}
		}
		return collided, nil
	}
	for k, v := range m {
		if err := visit(k, v); err != nil {
			return false, err
		}
	}
	return collided, nil
}

// buildSchema adds schema's fields to b, flattened: a field below an
// optional struct is optional, and a field without a default of its own
// takes the one its parent's default holds.
func (t *Flatten) buildSchema(schema *connect.Schema, prefix string, b *fieldsBuilder, optional bool, parentDefault *connect.Struct) error {
	for i := range schema.Fields {
		f := &schema.Fields[i]
		name := t.name(prefix, f.Name)
		fieldOptional := optional || f.Schema.Optional
		def := f.Schema.Default
		if def == nil && parentDefault != nil {
			def = parentDefault.At(f.Index)
		}
		switch f.Schema.Type {
		case connect.TypeStruct:
			d, _ := def.(*connect.Struct)
			if err := t.buildSchema(f.Schema, name, b, fieldOptional, d); err != nil {
				return err
			}
		case connect.TypeMap:
			return dataError("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			// Kafka's copy keeps the type, name, version, doc, parameters
			// and an array's items; optionality and default are the
			// flattened field's own.
			s := copySchemaBasics(f.Schema, f.Schema.Type)
			s.Optional = fieldOptional
			s.Value = f.Schema.Value
			s.Default = def
			if err := b.add(name, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// flattenStruct copies in's leaves into out, reading defaults where a
// value is null; a null struct adds nothing. *next is the index of the
// field of out expected next, which a skipped struct puts out of step
// until a field is found by name.
func (t *Flatten) flattenStruct(in *connect.Struct, prefix string, out *connect.Struct, next *int) error {
	if in == nil {
		return nil
	}
	fields := in.Schema().Fields
	for i := range fields {
		f := &fields[i]
		name := t.name(prefix, f.Name)
		switch f.Schema.Type {
		case connect.TypeStruct:
			sub, err := requireStructOrNull(in.At(i), flattenPurpose)
			if err != nil {
				return err
			}
			if err := t.flattenStruct(sub, name, out, next); err != nil {
				return err
			}
		case connect.TypeMap:
			return dataError("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			outFields := out.Schema().Fields
			j := *next
			if j >= len(outFields) || outFields[j].Name != name {
				of := out.Schema().Field(name)
				if of == nil {
					return dataError("%s is not a valid field name", name)
				}
				j = of.Index
			}
			if err := structPut(out, j, in.At(i)); err != nil {
				return err
			}
			*next = j + 1
		}
	}
	return nil
}
