package connectvalues

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
)

// ConvertToString is Values.convertToString: the text ParseString reads
// back. Strings are written as they are at the top level and quoted,
// with backslashes and quotes escaped, inside arrays, maps and structs;
// bytes in base64; dates as Kafka's ISO 8601 date, time or timestamp by
// their instant; a struct as a map of its fields. A nil value is "null",
// as inside an array; Java's convertToString returns null for it, which
// callers handle first. A map[string]any, which has no order, is written
// in the order a java.util.HashMap of its keys iterates, as Java holds a
// map the JsonConverter read.
func ConvertToString(schema *connect.Schema, value any) (string, error) {
	b, err := appendValue(nil, value, false)
	return string(b), err
}

func appendValue(b []byte, value any, embedded bool) ([]byte, error) {
	var err error
	switch x := value.(type) {
	case nil:
		return append(b, "null"...), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float32:
		return javajson.AppendFloatString(b, x), nil
	case float64:
		return javajson.AppendDoubleString(b, x), nil
	case *connect.Decimal:
		if x == nil || x.Unscaled == nil {
			return append(b, "null"...), nil
		}
		return append(b, BigDecimalString(x.Unscaled, x.Scale)...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		if !embedded {
			return append(b, x...), nil
		}
		b = append(b, '"')
		b = append(b, escape(x)...)
		return append(b, '"'), nil
	case []byte:
		enc := base64.StdEncoding.EncodeToString(x)
		if !embedded {
			return append(b, enc...), nil
		}
		return append(append(append(b, '"'), enc...), '"'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e, true); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case []connect.MapEntry:
		return appendEntries(b, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		e := make([]connect.MapEntry, 0, len(keys))
		for _, k := range javajson.HashMapOrder(keys) {
			e = append(e, connect.MapEntry{Key: k, Value: x[k]})
		}
		return appendEntries(b, e)
	case *connect.Struct:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '{')
		for i, f := range x.Schema().Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValue(b, f.Name, true)
			b = append(b, ':')
			if b, err = appendValue(b, x.At(i), true); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case time.Time:
		return append(b, formatDate(x)...), nil
	}
	return nil, fmt.Errorf("Failed to serialize unexpected value type %T: %v", value, value)
}

func appendEntries(b []byte, e []connect.MapEntry) ([]byte, error) {
	var err error
	b = append(b, '{')
	for i, en := range e {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = appendValue(b, en.Key, true); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendValue(b, en.Value, true); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// escape is Values.escape: backslashes doubled, then quotes escaped.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`)
}

// formatDate is Values.dateFormatFor in UTC: before a day past the epoch
// (negative instants included) a time, on a whole day a date, else a
// timestamp.
func formatDate(t time.Time) string {
	t = t.UTC()
	ms := t.UnixMilli()
	switch {
	case ms < millisPerDay:
		return t.Format("15:04:05.000Z")
	case ms%millisPerDay == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// BigDecimalString is java.math.BigDecimal.toString(): plain notation
// unless the scale is negative or the number is below 1E-6, then
// scientific notation with the exponent as E+n or E-n.
func BigDecimalString(unscaled *big.Int, scale int32) string {
	coeff := new(big.Int).Abs(unscaled).String()
	var b strings.Builder
	if unscaled.Sign() < 0 {
		b.WriteByte('-')
	}
	adjusted := int64(len(coeff)-1) - int64(scale)
	if scale >= 0 && adjusted >= -6 {
		switch n := len(coeff); {
		case scale == 0:
			b.WriteString(coeff)
		case n > int(scale):
			b.WriteString(coeff[:n-int(scale)])
			b.WriteByte('.')
			b.WriteString(coeff[n-int(scale):])
		default:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", int(scale)-n))
			b.WriteString(coeff)
		}
		return b.String()
	}
	b.WriteByte(coeff[0])
	if len(coeff) > 1 {
		b.WriteByte('.')
		b.WriteString(coeff[1:])
	}
	b.WriteByte('E')
	if adjusted >= 0 {
		b.WriteByte('+')
	}
	b.WriteString(strconv.FormatInt(adjusted, 10))
	return b.String()
}
