package converters

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/valuefields"
)

// Most records of a topic carry the same schema, and in the envelope it
// is most of the bytes. Like Kafka's JsonConverter (toConnectSchemaCache),
// the converter keeps the schemas it has read, up to schemas.cache.size;
// Kafka keys them by the parsed JSON tree, we by the schema's text, so
// that a record whose schema is known costs a syntax check of the schema
// and a parse of the payload only.

// defaultSchemasCacheSize is schemas.cache.size's default.
const defaultSchemasCacheSize = 1000

// schemaCache maps a schema's JSON text to the schema read from it. It
// is shared by the copies of a configured converter and safe for
// concurrent use; the schemas it returns are shared too, which their
// users may rely on, as Kafka's do, since schemas are not modified.
type schemaCache struct {
	mu    sync.Mutex
	max   int
	items map[string]*connect.Schema
	// last is the schema read last, with its text: when a record's
	// schema starts with the same bytes, comparing them replaces even the
	// syntax check (a complete JSON value that is a prefix of the input
	// is the value there, unless a number or a literal goes on, which the
	// check for the ',' or '}' that must follow it catches).
	last atomic.Pointer[cachedSchema]
}

type cachedSchema struct {
	text   string
	schema *connect.Schema
}

func newSchemaCache(size int) *schemaCache {
	if size <= 0 {
		return nil
	}
	return &schemaCache{max: size, items: make(map[string]*connect.Schema, min(size, 64))}
}

func (c *schemaCache) get(text []byte) (*connect.Schema, bool) {
	c.mu.Lock()
	s, ok := c.items[string(text)]
	c.mu.Unlock()
	if ok {
		c.last.Store(&cachedSchema{string(text), s})
	}
	return s, ok
}

// prefix returns the last schema read and the length of its text when
// data starts with that text.
func (c *schemaCache) prefix(data []byte) (*connect.Schema, int, bool) {
	l := c.last.Load()
	if l == nil || len(data) < len(l.text) || string(data[:len(l.text)]) != l.text {
		return nil, 0, false
	}
	return l.schema, len(l.text), true
}

// put remembers a schema; when the cache is full an arbitrary entry
// makes room (Kafka evicts the least recently used: what matters is that
// the cache stays bounded and the common schemas stay in).
func (c *schemaCache) put(text []byte, s *connect.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= c.max {
		for k := range c.items {
			delete(c.items, k)
			break
		}
	}
	c.items[string(text)] = s
	c.last.Store(&cachedSchema{string(text), s})
}

// fromEnvelope reads a {"schema":...,"payload":...} record whose schema
// is cached, or is read and cached now. It reports false when the record
// is anything else, or anything wrong (invalid JSON, another shape, a
// duplicate member, a schema Kafka refuses, a value its schema refuses),
// for the general path to read it and name the problem as Kafka would.
//
// When the schema comes first and is a struct's, as the JsonConverter
// writes it, the payload is read in the same pass; otherwise its text is
// checked, then read.
func (c *JSONConverter) fromEnvelope(data []byte, needs *valuefields.Needs) (*connect.Schema, any, bool, error) {
	if c.schemas == nil {
		return nil, nil, false, nil
	}
	p := parser{data: data, skip: true}
	p.skipSpace()
	if p.pos == len(data) || data[p.pos] != '{' {
		return nil, nil, false, nil
	}
	p.pos++
	var schema *connect.Schema
	var value any
	var payloadText []byte
	seenSchema, seenPayload := false, false
	for _, end := range []byte{',', '}'} {
		p.skipSpace()
		if p.pos == len(data) || data[p.pos] != '"' {
			return nil, nil, false, nil
		}
		name, err := p.strBytes()
		if err != nil {
			return nil, nil, false, nil
		}
		p.skipSpace()
		if p.pos == len(data) || data[p.pos] != ':' {
			return nil, nil, false, nil
		}
		p.pos++
		p.skipSpace()
		switch {
		case string(name) == "schema" && !seenSchema:
			seenSchema = true
			var ok bool
			if schema, ok = c.envelopeSchema(&p); !ok {
				return nil, nil, false, nil
			}
		case string(name) == "payload" && !seenPayload:
			seenPayload = true
			if seenSchema && schema != nil && schema.Type == connect.TypeStruct && p.pos < len(data) && data[p.pos] == '{' {
				var want []bool
				if needs != nil {
					want = needs.Of(schema)
				}
				var ok bool
				if value, ok = c.structPayload(schema, &p, want); !ok {
					return nil, nil, false, nil
				}
			} else if payloadText, err = p.skipValue(); err != nil {
				return nil, nil, false, nil
			}
		default:
			return nil, nil, false, nil
		}
		p.skipSpace()
		if p.pos == len(data) || data[p.pos] != end {
			return nil, nil, false, nil
		}
		p.pos++
	}
	p.skipSpace()
	if p.pos != len(data) {
		return nil, nil, false, nil
	}
	if payloadText == nil {
		return schema, value, true, nil
	}
	payload, err := parseJSON(payloadText)
	if err != nil {
		return nil, nil, false, nil
	}
	if value, err = c.toConnect(schema, payload); err != nil {
		return nil, nil, false, nil
	}
	return schema, value, true, nil
}

