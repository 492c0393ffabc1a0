package rest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/javajson"
)

// Kafka answers the binding failures below with 500 and Jackson's text;
// we answer 400 and say what is wrong.

// parseJSON checks that body is a single JSON value and returns it; an
// empty body gives nil.
func parseJSON(body []byte) (json.RawMessage, error) {
	if len(bytes.Trim(body, " \t\r\n")) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, invalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, herder.BadRequest("Invalid JSON in request body: unexpected data after the top-level value")
	}
	return raw, nil
}

func invalidJSON(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return herder.BadRequest("Invalid JSON in request body: %s at byte %d", syntax.Error(), syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return herder.BadRequest("Invalid JSON in request body: unexpected end of input")
	}
	return herder.BadRequest("Invalid JSON in request body: %v", err)
}

// kindOf names the JSON type of a valid value, for messages.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// kindOfValue names the JSON type of a decoded value.
func kindOfValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// decodeValue decodes a valid JSON value keeping numbers as json.Number.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalidJSON(err)
	}
	return v, nil
}

// objectFields splits a JSON object into its fields, refusing any field
// not in known. what names the object in messages.
func objectFields(raw json.RawMessage, what string, known ...string) (map[string]json.RawMessage, error) {
	if kindOf(raw) != "an object" {
		return nil, herder.BadRequest("Invalid %s: expected a JSON object, got %s", what, kindOf(raw))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, invalidJSON(err)
	}
	if err := unknownField(fields, what, known); err != nil {
		return nil, err
	}
	return fields, nil
}

