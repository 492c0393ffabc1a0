package transforms

import (
	"github.com/connectd/connectd/connect"
)

func setSchemaMetadataPlugins() []connect.Plugin {
	return keyValuePlugins("SetSchemaMetadata", func(p Part) connect.Transformation { return &SetSchemaMetadata{part: p} })
}

var setSchemaMetadataConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "schema.name", Type: connect.ConfigString, Importance: connect.High, Doc: "Schema name to set."}).
	Define(connect.ConfigKey{Name: "schema.version", Type: connect.ConfigInt, Importance: connect.High, Doc: "Schema version to set."}).
	Define(replaceNullWithDefaultKey)

// SetSchemaMetadata is Kafka's SetSchemaMetadata$Key and $Value: the
// key's or value's schema gets a new name, version or both, and a struct
// is rebuilt onto the renamed schema.
type SetSchemaMetadata struct {
	part                   Part
	name                   *string
	version                *int
	replaceNullWithDefault bool
}

func (s *SetSchemaMetadata) Config() *connect.ConfigDef { return setSchemaMetadataConfig }

func (s *SetSchemaMetadata) Configure(props map[string]string) error {
	c, err := setSchemaMetadataConfig.Parse(props)
	if err != nil {
		return err
	}
	s.name, s.version = nil, nil
	if n, ok := c.Get("schema.name").(string); ok {
		s.name = &n
	}
	if _, ok := c.Get("schema.version").(int32); ok {
		v := c.Int("schema.version")
		if v == 0 {
			// connect.Schema cannot tell version 0 from no version.
			return &connect.ConfigError{Name: "schema.version", Message: "Invalid value 0 for configuration schema.version: connectd's schemas cannot carry version 0"}
		}
		s.version = &v
	}
	if s.name == nil && s.version == nil {
		return &connect.ConfigError{Message: "Neither schema name nor version configured"}
	}
	s.replaceNullWithDefault = c.Bool("replace.null.with.default")
	return nil
}

func (s *SetSchemaMetadata) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := s.part.Get(r)
	if value == nil && schema == nil {
		return r, nil
	}
	if schema == nil {
		return nil, dataError("Schema required for [updating schema metadata]")
	}
	updated := *schema
	if s.name != nil {
		updated.Name = *s.name
	}
	if s.version != nil {
		updated.Version = *s.version
	}
	if updated.Type != connect.TypeMap {
		updated.Key = nil
	}
	if updated.Type != connect.TypeMap && updated.Type != connect.TypeArray {
		updated.Value = nil
	}
	out, err := s.updateSchemaIn(value, &updated)
	if err != nil {
		return nil, err
	}
	s.part.Set(r, &updated, out)
	return r, nil
}

// updateSchemaIn is Kafka's: a struct value is copied onto the new schema,
// whose fields are the old one's; other values keep no schema to update.
func (s *SetSchemaMetadata) updateSchemaIn(v any, updated *connect.Schema) (any, error) {
	st, ok := v.(*connect.Struct)
	if !ok || st == nil {
		return v, nil
	}
	out := connect.NewStruct(updated)
	for i := range updated.Fields {
		f := &updated.Fields[i]
		if err := putField(out, f, getField(st, f, s.replaceNullWithDefault)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
