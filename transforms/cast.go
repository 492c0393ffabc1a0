package transforms

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
)

func castPlugins() []connect.Plugin {
	return keyValuePlugins("Cast", func(p Part) connect.Transformation { return &Cast{part: p} })
}

// castSpecValidator is the spec key's validator, Kafka's: at least one
// cast, each of which parses.
func castSpecValidator(v any) error {
	l, _ := v.([]string)
	if len(l) == 0 {
		return &connect.ConfigError{Name: "spec", Message: "Must specify at least one field to cast."}
	}
	_, _, err := ParseCastSpec(l)
	return err
}

var castConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "spec", Type: connect.ConfigList, Required: true, Validator: castSpecValidator, Importance: connect.High,
		Doc: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of " +
			"Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, " +
			"int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."}).
	Define(replaceNullWithDefaultKey)

// Cast is Kafka's Cast$Key and $Value: fields of a struct or map, or the
// whole key or value, cast to another primitive type.
type Cast struct {
	part                   Part
	casts                  map[string]connect.Type
	whole                  connect.Type // "" unless the spec casts the whole value
	replaceNullWithDefault bool
	cache                  schemaCache
}

const castPurpose = "cast types"

var (
	castInputTypes  = []connect.Type{connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64, connect.TypeFloat32, connect.TypeFloat64, connect.TypeBoolean, connect.TypeString, connect.TypeBytes}
	castOutputTypes = castInputTypes[:len(castInputTypes)-1]
	// schemaTypes are Connect's types in the order of Java's
	// Schema.Type, by which valueOf knows them.
	schemaTypes = append(append([]connect.Type(nil), castInputTypes...), connect.TypeArray, connect.TypeMap, connect.TypeStruct)
)

func typeList(ts []connect.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// ParseCastSpec parses Cast's spec as Kafka's parseFieldTypes does: each
// entry field:type, or a lone type that casts the whole value (then the
// only entry). It returns the field casts, or the whole value's type.
func ParseCastSpec(mappings []string) (map[string]connect.Type, connect.Type, error) {
	casts := map[string]connect.Type{}
	var whole connect.Type
	for _, mapping := range mappings {
		parts := javaSplitColon(mapping)
		switch len(parts) {
		case 1:
			t, err := castOutputType(parts[0])
			if err != nil {
				return nil, "", err
			}
			whole = t
		case 2:
			t, err := castOutputType(parts[1])
			if err != nil {
				return nil, "", err
			}
			casts[javaTrim(parts[0])] = t
		default:
			// Kafka's message names ReplaceField's key, from which this
			// code came. An entry of colons alone makes Java fail with an
			// ArrayIndexOutOfBoundsException; it is refused the same way.
			return nil, "", &connect.ConfigError{Name: "renames", Message: fmt.Sprintf("Invalid value [%s] for configuration renames: Invalid rename mapping: %s",
				strings.Join(mappings, ", "), mapping)}
		}
	}
	if whole != "" && len(mappings) > 1 {
		return nil, "", &connect.ConfigError{Name: "spec", Message: "Cast transformations that specify a type to cast the entire value to " +
			"may only specify a single cast in their spec"}
	}
	return casts, whole, nil
}

// javaSplitColon is String.split(":"): trailing empty strings are dropped,
// so "a:" is one part and "::" none.
func javaSplitColon(s string) []string {
	parts := strings.Split(s, ":")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 && s == "" {
		return []string{""}
	}
	return parts
}

func castOutputType(name string) (connect.Type, error) {
	name = javaTrim(name)
	upper := strings.ToUpper(name)
	for _, t := range schemaTypes {
		if string(t) != upper {
			continue
		}
		for _, o := range castOutputTypes {
			if o == t {
				return t, nil
			}
		}
		return "", &connect.ConfigError{Name: "spec", Message: fmt.Sprintf("Cast transformation does not support casting to %s; supported types are %s", t, typeList(castOutputTypes))}
	}
	return "", &connect.ConfigError{Name: "spec", Message: "Invalid type found in casting spec: " + name}
}

func (c *Cast) Config() *connect.ConfigDef { return castConfig }

func (c *Cast) Configure(props map[string]string) error {
	pc, err := castConfig.Parse(props)
	if err != nil {
		return err
	}
	c.casts, c.whole, err = ParseCastSpec(pc.List("spec"))
	if err != nil {
		return err
	}
	c.replaceNullWithDefault = pc.Bool("replace.null.with.default")
	return nil
}

func (c *Cast) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := c.part.Get(r)
	if value == nil {
		return r, nil
	}
	if schema == nil {
		if c.whole != "" {
			v, err := castValue(nil, value, c.whole)
			if err != nil {
				return nil, err
			}
			c.part.Set(r, nil, v)
			return r, nil
		}
		m, err := requireMap(value, castPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(m)
		for field, t := range c.casts {
			if out[field], err = castValue(nil, m[field], t); err != nil {
				return nil, err
			}
		}
		c.part.Set(r, nil, out)
		return r, nil
	}
	updated, err := c.schemaFor(schema)
	if err != nil {
		return nil, err
	}
	if c.whole != "" {
		v, err := castValue(schema, value, c.whole)
		if err != nil {
			return nil, err
		}
		c.part.Set(r, updated, v)
		return r, nil
	}
	st, err := requireStruct(value, castPurpose)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(updated)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		v := getField(st, f, c.replaceNullWithDefault)
		if t, ok := c.casts[f.Name]; ok {
			if v, err = castValue(f.Schema, v, t); err != nil {
				return nil, err
			}
		}
		if err := putField(out, updated.Field(f.Name), v); err != nil {
			return nil, err
		}
	}
	c.part.Set(r, updated, out)
	return r, nil
}

