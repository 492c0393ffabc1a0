package converters

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
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
// is anything else (invalid JSON, another shape, a duplicate member, a
// schema Kafka refuses...), for the general path to read it and name
// the problem.
func (c *JSONConverter) fromEnvelope(data []byte) (*connect.Schema, any, bool, error) {
	if c.schemas == nil {
		return nil, nil, false, nil
	}
	p := parser{data: data, skip: true}
	p.skipSpace()
	if p.pos == len(data) || data[p.pos] != '{' {
		return nil, nil, false, nil
	}
	p.pos++
	var schemaText, payloadText []byte
	var schema *connect.Schema
	known := false // schema holds schemaText's schema
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
		var text []byte
		if string(name) == "schema" && schemaText == nil {
			var n int
			if schema, n, known = c.schemas.prefix(data[p.pos:]); known {
				text = data[p.pos : p.pos+n]
				p.pos += n
			}
		}
		if text == nil {
			if text, err = p.skipValue(); err != nil {
				return nil, nil, false, nil
			}
		}
		switch {
		case string(name) == "schema" && schemaText == nil:
			schemaText = text
		case string(name) == "payload" && payloadText == nil:
			payloadText = text
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
	if !known {
		schema, known = c.schemas.get(schemaText)
	}
	if !known {
		n, err := parseJSON(schemaText)
		if err != nil {
			return nil, nil, false, nil
		}
		if schema, err = c.parseSchema(n); err != nil {
			return nil, nil, false, nil
		}
		c.schemas.put(schemaText, schema)
	}
	if schema != nil && schema.Type == connect.TypeStruct && payloadText[0] == '{' {
		v, err := c.structPayload(schema, payloadText)
		return schema, v, true, err
	}
	payload, err := parseJSON(payloadText)
	if err != nil {
		return nil, nil, false, nil
	}
	v, err := c.toConnect(schema, payload)
	return schema, v, true, err
}

// structPayload reads a struct's JSON object, already checked by
// skipValue, without building the object's tree: each member's value is
// read into the node of its field (the last one when a name repeats, as
// Jackson keeps), then the fields are converted in the schema's order, as
// toConnect does. A flat struct costs no node beyond that one slice.
func (c *JSONConverter) structPayload(s *connect.Schema, data []byte) (any, error) {
	vals := make([]node, len(s.Fields))
	seen := make([]bool, len(s.Fields))
	p := parser{data: data, pos: 1} // after '{'
	for i := 0; ; i++ {
		p.skipSpace()
		switch data[p.pos] {
		case '}':
			return c.structFrom(s, func(i int) (*node, error) {
				if !seen[i] {
					return nil, nil
				}
				return &vals[i], nil
			})
		case ',':
			p.pos++
			p.skipSpace()
		}
		name, err := p.strBytes()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		p.pos++ // ':'
		p.skipSpace()
		// Members usually come in the schema's order.
		f := i
		if f >= len(s.Fields) || s.Fields[f].Name != string(name) {
			f = slices.IndexFunc(s.Fields, func(f connect.Field) bool { return f.Name == string(name) })
		}
		if f < 0 {
			if _, err := p.skipValue(); err != nil {
				return nil, err
			}
			continue
		}
		if err := p.valueInto(&vals[f]); err != nil {
			return nil, err
		}
		seen[f] = true
	}
}
