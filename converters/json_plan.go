package converters

import (
	"strconv"
	"sync/atomic"
	"time"

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
		// Values a source set unboxed are read so (never null).
		switch fp.kind {
		case kindInt:
			if n, ok := st.Int64At(i); ok {
				dst = strconv.AppendInt(dst, n, 10)
				continue
			}
		case kindTimestamp:
			if ms, ok := st.UnixMilliAt(i); ok {
				dst = strconv.AppendInt(dst, ms, 10)
				continue
			}
		case kindDecimal:
			if n, scale, ok := st.DecimalAt(i); ok && scale == fp.scale {
				dst = appendBase64Int64(dst, n)
				continue
			}
		case kindString:
			if str, ok := st.StringAt(i); ok {
				dst = javajson.AppendString(dst, str)
				continue
			}
		}
		v := c.fieldValue(st, i)
		switch fp.kind {
		case kindInt:
			if n, ok := intValue(fp.typ, false, v); ok {
				dst = strconv.AppendInt(dst, n, 10)
				continue
			}
		case kindString:
			if str, ok := v.(string); ok {
				dst = javajson.AppendString(dst, str)
				continue
			}
		case kindBool:
			if b, ok := v.(bool); ok {
				dst = strconv.AppendBool(dst, b)
				continue
			}
		case kindFloat64:
			if f, ok := v.(float64); ok {
				dst = javajson.AppendDouble(dst, f)
				continue
			}
		case kindTimestamp:
			if t, ok := v.(time.Time); ok {
				dst = strconv.AppendInt(dst, t.UnixMilli(), 10)
				continue
			}
		case kindDecimal:
			if d, ok := v.(*connect.Decimal); ok && d != nil && d.Unscaled != nil && d.Scale == fp.scale && d.Unscaled.IsInt64() {
				dst = appendBase64Int64(dst, d.Unscaled.Int64())
				continue
			}
		}
		var err error
		if dst, err = c.appendValue(dst, st.Schema().Fields[i].Schema, v); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
