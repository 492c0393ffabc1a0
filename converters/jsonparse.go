package converters

import (
	"fmt"
	"github.com/connectd/connectd/connect"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The limits Jackson 2.16 (Kafka 3.9's version) puts on what it reads, by
// default (StreamReadConstraints). Enforcing them also bounds the work and
// the recursion a hostile record can cause.
const (
	maxNestingDepth = 1000
	maxNumberLength = 1000
	maxStringLength = 20_000_000
)

type nodeKind uint8

const (
	nodeNull nodeKind = iota
	nodeBool
	nodeNumber
	nodeString
	nodeArray
	nodeObject
	// nodeValue is a value already read as its field's schema says
	// (structPayload reads a nested struct, an INT64 and a FLOAT64 in
	// place): an object or a number.
	nodeValue
	// nodeSkipped is a member structPayload checked but did not read, as
	// its caller does not want it (valuefields): its field stays null.
	nodeSkipped
)

// String returns Jackson's JsonNodeType name, which Kafka's error messages
// print.
func (k nodeKind) String() string {
	switch k {
	case nodeBool:
		return "BOOLEAN"
	case nodeNumber:
		return "NUMBER"
	case nodeString:
		return "STRING"
	case nodeArray:
		return "ARRAY"
	case nodeObject:
		return "OBJECT"
	}
	return "NULL"
}

// node is a parsed JSON value, the counterpart of Jackson's JsonNode.
type node struct {
	kind nodeKind
	b    bool
	// text is a string's value, or a number's literal exactly as written:
	// Decimal fields need the literal, not a float64 approximation.
	text string
	// integral marks a number written without fraction or exponent, which
	// Jackson holds as an IntNode/LongNode/BigIntegerNode.
	integral bool
	items    []*node
	// fields keep document order. A repeated name keeps its first position
	// and its last value, as Jackson's ObjectNode (a LinkedHashMap) does.
	fields []objField
	// val is a nodeValue's value.
	val connect.Value
	// set marks a struct member structPayload read, or checked.
	set bool
}

type objField struct {
	name  string
	value *node
}

// get returns the named member of an object, or nil when n is not an
// object or has no such member (Jackson's JsonNode.get).
func (n *node) get(name string) *node {
	if n == nil || n.kind != nodeObject {
		return nil
	}
	for _, f := range n.fields {
		if f.name == name {
			return f.value
		}
	}
	return nil
}

func (n *node) isNull() bool { return n == nil || n.kind == nodeNull }

// fitsInt reports whether n is an integral number within Java's int range
// (Jackson's isInt: it would have made an IntNode).
func (n *node) fitsInt() bool {
	if n.kind != nodeNumber || !n.integral {
		return false
	}
	_, err := strconv.ParseInt(n.text, 10, 32)
	return err == nil
}

type parser struct {
	data  []byte
	pos   int
	depth int
	// skip checks the syntax without building nodes: every method then
	// returns a nil node. It lets a value be located and validated
	// without allocating.
	skip bool
}

// newNode returns a node holding n, or nil when the parser skips.
func (p *parser) newNode(n node) *node {
	if p.skip {
		return nil
	}
	// Not &n: that would move n to the heap even when skipping.
	c := new(node)
	*c = n
	return c
}

// skipValue checks the value at p.pos and returns its text.
func (p *parser) skipValue() ([]byte, error) {
	start := p.pos
	skip := p.skip
	p.skip = true
	_, err := p.value()
	p.skip = skip
	return p.data[start:p.pos], err
}

// parseJSON reads one JSON document. Empty or all-whitespace input gives a
// nil node, as Jackson's readTree gives a MissingNode. Unlike Jackson, text
// after the value is an error rather than silently ignored.
func parseJSON(data []byte) (*node, error) {
	p := &parser{data: data}
	p.skipSpace()
	if p.pos == len(p.data) {
		return nil, nil
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return n, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// skipSpace moves past JSON whitespace. The position is kept in a local
// while it moves (and the common case, none, costs one comparison): kept
// in the parser, it was stored and loaded again for every byte.
func (p *parser) skipSpace() {
	data, i := p.data, p.pos
	for i < len(data) && data[i] <= ' ' && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	p.pos = i
}

func (p *parser) value() (*node, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		if p.skip {
			_, err := p.strBytes()
			return nil, err
		}
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeString, text: s}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		word, n := literalOf(c)
		return p.literal(word, p.newNode(n))
	default:
		return nil, p.errorf("unexpected character %q", c)
	}
}

// valueInto reads the value at p.pos into *dst, which saves allocating
// a node for a string, a number or a literal (a Debezium envelope's null
// before, say); objects and arrays are trees all the same. Not for
// skipping.
func (p *parser) valueInto(dst *node) error {
	if p.pos < len(p.data) {
		switch c := p.data[p.pos]; {
		case c == '"':
			s, err := p.str()
			*dst = node{kind: nodeString, text: s}
			return err
		case c == '-' || c >= '0' && c <= '9':
			return p.numberInto(dst)
		case c == 't' || c == 'f' || c == 'n':
			word, n := literalOf(c)
			if _, err := p.literal(word, nil); err != nil {
				return err
			}
			*dst = n
			return nil
		}
	}
	n, err := p.value()
	if n != nil {
		*dst = *n
	}
	return err
}

// literalOf is the JSON literal that starts with c ('t', 'f' or 'n') and
// its node.
func literalOf(c byte) (string, node) {
	switch c {
	case 't':
		return "true", node{kind: nodeBool, b: true}
	case 'f':
		return "false", node{kind: nodeBool}
	}
	return "null", node{kind: nodeNull}
}

func (p *parser) literal(word string, n *node) (*node, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("unrecognized token")
	}
	p.pos += len(word)
	return n, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNestingDepth {
		return p.errorf("nesting depth exceeds the maximum allowed (%d)", maxNestingDepth)
	}
	return nil
}

func (p *parser) object() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	n := p.newNode(node{kind: nodeObject})
	// index finds repeated names without a quadratic scan; small objects,
	// the common case, do without it.
	var index map[string]int
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return n, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a field name")
		}
		var name string
		var err error
		if p.skip {
			_, err = p.strBytes()
		} else {
			name, err = p.str()
		}
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected ':'")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		switch {
		case p.skip:
		case len(n.fields) == 8 && index == nil:
			index = make(map[string]int, 16)
			for i, f := range n.fields {
				index[f.name] = i
			}
			fallthrough
		default:
			if i, dup := lookupField(n.fields, index, name); dup {
				n.fields[i].value = v
			} else {
				if index != nil {
					index[name] = len(n.fields)
				}
				n.fields = append(n.fields, objField{name, v})
			}
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return n, nil
		default:
			return nil, p.errorf("expected ',' or '}'")
		}
	}
}

