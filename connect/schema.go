package connect

import (
	"fmt"
	"math/big"
	"time"
)

// Type is a Connect schema type, named as Kafka's Schema.Type.
type Type string

// The Connect schema types.
const (
	TypeInt8    Type = "INT8"
	TypeInt16   Type = "INT16"
	TypeInt32   Type = "INT32"
	TypeInt64   Type = "INT64"
	TypeFloat32 Type = "FLOAT32"
	TypeFloat64 Type = "FLOAT64"
	TypeBoolean Type = "BOOLEAN"
	TypeString  Type = "STRING"
	TypeBytes   Type = "BYTES"
	TypeArray   Type = "ARRAY"
	TypeMap     Type = "MAP"
	TypeStruct  Type = "STRUCT"
)

// IsPrimitive reports whether t has no child schemas.
func (t Type) IsPrimitive() bool {
	switch t {
	case TypeArray, TypeMap, TypeStruct:
		return false
	}
	return true
}

// Parameter is one schema parameter. Parameters are ordered because the
// JsonConverter writes them in the order they were added, as Java's
// SchemaBuilder does.
type Parameter struct{ Key, Value string }

// Schema describes a value. The Go value held for each type is:
//
//	INT8 int8, INT16 int16, INT32 int32, INT64 int64, FLOAT32 float32,
//	FLOAT64 float64, BOOLEAN bool, STRING string, BYTES []byte,
//	ARRAY []any, MAP map[string]any (string keys) or []MapEntry,
//	STRUCT *Struct;
//	Decimal *Decimal, Date, Time and Timestamp time.Time (UTC).
//
// A nil *Schema means "no schema" (schemaless data), as a null schema in
// Java.
//
// A schema must not change once a record carries it: converters keep what
// they derive from a schema (the JsonConverter its JSON text) for the
// records after it, as Java's immutable schemas allow.
type Schema struct {
	Type       Type
	Optional   bool
	Default    any // nil means no default
	Name       string
	Version    int // 0 means unset
	Doc        string
	Parameters []Parameter
	Fields     []Field // STRUCT
	Key        *Schema // MAP keys
	Value      *Schema // MAP values and ARRAY items
}

// MapEntry is one entry of a map whose keys are not strings.
type MapEntry struct{ Key, Value any }

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Parameter returns the value of the named parameter.
func (s *Schema) Parameter(key string) (string, bool) {
	for _, p := range s.Parameters {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Field returns the named field of a struct schema, or nil.
func (s *Schema) Field(name string) *Field {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i]
		}
	}
	return nil
}

// AsOptional returns a copy of s marked optional.
func (s Schema) AsOptional() *Schema {
	s.Optional = true
	return &s
}

// Primitive schemas, required and optional, as Java's Schema constants.
var (
	Int8Schema            = &Schema{Type: TypeInt8}
	Int16Schema           = &Schema{Type: TypeInt16}
	Int32Schema           = &Schema{Type: TypeInt32}
	Int64Schema           = &Schema{Type: TypeInt64}
	Float32Schema         = &Schema{Type: TypeFloat32}
	Float64Schema         = &Schema{Type: TypeFloat64}
	BooleanSchema         = &Schema{Type: TypeBoolean}
	StringSchema          = &Schema{Type: TypeString}
	BytesSchema           = &Schema{Type: TypeBytes}
	OptionalInt8Schema    = &Schema{Type: TypeInt8, Optional: true}
	OptionalInt16Schema   = &Schema{Type: TypeInt16, Optional: true}
	OptionalInt32Schema   = &Schema{Type: TypeInt32, Optional: true}
	OptionalInt64Schema   = &Schema{Type: TypeInt64, Optional: true}
	OptionalFloat32Schema = &Schema{Type: TypeFloat32, Optional: true}
	OptionalFloat64Schema = &Schema{Type: TypeFloat64, Optional: true}
	OptionalBooleanSchema = &Schema{Type: TypeBoolean, Optional: true}
	OptionalStringSchema  = &Schema{Type: TypeString, Optional: true}
	OptionalBytesSchema   = &Schema{Type: TypeBytes, Optional: true}
)

// ArrayOf returns a required array schema of items.
func ArrayOf(items *Schema) *Schema { return &Schema{Type: TypeArray, Value: items} }

// MapOf returns a required map schema.
func MapOf(key, value *Schema) *Schema { return &Schema{Type: TypeMap, Key: key, Value: value} }

// StructSchema returns a required struct schema with the given fields, in
// order; their indexes are set here.
func StructSchema(name string, fields ...Field) *Schema {
	for i := range fields {
		fields[i].Index = i
	}
	return &Schema{Type: TypeStruct, Name: name, Fields: fields}
}

// Logical type names, as in Kafka's org.apache.kafka.connect.data.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
	// DecimalScaleParameter holds a Decimal schema's scale.
	DecimalScaleParameter = "scale"
)

// Decimal is an arbitrary-precision decimal: Unscaled × 10^-Scale, as
// java.math.BigDecimal.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// String renders d in plain notation, e.g. "12.50".
func (d *Decimal) String() string {
	if d == nil || d.Unscaled == nil {
		return "null"
	}
	s := d.Unscaled.String()
	if d.Scale <= 0 {
		for range -d.Scale {
			s += "0"
		}
		return s
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= int(d.Scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// DecimalSchema returns a required Decimal schema with the given scale.
func DecimalSchema(scale int32) *Schema {
	return &Schema{Type: TypeBytes, Name: DecimalName, Version: 1,
		Parameters: []Parameter{{DecimalScaleParameter, fmt.Sprint(scale)}}}
}

// DateSchema is the required Date logical schema: days since the epoch.
func DateSchema() *Schema { return &Schema{Type: TypeInt32, Name: DateName, Version: 1} }

// TimeSchema is the required Time logical schema: milliseconds since midnight.
func TimeSchema() *Schema { return &Schema{Type: TypeInt32, Name: TimeName, Version: 1} }

// TimestampSchema is the required Timestamp logical schema: milliseconds
// since the epoch.
func TimestampSchema() *Schema { return &Schema{Type: TypeInt64, Name: TimestampName, Version: 1} }

const msPerDay = 24 * 60 * 60 * 1000

// DateToDays converts a Date value to its wire form. Java refuses a Date
// with a time part; so do we.
func DateToDays(t time.Time) (int32, error) {
	ms := t.UTC().UnixMilli()
	if ms%msPerDay != 0 {
		return 0, fmt.Errorf("Kafka Connect Date type should not have any time fields set to non-zero values")
	}
	return int32(ms / msPerDay), nil
}

// DaysToDate converts the wire form of a Date to a time.
func DaysToDate(days int32) time.Time { return time.UnixMilli(int64(days) * msPerDay).UTC() }

// TimeToMillis converts a Time value (whose date part must be the epoch) to
// milliseconds since midnight.
func TimeToMillis(t time.Time) (int32, error) {
	ms := t.UTC().UnixMilli()
	if ms < 0 || ms >= msPerDay {
		return 0, fmt.Errorf("Kafka Connect Time type should not have any date fields set to non-zero values")
	}
	return int32(ms), nil
}

// MillisToTime converts the wire form of a Time to a time on 1970-01-01.
func MillisToTime(ms int32) time.Time { return time.UnixMilli(int64(ms)).UTC() }