// schemaFor is Kafka's getOrBuildSchema. A whole-value cast keeps the
// schema's name, version, doc and parameters, as Kafka's does, even when
// they name a logical type the new type is not.
func (c *Cast) schemaFor(in *connect.Schema) (*connect.Schema, error) {
	if s := c.cache.get(in); s != nil {
		return s, nil
	}
	var out *connect.Schema
	if c.whole != "" {
		out = copySchemaBasics(in, c.whole)
	} else {
		fields := make([]connect.Field, len(in.Fields))
		for i, f := range in.Fields {
			fields[i] = connect.Field{Name: f.Name, Schema: f.Schema}
			t, ok := c.casts[f.Name]
			if !ok {
				continue
			}
			fs := &connect.Schema{Type: t, Optional: f.Schema.Optional}
			if f.Schema.Default != nil {
				def, err := castValue(f.Schema, f.Schema.Default, t)
				if err != nil {
					return nil, err
				}
				fs.Default = def
			}
			fields[i].Schema = fs
		}
		out = structSchema(copySchemaBasics(in, connect.TypeStruct), fields)
	}
	out.Optional = in.Optional
	if in.Default != nil {
		def, err := castValue(in, in.Default, out.Type)
		if err != nil {
			return nil, err
		}
		out.Default = def
	}
	c.cache.put(in, out)
	return out, nil
}