func lookupField(fields []objField, index map[string]int, name string) (int, bool) {
	if index != nil {
		i, ok := index[name]
		return i, ok
	}
	for i, f := range fields {
		if f.name == name {
			return i, true
		}
	}
	return 0, false
}

func (p *parser) array() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	n := p.newNode(node{kind: nodeArray})
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return n, nil
	}
	for {
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if !p.skip {
			n.items = append(n.items, v)
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return n, nil
		default:
			return nil, p.errorf("expected ',' or ']'")
		}
	}
}

// number scans a number the way Kafka's Jackson reads it: leading zeros
// are allowed (ALLOW_LEADING_ZEROS_FOR_NUMBERS), and a non-integral number
// must be representable as a java.math.BigDecimal, because the converter
// reads floats as BigDecimal (USE_BIG_DECIMAL_FOR_FLOATS).
func (p *parser) number() (*node, error) {
	var n node
	if err := p.numberInto(&n); err != nil || p.skip {
		return nil, err
	}
	return p.newNode(n), nil
}

// numberInto reads a number into *dst (left alone when skipping).
func (p *parser) numberInto(dst *node) error {
	start := p.pos
	digits := func() int {
		from := p.pos
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
		}
		return p.pos - from
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if digits() == 0 {
		return p.errorf("expected a digit")
	}
	integral := true
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		integral = false
		p.pos++
		if digits() == 0 {
			return p.errorf("expected a digit after the decimal point")
		}
	}
	exponent := p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E')
	if exponent {
		integral = false
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.errorf("expected a digit in the exponent")
		}
	}
	if p.pos-start > maxNumberLength {
		return p.errorf("number length (%d) exceeds the maximum allowed (%d)", p.pos-start, maxNumberLength)
	}
	// Only an exponent can put the scale out of an int's range: the
	// digits are too few.
	if !exponent && p.skip {
		return nil
	}
	lit := string(p.data[start:p.pos])
	if exponent {
		if _, err := decimalScale(lit); err != nil {
			return p.errorf("%v", err)
		}
	}
	if !p.skip {
		*dst = node{kind: nodeNumber, text: lit, integral: integral}
	}
	return nil
}

