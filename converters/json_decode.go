package converters

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

var schemaTypes = func() map[string]connect.Type {
	m := make(map[string]connect.Type, len(jsonTypeNames))
	for t, name := range jsonTypeNames {
		m[name] = t
	}
	return m
}()

// parseSchema reads a schema as JsonConverter.asConnectSchema does; JSON
// null is no schema.
func (c *JSONConverter) parseSchema(n *node) (*connect.Schema, error) {
	if n.kind == nodeNull {
		return nil, nil
	}
	typeNode := n.get("type")
	if typeNode == nil || typeNode.kind != nodeString {
		return nil, errors.New("Schema must contain 'type' field")
	}
	typ, ok := schemaTypes[typeNode.text]
	if !ok {
		return nil, fmt.Errorf("Unknown schema type: %s", typeNode.text)
	}
	s := &connect.Schema{Type: typ}
	var err error
	switch typ {
	case connect.TypeArray:
		items := n.get("items")
		if items.isNull() {
			return nil, errors.New("Array schema did not specify the element type")
		}
		if s.Value, err = c.parseSchema(items); err != nil {
			return nil, err
		}
	case connect.TypeMap:
		keys, values := n.get("keys"), n.get("values")
		if keys == nil {
			return nil, errors.New("Map schema did not specify the key type")
		}
		if values == nil {
			return nil, errors.New("Map schema did not specify the value type")
		}
		if s.Key, err = c.parseSchema(keys); err != nil {
			return nil, err
		}
		if s.Value, err = c.parseSchema(values); err != nil {
			return nil, err
		}
		// SchemaBuilder.map refuses null schemas.
		if s.Key == nil {
			return nil, errors.New("keySchema cannot be null.")
		}
		if s.Value == nil {
			return nil, errors.New("valueSchema cannot be null.")
		}
	case connect.TypeStruct:
		fields := n.get("fields")
		if fields == nil || fields.kind != nodeArray {
			return nil, errors.New(`Struct schema's "fields" argument is not an array.`)
		}
		for _, f := range fields.items {
			name := f.get("field")
			if name == nil || name.kind != nodeString {
				return nil, errors.New("Struct schema's field name not specified properly")
			}
			if s.Field(name.text) != nil {
				return nil, fmt.Errorf("Cannot create field because of field name duplication %s", name.text)
			}
			fs, err := c.parseSchema(f)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, connect.Field{Name: name.text, Index: len(s.Fields), Schema: fs})
		}
	}
	if opt := n.get("optional"); opt != nil && opt.kind == nodeBool && opt.b {
		s.Optional = true
	}
	if name := n.get("name"); name != nil && name.kind == nodeString {
		s.Name = name.text
	}
	if v := n.get("version"); v != nil && v.kind == nodeNumber && v.integral {
		s.Version = int(int32(javaLong(v)))
	}
	if doc := n.get("doc"); doc != nil && doc.kind == nodeString {
		s.Doc = doc.text
	}
	if params := n.get("parameters"); params != nil && params.kind == nodeObject {
		for _, p := range params.fields {
			if p.value.kind != nodeString {
				return nil, errors.New("Schema parameters must have string values.")
			}
			s.Parameters = append(s.Parameters, connect.Parameter{Key: p.name, Value: p.value.text})
		}
	}
	// The default is read against the schema as built so far, which has no
	// default yet: "default":null on a required schema is an error, as in
	// Java.
	if def := n.get("default"); def != nil {
		v, err := c.toConnect(s, def)
		if err != nil {
			return nil, err
		}
		if err := connect.ValidateValue(s, v); err != nil {
			return nil, fmt.Errorf("Invalid default value: %w", err)
		}
		s.Default = v
	}
	return s, nil
}