// envelopeSchema reads the schema at p.pos: the last one read when the
// text is the same, else from the cache, else parsed (and cached).
func (c *JSONConverter) envelopeSchema(p *parser) (*connect.Schema, bool) {
	if s, n, ok := c.schemas.prefix(p.data[p.pos:]); ok {
		p.pos += n
		return s, true
	}
	text, err := p.skipValue()
	if err != nil {
		return nil, false
	}
	if s, ok := c.schemas.get(text); ok {
		return s, true
	}
	n, err := parseJSON(text)
	if err != nil {
		return nil, false
	}
	s, err := c.parseSchema(n)
	if err != nil {
		return nil, false
	}
	c.schemas.put(text, s)
	return s, true
}

// plainName reports whether data holds at pos the JSON string of name
// written without escapes: name's bytes between quotes. A name that would
// need escapes (a quote, a backslash, a control character) never
// matches, so that a written escape is not taken for the character.
func plainName(data []byte, pos int, name string) bool {
	end := pos + 1 + len(name)
	if end >= len(data) || data[pos] != '"' || data[end] != '"' || string(data[pos+1:end]) != name {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '"' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

// structNodes holds the nodes structPayload reads a struct's members
// into: they are dead once the struct is built, and allocating them was
// more than half of the bytes a record in the envelope cost
// (BenchmarkJSONToConnectEnvelope: 400 B and 437 ns a record before, 160
// B and 368 ns with the pool).
var structNodes = sync.Pool{New: func() any { return new([]node) }}

// structPayload reads the JSON object at p.pos as a Struct of schema s
// without building the object's tree: each member's value is read into
// the node of its field (the last one when a name repeats, as Jackson
// keeps), then the fields are converted in the schema's order, as
// toConnect does. A flat struct costs no node beyond that one slice. It
// reports false on invalid JSON or a value s refuses.
//
// With want (valuefields), a field it does not want is checked rather
// than read (checkValue), and left null; false also when that check
// cannot tell, for the caller to read the whole value as usual.
func (c *JSONConverter) structPayload(s *connect.Schema, p *parser, want []bool) (any, bool) {
	if err := p.enter(); err != nil {
		return nil, false
	}
	p.pos++ // '{'
	skip := p.skip
	p.skip = false
	defer func() { p.skip = skip }()
	scratch := structNodes.Get().(*[]node)
	vals := slices.Grow((*scratch)[:0], len(s.Fields))[:len(s.Fields)]
	defer func() {
		// Cleared so that the pool does not keep the record's strings.
		clear(vals)
		*scratch = vals
		structNodes.Put(scratch)
	}()
	data := p.data
	p.skipSpace()
	if p.pos < len(data) && data[p.pos] == '}' {
		p.pos++
	} else {
		for i := 0; ; i++ {
			f, ok := p.member(s, i)
			if !ok {
				return nil, false
			}
			var err error
			var fs *connect.Schema
			if f >= 0 {
				fs = s.Fields[f].Schema
			}
			switch {
			case f < 0:
				_, err = p.skipValue()
			case want != nil && !want[f]:
				if vals[f].set || !c.checkValue(fs, p) {
					return nil, false
				}
				vals[f] = node{kind: nodeSkipped}
			case fs.Type == connect.TypeStruct:
				if p.pos < len(data) && data[p.pos] == '{' {
					// A nested struct, read in place as this one is
					// rather than as a tree (a Debezium envelope's
					// before, after and source).
					v, ok := c.structPayload(fs, p, nil)
					if !ok {
						return nil, false
					}
					vals[f] = node{kind: nodeValue, val: connect.AnyValue(v)}
				} else {
					err = p.valueInto(&vals[f])
				}
			case fs.Type == connect.TypeInt64 && fs.Name == "":
				// The most common numbers, read without a literal's copy.
				if v, ok := p.int64Literal(); ok {
					vals[f] = node{kind: nodeValue, val: connect.Int64Value(v)}
				} else {
					err = p.valueInto(&vals[f])
				}
			case fs.Type == connect.TypeFloat64 && fs.Name == "":
				if v, ok := p.fractionLiteral(); ok {
					vals[f] = node{kind: nodeValue, val: connect.AnyValue(v)}
				} else {
					err = p.valueInto(&vals[f])
				}
			default:
				err = p.valueInto(&vals[f])
			}
			if err != nil {
				return nil, false
			}
			if f >= 0 {
				vals[f].set = true
			}
			p.skipSpace()
			if p.pos == len(data) {
				return nil, false
			}
			if data[p.pos] == '}' {
				p.pos++
				break
			}
			if data[p.pos] != ',' {
				return nil, false
			}
			p.pos++
		}
	}
	p.depth--
	if want != nil {
		// A field not wanted and not given reads as null: toConnect
		// would refuse that where it refuses a null.
		for i, f := range s.Fields {
			if !want[i] && !vals[i].set && !c.nullAllowed(f.Schema) {
				return nil, false
			}
		}
	}
	v, err := c.structFrom(s, func(i int) (*node, error) {
		if !vals[i].set {
			return nil, nil
		}
		return &vals[i], nil
	})
	return v, err == nil
}

// nullAllowed reports whether toConnect reads a JSON null (or a missing
// member) of s without an error.
func (c *JSONConverter) nullAllowed(s *connect.Schema) bool {
	return s.Optional || (s.Default != nil && !c.keepNulls)
}

// checkValue reads the value at p.pos as structPayload and toConnect
// would read it for s, without building it, and reports whether they
// would take it. It reports false too where it cannot tell without
// building the value (a logical type, bytes, an array, a map, a float
// written as a string, a struct member given twice), for the caller to
// read the whole record as usual, which names the problem if there is
// one: a check never takes what conversion refuses.
func (c *JSONConverter) checkValue(s *connect.Schema, p *parser) bool {
	if p.pos >= len(p.data) {
		return false
	}
	first := p.data[p.pos]
	var err error
	switch {
	case first == '{':
		return s.Type == connect.TypeStruct && c.checkStruct(s, p)
	case first == '"':
		_, err = p.strBytes()
	case first == '-' || first >= '0' && first <= '9':
		skip := p.skip
		p.skip = true
		err = p.numberInto(nil)
		p.skip = skip
	default:
		_, err = p.skipValue()
	}
	if err != nil {
		return false
	}
	if first == 'n' {
		return c.nullAllowed(s)
	}
	switch s.Name {
	case connect.DecimalName, connect.DateName, connect.TimeName, connect.TimestampName:
		return false
	}
	number := first == '-' || first >= '0' && first <= '9'
	switch s.Type {
	case connect.TypeString:
		return first == '"'
	case connect.TypeBoolean:
		return first == 't' || first == 'f'
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64, connect.TypeFloat32, connect.TypeFloat64:
		// Any number: Java narrows it (javaLong, javaFloat).
		return number
	}
	return false
}

// member reads the name of an object's i-th member and the ':' after it,
// and returns the index of its field in s, -1 for none; false on invalid
// JSON. Members usually come in the schema's order, their names written
// as they are: compared in place, they need no scanning.
func (p *parser) member(s *connect.Schema, i int) (int, bool) {
	p.skipSpace()
	data := p.data
	if p.pos == len(data) || data[p.pos] != '"' {
		return -1, false
	}
	f := -1
	if i < len(s.Fields) && plainName(data, p.pos, s.Fields[i].Name) {
		f = i
		p.pos += len(s.Fields[i].Name) + 2
	} else {
		name, err := p.strBytes()
		if err != nil {
			return -1, false
		}
		f = slices.IndexFunc(s.Fields, func(f connect.Field) bool { return f.Name == string(name) })
	}
	p.skipSpace()
	if p.pos == len(data) || data[p.pos] != ':' {
		return -1, false
	}
	p.pos++
	p.skipSpace()
	return f, true
}

// checkStruct is checkValue for the JSON object at p.pos and a STRUCT
// schema of at most 64 fields.
func (c *JSONConverter) checkStruct(s *connect.Schema, p *parser) bool {
	if len(s.Fields) > 64 || p.enter() != nil {
		return false
	}
	p.pos++ // '{'
	data := p.data
	var seen uint64
	p.skipSpace()
	if p.pos < len(data) && data[p.pos] == '}' {
		p.pos++
	} else {
		for i := 0; ; i++ {
			f, ok := p.member(s, i)
			if !ok {
				return false
			}
			if f < 0 {
				if _, err := p.skipValue(); err != nil {
					return false
				}
			} else {
				if seen&(1<<f) != 0 || !c.checkValue(s.Fields[f].Schema, p) {
					return false
				}
				seen |= 1 << f
			}
			p.skipSpace()
			if p.pos == len(data) {
				return false
			}
			if data[p.pos] == '}' {
				p.pos++
				break
			}
			if data[p.pos] != ',' {
				return false
			}
			p.pos++
		}
	}
	p.depth--
	for i, f := range s.Fields {
		if seen&(1<<i) == 0 && !c.nullAllowed(f.Schema) {
			return false
		}
	}
	return true
}
