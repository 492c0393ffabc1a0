// Package connectvalues is the part of Kafka Connect's
// org.apache.kafka.connect.data.Values that header converters and
// InsertHeader use: ParseString, which reads the text of a value into a
// schema and a value, inferring numbers, booleans, dates, arrays and
// maps, and ConvertToString, which writes a value as that text.
//
// Both follow Kafka 3.9 quirk for quirk, since Java workers read and
// write the same header bytes: a top-level value stops at its first
// complete token ("1,2" is the INT8 1, "[1]x" the array [1]), quoted
// strings keep their backslashes, and an array or map that fails to
// parse is the whole text as a STRING. Times are read and written in
// UTC, as a JVM whose default time zone is UTC does.
package connectvalues

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// MaxDepth bounds the nesting of arrays and maps ParseString reads. A
// JVM's stack overflows somewhere past it, and SimpleHeaderConverter
// then keeps the header as bytes; ParseString returns ErrTooDeep.
const MaxDepth = 1000

// ErrTooDeep is ParseString's error for arrays and maps nested deeper
// than MaxDepth.
var ErrTooDeep = errors.New("arrays and maps are nested too deeply to parse")

// ParseString is Values.parseString: the schema and value the text
// stands for. "null" (with any surrounding whitespace) gives a nil schema
// and value, as Java's null SchemaAndValue. Arrays are []any and maps
// []connect.MapEntry in the text's order (Java's LinkedHashMap), whatever
// their key type, so that writing them again gives the same text.
func ParseString(s string) (*connect.Schema, any, error) {
	if s == "" {
		return connect.StringSchema, "", nil
	}
	p := &valueParser{p: parser{s: s}}
	sv, err := p.parse(false)
	if err != nil {
		return nil, nil, err
	}
	if sv == nil {
		return nil, nil, nil
	}
	return sv.schema, sv.value, nil
}

// schemaAndValue is Java's SchemaAndValue; a nil *schemaAndValue is
// Java's null.
type schemaAndValue struct {
	schema *connect.Schema
	value  any
}

// dataError is a DataException inside the parser: it makes an array or
// map fall back to text, never leaves ParseString.
type dataError struct{ msg string }

func (e *dataError) Error() string { return e.msg }

// parser is Values.Parser: a tokenizer over the text whose delimiters are
// : , { } [ ] and ", each escapable with a backslash. Tokens are slices
// of the text, escapes included. The delimiters are ASCII, so walking
// bytes finds the same tokens as Java walking UTF-16 units.
type parser struct {
	s        string
	i        int
	next     string
	hasNext  bool // next holds a token read ahead
	previous string
}

func (p *parser) mark() int {
	if p.hasNext {
		return p.i - len(p.next)
	}
	return p.i
}

func (p *parser) rewindTo(pos int) {
	p.i = pos
	p.next, p.hasNext = "", false
	p.previous = ""
}

func (p *parser) more() bool { return p.hasNext || p.i < len(p.s) }

func (p *parser) nextToken() string {
	if p.hasNext {
		p.previous = p.next
		p.next, p.hasNext = "", false
	} else {
		p.previous = p.consume()
	}
	return p.previous
}

// nextN is Parser.next(n): the text of the next n tokens, or false (and
// nothing consumed) when there are fewer.
func (p *parser) nextN(n int) (string, bool) {
	start := p.mark()
	for range n {
		if !p.more() {
			p.rewindTo(start)
			return "", false
		}
		p.nextToken()
	}
	return p.s[start:p.i], true
}

func (p *parser) consume() string {
	escaped := false
	start := p.i
	for ; p.i < len(p.s); p.i++ {
		switch p.s[p.i] {
		case '\\':
			escaped = !escaped
		case ':', ',', '{', '}', '[', ']', '"':
			if !escaped {
				if start < p.i {
					return p.s[start:p.i]
				}
				p.i++
				return p.s[start:p.i]
			}
			escaped = false
		default:
			escaped = false
		}
	}
	return p.s[start:p.i]
}