// toConnect reads a value as JsonConverter.convertToConnect does. A nil
// node is a missing struct field and reads as null.
//
// Where Jackson's JsonNode accessors quietly give 0, false or null for a
// node of the wrong kind (a string where a number is expected, say), this
// returns an error instead; between number kinds it narrows as Java does.
func (c *JSONConverter) toConnect(s *connect.Schema, n *node) (any, error) {
	if n != nil && n.kind == nodeValue {
		return n.val.Any(), nil
	}
	if s == nil {
		return schemalessValue(n), nil
	}
	if n.isNull() {
		switch {
		case s.Default != nil && !c.keepNulls:
			return s.Default, nil
		case s.Optional:
			return nil, nil
		}
		return nil, fmt.Errorf("Invalid null value for required %s field", s.Type)
	}
	switch s.Name {
	case connect.DecimalName:
		return decimalValue(s, n)
	case connect.DateName:
		if !n.fitsInt() {
			return nil, fmt.Errorf("Invalid type for Date, underlying representation should be integer but was %s", n.kind)
		}
		return connect.DaysToDate(int32(javaLong(n))), nil
	case connect.TimeName:
		if !n.fitsInt() {
			return nil, fmt.Errorf("Invalid type for Time, underlying representation should be integer but was %s", n.kind)
		}
		ms := javaLong(n)
		if ms < 0 || ms > msPerDay {
			return nil, errors.New("Time values must use number of milliseconds greater than 0 and less than 86400000")
		}
		return time.UnixMilli(ms).UTC(), nil
	case connect.TimestampName:
		if n.kind != nodeNumber || !n.integral {
			return nil, fmt.Errorf("Invalid type for Timestamp, underlying representation should be integral but was %s", n.kind)
		}
		return time.UnixMilli(javaLong(n)).UTC(), nil
	}
	mismatch := func() (any, error) {
		return nil, fmt.Errorf("Invalid value for %s schema: JSON %s", s.Type, n.kind)
	}
	switch s.Type {
	case connect.TypeBoolean:
		if n.kind != nodeBool {
			return mismatch()
		}
		return n.b, nil
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		if n.kind != nodeNumber {
			return mismatch()
		}
		l := javaLong(n)
		switch s.Type {
		case connect.TypeInt8:
			return int8(l), nil
		case connect.TypeInt16:
			return int16(l), nil
		case connect.TypeInt32:
			return int32(l), nil
		}
		return l, nil
	case connect.TypeFloat32, connect.TypeFloat64:
		var f float64
		switch {
		case n.kind == nodeNumber && s.Type == connect.TypeFloat32:
			return javaFloat(n), nil
		case n.kind == nodeNumber:
			return javaDouble(n), nil
		case n.kind == nodeString:
			// Jackson writes NaN and the infinities as these strings. Java
			// would read them back as 0.0; we read them as what they say.
			var ok bool
			if f, ok = nonFiniteValue(n.text); !ok {
				return mismatch()
			}
		default:
			return mismatch()
		}
		if s.Type == connect.TypeFloat32 {
			return float32(f), nil
		}
		return f, nil
	case connect.TypeString:
		if n.kind != nodeString {
			return mismatch()
		}
		return n.text, nil
	case connect.TypeBytes:
		if n.kind != nodeString {
			return mismatch()
		}
		b, err := base64.StdEncoding.DecodeString(n.text)
		if err != nil {
			return nil, fmt.Errorf("Invalid bytes field: %w", err)
		}
		return b, nil
	case connect.TypeArray:
		if n.kind != nodeArray {
			return mismatch()
		}
		out := make([]any, 0, len(n.items))
		for _, e := range n.items {
			v, err := c.toConnect(s.Value, e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case connect.TypeMap:
		return c.mapValue(s, n)
	case connect.TypeStruct:
		if n.kind != nodeObject {
			return nil, fmt.Errorf("Structs should be encoded as JSON objects, but found %s", n.kind)
		}
		return c.structFrom(s, func(i int) (*node, error) { return n.get(s.Fields[i].Name), nil })
	}
	return nil, fmt.Errorf("Unknown schema type: %s", s.Type)
}

// structFrom builds a Struct of schema s field by field, in the schema's
// order, from the node member gives for each field (nil when absent).
func (c *JSONConverter) structFrom(s *connect.Schema, member func(i int) (*node, error)) (any, error) {
	st := connect.NewStruct(s)
	for i, f := range s.Fields {
		n, err := member(i)
		if err != nil {
			return nil, err
		}
		if n != nil && n.kind == nodeSkipped {
			continue
		}
		if v, ok := fastValue(f.Schema, n); ok {
			st.SetValueAt(i, v)
			continue
		}
		v, err := c.toConnect(f.Schema, n)
		if err != nil {
			return nil, err
		}
		if err := st.SetAt(i, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// fastValue is toConnect for the values most fields hold (an INT64
// written as an integer that fits, a STRING, a nested struct already
// read), made into a connect.Value without boxing them; false for any
// other, which toConnect reads.
func fastValue(s *connect.Schema, n *node) (connect.Value, bool) {
	if n == nil {
		return connect.Value{}, false
	}
	if n.kind == nodeValue {
		// Read by this very field's schema, named or not.
		return n.val, true
	}
	if s.Name != "" {
		return connect.Value{}, false
	}
	switch {
	case n.kind == nodeString && s.Type == connect.TypeString:
		return connect.StringValue(n.text), true
	case n.kind == nodeNumber && n.integral && s.Type == connect.TypeInt64:
		if v, err := strconv.ParseInt(n.text, 10, 64); err == nil {
			return connect.Int64Value(v), true
		}
	}
	return connect.Value{}, false
}

// nonFiniteValue reads Jackson's quoted spelling of a non-finite float.
func nonFiniteValue(s string) (float64, bool) {
	switch s {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	return 0, false
}

func (c *JSONConverter) mapValue(s *connect.Schema, n *node) (any, error) {
	if s.Key.Type == connect.TypeString {
		if n.kind != nodeObject {
			return nil, fmt.Errorf("Maps with string fields should be encoded as JSON objects, but found %s", n.kind)
		}
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			// Keys are taken as they are, so a key schema that a string does
			// not satisfy (a logical type's name on a string schema) can
			// never be written back; Java would fail later, in Struct.put
			// or on writing, so fail now.
			if err := connect.ValidateValue(s.Key, f.name); err != nil {
				return nil, fmt.Errorf("invalid map key %q: %w", f.name, err)
			}
			v, err := c.toConnect(s.Value, f.value)
			if err != nil {
				return nil, err
			}
			out[f.name] = v
		}
		return out, nil
	}
	if n.kind != nodeArray {
		return nil, fmt.Errorf("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", n.kind)
	}
	// Entries keep the document's order. Java would hold them in a HashMap,
	// deduplicated and in hash order; see the package's known gaps.
	out := make([]connect.MapEntry, 0, len(n.items))
	for _, e := range n.items {
		if e.kind != nodeArray {
			return nil, fmt.Errorf("Found invalid map entry instead of array tuple: %s", e.kind)
		}
		if len(e.items) != 2 {
			return nil, fmt.Errorf("Found invalid map entry, expected length 2 but found :%d", len(e.items))
		}
		k, err := c.toConnect(s.Key, e.items[0])
		if err != nil {
			return nil, err
		}
		v, err := c.toConnect(s.Value, e.items[1])
		if err != nil {
			return nil, err
		}
		out = append(out, connect.MapEntry{Key: k, Value: v})
	}
	return out, nil
}

// schemalessValue reads JSON without a schema: integral numbers become
// int64 (wrapping when out of range, as Jackson's longValue does), other
// numbers float64, objects map[string]any and arrays []any.
func schemalessValue(n *node) any {
	if n == nil {
		return nil
	}
	switch n.kind {
	case nodeBool:
		return n.b
	case nodeNumber:
		if n.integral {
			return javaLong(n)
		}
		return javaDouble(n)
	case nodeString:
		return n.text
	case nodeArray:
		out := make([]any, len(n.items))
		for i, e := range n.items {
			out[i] = schemalessValue(e)
		}
		return out
	case nodeObject:
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			out[f.name] = schemalessValue(f.value)
		}
		return out
	}
	return nil
}

// decimalValue reads a Decimal from either form, whatever decimal.format
// says: a JSON number keeps its own scale (new BigDecimal(literal)), base64
// bytes take the schema's.
func decimalValue(s *connect.Schema, n *node) (any, error) {
	switch n.kind {
	case nodeNumber:
		unscaled, scale, err := parseDecimal(n.text)
		if err != nil {
			return nil, err
		}
		return &connect.Decimal{Unscaled: unscaled, Scale: scale}, nil
	case nodeString:
		b, err := base64.StdEncoding.DecodeString(n.text)
		if err != nil {
			return nil, fmt.Errorf("Invalid bytes for Decimal field: %w", err)
		}
		unscaled, err := fromTwosComplement(b)
		if err != nil {
			return nil, fmt.Errorf("Invalid bytes for Decimal field: %w", err)
		}
		scale, err := decimalSchemaScale(s)
		if err != nil {
			return nil, fmt.Errorf("Invalid bytes for Decimal field: %w", err)
		}
		return &connect.Decimal{Unscaled: unscaled, Scale: scale}, nil
	}
	return nil, fmt.Errorf("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", n.kind)
}