func unknownField[V any](fields map[string]V, what string, known []string) error {
	var unknown []string
	for k := range fields {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	quoted := make([]string, len(known))
	for i, k := range known {
		quoted[i] = strconv.Quote(k)
	}
	return herder.BadRequest("Unrecognized field %q in %s (known fields: %s)", unknown[0], what, strings.Join(quoted, ", "))
}

// scalarText is the text Jackson binds to a String from a JSON scalar:
// the string itself, or the literal text of a number or boolean.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// configMap is a JSON object bound as Jackson binds Map<String,String>:
// scalars become their text, null stays null (nil), keys keep the order
// of their first appearance (a LinkedHashMap).
type configMap struct {
	keys []string
	vals map[string]*string
}

func (c *configMap) set(k string, v *string) {
	if _, ok := c.vals[k]; !ok {
		c.keys = append(c.keys, k)
	}
	c.vals[k] = v
}

// bindConfig binds a flat config object. what names it in messages.
func bindConfig(raw json.RawMessage, what string) (*configMap, error) {
	if kindOf(raw) != "an object" {
		return nil, herder.BadRequest("Invalid %s: expected a JSON object of string values, got %s", what, kindOf(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return nil, invalidJSON(err)
	}
	c := &configMap{vals: map[string]*string{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		key, _ := tok.(string)
		if tok, err = dec.Token(); err != nil {
			return nil, invalidJSON(err)
		}
		switch tok {
		case nil:
			c.set(key, nil)
		case json.Delim('{'), json.Delim('['):
			kind := map[json.Delim]string{'{': "an object", '[': "an array"}[tok.(json.Delim)]
			return nil, herder.BadRequest("Invalid value for key %q in %s: expected a string, got %s", key, what, kind)
		default:
			s, _ := scalarText(tok)
			c.set(key, &s)
		}
	}
	return c, nil
}

// checkName is Kafka's checkAndPutConnectorConfigName: a "name" in the
// config must equal the connector's name, and is added when absent.
func (c *configMap) checkName(name string) error {
	v, ok := c.vals["name"]
	if !ok {
		c.set("name", &name)
		return nil
	}
	if v == nil || *v != name {
		return herder.BadRequest("Connector name configuration (%s) doesn't match connector name in the URL (%s)", deref(v), name)
	}
	return nil
}

// checkPatchName refuses a PATCH that would rename the connector, with
// the message Kafka's PUT gives for a mismatching name: the config would
// name another connector than the one it is stored under. A patch that
// removes the name is left to validation, which says it is required.
func (c *configMap) checkPatchName(name string) error {
	if v := c.vals["name"]; v != nil && *v != name {
		return c.checkName(name)
	}
	return nil
}

// requireClass is the first step of Kafka's config validation.
func (c *configMap) requireClass() error {
	if c.vals["connector.class"] == nil {
		return herder.BadRequest("Connector config %s contains no connector type", c.javaString())
	}
	return nil
}

// strings returns the config for the herder. Kafka accepts a JSON null
// value and reports it later as the validation error "Null value can not
// be supplied as the configuration value."; we refuse it here with the
// same sentence and the keys concerned.
func (c *configMap) strings() (map[string]string, error) {
	out := make(map[string]string, len(c.vals))
	var nulls []string
	for k, v := range c.vals {
		if v == nil {
			nulls = append(nulls, k)
			continue
		}
		out[k] = *v
	}
	switch len(nulls) {
	case 0:
		return out, nil
	case 1:
		return nil, herder.BadRequest("Null value can not be supplied as the configuration value (key: %s)", nulls[0])
	}
	slices.Sort(nulls)
	return nil, herder.BadRequest("Null value can not be supplied as the configuration value (keys: %s)", strings.Join(nulls, ", "))
}

// javaString renders the config as Java's Map.toString does for the map
// Kafka's validation holds: {k1=v1, k2=null}, in the iteration order of
// the HashMap that ConfigTransformer copies the config into; passwords
// are hidden, as Kafka's message does not.
func (c *configMap) javaString() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range hashMapCopyOrder(c.keys) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(connect.RedactConfigValue(k, deref(c.vals[k])))
	}
	b.WriteByte('}')
	return b.String()
}

func deref(v *string) string {
	if v == nil {
		return "null"
	}
	return *v
}

// hashMapCopyOrder returns the iteration order of new HashMap<>(m) on
// JDK 17, for a map m that iterates keys in the given order. Unlike a
// HashMap filled one put at a time (javajson.HashMapOrder), the copy
// constructor sizes its table to the next power of two at or above
// (int)(n/0.75f + 1), so small maps get small tables (1 key: 2 buckets,
// 3 keys: 8). Entries go by bucket index, ties in insertion order.
// (JDK 19 changed the sizing to ceil(n/0.75); Kafka 3.9 targets 17.)
func hashMapCopyOrder(keys []string) []string {
	t := int(float32(len(keys))/0.75 + 1)
	capacity := 1
	for capacity < t {
		capacity <<= 1
	}
	mask := uint32(capacity - 1)
	bucket := func(k string) uint32 {
		h := javajson.JavaStringHash(k)
		return (h ^ h>>16) & mask
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(bucket(a), bucket(b)) })
	return out
}

// createRequest is the bound body of POST /connectors.
type createRequest struct {
	name           string
	config         *configMap
	initialState   herder.TargetState
	initialOffsets []client.ConnectorOffset
}

// parseCreateRequest binds a POST /connectors body as Kafka's
// CreateConnectorRequest (plus KIP-995's initial_offsets), strictly.
func parseCreateRequest(body []byte) (*createRequest, error) {
	raw, err := parseJSON(body)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, herder.BadRequest(`Request body is missing: expected a JSON object with "name" and "config"`)
	}
	fields, err := objectFields(raw, "request body", "name", "config", "initial_state", "initial_offsets")
	if err != nil {
		return nil, err
	}
	req := &createRequest{}
	if f := fields["name"]; !isNull(f) {
		v, err := decodeValue(f)
		if err != nil {
			return nil, err
		}
		s, ok := scalarText(v)
		if !ok {
			return nil, herder.BadRequest(`Invalid field "name": expected a string, got %s`, kindOfValue(v))
		}
		// Java's String.trim: every char up to U+0020, nothing else.
		req.name = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	}
	if f := fields["config"]; isNull(f) {
		return nil, herder.BadRequest(`Missing field "config": a JSON object of connector configuration strings is required`)
	} else if req.config, err = bindConfig(f, `field "config"`); err != nil {
		return nil, err
	}
	if f := fields["initial_state"]; !isNull(f) {
		v, err := decodeValue(f)
		if err != nil {
			return nil, err
		}
		s, ok := scalarText(v)
		if !ok {
			return nil, herder.BadRequest(`Invalid field "initial_state": expected a string, got %s`, kindOfValue(v))
		}
		if req.initialState, err = herder.ParseInitialState(s); err != nil {
			return nil, err
		}
	}
	if f := fields["initial_offsets"]; !isNull(f) {
		v, err := decodeValue(f)
		if err != nil {
			return nil, err
		}
		// KIP-995 describes the field as the PATCH offsets body; accept
		// that object as well as the bare list inside it.
		if obj, ok := v.(map[string]any); ok && len(obj) == 1 && obj["offsets"] != nil {
			v = obj["offsets"]
		}
		if req.initialOffsets, err = parseOffsetList(v, "initial_offsets"); err != nil {
			return nil, err
		}
	}
	return req, nil
}