// canConsume consumes the next non-blank token if, trimmed, it is
// expected; otherwise that token stays read ahead.
func (p *parser) canConsume(expected string) bool {
	if !p.hasNext {
		if !p.more() {
			return false
		}
		p.next, p.hasNext = p.consume(), true
	}
	for isBlank(p.next) && p.i < len(p.s) {
		p.next = p.consume()
	}
	if javaTrim(p.next) == expected {
		p.next, p.hasNext = "", false
		return true
	}
	return false
}

// javaTrim is String.trim(): it strips every char up to U+0020.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func isBlank(s string) bool { return javaTrim(s) == "" }

// valueParser is Values.ValueParser.
type valueParser struct {
	p     parser
	depth int
}

var (
	trueValue  = &schemaAndValue{connect.BooleanSchema, true}
	falseValue = &schemaAndValue{connect.BooleanSchema, false}
)

func (v *valueParser) singleTokenLiteral(embedded bool, literal string) bool {
	start := v.p.mark()
	if v.p.canConsume(literal) && (embedded || !v.p.more()) {
		return true
	}
	v.p.rewindTo(start)
	return false
}

// parse is ValueParser.parse. A *dataError is Java's DataException, any
// other error ends the whole parse.
func (v *valueParser) parse(embedded bool) (*schemaAndValue, error) {
	switch {
	case !v.p.more():
		return nil, nil
	case embedded && v.p.canConsume(`"`):
		return v.parseQuotedString(), nil
	case v.singleTokenLiteral(embedded, "null"):
		return nil, nil
	case v.singleTokenLiteral(embedded, "true"):
		return trueValue, nil
	case v.singleTokenLiteral(embedded, "false"):
		return falseValue, nil
	}
	start := v.p.mark()
	var (
		sv    *schemaAndValue
		err   error
		tried bool
	)
	if v.p.canConsume("[") {
		tried = true
		sv, err = v.nested(v.parseArray)
	} else if v.p.canConsume("{") {
		tried = true
		sv, err = v.nested(v.parseMap)
	}
	if tried {
		var de *dataError
		if !errors.As(err, &de) {
			return sv, err
		}
		v.p.rewindTo(start)
	}
	token := v.p.nextToken()
	if isBlank(token) {
		return &schemaAndValue{connect.StringSchema, token}, nil
	}
	return v.parseNextToken(embedded, javaTrim(token))
}

func (v *valueParser) nested(f func() (*schemaAndValue, error)) (*schemaAndValue, error) {
	if v.depth >= MaxDepth {
		return nil, ErrTooDeep
	}
	v.depth++
	defer func() { v.depth-- }()
	return f()
}

func (v *valueParser) parseNextToken(embedded bool, token string) (*schemaAndValue, error) {
	first, _ := utf8.DecodeRuneInString(token)
	// Java tests the first UTF-16 unit: a supplementary character is a
	// surrogate there, never a digit.
	digit := first <= 0xFFFF && unicode.IsDigit(first)
	if digit {
		if t := v.parseMultipleTokensAsTemporal(token); t != nil {
			return t, nil
		}
	}
	if digit || first == '+' || first == '-' {
		if n := parseAsNumber(token); n != nil {
			return n, nil
		}
	}
	if embedded {
		return nil, &dataError{"Failed to parse embedded value"}
	}
	return &schemaAndValue{connect.StringSchema, v.p.s}, nil
}

func (v *valueParser) parseQuotedString() *schemaAndValue {
	var b strings.Builder
	for v.p.more() {
		if v.p.canConsume(`"`) {
			break
		}
		b.WriteString(v.p.nextToken())
	}
	content := b.String()
	if t := parseAsTemporal(content); t != nil {
		return t
	}
	return &schemaAndValue{connect.StringSchema, content}
}

