package transforms

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/connectd/connectd/connect"
)

func extractFieldPlugins() []connect.Plugin {
	return keyValuePlugins("ExtractField", func(p Part) connect.Transformation { return &ExtractField{part: p} })
}

const extractFieldPurpose = "field extraction"

// fieldSyntaxVersionKey is Kafka's FieldSyntaxVersion config (KIP-821).
var fieldSyntaxVersionKey = connect.ConfigKey{
	Name: "field.syntax.version", Type: connect.ConfigString, Default: "V1",
	Validator: connect.OneOfIgnoreCase("V1", "V2"), Importance: connect.High,
	Doc: "Defines the version of the syntax to access fields. " +
		"If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. " +
		"If set to `V2`, the syntax will support accessing nested elements. " +
		"To access nested elements, dotted notation is used. " +
		"If dots are already included in the field name, " +
		"then backtick pairs can be used to wrap field names containing dots. " +
		"E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map " +
		"the following format can be used to access its elements: \"`foo.bar`.baz\".",
}

// ExtractFieldConfig is the ConfigDef of Kafka's ExtractField.
func ExtractFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Required: true, Importance: connect.Medium,
			Doc: "Field name to extract."}).
		Define(replaceNullWithDefaultKey).
		Define(fieldSyntaxVersionKey)
}

// fieldPath is Kafka's SingleFieldPath: the names of the fields to step
// through, the last one read.
type fieldPath []string

// parseFieldPath reads a path as SingleFieldPath does for its version: V1
// is one field, whatever it holds; V2 splits at dots, and a step that
// starts with a backtick runs to the next backtick followed by a dot or
// ending the path, so that it may hold dots (a backslash before such a
// backtick makes it part of the name).
func parseFieldPath(path string, v2 bool) (fieldPath, error) {
	if !v2 {
		return fieldPath{path}, nil
	}
	var steps fieldPath
	i := 0
	for i < len(path) {
		if path[i] != '`' {
			dot := strings.IndexByte(path[i:], '.')
			if dot < 0 {
				steps = append(steps, path[i:])
				break
			}
			steps = append(steps, path[i:i+dot])
			i += dot + 1
			continue
		}
		backtickAt := i
		i++
		start := i
		var field strings.Builder
		for {
			next := strings.IndexByte(path[i:], '`')
			if next < 0 {
				return nil, incompleteBacktickPair(path, backtickAt)
			}
			i += next
			escaped := path[i-1] == '\\'
			if i == len(path)-1 {
				if escaped {
					return nil, incompleteBacktickPair(path, backtickAt)
				}
				field.WriteString(path[start:i])
				steps = append(steps, field.String())
				i++
				break
			}
			if path[i+1] != '.' {
				i++
				continue
			}
			if escaped {
				field.WriteString(path[start : i-1])
				field.WriteByte('`')
				i++
				start = i
				continue
			}
			field.WriteString(path[start:i])
			steps = append(steps, field.String())
			i += 2
			break
		}
	}
	if strings.HasSuffix(path, ".") {
		steps = append(steps, "")
	}
	return steps, nil
}

func incompleteBacktickPair(path string, backtickAt int) error {
	// Java counts the position in UTF-16 code units.
	pos := len(utf16.Encode([]rune(path[:backtickAt])))
	return &connect.ConfigError{Message: "Incomplete backtick pair in path: [" + path + "]," +
		" consider adding a backslash before backtick at position " + strconv.Itoa(pos) + " to escape it"}
}

// errNonStructLookup is Kafka's ConnectSchema.field on a schema that is
// not a struct.
var errNonStructLookup = &DataError{Message: "Cannot look up fields on non-struct type"}

// fieldFrom is SingleFieldPath.fieldFrom: the field the path names in
// schema, or nil.
func (p fieldPath) fieldFrom(schema *connect.Schema) (*connect.Field, error) {
	current := schema
	for _, step := range p[:len(p)-1] {
		if current.Type != connect.TypeStruct {
			return nil, errNonStructLookup
		}
		f := current.Field(step)
		if f == nil {
			return nil, nil
		}
		current = f.Schema
	}
	if current.Type != connect.TypeStruct {
		return nil, errNonStructLookup
	}
	return current.Field(p[len(p)-1]), nil
}

// structValue is SingleFieldPath.valueFrom(Struct, withDefault): nil where
// a step is missing or null. The steps before the last read their
// field's default where it is null.
func (p fieldPath) structValue(s *connect.Struct, withDefault bool) (any, error) {
	current := s
	for _, step := range p[:len(p)-1] {
		f := current.Schema().Field(step)
		if f == nil {
			return nil, nil
		}
		next, err := requireStructOrNull(current.At(f.Index), "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		current = next
	}
	f := current.Schema().Field(p[len(p)-1])
	if f == nil {
		return nil, nil
	}
	return getField(current, f, withDefault), nil
}

// mapValue is SingleFieldPath.valueFrom(Map).
func (p fieldPath) mapValue(m map[string]any) (any, error) {
	current := m
	for _, step := range p[:len(p)-1] {
		next, err := requireMapOrNull(current[step], "nested field access")
		if err != nil || next == nil {
			return nil, err
		}
		current = next
	}
	return current[p[len(p)-1]], nil
}

// ExtractField is Kafka's ExtractField$Key and ExtractField$Value: the
// key or value becomes one of its fields, found by a V1 name or a V2
// path.
type ExtractField struct {
	part                   Part
	original               string
	path                   fieldPath
	replaceNullWithDefault bool
}

// Config returns Kafka's keys for ExtractField.
func (t *ExtractField) Config() *connect.ConfigDef { return ExtractFieldConfig() }

// Configure reads the field path. An empty V2 path has no step at all:
// Kafka accepts it and then fails every record on an index out of
// bounds, so it is refused here.
func (t *ExtractField) Configure(config map[string]string) error {
	pc, err := ExtractFieldConfig().Parse(config)
	if err != nil {
		return err
	}
	t.original = pc.String("field")
	v2 := strings.EqualFold(pc.String(fieldSyntaxVersionKey.Name), "V2")
	if t.path, err = parseFieldPath(t.original, v2); err != nil {
		return err
	}
	if len(t.path) == 0 {
		return &connect.ConfigError{Name: "field", Message: "Invalid value  for configuration field: a field path of field.syntax.version V2 needs at least one field name"}
	}
	t.replaceNullWithDefault = pc.Bool(replaceNullWithDefaultKey.Name)
	return nil
}

// Apply extracts the field; a null key or value stays null, with the
// field's schema where there is one.
func (t *ExtractField) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if schema == nil {
		m, err := requireMapOrNull(value, extractFieldPurpose)
		if err != nil {
			return nil, err
		}
		var v any
		if m != nil {
			if v, err = t.path.mapValue(m); err != nil {
				return nil, err
			}
		}
		t.part.Set(r, nil, v)
		return r, nil
	}
	s, err := requireStructOrNull(value, extractFieldPurpose)
	if err != nil {
		return nil, err
	}
	f, err := t.path.fieldFrom(schema)
	if err != nil {
		return nil, err
	}
	if f == nil {
		// Kafka throws an IllegalArgumentException here, not a
		// DataException.
		return nil, errors.New("Unknown field: " + t.original)
	}
	var v any
	if s != nil {
		if v, err = t.path.structValue(s, t.replaceNullWithDefault); err != nil {
			return nil, err
		}
	}
	t.part.Set(r, f.Schema, v)
	return r, nil
}
