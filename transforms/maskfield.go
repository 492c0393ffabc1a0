package transforms

import (
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

func maskFieldPlugins() []connect.Plugin {
	return keyValuePlugins("MaskField", func(p Part) connect.Transformation { return &MaskField{part: p} })
}

// nonEmptyList is Kafka's NonEmptyListValidator.
func nonEmptyList(v any) error {
	if l, _ := v.([]string); len(l) == 0 {
		return errorString("Empty list")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

var maskFieldConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "fields", Type: connect.ConfigList, Required: true, Validator: nonEmptyList, Importance: connect.High,
		Doc: "Names of fields to mask."}).
	Define(connect.ConfigKey{Name: "replacement", Type: connect.ConfigString, Validator: connect.NonEmptyString(), Importance: connect.Low,
		Doc: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
	Define(replaceNullWithDefaultKey)

// MaskField is Kafka's MaskField$Key and $Value: the named fields of a
// struct or map set to their type's empty value (0, false, "", an empty
// list or map, the epoch), or to replacement converted to a number or
// string field's type.
type MaskField struct {
	part                   Part
	fields                 map[string]bool
	replacement            *string
	replaceNullWithDefault bool
}

const maskFieldPurpose = "mask fields"

func (m *MaskField) Config() *connect.ConfigDef { return maskFieldConfig }

func (m *MaskField) Configure(props map[string]string) error {
	c, err := maskFieldConfig.Parse(props)
	if err != nil {
		return err
	}
	m.fields = map[string]bool{}
	for _, f := range c.List("fields") {
		m.fields[f] = true
	}
	m.replacement = nil
	if r, ok := c.Get("replacement").(string); ok {
		m.replacement = &r
	}
	m.replaceNullWithDefault = c.Bool("replace.null.with.default")
	return nil
}

func (m *MaskField) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := m.part.Get(r)
	if schema == nil {
		in, err := requireMap(value, maskFieldPurpose)
		if err != nil {
			return nil, err
		}
		out := copyMap(in)
		for f := range m.fields {
			if out[f], err = m.mask(in[f]); err != nil {
				return nil, err
			}
		}
		m.part.Set(r, nil, out)
		return r, nil
	}
	st, err := requireStruct(value, maskFieldPurpose)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(st.Schema())
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		v := getField(st, f, m.replaceNullWithDefault)
		if m.fields[f.Name] {
			if v, err = m.mask(v); err != nil {
				return nil, err
			}
		}
		if err := putField(out, f, v); err != nil {
			return nil, err
		}
	}
	m.part.Set(r, schema, out)
	return r, nil
}

func (m *MaskField) mask(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if m.replacement != nil {
		return maskWithReplacement(v, *m.replacement)
	}
	switch v.(type) {
	case bool:
		return false, nil
	case int8:
		return int8(0), nil
	case int16:
		return int16(0), nil
	case int32:
		return int32(0), nil
	case int64:
		return int64(0), nil
	case int:
		return 0, nil
	case float32:
		return float32(0), nil
	case float64:
		return float64(0), nil
	case *connect.Decimal:
		return &connect.Decimal{Unscaled: new(big.Int)}, nil
	case time.Time:
		return time.UnixMilli(0).UTC(), nil
	case string:
		return "", nil
	case []any:
		return []any{}, nil
	case map[string]any, []connect.MapEntry:
		return map[string]any{}, nil
	}
	return nil, dataError("Cannot mask value of type: %s", javaClass(v))
}

// maskWithReplacement converts the replacement to v's type as Kafka does:
// integers and floats through Values (a BigDecimal of the text, narrowed),
// a decimal as new BigDecimal, a string as it is.
func maskWithReplacement(v any, repl string) (any, error) {
	notNumber := func() error {
		return dataError("Unable to convert %s (class java.lang.String) to a number", repl)
	}
	switch v.(type) {
	case string:
		return repl, nil
	case *connect.Decimal:
		d, ok := parseBigDecimal(repl)
		if !ok {
			return nil, dataError("Unable to convert %s (class java.lang.String) to number", repl)
		}
		return d, nil
	case int8, int16, int32, int64, int:
		d, ok := parseBigDecimal(repl)
		if !ok {
			return nil, notNumber()
		}
		n := decimalLowBits(d)
		switch v.(type) {
		case int8:
			return int8(n), nil
		case int16:
			return int16(n), nil
		case int32:
			return int32(n), nil
		case int:
			return int(n), nil
		}
		return n, nil
	case float32, float64:
		d, ok := parseBigDecimal(repl)
		if !ok {
			return nil, notNumber()
		}
		f, _ := decimalRat(d).Float64()
		if _, is32 := v.(float32); is32 {
			return float32(f), nil
		}
		return f, nil
	}
	return nil, dataError("Cannot mask value of type %s with custom replacement.", javaClass(v))
}

// parseBigDecimal is new BigDecimal(String): a sign, digits with at most
// one point, and an exponent whose scale fits an int.
func parseBigDecimal(s string) (*connect.Decimal, bool) {
	mant, exp, hasExp := strings.Cut(s, "e")
	if !hasExp {
		mant, exp, hasExp = strings.Cut(s, "E")
	}
	sign := ""
	if mant != "" && (mant[0] == '+' || mant[0] == '-') {
		sign, mant = mant[:1], mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return nil, false
	}
	scale := int64(len(frac))
	if hasExp {
		e := exp
		if e != "" && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if e == "" || len(e) > 10 || strings.Trim(e, "0123456789") != "" {
			return nil, false
		}
		n, _ := new(big.Int).SetString(exp, 10)
		if !n.IsInt64() {
			return nil, false
		}
		scale -= n.Int64()
	}
	if scale < -1<<31 || scale > 1<<31-1 {
		return nil, false
	}
	u, ok := new(big.Int).SetString(sign+digits, 10)
	if !ok {
		return nil, false
	}
	return &connect.Decimal{Unscaled: u, Scale: int32(scale)}, true
}
