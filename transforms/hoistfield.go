package transforms

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
)

func hoistFieldPlugins() []connect.Plugin {
	return keyValuePlugins("HoistField", func(p Part) connect.Transformation { return &HoistField{part: p} })
}

// HoistFieldConfig is the ConfigDef of Kafka's HoistField.
func HoistFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Required: true, Importance: connect.Medium,
			Doc: "Field name for the single field that will be created in the resulting Struct or Map."})
}

// HoistField is Kafka's HoistField$Key and HoistField$Value: it wraps the
// key or value, null included, in a struct or map of one field.
type HoistField struct {
	part  Part
	field string
	cache schemaCache
}

// Config returns Kafka's keys for HoistField.
func (t *HoistField) Config() *connect.ConfigDef { return HoistFieldConfig() }

// Configure reads the field's name.
func (t *HoistField) Configure(config map[string]string) error {
	pc, err := HoistFieldConfig().Parse(config)
	if err != nil {
		return err
	}
	t.field = pc.String("field")
	t.cache = schemaCache{}
	return nil
}

// Apply wraps the part.
func (t *HoistField) Apply(r *connect.Record) (*connect.Record, error) {
	r, _, err := t.ApplyOwned(r, 0)
	return r, err
}

// ApplyOwned is Apply in a worker's chain (internal/owned): the struct or
// map the part is wrapped in is the record's own.
func (t *HoistField) ApplyOwned(r *connect.Record, own owned.Parts) (*connect.Record, owned.Parts, error) {
	schema, value := t.part.Get(r)
	if schema == nil {
		t.part.Set(r, nil, map[string]any{t.field: value})
		return r, own | t.part.owned(), nil
	}
	updated := t.cache.get(schema)
	if updated == nil {
		b := newFieldsBuilder(1)
		if err := b.add(t.field, schema); err != nil {
			return nil, 0, err
		}
		updated = b.build(&connect.Schema{Type: connect.TypeStruct})
		t.cache.put(schema, updated)
	}
	out := connect.NewStruct(updated)
	if err := structPut(out, 0, value); err != nil {
		return nil, 0, err
	}
	t.part.Set(r, updated, out)
	return r, own | t.part.owned(), nil
}
