package connect

import (
	"fmt"
	"time"

	"github.com/connectd/connectd/internal/owned"
)

// Struct is a value of a STRUCT schema: one value per field, in the
// schema's field order.
type Struct struct {
	schema *Schema
	values []Value
}

// NewStruct returns an empty struct of the given STRUCT schema.
func NewStruct(schema *Schema) *Struct {
	if schema == nil || schema.Type != TypeStruct {
		panic("connect: NewStruct needs a STRUCT schema")
	}
	// A small struct and its values are one allocation, sized to the
	// fields: sources and converters make one struct per record. The
	// values keep the array's room, for a built-in transformation to
	// add its fields in place (reshape).
	switch n := len(schema.Fields); {
	case n <= 2:
		// What transforms make: a hoisted value, a key of one field.
		b := new(struct {
			s Struct
			v [2]Value
		})
		b.s = Struct{schema: schema, values: b.v[:n]}
		return &b.s
	case n <= 4:
		b := new(struct {
			s Struct
			v [4]Value
		})
		b.s = Struct{schema: schema, values: b.v[:n]}
		return &b.s
	case n <= 8:
		b := new(struct {
			s Struct
			v [8]Value
		})
		b.s = Struct{schema: schema, values: b.v[:n]}
		return &b.s
	}
	return &Struct{schema: schema, values: make([]Value, len(schema.Fields))}
}

func init() { owned.SetReshape(reshape) }

// reshape is owned.Reshape.
func reshape(s *Struct, schema *Schema) bool {
	n := len(schema.Fields)
	if schema.Type != TypeStruct || n > cap(s.values) {
		return false
	}
	// The room past a struct's fields is always zero (NewStruct's array
	// starts so): the fields it gains start null.
	if had := len(s.values); n < had {
		clear(s.values[n:had])
	}
	s.schema, s.values = schema, s.values[:n]
	return true
}

// Schema returns the struct's schema.
func (s *Struct) Schema() *Schema { return s.schema }

// Put sets a field's value, checking it against the field's schema, and
// returns s so calls chain.
func (s *Struct) Put(field string, value any) *Struct {
	f := s.schema.Field(field)
	if f == nil {
		panic(fmt.Sprintf("connect: %s is not a valid field name", field))
	}
	if err := ValidateValue(f.Schema, value); err != nil {
		panic(fmt.Sprintf("connect: invalid value for field %s: %v", field, err))
	}
	s.values[f.Index] = AnyValue(value)
	return s
}

// Set is Put returning an error instead of panicking, for values that come
// from outside the program.
func (s *Struct) Set(field string, value any) error {
	f := s.schema.Field(field)
	if f == nil {
		return fmt.Errorf("%s is not a valid field name", field)
	}
	if err := ValidateValue(f.Schema, value); err != nil {
		return fmt.Errorf("invalid value for field %s: %w", field, err)
	}
	s.values[f.Index] = AnyValue(value)
	return nil
}

// SetAt is Set for the field at index i, for code that walks the schema's
// fields in order and needs no lookup by name.
func (s *Struct) SetAt(i int, value any) error {
	f := &s.schema.Fields[i]
	if err := ValidateValue(f.Schema, value); err != nil {
		return fmt.Errorf("invalid value for field %s: %w", f.Name, err)
	}
	s.values[i] = AnyValue(value)
	return nil
}

// SetValueAt sets the field at index i to v without checking v against
// the field's schema, for code that made v by that schema itself, such as
// a source decoding rows by the schema it derived from their columns:
// checking every field of every record again costs such a source a few
// percent of its time. A value of the wrong type is still caught, later,
// by Validate or by the converter.
func (s *Struct) SetValueAt(i int, v Value) { s.values[i] = v }

// ValueAt returns the value of the field at index i, of KindNull when
// unset even if the field has a default (as AtWithoutDefault; a converter
// decides whether a null is written as the default, as Java's JsonConverter
// does with replace.null.with.default).
func (s *Struct) ValueAt(i int) Value { return s.values[i] }

// Get returns a field's value, or the field's default when unset.
func (s *Struct) Get(field string) any {
	f := s.schema.Field(field)
	if f == nil {
		return nil
	}
	return s.At(f.Index)
}

// At returns the value of the field at index i, or its default when unset.
func (s *Struct) At(i int) any {
	if v := s.value(i); v != nil {
		return v
	}
	return s.schema.Fields[i].Schema.Default
}

// value is field i's value as a Go value; nil when unset.
func (s *Struct) value(i int) any { return s.values[i].Any() }

// GetWithoutDefault returns a field's value, nil when unset even if the
// field has a default (Java's Struct.getWithoutDefault).
func (s *Struct) GetWithoutDefault(field string) any {
	f := s.schema.Field(field)
	if f == nil {
		return nil
	}
	return s.value(f.Index)
}

