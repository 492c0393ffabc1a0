package connect

import (
	"fmt"
	"math/big"
	"time"
)

// Struct is a value of a STRUCT schema: one value per field, in the
// schema's field order.
type Struct struct {
	schema *Schema
	values []any
	// prims holds the values of the fields set by SetInt64AtUnchecked,
	// SetUnixNanoAtUnchecked and SetDecimalAtUnchecked, whose values[i]
	// is then a *primSlot saying which: a source filling millions of
	// structs does not box an int64 or a time.Time, nor allocate a
	// Decimal, for each (a quarter of its allocations). Readers get those
	// values boxed from At, Get and the rest, as any other; a converter
	// can read them unboxed (Int64At, UnixMilliAt, DecimalAt).
	prims []int64
	// strs holds the values of the fields set by SetStringAtUnchecked:
	// boxing a string into values allocates its header, for each field
	// of each record.
	strs []string
}

// primSlot marks a field whose value is in prims (or, for a string, in
// strs), and what it is.
type primSlot struct {
	kind  primKind
	scale int32 // a decimal's
}

type primKind uint8

const (
	primInt64 primKind = iota
	primUTCNanos
	primDecimal
	primString
)

var (
	int64Slot   any = &primSlot{kind: primInt64}
	utcTimeSlot any = &primSlot{kind: primUTCNanos}
	stringSlot  any = &primSlot{kind: primString}
	// One marker per scale, up to the scales SQL databases allow (38).
	decimalSlots [39]primSlot
)

func init() {
	for i := range decimalSlots {
		decimalSlots[i] = primSlot{kind: primDecimal, scale: int32(i)}
	}
}

// NewStruct returns an empty struct of the given STRUCT schema.
func NewStruct(schema *Schema) *Struct {
	if schema == nil || schema.Type != TypeStruct {
		panic("connect: NewStruct needs a STRUCT schema")
	}
	// A small struct and its values are one allocation, sized to the
	// fields: sources and converters make one struct per record.
	switch n := len(schema.Fields); {
	case n <= 4:
		b := new(struct {
			s Struct
			v [4]any
		})
		b.s = Struct{schema: schema, values: b.v[:n:n]}
		return &b.s
	case n <= 8:
		b := new(struct {
			s Struct
			v [8]any
		})
		b.s = Struct{schema: schema, values: b.v[:n:n]}
		return &b.s
	}
	return &Struct{schema: schema, values: make([]any, len(schema.Fields))}
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
	s.values[f.Index] = value
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
	s.values[f.Index] = value
	return nil
}

// SetAt is Set for the field at index i, for code that walks the schema's
// fields in order and needs no lookup by name.
func (s *Struct) SetAt(i int, value any) error {
	f := &s.schema.Fields[i]
	if err := ValidateValue(f.Schema, value); err != nil {
		return fmt.Errorf("invalid value for field %s: %w", f.Name, err)
	}
	s.values[i] = value
	return nil
}

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

// value is field i's value, boxed if it is in prims or strs; nil when
// unset.
func (s *Struct) value(i int) any {
	p, ok := s.values[i].(*primSlot)
	if !ok {
		return s.values[i]
	}
	switch p.kind {
	case primInt64:
		return s.prims[i]
	case primUTCNanos:
		return time.Unix(0, s.prims[i]).UTC()
	case primString:
		return s.strs[i]
	default:
		return &Decimal{Unscaled: big.NewInt(s.prims[i]), Scale: p.scale}
	}
}

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

// SetAtUnchecked is SetAt without checking value against the field's
// schema, for code that made value by that schema itself, such as a source
// decoding rows by the schema it derived from their columns: checking
// every field of every record again costs such a source a few percent of
// its time. A value of the wrong type is still caught, later, by Validate
// or by the converter.
func (s *Struct) SetAtUnchecked(i int, value any) { s.values[i] = value }

