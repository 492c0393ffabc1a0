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
	return t.ApplyOwned(r, new(owned.State[connect.Struct]))
}

// ApplyOwned is Apply in a worker's chain (internal/owned): the struct or
// map the part is wrapped in is the record's own, and the struct is the
// spare one when there is one.
func (t *HoistField) ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if schema == nil {
		t.part.Set(r, nil, map[string]any{t.field: value})
		st.Parts |= t.part.owned()
		return r, nil
	}
	updated := t.cache.get(schema)
	if updated == nil {
		b := newFieldsBuilder(1)
		if err := b.add(t.field, schema); err != nil {
			return nil, err
		}
		updated = b.build(&connect.Schema{Type: connect.TypeStruct})
		t.cache.put(schema, updated)
	}
	out := st.Spare
	st.Spare = nil
	if out != nil && owned.Reshape(out, updated) {
		out.Reset()
	} else {
		out = connect.NewStruct(updated)
	}
	if err := structPut(out, 0, value); err != nil {
		return nil, err
	}
	t.part.Set(r, updated, out)
	st.Parts |= t.part.owned()
	return r, nil
}
