package converters

import (
	"strconv"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
)

// encodePlan is what the converter derives once from a record schema and
// reuses while records keep coming with that schema: the envelope's schema
// text, which Java caches too (JsonConverter's fromConnectSchemaCache), and
// for a struct each field's key and how its value is written. It relies on
// a schema not changing once records carry it, as Java's cannot.
type encodePlan struct {
	schema *connect.Schema
	// head is `{"schema":<schema>,"payload":`; empty when schemas are off.
	head   []byte
	fields []fieldPlan // nil unless the schema is a struct's
}

type fieldPlan struct {
	key   []byte // `"name":`, after a ',' but for the first field
	kind  fieldKind
	typ   connect.Type // kindInt's
	scale int32        // kindDecimal's
}

// fieldKind is how a field's value is written when it holds the Go type
// its schema asks for; anything else (a null, a default, a wrong type, a
// nested value) goes through appendValue, which writes it or says why not.
type fieldKind uint8

const (
	kindOther fieldKind = iota
	kindInt
	kindString
	kindBool
	kindFloat64
	kindDecimal   // BASE64, of the schema's scale
	kindTimestamp // epoch milliseconds
)

// planCache holds the plan of the schema seen last.
type planCache struct {
	last atomic.Pointer[encodePlan]
	seen atomic.Pointer[connect.Schema]
}

// planFor returns the plan for s, or nil while s is not worth one: a plan
// is made the second time in a row a schema is seen, so that records whose
// schema is new each time are not slowed down by plans never used again.
func (c *JSONConverter) planFor(s *connect.Schema) *encodePlan {
	if s == nil || c.plans == nil {
		return nil
	}
	if p := c.plans.last.Load(); p != nil && p.schema == s {
		return p
	}
	if c.plans.seen.Swap(s) != s {
		return nil
	}
	p, err := c.newPlan(s)
	if err != nil {
		return nil // the plain path reports it
	}
	c.plans.last.Store(p)
	return p
}

func (c *JSONConverter) newPlan(s *connect.Schema) (*encodePlan, error) {
	p := &encodePlan{schema: s}
	if !c.schemaless {
		p.head = append(p.head, `{"schema":`...)
		var err error
		if p.head, err = c.appendSchema(p.head, s); err != nil {
			return nil, err
		}
		p.head = append(p.head, `,"payload":`...)
	}
	if s.Type != connect.TypeStruct {
		return p, nil
	}
	p.fields = make([]fieldPlan, len(s.Fields))
	for i, f := range s.Fields {
		fp := &p.fields[i]
		if i > 0 {
			fp.key = append(fp.key, ',')
		}
		fp.key = append(javajson.AppendString(fp.key, f.Name), ':')
		if f.Schema != nil {
			fp.kind, fp.scale = c.fieldKind(f.Schema)
			fp.typ = f.Schema.Type
		}
	}
	return p, nil
}

func (c *JSONConverter) fieldKind(s *connect.Schema) (fieldKind, int32) {
	switch s.Name {
	case connect.DecimalName:
		if scale, err := decimalSchemaScale(s); err == nil && !c.numericDecimals {
			return kindDecimal, scale
		}
		return kindOther, 0
	case connect.TimestampName:
		return kindTimestamp, 0
	case connect.DateName, connect.TimeName:
		return kindOther, 0
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		return kindInt, 0
	case connect.TypeString:
		return kindString, 0
	case connect.TypeBoolean:
		return kindBool, 0
	case connect.TypeFloat64:
		return kindFloat64, 0
	}
	return kindOther, 0
}

// appendPlanned writes v as appendValue would, by p.
func (c *JSONConverter) appendPlanned(dst []byte, p *encodePlan, v any) ([]byte, error) {
	st, ok := v.(*connect.Struct)
	if p.fields == nil || !ok || st == nil || st.Schema() != p.schema {
		return c.appendValue(dst, p.schema, v)
	}
	dst = append(dst, '{')
	for i := range p.fields {
		fp := &p.fields[i]
		dst = append(dst, fp.key...)
		// Read from the struct's Value, the values a source fills its
		// structs with are written without being boxed.
		v := st.ValueAt(i)
		k := v.Kind()
		if k == connect.KindNull {
			v = connect.AnyValue(c.fieldValue(st, i))
			k = v.Kind()
		}
		switch fp.kind {
		case kindInt:
			if k == connect.KindInt64 && fp.typ == connect.TypeInt64 {
				dst = strconv.AppendInt(dst, v.Int64(), 10)
				continue
			}
			if n, ok := intValue(fp.typ, false, v.Any()); ok {
				dst = strconv.AppendInt(dst, n, 10)
				continue
			}
		case kindString:
			if k == connect.KindString {
				dst = javajson.AppendString(dst, v.String())
				continue
			}
		case kindBool:
			if b, ok := v.Any().(bool); ok {
				dst = strconv.AppendBool(dst, b)
				continue
			}
		case kindFloat64:
			if f, ok := v.Any().(float64); ok {
				dst = javajson.AppendDouble(dst, f)
				continue
			}
		case kindTimestamp:
			if k == connect.KindTime {
				dst = strconv.AppendInt(dst, v.UnixMilli(), 10)
				continue
			}
		case kindDecimal:
			if n, scale, ok := v.SmallDecimal(); ok && scale == fp.scale {
				dst = appendBase64Int64(dst, n)
				continue
			}
		}
		var err error
		if dst, err = c.appendValue(dst, st.Schema().Fields[i].Schema, v.Any()); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