// javaSchemaType is ConnectSchema.schemaType of a schemaless value's
// class: "" for the logical types' classes, which it does not know.
func javaSchemaType(v any) connect.Type {
	switch v.(type) {
	case int8:
		return connect.TypeInt8
	case int16:
		return connect.TypeInt16
	case int32:
		return connect.TypeInt32
	case int64, int:
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

// castValue is Kafka's castValueToType.
func castValue(schema *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	var from connect.Type
	if schema == nil {
		if from = javaSchemaType(v); from == "" {
			return nil, dataError("Cast transformation was passed a value of type %s which is not supported by Connect's data API", javaClass(v))
		}
	} else {
		from = schema.Type
	}
	supported := false
	for _, t := range castInputTypes {
		supported = supported || t == from
	}
	if !supported {
		return nil, dataError("Cast transformation does not support casting from %s; supported types are %s", from, typeList(castInputTypes))
	}
	if schema != nil && schema.Name != "" && target != connect.TypeString {
		var err error
		if v, err = encodeLogical(schema, v); err != nil {
			return nil, err
		}
	}
	out, err := castTo(v, target)
	if err == errOutOfRange {
		return nil, dataError("Value (%s) was out of range for requested data type", valueString(v))
	}
	return out, err
}

// encodeLogical turns a Date, Time or Timestamp into its int form, as
// their fromLogical.
func encodeLogical(schema *connect.Schema, v any) (any, error) {
	t, isTime := v.(time.Time)
	switch schema.Name {
	case connect.DateName, connect.TimeName, connect.TimestampName:
		if !isTime {
			return nil, dataError("Unexpected type in Cast transformation: %s", javaClass(v))
		}
	}
	switch schema.Name {
	case connect.DateName:
		ms := t.UnixMilli()
		if ms%msPerDay != 0 {
			return nil, dataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
		}
		return int32(ms / msPerDay), nil
	case connect.TimeName:
		ms := t.UnixMilli()
		if ms < 0 || ms >= msPerDay {
			return nil, dataError("Kafka Connect Time type should not have any date fields set to non-zero values.")
		}
		return int32(ms), nil
	case connect.TimestampName:
		return t.UnixMilli(), nil
	}
	return v, nil
}

var errOutOfRange = fmt.Errorf("out of range")

// castTo is Kafka's castToInt8 ... castToString: Number's narrowing
// conversions, Java's number parsers for strings.
func castTo(v any, target connect.Type) (any, error) {
	if target == connect.TypeString {
		switch x := v.(type) {
		case time.Time:
			ms := x.UnixMilli()
			return isoFormatFor(ms).Format(x), nil
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		case bool:
			return strconv.FormatBool(x), nil
		case float32:
			return string(javajson.AppendFloatString(nil, x)), nil
		}
		return valueString(v), nil
	}
	if b, ok := v.(bool); ok {
		n := int64(0)
		if b {
			n = 1
		}
		switch target {
		case connect.TypeBoolean:
			return b, nil
		case connect.TypeFloat32:
			return float32(n), nil
		case connect.TypeFloat64:
			return float64(n), nil
		}
		return narrowInt(n, target), nil
	}
	if s, ok := v.(string); ok {
		return parseJavaNumber(s, target)
	}
	switch target {
	case connect.TypeFloat32, connect.TypeFloat64:
		f, ok := numberFloat(v)
		if !ok {
			return nil, dataError("Unexpected type in Cast transformation: %s", javaClass(v))
		}
		if target == connect.TypeFloat32 {
			if d, isDec := v.(*connect.Decimal); isDec {
				// BigDecimal.floatValue rounds once, to the nearest float.
				f32, _ := decimalRat(d).Float32()
				return f32, nil
			}
			return float32(f), nil
		}
		return f, nil
	}
	n, ok := numberLong(v, target)
	if !ok {
		return nil, dataError("Unexpected type in Cast transformation: %s", javaClass(v))
	}
	if target == connect.TypeBoolean {
		return n != 0, nil
	}
	return narrowInt(n, target), nil
}

// narrowInt keeps the low bits of n for an integer type, as Java's casts.
func narrowInt(n int64, target connect.Type) any {
	switch target {
	case connect.TypeInt8:
		return int8(n)
	case connect.TypeInt16:
		return int16(n)
	case connect.TypeInt32:
		return int32(n)
	}
	return n
}

// numberLong is the Number method a cast to target calls: longValue, or
// intValue for the narrower types (whose result is then narrowed), which
// for a float or double saturates at int's bounds, not long's.
func numberLong(v any, target connect.Type) (int64, bool) {
	wide := target == connect.TypeInt64 || target == connect.TypeBoolean
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float32:
		return javaFloatToInt(float64(x), wide), true
	case float64:
		return javaFloatToInt(x, wide), true
	case *connect.Decimal:
		if wide {
			return decimalLowBits(x), true
		}
		return int64(int32(decimalLowBits(x))), true
	}
	return 0, false
}

// javaFloatToInt is Java's (long) or (int) of a double: NaN is 0, and
// values past the bounds are the bounds.
func javaFloatToInt(f float64, wide bool) int64 {
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
	if wide {
		lo, hi = -9.223372036854775808e18, 9.223372036854775807e18
	}
	switch {
	case math.IsNaN(f):
		return 0
	case f <= lo:
		if wide {
			return math.MinInt64
		}
		return math.MinInt32
	case f >= hi:
		if wide {
			return math.MaxInt64
		}
		return math.MaxInt32
	}
	return int64(f)
}

func numberFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case *connect.Decimal:
		f, _ := decimalRat(x).Float64()
		return f, true
	}
	return 0, false
}

