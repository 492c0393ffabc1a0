package converters

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/bits"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/connectvalues"
	"github.com/connectd/connectd/internal/javajson"
)

// jsonTypeNames are the schema "type" values; note float and double for
// FLOAT32 and FLOAT64.
var jsonTypeNames = map[connect.Type]string{
	connect.TypeBoolean: "boolean",
	connect.TypeInt8:    "int8",
	connect.TypeInt16:   "int16",
	connect.TypeInt32:   "int32",
	connect.TypeInt64:   "int64",
	connect.TypeFloat32: "float",
	connect.TypeFloat64: "double",
	connect.TypeBytes:   "bytes",
	connect.TypeString:  "string",
	connect.TypeArray:   "array",
	connect.TypeMap:     "map",
	connect.TypeStruct:  "struct",
}

// appendSchema writes a schema as JsonConverter.asJsonSchema does; a nil
// schema is JSON null.
func (c *JSONConverter) appendSchema(dst []byte, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	dst, err := c.appendSchemaMembers(dst, s)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendSchemaMembers writes a schema's members without the braces, so that
// a struct field can add its "field" member last, where Java puts it.
func (c *JSONConverter) appendSchemaMembers(dst []byte, s *connect.Schema) ([]byte, error) {
	name, ok := jsonTypeNames[s.Type]
	if !ok {
		return nil, fmt.Errorf("Couldn't translate unsupported schema type %s.", s.Type)
	}
	dst = append(dst, `"type":`...)
	dst = javajson.AppendString(dst, name)
	var err error
	switch s.Type {
	case connect.TypeArray:
		if s.Value == nil {
			return nil, errors.New("array schema has no item schema")
		}
		dst = append(dst, `,"items":`...)
		if dst, err = c.appendSchema(dst, s.Value); err != nil {
			return nil, err
		}
	case connect.TypeMap:
		if s.Key == nil || s.Value == nil {
			return nil, errors.New("map schema needs both a key and a value schema")
		}
		dst = append(dst, `,"keys":`...)
		if dst, err = c.appendSchema(dst, s.Key); err != nil {
			return nil, err
		}
		dst = append(dst, `,"values":`...)
		if dst, err = c.appendSchema(dst, s.Value); err != nil {
			return nil, err
		}
	case connect.TypeStruct:
		dst = append(dst, `,"fields":[`...)
		for i, f := range s.Fields {
			if f.Schema == nil {
				return nil, fmt.Errorf("field %s has no schema", f.Name)
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if dst, err = c.appendSchemaMembers(dst, f.Schema); err != nil {
				return nil, err
			}
			dst = append(dst, `,"field":`...)
			dst = javajson.AppendString(dst, f.Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, s.Optional)
	if s.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = javajson.AppendString(dst, s.Name)
	}
	if s.Version != 0 {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(s.Version), 10)
	}
	if s.Doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = javajson.AppendString(dst, s.Doc)
	}
	if s.Parameters != nil {
		dst = append(dst, `,"parameters":{`...)
		for i, p := range uniqueParameters(s.Parameters) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = javajson.AppendString(dst, p.Key)
			dst = append(dst, ':')
			dst = javajson.AppendString(dst, p.Value)
		}
		dst = append(dst, '}')
	}
	if s.Default != nil {
		dst = append(dst, `,"default":`...)
		if dst, err = c.appendValue(dst, s, s.Default); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// uniqueParameters resolves a key given twice as Java's LinkedHashMap
// would have: first position, last value.
func uniqueParameters(ps []connect.Parameter) []connect.Parameter {
	out := make([]connect.Parameter, 0, len(ps))
	for _, p := range ps {
		if i := slices.IndexFunc(out, func(q connect.Parameter) bool { return q.Key == p.Key }); i >= 0 {
			out[i].Value = p.Value
			continue
		}
		out = append(out, p)
	}
	return out
}

// appendValue writes a value as JsonConverter.convertToJson does. With a
// nil schema the type is inferred from the Go value.
func (c *JSONConverter) appendValue(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		switch {
		case s == nil:
			return append(dst, "null"...), nil
		case s.Default != nil && !c.keepNulls:
			return c.appendValue(dst, s, s.Default)
		case s.Optional:
			return append(dst, "null"...), nil
		}
		return nil, errors.New("Conversion error: null value for field that is required and has no default value")
	}
	if s != nil {
		switch s.Name {
		case connect.DecimalName:
			return c.appendDecimal(dst, s, v)
		case connect.DateName, connect.TimeName, connect.TimestampName:
			return appendTime(dst, s, v)
		}
	}
	var typ connect.Type
	if s != nil {
		typ = s.Type
	} else if typ = inferType(v); typ == "" {
		return nil, fmt.Errorf("Go type %T does not have corresponding schema type.", v)
	}
	mismatch := func() ([]byte, error) {
		what := "unknown schema"
		if s != nil {
			what = string(s.Type)
		}
		return nil, fmt.Errorf("Invalid type for %s: %T", what, v)
	}
	switch typ {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		n, ok := intValue(typ, s == nil, v)
		if !ok {
			return mismatch()
		}
		return strconv.AppendInt(dst, n, 10), nil
	case connect.TypeFloat32:
		f, ok := v.(float32)
		if !ok {
			return mismatch()
		}
		return javajson.AppendFloat(dst, f), nil
	case connect.TypeFloat64:
		f, ok := v.(float64)
		if !ok {
			return mismatch()
		}
		return javajson.AppendDouble(dst, f), nil
	case connect.TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		return strconv.AppendBool(dst, b), nil
	case connect.TypeString:
		str, ok := v.(string)
		if !ok {
			return mismatch()
		}
		return javajson.AppendString(dst, str), nil
	case connect.TypeBytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, fmt.Errorf("Invalid type for bytes type: %T", v)
		}
		return appendBase64(dst, b), nil
	case connect.TypeArray:
		arr, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		var items *connect.Schema
		if s != nil {
			items = s.Value
		}
		dst = append(dst, '[')
		for i, e := range arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = c.appendValue(dst, items, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case connect.TypeMap:
		return c.appendMap(dst, s, v)
	case connect.TypeStruct:
		st, ok := v.(*connect.Struct)
		if ok && st == nil {
			return c.appendValue(dst, s, nil) // a Go nil, Java's null
		}
		if !ok || s == nil || !sameSchema(st.Schema(), s) {
			return nil, errors.New("Mismatching schema.")
		}
		return c.appendStruct(dst, s, st)
	}
	return nil, fmt.Errorf("Couldn't translate unsupported schema type %s.", typ)
}

// inferType is ConnectSchema.schemaType for a schemaless value. Go's
// plain and unsigned integers have no Java class; they are accepted as
// the closest Java type so Go code need not convert before sending.
func inferType(v any) connect.Type {
	switch v.(type) {
	case int8:
		return connect.TypeInt8
	case int16, uint8:
		return connect.TypeInt16
	case int32, uint16:
		return connect.TypeInt32
	case int64, int, uint32:
		return connect.TypeInt64
	case float32:
		return connect.TypeFloat32
	case float64:
		return connect.TypeFloat64
	case bool:
		return connect.TypeBoolean
	case string:
		return connect.TypeString
	case []byte:
		return connect.TypeBytes
	case []any:
		return connect.TypeArray
	case map[string]any, []connect.MapEntry:
		return connect.TypeMap
	case *connect.Struct:
		return connect.TypeStruct
	}
	return ""
}

// intValue checks that v is the Go type of an integer schema type (Java
// casts, and fails on any other class). Without a schema, inferType has
// already admitted the extra Go integer kinds.
func intValue(typ connect.Type, schemaless bool, v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), typ == connect.TypeInt8
	case int16:
		return int64(x), typ == connect.TypeInt16
	case int32:
		return int64(x), typ == connect.TypeInt32
	case int64:
		return x, typ == connect.TypeInt64
	case int:
		return int64(x), schemaless
	case uint8:
		return int64(x), schemaless
	case uint16:
		return int64(x), schemaless
	case uint32:
		return int64(x), schemaless
	}
	return 0, false
}

