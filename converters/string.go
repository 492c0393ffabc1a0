package converters

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/connectvalues"
	"github.com/connectd/connectd/internal/javajson"
)

// StringConverterClass is the Java class name StringConverter is
// registered under.
const StringConverterClass = "org.apache.kafka.connect.storage.StringConverter"

// EncodingConfig is StringConverter's character set setting.
const EncodingConfig = "converter.encoding"

// StringConverter is Kafka's StringConverter: it writes the Java toString()
// of any value, whatever the schema, and reads bytes back as an optional
// string. Only UTF-8 is supported.
type StringConverter struct{}

// Configure checks the encoding. The serializer-level keys Kafka's
// StringSerializer honours are checked too, since in Java they override
// converter.encoding.
func (c *StringConverter) Configure(config map[string]string, isKey bool) error {
	side := "value."
	if isKey {
		side = "key."
	}
	for _, key := range []string{EncodingConfig, side + "serializer.encoding", side + "deserializer.encoding"} {
		v, ok := config[key]
		if !ok {
			continue
		}
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "UTF-8", "UTF8":
		default:
			return fmt.Errorf("Invalid value %s for configuration %s: only UTF-8 is supported", v, key)
		}
	}
	return nil
}

// FromConnectData writes the value's Java toString(); a nil value stays
// nil.
func (c *StringConverter) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	return []byte(javaToString(value)), nil
}

// AppendFromConnectData appends what FromConnectData returns for a
// non-nil value to dst (connect.AppendConverter).
func (c *StringConverter) AppendFromConnectData(dst []byte, topic string, schema *connect.Schema, value any) ([]byte, error) {
	return append(dst, javaToString(value)...), nil
}

// ToConnectData reads the bytes as a string, replacing invalid UTF-8 as
// Java's decoder does. Nil data reads as a null string.
func (c *StringConverter) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalStringSchema, nil, nil
	}
	return connect.OptionalStringSchema, decodeUTF8(data), nil
}

// javaToString renders a Connect value as its Java object's toString()
// would. Two values differ on purpose: a []byte is written as its bytes
// (Java would print an identity such as "[B@1b6d3586", useless to anyone)
// and a time.Time is printed as java.util.Date prints in a JVM whose
// default time zone is UTC.
func javaToString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float32:
		return javaFloatString(x)
	case float64:
		return javaDoubleString(x)
	case []byte:
		return string(x)
	case *connect.Decimal:
		if x == nil || x.Unscaled == nil {
			return "null"
		}
		return connectvalues.BigDecimalString(x.Unscaled, x.Scale)
	case time.Time:
		return x.UTC().Format("Mon Jan 02 15:04:05 MST 2006")
	case *connect.Struct:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaToString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(x))
		for _, k := range javajson.HashMapOrder(keys) {
			parts = append(parts, k+"="+javaToString(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []connect.MapEntry:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = javaToString(e.Key) + "=" + javaToString(e.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// decodeUTF8 is new String(bytes, UTF_8): each maximal ill-formed
// subsequence becomes one U+FFFD, where Go's conversions would keep the
// bytes or replace them one at a time.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			size = illFormedLength(b)
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// illFormedLength is the length of the maximal prefix of b that could
// start a well-formed sequence (Unicode's "maximal subpart"), at least 1.
// b is known not to start with a complete valid sequence.
func illFormedLength(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for n <= need && n < len(b) {
		x := b[n]
		if n == 1 && (x < lo || x > hi) || n > 1 && (x < 0x80 || x > 0xBF) {
			break
		}
		n++
	}
	return n
}
