package transforms

import (
	"github.com/connectd/connectd/connect"
)

func valueToKeyPlugins() []connect.Plugin {
	return []connect.Plugin{transformPlugin("ValueToKey", func() connect.Transformation { return &ValueToKey{} })}
}

const valueToKeyPurpose = "copying fields from value to key"

// ValueToKeyConfig is the ConfigDef of Kafka's ValueToKey.
func ValueToKeyConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Required: true, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Field names on the record value to extract as the record key."}).
		Define(replaceNullWithDefaultKey)
}

// ValueToKey is Kafka's ValueToKey: the key becomes a struct or map of
// some of the value's fields. Like Kafka's, it requires a value: a
// tombstone fails it.
type ValueToKey struct {
	fields                 []string
	replaceNullWithDefault bool
	cache                  schemaCache
}

// Config returns Kafka's keys for ValueToKey.
func (t *ValueToKey) Config() *connect.ConfigDef { return ValueToKeyConfig() }

// Configure reads the fields.
func (t *ValueToKey) Configure(config map[string]string) error {
	pc, err := ValueToKeyConfig().Parse(config)
	if err != nil {
		return err
	}
	t.fields = pc.List("fields")
	t.replaceNullWithDefault = pc.Bool(replaceNullWithDefaultKey.Name)
	t.cache = schemaCache{}
	return nil
}

// Apply replaces the key.
func (t *ValueToKey) Apply(r *connect.Record) (*connect.Record, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		r.KeySchema, r.Key = nil, key
		return r, nil
	}
	value, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return nil, err
	}
	keySchema := t.cache.get(value.Schema())
	if keySchema == nil {
		b := newFieldsBuilder(len(t.fields))
		for _, name := range t.fields {
			f := value.Schema().Field(name)
			if f == nil {
				return nil, dataError("Field does not exist: %s", name)
			}
			if err := b.add(name, f.Schema); err != nil {
				return nil, err
			}
		}
		keySchema = b.build(&connect.Schema{Type: connect.TypeStruct})
		t.cache.put(value.Schema(), keySchema)
	}
	key := connect.NewStruct(keySchema)
	for i, name := range t.fields {
		if err := structPut(key, i, getField(value, value.Schema().Field(name), t.replaceNullWithDefault)); err != nil {
			return nil, err
		}
	}
	// Kafka's new record carries the value's own schema as value schema.
	r.KeySchema, r.Key, r.ValueSchema = keySchema, key, value.Schema()
	return r, nil
}