// appendBase64 writes bytes as Jackson's binary nodes: standard alphabet,
// padded, no line breaks.
func appendBase64(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendBase64Int64 is appendBase64 of twosComplement(v) (what Java's
// BigInteger.toByteArray gives): the bytes are taken from v and encoded
// straight from a register, which halves the cost of a Decimal field
// (most unscaled values fit an int64).
func appendBase64Int64(dst []byte, v int64) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	// The fewest bytes that hold v's bits and a sign bit: a negative v
	// needs as many as its complement.
	u := uint64(v)
	if v < 0 {
		u = ^u
	}
	n := bits.Len64(u)/8 + 1
	// Those n bytes, big-endian, at the top of w: each group of three
	// becomes four characters, from the top.
	w := uint64(v) << (64 - 8*n)
	dst = append(dst, '"')
	for ; n >= 3; n -= 3 {
		dst = append(dst, alphabet[w>>58], alphabet[w>>52&63], alphabet[w>>46&63], alphabet[w>>40&63])
		w <<= 24
	}
	switch n {
	case 2:
		dst = append(dst, alphabet[w>>58], alphabet[w>>52&63], alphabet[w>>46&63], '=')
	case 1:
		dst = append(dst, alphabet[w>>58], alphabet[w>>52&63], '=', '=')
	}
	return append(dst, '"')
}

func (c *JSONConverter) appendMap(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	var keySchema, valueSchema *connect.Schema
	if s != nil {
		keySchema, valueSchema = s.Key, s.Value
		if keySchema == nil {
			return nil, errors.New("map schema has no key schema")
		}
	}
	// Java iterates the map it was given. A map[string]any has no order, so
	// it is written in the order a java.util.HashMap of the same keys
	// iterates, which is what Java holds after reading JSON.
	var entries []connect.MapEntry
	switch m := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range javajson.HashMapOrder(keys) {
			entries = append(entries, connect.MapEntry{Key: k, Value: m[k]})
		}
	case []connect.MapEntry:
		entries = m
	default:
		what := "unknown schema"
		if s != nil {
			what = string(s.Type)
		}
		return nil, fmt.Errorf("Invalid type for %s: %T", what, v)
	}
	objectMode := true
	if s != nil {
		objectMode = keySchema.Type == connect.TypeString
	} else {
		for _, e := range entries {
			if _, ok := e.Key.(string); !ok {
				objectMode = false
				break
			}
		}
	}
	var err error
	if objectMode {
		dst = append(dst, '{')
	} else {
		dst = append(dst, '[')
	}
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		if objectMode {
			key, plain := e.Key.(string)
			if !plain || keySchema != nil && isLogical(keySchema) {
				// Java writes the key through its schema (null rules,
				// logical types) and takes the text of the result.
				var enc []byte
				if enc, err = c.appendValue(nil, keySchema, e.Key); err != nil {
					return nil, err
				}
				key = asText(enc)
			}
			dst = javajson.AppendString(dst, key)
			dst = append(dst, ':')
			if dst, err = c.appendValue(dst, valueSchema, e.Value); err != nil {
				return nil, err
			}
			continue
		}
		dst = append(dst, '[')
		if dst, err = c.appendValue(dst, keySchema, e.Key); err != nil {
			return nil, err
		}
		dst = append(dst, ',')
		if dst, err = c.appendValue(dst, valueSchema, e.Value); err != nil {
			return nil, err
		}
		dst = append(dst, ']')
	}
	if objectMode {
		return append(dst, '}'), nil
	}
	return append(dst, ']'), nil
}