// AtWithoutDefault returns the value of the field at index i, nil when
// unset even if the field has a default.
func (s *Struct) AtWithoutDefault(i int) any { return s.value(i) }

// Reset unsets every field, so that a source task that reuses its
// records' memory (see RecordReleaser) can fill s again.
func (s *Struct) Reset() {
	clear(s.values)
}

// Validate checks that every required field has a value.
func (s *Struct) Validate() error {
	return ValidateValue(s.schema, s)
}

// String renders the struct as Java's Struct.toString does.
func (s *Struct) String() string {
	out := "Struct{"
	first := true
	for i, f := range s.schema.Fields {
		v := s.value(i)
		if v == nil {
			continue
		}
		if !first {
			out += ","
		}
		first = false
		out += f.Name + "=" + fmt.Sprint(v)
	}
	return out + "}"
}

// ValidateValue checks that value is a valid value of schema.
func ValidateValue(schema *Schema, value any) error {
	if schema == nil {
		return nil
	}
	if value == nil {
		if schema.Optional || schema.Default != nil {
			return nil
		}
		return fmt.Errorf("invalid value: null used for required field, schema type: %s", schema.Type)
	}
	switch schema.Name {
	case DecimalName:
		if _, ok := value.(*Decimal); !ok {
			return fmt.Errorf("invalid Java object for logical type %s: %T", schema.Name, value)
		}
		return nil
	case DateName, TimeName, TimestampName:
		if _, ok := value.(time.Time); !ok {
			return fmt.Errorf("invalid Java object for logical type %s: %T", schema.Name, value)
		}
		return nil
	}
	ok := false
	switch schema.Type {
	case TypeInt8:
		_, ok = value.(int8)
	case TypeInt16:
		_, ok = value.(int16)
	case TypeInt32:
		_, ok = value.(int32)
	case TypeInt64:
		_, ok = value.(int64)
	case TypeFloat32:
		_, ok = value.(float32)
	case TypeFloat64:
		_, ok = value.(float64)
	case TypeBoolean:
		_, ok = value.(bool)
	case TypeString:
		_, ok = value.(string)
	case TypeBytes:
		_, ok = value.([]byte)
	case TypeArray:
		arr, isArr := value.([]any)
		if !isArr {
			break
		}
		for _, e := range arr {
			if err := ValidateValue(schema.Value, e); err != nil {
				return err
			}
		}
		return nil
	case TypeMap:
		switch m := value.(type) {
		case map[string]any:
			for k, v := range m {
				if err := ValidateValue(schema.Key, k); err != nil {
					return err
				}
				if err := ValidateValue(schema.Value, v); err != nil {
					return err
				}
			}
			return nil
		case []MapEntry:
			for _, e := range m {
				if err := ValidateValue(schema.Key, e.Key); err != nil {
					return err
				}
				if err := ValidateValue(schema.Value, e.Value); err != nil {
					return err
				}
			}
			return nil
		}
	case TypeStruct:
		st, isStruct := value.(*Struct)
		if !isStruct {
			break
		}
		if st.schema != schema && !sameStructShape(st.schema, schema) {
			return fmt.Errorf("struct schemas do not match")
		}
		for i, f := range st.schema.Fields {
			if err := validateStored(f.Schema, st.values[i]); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return nil
	}
	if !ok {
		return fmt.Errorf("invalid Java object for schema with type %s: %T", schema.Type, value)
	}
	return nil
}

// validateStored is ValidateValue of a struct's stored value. One held
// unboxed (an Int64Value, a StringValue, ...) is checked by its kind:
// boxing it to check it would cost an allocation per field each time a
// struct holding it is set into another.
func validateStored(schema *Schema, v Value) error {
	if schema != nil {
		switch v.any.(type) {
		case kindMarker, stringptr, decimalScale:
			var fits bool
			switch v.Kind() {
			case KindInt64:
				fits = schema.Name == "" && schema.Type == TypeInt64
			case KindTime:
				fits = schema.Name == DateName || schema.Name == TimeName || schema.Name == TimestampName
			case KindString:
				fits = schema.Name == "" && schema.Type == TypeString
			case KindDecimal:
				fits = schema.Name == DecimalName
			}
			if fits {
				return nil
			}
		}
	}
	return ValidateValue(schema, v.Any())
}

func sameStructShape(a, b *Schema) bool {
	if len(a.Fields) != len(b.Fields) || a.Name != b.Name {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || a.Fields[i].Schema.Type != b.Fields[i].Schema.Type {
			return false
		}
	}
	return true
}