// decimalRat is d as an exact fraction, for rounding to a float; a scale
// too large or too small for any float gives a zero or an infinity
// without computing its power of ten.
func decimalRat(d *connect.Decimal) *big.Rat {
	digits := int64(len(new(big.Int).Abs(d.Unscaled).String()))
	scale := int64(d.Scale)
	switch {
	case d.Unscaled.Sign() == 0 || scale > digits+400:
		return new(big.Rat)
	case -scale > 400:
		scale = -400
	}
	r := new(big.Rat).SetInt(d.Unscaled)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(scale)), nil))
	if scale >= 0 {
		return r.Quo(r, p)
	}
	return r.Mul(r, p)
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// decimalLowBits is BigDecimal.longValue: the fraction dropped, then the
// low 64 bits in two's complement. Past 10^64 those bits are all zero, so
// the power of ten is not computed for larger exponents.
func decimalLowBits(d *connect.Decimal) int64 {
	scale := int64(d.Scale)
	digits := int64(len(new(big.Int).Abs(d.Unscaled).String()))
	switch {
	case scale < -64 || scale > digits:
		return 0
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(scale)), nil)
	var i *big.Int
	if scale >= 0 {
		i = new(big.Int).Quo(d.Unscaled, p)
	} else {
		i = new(big.Int).Mul(d.Unscaled, p)
	}
	m := new(big.Int).Mod(i, new(big.Int).Lsh(big.NewInt(1), 64))
	return int64(m.Uint64())
}

// parseJavaNumber is Byte.parseByte ... Double.parseDouble and
// Boolean.parseBoolean of a string.
func parseJavaNumber(s string, target connect.Type) (any, error) {
	switch target {
	case connect.TypeBoolean:
		return strings.EqualFold(s, "true"), nil
	case connect.TypeFloat32, connect.TypeFloat64:
		clean, ok := javaFloatSyntax(s)
		if !ok {
			return nil, errOutOfRange
		}
		bits := 64
		if target == connect.TypeFloat32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(clean, bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errOutOfRange
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	}
	bits := map[connect.Type]int{connect.TypeInt8: 8, connect.TypeInt16: 16, connect.TypeInt32: 32, connect.TypeInt64: 64}[target]
	// Java's parsers take one sign, + or -, and digits only.
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	if body == "" || strings.TrimLeft(body, "0123456789") != "" {
		return nil, errOutOfRange
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return nil, errOutOfRange
	}
	return narrowInt(n, target), nil
}

// javaFloatSyntax checks s against Java's FloatingDecimal grammar (around
// it, anything up to the space; a sign; NaN, Infinity, a decimal or a
// hexadecimal with its binary exponent; a trailing f, F, d or D) and
// returns it as strconv.ParseFloat reads it.
func javaFloatSyntax(s string) (string, bool) {
	s = javaTrim(s)
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	switch s {
	case "NaN":
		return "NaN", true
	case "Infinity":
		return sign + "Inf", true
	}
	if n := len(s); n > 0 && strings.ContainsRune("fFdD", rune(s[n-1])) {
		s = s[:n-1]
	}
	hex := len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	digits, expChars := "0123456789", "eE"
	body := s
	if hex {
		digits, expChars, body = "0123456789abcdefABCDEF", "pP", s[2:]
	}
	mant, exp := body, ""
	if i := strings.IndexAny(body, expChars); i >= 0 {
		mant, exp = body[:i], body[i+1:]
	} else if hex {
		return "", false
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || strings.Trim(intPart, digits) != "" || strings.Trim(frac, digits) != "" {
		return "", false
	}
	if i := strings.IndexAny(body, expChars); i >= 0 {
		e := exp
		if e != "" && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if e == "" || strings.Trim(e, "0123456789") != "" {
			return "", false
		}
	}
	return sign + s, true
}