func isLogical(s *connect.Schema) bool {
	switch s.Name {
	case connect.DecimalName, connect.DateName, connect.TimeName, connect.TimestampName:
		return true
	}
	return false
}

// asText is Jackson's JsonNode.asText() for an encoded key: a string's
// value, a scalar's own text, and "" for a container.
func asText(encoded []byte) string {
	if len(encoded) == 0 {
		return ""
	}
	switch encoded[0] {
	case '"':
		n, err := parseJSON(encoded)
		if err != nil {
			return ""
		}
		return n.text
	case '[', '{':
		return ""
	}
	return string(encoded)
}

func (c *JSONConverter) appendStruct(dst []byte, s *connect.Schema, st *connect.Struct) ([]byte, error) {
	dst = append(dst, '{')
	for i, f := range s.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = javajson.AppendString(dst, f.Name)
		dst = append(dst, ':')
		var err error
		if dst, err = c.appendValue(dst, f.Schema, c.fieldValue(st, i)); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// fieldValue is a struct field's value as Java's convertToJson reads it:
// with its default, unless replace.null.with.default is false.
func (c *JSONConverter) fieldValue(st *connect.Struct, i int) any {
	if c.keepNulls {
		return st.AtWithoutDefault(i)
	}
	return st.At(i)
}

// sameSchema is Java's ConnectSchema.equals: the same schema, or an equal
// one built separately.
func sameSchema(a, b *connect.Schema) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	if a.Type != b.Type || a.Optional != b.Optional || a.Name != b.Name || a.Version != b.Version ||
		a.Doc != b.Doc || !slices.Equal(a.Parameters, b.Parameters) || len(a.Fields) != len(b.Fields) ||
		!sameSchema(a.Key, b.Key) || !sameSchema(a.Value, b.Value) {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || !sameSchema(a.Fields[i].Schema, b.Fields[i].Schema) {
			return false
		}
	}
	return reflect.DeepEqual(a.Default, b.Default)
}