func (v *valueParser) parseArray() (*schemaAndValue, error) {
	var result []any
	var merger schemaMerger
	for v.p.more() {
		if v.p.canConsume("]") {
			if merger.common == nil {
				// Every element is null, or they have no common schema.
				return &schemaAndValue{&connect.Schema{Type: connect.TypeArray}, nonNil(result)}, nil
			}
			aligned := make([]any, len(result))
			for i, e := range result {
				c, err := convertTo(merger.common, e)
				if err != nil {
					return nil, err
				}
				aligned[i] = c
			}
			return &schemaAndValue{connect.ArrayOf(merger.common), aligned}, nil
		}
		if v.p.canConsume(",") {
			return nil, &dataError{"Unable to parse an empty array element: " + v.p.s}
		}
		element, err := v.parse(true)
		if err != nil {
			return nil, err
		}
		merger.merge(element)
		result = append(result, valueOf(element))
		pos := v.p.mark()
		if v.p.canConsume("]") {
			v.p.rewindTo(pos)
		} else if !v.p.canConsume(",") {
			return nil, &dataError{"Array elements missing ',' delimiter"}
		}
	}
	if v.p.previous == "," {
		return nil, &dataError{"Array is missing element after ',': " + v.p.s}
	}
	return nil, &dataError{"Array is missing terminating ']': " + v.p.s}
}

func (v *valueParser) parseMap() (*schemaAndValue, error) {
	var result entries
	var keys, values schemaMerger
	for v.p.more() {
		if v.p.canConsume("}") {
			return alignMap(result, keys.common, values.common)
		}
		if v.p.canConsume(",") {
			return nil, &dataError{"Unable to parse a map entry with no key or value: " + v.p.s}
		}
		key, err := v.parse(true)
		if err != nil {
			return nil, err
		}
		if key == nil || key.value == nil {
			return nil, &dataError{"Map entry may not have a null key: " + v.p.s}
		}
		if !v.p.canConsume(":") {
			return nil, &dataError{"Map entry is missing ':' in " + v.p.s}
		}
		value, err := v.parse(true)
		if err != nil {
			return nil, err
		}
		result.put(key.value, valueOf(value))
		v.p.canConsume(",")
		keys.merge(key)
		values.merge(value)
	}
	if v.p.previous == "," {
		return nil, &dataError{"Map is missing element after ',': " + v.p.s}
	}
	return nil, &dataError{"Map is missing terminating '}': " + v.p.s}
}

// alignMap converts the keys, and the values when they have a common
// schema, to the common schema, as Kafka does once a map is read.
func alignMap(in entries, keySchema, valueSchema *connect.Schema) (*schemaAndValue, error) {
	if keySchema == nil {
		return &schemaAndValue{&connect.Schema{Type: connect.TypeMap}, nonNilEntries(in)}, nil
	}
	var out entries
	for _, e := range in {
		k, err := convertTo(keySchema, e.Key)
		if err != nil {
			return nil, err
		}
		val := e.Value
		if valueSchema != nil {
			if val, err = convertTo(valueSchema, val); err != nil {
				return nil, err
			}
		}
		out.put(k, val)
	}
	return &schemaAndValue{&connect.Schema{Type: connect.TypeMap, Key: keySchema, Value: valueSchema}, nonNilEntries(out)}, nil
}

func nonNil(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func nonNilEntries(e entries) []connect.MapEntry {
	if e == nil {
		return []connect.MapEntry{}
	}
	return e
}

func valueOf(sv *schemaAndValue) any {
	if sv == nil {
		return nil
	}
	return sv.value
}

// entries is a LinkedHashMap: a key put again keeps its place and takes
// the new value; keys are equal as Java's equals() says.
type entries []connect.MapEntry

func (e *entries) put(k, v any) {
	for i := range *e {
		if javaEquals((*e)[i].Key, k) {
			(*e)[i].Value = v
			return
		}
	}
	*e = append(*e, connect.MapEntry{Key: k, Value: v})
}

// javaEquals is equals() between the values a parse makes: boxed numbers
// of different classes differ, floats compare by their bits, dates by
// their instant, decimals by value and scale.
func javaEquals(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *connect.Decimal:
		y, ok := b.(*connect.Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !javaEquals(x[i], y[i]) {
				return false
			}
		}
		return true
	case []connect.MapEntry:
		y, ok := b.([]connect.MapEntry)
		if !ok || len(x) != len(y) {
			return false
		}
	outer:
		for _, ex := range x {
			for _, ey := range y {
				if javaEquals(ex.Key, ey.Key) {
					if !javaEquals(ex.Value, ey.Value) {
						return false
					}
					continue outer
				}
			}
			return false
		}
		return true
	case nil:
		return b == nil
	case string, bool, int8, int16, int32, int64:
		return a == b
	}
	return false
}

