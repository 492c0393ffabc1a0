package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// ErrInvalidJSON marks an internal-topic value that is not JSON at all.
// Kafka Connect's converter rejects such a record before looking at it, so
// (unlike a record of the wrong shape) it does not even advance the config
// topic's offset.
var ErrInvalidJSON = errors.New("value is not valid JSON")

// decodeInternal parses an internal-topic value the way the worker's
// internal JsonConverter (schemas.enable=false) does: a nil, empty or blank
// value is null; only the first JSON value counts (Jackson's readTree stops
// there); integers become int64, wrapping like BigInteger.longValue when
// they do not fit; other numbers become float64.
func decodeInternal(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	return normalizeLenient(v), nil
}

func normalizeLenient(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
			if b, ok := new(big.Int).SetString(s, 10); ok {
				return b.Int64() // low 64 bits, as Java's longValue
			}
		}
		f, _ := strconv.ParseFloat(s, 64) // ±Inf on overflow, as Java
		return f
	case []any:
		for i, e := range x {
			x[i] = normalizeLenient(e)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeLenient(e)
		}
		return x
	}
	return v
}

// javaClassName names a decoded value's type the way Kafka's log messages
// do, for error texts.
func javaClassName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "Boolean"
	case string:
		return "String"
	case int64:
		return "Long"
	case float64:
		return "Double"
	case []any:
		return "ArrayList"
	case map[string]any:
		return "HashMap"
	}
	return fmt.Sprintf("%T", v)
}

// splitJavaDash is Java's key.split("-"): trailing empty strings are
// dropped. Connect parses task ids out of keys with it, so connector names
// containing '-' (or ending in one) round-trip exactly as in Java.
func splitJavaDash(s string) []string {
	parts := strings.Split(s, "-")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" && s != "" {
		return nil
	}
	return parts
}

// parseJavaInt is Integer.parseInt for the ASCII digits Kafka writes.
func parseJavaInt(s string) (int, bool) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}