// decimalError marks a Decimal that cannot be written as BASE64: Java's
// Decimal.fromLogical refusals. A Decimal read from a JSON number keeps the
// number's own scale, so reading can succeed where writing back fails, in
// Java as here.
type decimalError struct{ msg string }

func (e *decimalError) Error() string { return e.msg }

func (c *JSONConverter) appendDecimal(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	d, ok := v.(*connect.Decimal)
	if !ok || d == nil || d.Unscaled == nil {
		return nil, fmt.Errorf("Invalid type for Decimal, expected BigDecimal but was %T", v)
	}
	if c.numericDecimals {
		return append(dst, connectvalues.BigDecimalString(d.Unscaled, d.Scale)...), nil
	}
	scale, err := decimalSchemaScale(s)
	if err != nil {
		return nil, err
	}
	if d.Scale != scale {
		return nil, &decimalError{"BigDecimal has mismatching scale value for given Decimal schema"}
	}
	if d.Unscaled.IsInt64() {
		return appendBase64Int64(dst, d.Unscaled.Int64()), nil
	}
	return appendBase64(dst, twosComplement(d.Unscaled)), nil
}

// decimalSchemaScale is Decimal.scale(schema).
func decimalSchemaScale(s *connect.Schema) (int32, error) {
	str, ok := s.Parameter(connect.DecimalScaleParameter)
	if !ok {
		return 0, &decimalError{"Invalid Decimal schema: scale parameter not found."}
	}
	// Every decimal value reads its scale: the usual one or two digits
	// are read here, anything else as Java's Integer.parseInt would.
	if len(str) == 1 && '0' <= str[0] && str[0] <= '9' {
		return int32(str[0] - '0'), nil
	}
	if len(str) == 2 && '1' <= str[0] && str[0] <= '9' && '0' <= str[1] && str[1] <= '9' {
		return int32(str[0]-'0')*10 + int32(str[1]-'0'), nil
	}
	scale, err := strconv.ParseInt(str, 10, 32)
	if err != nil {
		return 0, &decimalError{"Invalid scale parameter found in Decimal schema: " + err.Error()}
	}
	return int32(scale), nil
}

const msPerDay = 24 * 60 * 60 * 1000

func appendTime(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	t, ok := v.(time.Time)
	if !ok {
		kind := map[string]string{connect.DateName: "Date", connect.TimeName: "Time", connect.TimestampName: "Timestamp"}[s.Name]
		return nil, fmt.Errorf("Invalid type for %s, expected Date but was %T", kind, v)
	}
	ms := t.UnixMilli()
	switch s.Name {
	case connect.DateName:
		days, err := connect.DateToDays(t)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(dst, int64(days), 10), nil
	case connect.TimeName:
		// Java's Time.fromLogical admits 86400000 itself, as Time.toLogical
		// does; connect.TimeToMillis does not, so the check is made here.
		if ms < 0 || ms > msPerDay {
			return nil, errors.New("Kafka Connect Time type should not have any date fields set to non-zero values.")
		}
		return strconv.AppendInt(dst, ms, 10), nil
	}
	return strconv.AppendInt(dst, ms, 10), nil
}