// schemaMerger is Values.SchemaMerger: the schema common to the values
// seen, widening numbers; nil when there is none.
type schemaMerger struct {
	common       *connect.Schema
	incompatible bool
}

func (m *schemaMerger) merge(sv *schemaAndValue) {
	if sv == nil || sv.schema == nil || m.incompatible {
		return
	}
	if m.common == nil {
		m.common = sv.schema
		return
	}
	m.common = mergeSchemas(m.common, sv.schema)
	m.incompatible = m.common == nil
}

// numericRank orders the primitive numeric types by how Kafka widens
// them: a later type holds every earlier one.
var numericRank = map[connect.Type]int{
	connect.TypeInt8: 1, connect.TypeInt16: 2, connect.TypeInt32: 3,
	connect.TypeInt64: 4, connect.TypeFloat32: 5, connect.TypeFloat64: 6,
}

func mergeSchemas(previous, next *connect.Schema) *connect.Schema {
	if previous.Type != next.Type {
		p, n := numericRank[previous.Type], numericRank[next.Type]
		switch {
		case p == 0 || n == 0:
			return nil
		case n > p:
			return next
		default:
			return previous
		}
	}
	if previous.Optional == next.Optional {
		if previous.Optional {
			return previous
		}
		return next
	}
	// Schemas that differ in optionality are never equal.
	return nil
}

const millisPerDay = 24 * 60 * 60 * 1000

// convertTo is Values.convertTo without a source schema, for the values
// a parse makes, as Kafka aligns an array's or a map's values with their
// common schema.
func convertTo(to *connect.Schema, value any) (any, error) {
	if value == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, &dataError{"Unable to convert a null value to a schema that requires a value"}
	}
	switch to.Type {
	case connect.TypeInt8:
		if b, ok := value.(int8); ok {
			return b, nil
		}
		n, err := asLong(value)
		return int8(n), err
	case connect.TypeInt16:
		if s, ok := value.(int16); ok {
			return s, nil
		}
		n, err := asLong(value)
		return int16(n), err
	case connect.TypeInt32:
		switch to.Name {
		case connect.DateName:
			if t, ok := value.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(value)
			return time.UnixMilli(int64(int32(n)) * millisPerDay).UTC(), err
		case connect.TimeName:
			if t, ok := value.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(value)
			if err != nil {
				return nil, err
			}
			if ms := int32(n); ms < 0 || ms > millisPerDay {
				return nil, &dataError{"Time values must use number of milliseconds greater than 0 and less than 86400000"}
			}
			return time.UnixMilli(int64(int32(n))).UTC(), nil
		}
		if i, ok := value.(int32); ok {
			return i, nil
		}
		n, err := asLong(value)
		return int32(n), err
	case connect.TypeInt64:
		if to.Name == connect.TimestampName {
			if t, ok := value.(time.Time); ok {
				return t, nil
			}
			n, err := asLong(value)
			return time.UnixMilli(n).UTC(), err
		}
		return asLong(value)
	case connect.TypeFloat32:
		if f, ok := value.(float32); ok {
			return f, nil
		}
		d, err := asDouble(value)
		return float32(d), err
	case connect.TypeFloat64:
		return asDouble(value)
	}
	// Strings, booleans, decimals, arrays and maps have a common schema
	// only with values of their own type, which need no conversion.
	return value, nil
}

// asLong is Values.asLong for the numbers a parse makes.
func asLong(v any) (int64, error) {
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float32:
		return javaDoubleToLong(float64(x)), nil
	case float64:
		return javaDoubleToLong(x), nil
	case *connect.Decimal:
		return decimalLongValue(x), nil
	}
	return 0, &dataError{"Unable to convert the value to a number"}
}