// int64Literal reads at p.pos an integer literal that fits an int64, as
// a JSON number without fraction or exponent, and reports false, having
// read nothing, for anything else (which the general reader reads, with
// its errors and Jackson's rules for large numbers).
func (p *parser) int64Literal() (int64, bool) {
	data, i := p.data, p.pos
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		if i-start >= 18 {
			return 0, false // may overflow: the general reader decides
		}
		u = u*10 + uint64(data[i]-'0')
		i++
	}
	if i == start || (data[start] == '0' && i-start > 1) {
		return 0, false
	}
	if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
		return 0, false
	}
	p.pos = i
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// fractionLiteral reads at p.pos a number literal with a fraction or an
// exponent as a float64, as javaDouble reads it, and reports false,
// having read nothing, for anything else.
func (p *parser) fractionLiteral() (float64, bool) {
	data, i := p.data, p.pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	if i == start || (data[start] == '0' && i-start > 1) {
		return 0, false
	}
	fraction := false
	if i < len(data) && data[i] == '.' {
		fraction = true
		i++
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		return 0, false // the general reader checks the exponent's range
	}
	if !fraction || i-p.pos > 40 {
		return 0, false
	}
	// The literal is only read: a string over the input's bytes costs no
	// copy.
	v, err := strconv.ParseFloat(unsafe.String(&data[p.pos], i-p.pos), 64)
	if err != nil {
		return 0, false
	}
	p.pos = i
	if v == 0 {
		return 0, true // -0.0 reads as +0.0, as Jackson's
	}
	return v, true
}

// str reads a string. Jackson refuses raw control characters, unknown
// escapes and invalid UTF-8; so do we. A lone surrogate escape, which a
// Java String can hold but a Go string cannot, becomes U+FFFD.
func (p *parser) str() (string, error) {
	b, err := p.strBytes()
	return string(b), err
}

// strBytes reads a string as str does; the result is a slice of the input
// when the string has no escapes and is ASCII.
func (p *parser) strBytes() ([]byte, error) {
	p.pos++ // '"'
	start := p.pos
	// Fast path: no escapes, the position in a local (see skipSpace).
	data, i := p.data, p.pos
	for i < len(data) {
		c := data[i]
		if c == '"' {
			b := data[start:i]
			p.pos = i + 1
			return b, p.checkStringLength(len(b))
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	p.pos = i
	buf := append([]byte(nil), p.data[start:p.pos]...)
	for {
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in a string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return buf, p.checkStringLength(len(buf))
		case c < 0x20:
			return nil, p.errorf("illegal unquoted control character in a string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, p.errorf("invalid UTF-8 in a string")
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		case c != '\\':
			buf = append(buf, c)
			p.pos++
		default:
			p.pos++
			if p.pos >= len(p.data) {
				return nil, p.errorf("unexpected end of input in a string")
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(r) {
					r = p.lowSurrogate(r)
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return nil, p.errorf("unrecognized character escape %q", e)
			}
		}
		if len(buf) > maxStringLength {
			return nil, p.checkStringLength(len(buf))
		}
	}
}

func (p *parser) checkStringLength(n int) error {
	if n > maxStringLength {
		return p.errorf("string length (%d) exceeds the maximum allowed (%d)", n, maxStringLength)
	}
	return nil
}

func (p *parser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.errorf("unexpected end of input in a \\u escape")
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.errorf("invalid hex digit in a \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}

// lowSurrogate completes a surrogate pair whose high half is hi, consuming
// the \uXXXX of the low half when it follows.
func (p *parser) lowSurrogate(hi rune) rune {
	if hi >= 0xDC00 || len(p.data)-p.pos < 6 || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
		return utf8.RuneError
	}
	save := p.pos
	p.pos += 2
	lo, err := p.hex4()
	if err != nil || lo < 0xDC00 || lo > 0xDFFF {
		// Leave the next escape to be read on its own.
		p.pos = save
		return utf8.RuneError
	}
	return utf16.DecodeRune(hi, lo)
}
