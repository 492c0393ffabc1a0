package transforms

import (
	"maps"
	"slices"

	"github.com/connectd/connectd/connect"
)

// HeaderFrom is Kafka's HeaderFrom$Key and HeaderFrom$Value: the fields
// named in fields become the headers named at the same place in headers,
// removed from the key or value (operation move) or kept (copy).
type HeaderFrom struct {
	part                   Part
	fields, headers        []string
	move                   bool
	replaceNullWithDefault bool
	moveSchemas            schemaCache
}

var headerFromConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Required: true, Validator: nonEmptyList,
		Importance: connect.High, Doc: "Field names in the record whose values are to be copied or moved to headers."}).
	Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Required: true, Validator: nonEmptyList,
		Importance: connect.High, Doc: "Header names, in the same order as the field names listed in the fields configuration property."}).
	Define(connect.ConfigKey{Name: "operation", Type: connect.ConfigString, Required: true, Validator: connect.OneOf("move", "copy"),
		Importance: connect.High, Doc: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), " +
			"or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
	Define(replaceNullWithDefaultKey)

// Config returns HeaderFrom's keys.
func (t *HeaderFrom) Config() *connect.ConfigDef { return headerFromConfig }

// Configure reads the keys; fields and headers must be as long.
func (t *HeaderFrom) Configure(config map[string]string) error {
	pc, err := headerFromConfig.Parse(config)
	if err != nil {
		return err
	}
	t.fields, t.headers = pc.List("fields"), pc.List("headers")
	if len(t.fields) != len(t.headers) {
		return &connect.ConfigError{Message: "'fields' config must have the same number of elements as 'headers' config."}
	}
	t.move = pc.String("operation") == "move"
	t.replaceNullWithDefault = pc.Bool("replace.null.with.default")
	return nil
}

func (t *HeaderFrom) operation() string {
	if t.move {
		return "move"
	}
	return "copy"
}

// Apply moves or copies the fields into new headers after the record's.
func (t *HeaderFrom) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	headers := slices.Clip(r.Headers)
	purpose := "header " + t.operation()
	if schema == nil {
		m, err := requireMap(value, purpose)
		if err != nil {
			return nil, err
		}
		updated := m
		if t.move {
			updated = maps.Clone(m)
		}
		for i, f := range t.fields {
			if t.move {
				delete(updated, f)
			}
			headers = append(headers, connect.Header{Key: t.headers[i], Value: m[f]})
		}
		r.Headers = headers
		t.part.Set(r, nil, updated)
		return r, nil
	}
	s, err := requireStruct(value, purpose)
	if err != nil {
		return nil, err
	}
	updatedSchema, updated := schema, s
	if t.move {
		updatedSchema = t.moveSchema(schema)
		updated = connect.NewStruct(updatedSchema)
		for i := range updatedSchema.Fields {
			f := &updatedSchema.Fields[i]
			sf := s.Schema().Field(f.Name)
			if sf == nil {
				return nil, dataError("%s is not a valid field name", f.Name)
			}
			v := getField(s, sf, t.replaceNullWithDefault)
			if v == nil && !f.Schema.Optional {
				return nil, dataError("Invalid value: null used for required field: %q, schema type: %s", f.Name, f.Schema.Type)
			}
			if err := updated.SetAt(i, v); err != nil {
				return nil, &DataError{Message: err.Error()}
			}
		}
	}
	for i, name := range t.fields {
		field := schema.Field(name)
		if field == nil {
			return nil, dataError("%s is not a valid field name", name)
		}
		var v any
		if sf := s.Schema().Field(name); sf != nil {
			v = getField(s, sf, t.replaceNullWithDefault)
		}
		if v == nil && !field.Schema.Optional {
			return nil, dataError("A null value requires an optional schema but was %s", schemaString(field.Schema))
		}
		headers = append(headers, connect.Header{Key: t.headers[i], Schema: field.Schema, Value: v})
	}
	r.Headers = headers
	t.part.Set(r, updatedSchema, updated)
	return r, nil
}

// moveSchema is the schema without the moved fields, cached per input
// schema.
func (t *HeaderFrom) moveSchema(in *connect.Schema) *connect.Schema {
	if out := t.moveSchemas.get(in); out != nil {
		return out
	}
	var fields []connect.Field
	for _, f := range in.Fields {
		if !slices.Contains(t.fields, f.Name) {
			fields = append(fields, f)
		}
	}
	out := structSchema(copySchemaBasics(in, connect.TypeStruct), fields)
	t.moveSchemas.put(in, out)
	return out
}