func asDouble(v any) (float64, error) {
	switch x := v.(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case *connect.Decimal:
		return decimalFloat(x, 64), nil
	}
	n, err := asLong(v)
	return float64(n), err
}

// javaDoubleToLong is Java's (long) cast: toward zero, saturating, NaN 0.
func javaDoubleToLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// decimalLongValue is BigDecimal.longValue(): the integer part's low 64
// bits.
func decimalLongValue(d *connect.Decimal) int64 {
	i := new(big.Int).Set(d.Unscaled)
	switch {
	case d.Scale > 0:
		if int(d.Scale) > len(i.String()) {
			return 0
		}
		i.Quo(i, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	case d.Scale < 0:
		// 10^64 is a multiple of 2^64: beyond it the low bits are zero.
		if d.Scale <= -64 || i.Sign() == 0 {
			return 0
		}
		i.Mul(i, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil))
	}
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	return int64(new(big.Int).And(i, mask).Uint64())
}

// decimalFloat is BigDecimal.floatValue() (bits 32) or doubleValue()
// (bits 64), both correctly rounded.
func decimalFloat(d *connect.Decimal, bits int) float64 {
	f, _ := strconv.ParseFloat(d.Unscaled.String()+"e"+strconv.FormatInt(-int64(d.Scale), 10), bits)
	return f
}

func (v *valueParser) parseMultipleTokensAsTemporal(token string) *schemaAndValue {
	// A time or a timestamp is five tokens, for its unescaped colons.
	pos := v.p.mark()
	if rest, ok := v.p.nextN(4); ok {
		if t := parseAsTemporal(token + rest); t != nil {
			return t
		}
	}
	v.p.rewindTo(pos)
	return parseAsTemporal(token)
}

// parseAsNumber is ValueParser.parseAsNumber: the smallest integer type
// for an integral value, else FLOAT32, FLOAT64 or a Decimal. nil when the
// token is not a BigDecimal.
func parseAsNumber(token string) *schemaAndValue {
	unscaled, scale, ok := parseBigDecimal(token)
	if !ok {
		return nil
	}
	if n, ok := exactLong(unscaled, scale); ok {
		switch {
		case n == int64(int8(n)):
			return &schemaAndValue{connect.Int8Schema, int8(n)}
		case n == int64(int16(n)):
			return &schemaAndValue{connect.Int16Schema, int16(n)}
		case n == int64(int32(n)):
			return &schemaAndValue{connect.Int32Schema, int32(n)}
		}
		return &schemaAndValue{connect.Int64Schema, n}
	}
	d := &connect.Decimal{Unscaled: unscaled, Scale: scale}
	if f := decimalFloat(d, 32); !math.IsInf(f, 0) && scale != 0 {
		return &schemaAndValue{connect.Float32Schema, float32(f)}
	}
	if f := decimalFloat(d, 64); !math.IsInf(f, 0) && scale != 0 {
		return &schemaAndValue{connect.Float64Schema, f}
	}
	return &schemaAndValue{connect.DecimalSchema(scale), d}
}

// exactLong is parseAsExactDecimal's test: the value is an integer that
// fits a long.
func exactLong(unscaled *big.Int, scale int32) (int64, bool) {
	if unscaled.Sign() == 0 {
		return 0, true
	}
	i := new(big.Int).Set(unscaled)
	switch {
	case scale > 0:
		if int(scale) > len(i.String()) {
			return 0, false
		}
		var rem big.Int
		i.QuoRem(i, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil), &rem)
		if rem.Sign() != 0 {
			return 0, false
		}
	case scale < 0:
		if scale < -19 {
			return 0, false
		}
		i.Mul(i, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	if !i.IsInt64() {
		return 0, false
	}
	return i.Int64(), true
}

// parseBigDecimal is new BigDecimal(String): an optional sign, digits
// with an optional point, an optional exponent; digits may be any
// Unicode decimal digits of the Basic Multilingual Plane, as
// Character.digit reads them. The exponent and the scale must fit an int.
func parseBigDecimal(s string) (*big.Int, int32, bool) {
	var digits []byte
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	neg := i == 1 && s[0] == '-'
	frac, seenPoint, n := 0, false, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '.' {
			if seenPoint {
				return nil, 0, false
			}
			seenPoint = true
			i += size
			continue
		}
		d, ok := digitValue(r)
		if !ok {
			break
		}
		digits = append(digits, byte('0'+d))
		n++
		if seenPoint {
			frac++
		}
		i += size
	}
	if n == 0 {
		return nil, 0, false
	}
	var exp int64
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return nil, 0, false
		}
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return nil, 0, false
		}
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			d, ok := digitValue(r)
			if !ok {
				return nil, 0, false
			}
			exp = exp*10 + int64(d)
			if exp > math.MaxInt32+1 {
				return nil, 0, false
			}
			i += size
		}
		if expNeg {
			exp = -exp
		}
		if exp > math.MaxInt32 || exp < math.MinInt32 {
			return nil, 0, false
		}
	}
	scale := int64(frac) - exp
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return nil, 0, false
	}
	unscaled, _ := new(big.Int).SetString(string(digits), 10)
	if neg {
		unscaled.Neg(unscaled)
	}
	return unscaled, int32(scale), true
}

