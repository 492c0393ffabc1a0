package httpsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// pointer is a parsed JSON Pointer (RFC 6901): its unescaped reference
// tokens. The empty pointer (no token) is the whole document.
type pointer []string

func parsePointer(s string) (pointer, error) {
	if s == "" {
		return pointer{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("JSON Pointer %q must be empty or start with /", s)
	}
	var p pointer
	for _, tok := range strings.Split(s[1:], "/") {
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1')) {
				return nil, fmt.Errorf("JSON Pointer %q has an invalid escape: ~ must be followed by 0 or 1", s)
			}
		}
		// Order matters: "~01" is "~1" unescaped, not "/".
		p = append(p, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	return p, nil
}

// fieldPointer reads a field setting: a JSON Pointer when it starts with
// "/", otherwise the name of a top-level field.
func fieldPointer(s string) pointer {
	if strings.HasPrefix(s, "/") {
		p, _ := parsePointer(s)
		return p
	}
	return pointer{s}
}

func (p pointer) String() string {
	var b strings.Builder
	for _, tok := range p {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// lookup resolves p in a document decoded with UseNumber. It reports
// false when a token names no member or element.
func (p pointer) lookup(doc any) (any, bool) {
	cur := doc
	for _, tok := range p {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			// RFC 6901: decimal digits without leading zeros.
			if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.TrimLeft(tok, "0123456789") != "" {
				return nil, false
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// decodeJSON decodes a whole response body, numbers as json.Number.
func decodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// connectValue turns a decoded JSON value into schemaless Connect data,
// as Kafka's JsonConverter reads JSON without a schema: integers int64,
// other numbers float64 (an integer beyond int64 too), objects
// map[string]any, arrays []any.
func connectValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x) // out of a double's range: keep the digits
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = connectValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = connectValue(e)
		}
		return out
	}
	return v
}

// cursorID reads a record's id: an int64 for a JSON integer in the int64
// range, otherwise a string (a JSON string verbatim, other numbers as
// their text). Nulls, booleans, objects and arrays are not ids.
func cursorID(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, nil
		}
		return string(x), nil
	case string:
		return x, nil
	case nil:
		return nil, errors.New("is null")
	}
	return nil, fmt.Errorf("is a %s, not a number or a string", jsonKind(v))
}

// timestampText reads a record's timestamp as text: a string verbatim,
// a number as its JSON text; "" when absent or null.
func timestampText(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	}
	return "", fmt.Errorf("is a %s, not a string or a number", jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "JSON object"
	case []any:
		return "JSON array"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

// idString is an id as text: the record key and the cursor's value in
// requests.
func idString(id any) string {
	switch x := id.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return fmt.Sprint(id)
}

// compareIDs orders two ids: numerically when both are integers (int64
// or integer text, so "9" < "10"), or else both numbers; otherwise as
// strings, which suits zero-padded or time-ordered string ids.
func compareIDs(a, b any) int {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmp3(x, y)
		}
	}
	as, bs := idString(a), idString(b)
	if x, err := strconv.ParseInt(as, 10, 64); err == nil {
		if y, err := strconv.ParseInt(bs, 10, 64); err == nil {
			return cmp3(x, y)
		}
	}
	if x, err := strconv.ParseFloat(as, 64); err == nil {
		if y, err := strconv.ParseFloat(bs, 64); err == nil && x != y {
			return cmp3(x, y)
		}
	}
	return strings.Compare(as, bs)
}

func cmp3[T int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// fillTemplate replaces the placeholders of a URL template, escaping the
// values for the part of the URL they are in: path before the first "?",
// query after it.
func fillTemplate(tmpl, lastID, ts string) string {
	path, query, hasQuery := strings.Cut(tmpl, "?")
	path = strings.NewReplacer(lastIDPlaceholder, url.PathEscape(lastID), timestampPlaceholder, url.PathEscape(ts)).Replace(path)
	if !hasQuery {
		return path
	}
	query = strings.NewReplacer(lastIDPlaceholder, url.QueryEscape(lastID), timestampPlaceholder, url.QueryEscape(ts)).Replace(query)
	return path + "?" + query
}

// fillBody replaces the placeholders of a request body verbatim.
func fillBody(body, lastID, ts string) string {
	return strings.NewReplacer(lastIDPlaceholder, lastID, timestampPlaceholder, ts).Replace(body)
}