// SetInt64AtUnchecked is SetAtUnchecked(i, n) for an INT64 field, without
// boxing n: At(i) still returns it as an int64.
func (s *Struct) SetInt64AtUnchecked(i int, n int64) {
	s.setPrim(i, n)
	s.values[i] = int64Slot
}

// SetUnixNanoAtUnchecked is SetAtUnchecked(i, time.Unix(0, n).UTC()) for
// a Timestamp field, without boxing the time: At(i) returns that
// time.Time.
func (s *Struct) SetUnixNanoAtUnchecked(i int, n int64) {
	s.setPrim(i, n)
	s.values[i] = utcTimeSlot
}

// SetDecimalAtUnchecked is SetAtUnchecked(i, &Decimal{Unscaled:
// big.NewInt(unscaled), Scale: scale}) for a Decimal field, without
// allocating the Decimal: At(i) makes a new one each time. A scale above
// 38 is stored boxed.
func (s *Struct) SetDecimalAtUnchecked(i int, unscaled int64, scale int32) {
	if scale < 0 || int(scale) >= len(decimalSlots) {
		s.values[i] = &Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
		return
	}
	s.setPrim(i, unscaled)
	s.values[i] = &decimalSlots[scale]
}

// SetStringAtUnchecked is SetAtUnchecked(i, v) for a STRING field,
// without boxing v: At(i) returns it as a string.
func (s *Struct) SetStringAtUnchecked(i int, v string) {
	if s.strs == nil {
		s.strs = make([]string, len(s.values))
	}
	s.strs[i] = v
	s.values[i] = stringSlot
}

func (s *Struct) setPrim(i int, n int64) {
	if s.prims == nil {
		s.prims = make([]int64, len(s.values))
	}
	s.prims[i] = n
}

// Int64At returns field i's value and true when it was set by
// SetInt64AtUnchecked, without boxing it.
func (s *Struct) Int64At(i int) (int64, bool) {
	if s.values[i] == int64Slot {
		return s.prims[i], true
	}
	return 0, false
}

// TimestampAt returns field i's value and true when it was set by
// SetUnixNanoAtUnchecked, without boxing it.
func (s *Struct) TimestampAt(i int) (time.Time, bool) {
	if s.values[i] == utcTimeSlot {
		return time.Unix(0, s.prims[i]).UTC(), true
	}
	return time.Time{}, false
}

// UnixMilliAt returns field i's value as milliseconds since the epoch,
// rounded down as java.util.Date.getTime() has it (time.Time.UnixMilli),
// and true when it was set by SetUnixNanoAtUnchecked: what a Timestamp
// is written as, without making the time.Time.
func (s *Struct) UnixMilliAt(i int) (int64, bool) {
	if s.values[i] != utcTimeSlot {
		return 0, false
	}
	n := s.prims[i]
	ms := n / 1e6
	if n%1e6 < 0 {
		ms--
	}
	return ms, true
}

// StringAt returns field i's value and true when it was set by
// SetStringAtUnchecked, without boxing it.
func (s *Struct) StringAt(i int) (string, bool) {
	if s.values[i] == stringSlot {
		return s.strs[i], true
	}
	return "", false
}

// DecimalAt returns field i's unscaled value and scale, and true, when it
// was set by SetDecimalAtUnchecked (unboxed), without making the Decimal.
func (s *Struct) DecimalAt(i int) (unscaled int64, scale int32, ok bool) {
	if p, isPrim := s.values[i].(*primSlot); isPrim && p.kind == primDecimal {
		return s.prims[i], p.scale, true
	}
	return 0, 0, false
}

// Reset unsets every field, so that a source task that reuses its
// records' memory (see RecordReleaser) can fill s again.
func (s *Struct) Reset() {
	clear(s.values)
	// Nor do the strings of the previous values stay reachable.
	clear(s.strs)
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
			if err := ValidateValue(f.Schema, st.value(i)); err != nil {
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