// digitValue is Character.digit(r, 10) for the Basic Multilingual Plane:
// Unicode's decimal digits come in runs of ten from zero.
func digitValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r > 0xFFFF || !unicode.IsDigit(r) {
		return 0, false
	}
	start := r
	for start > 0 && unicode.IsDigit(start-1) {
		start--
	}
	return int(r-start) % 10, true
}

// The lengths of Kafka's ISO 8601 patterns without their quotes.
const (
	dateLength      = len("yyyy-MM-dd")
	timeLength      = len("HH:mm:ss.SSSZ")
	timestampLength = len("yyyy-MM-ddTHH:mm:ss.SSSZ")
)

// parseAsTemporal is ValueParser.parseAsTemporal: a token of a date's,
// a time's or a timestamp's length read with that pattern.
func parseAsTemporal(token string) *schemaAndValue {
	token = strings.ReplaceAll(token, `\:`, ":")
	// Java counts UTF-16 units.
	n := 0
	for _, r := range token {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	var (
		schema  *connect.Schema
		pattern string
	)
	switch n {
	case timeLength:
		schema, pattern = connect.TimeSchema(), "H:m:s.SZ"
	case timestampLength:
		schema, pattern = connect.TimestampSchema(), "y-M-dTH:m:s.SZ"
	case dateLength:
		schema, pattern = connect.DateSchema(), "y-M-d"
	default:
		return nil
	}
	t, ok := lenientParse(token, pattern)
	if !ok {
		return nil
	}
	return &schemaAndValue{schema, t}
}

// lenientParse is a lenient SimpleDateFormat in UTC reading Kafka's ISO
// 8601 patterns, given here as one letter per field (y M d H m s S) and
// the literal characters between them. Each field is a number, after
// spaces or tabs, of any length and optionally negative; out-of-range
// fields carry over (month 13 is January of the next year), and text
// after the pattern is ignored.
func lenientParse(s, pattern string) (time.Time, bool) {
	f := map[byte]int{'y': 1970, 'M': 1, 'd': 1}
	i := 0
	for k := 0; k < len(pattern); k++ {
		c := pattern[k]
		if !strings.ContainsRune("yMdHmsS", rune(c)) {
			if i >= len(s) || s[i] != c {
				return time.Time{}, false
			}
			i++
			continue
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start := i
		if i < len(s) && s[i] == '-' {
			i++
		}
		digitsStart := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == digitsStart {
			return time.Time{}, false
		}
		f[c] = javaIntValue(s[start:i])
	}
	return time.Date(f['y'], time.Month(f['M']), f['d'], f['H'], f['m'], f['s'], 0, time.UTC).
		Add(time.Duration(f['S']) * time.Millisecond), true
}

// javaIntValue is intValue() of the Long (or, past a long, Double) that
// DecimalFormat parses from the digits.
func javaIntValue(s string) int {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if strings.HasPrefix(s, "-") {
			return math.MinInt32
		}
		return math.MaxInt32
	}
	return int(int32(n))
}
