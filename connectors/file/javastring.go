package file

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
)

// appendJavaString appends the text Java's String.valueOf gives for a
// Connect value: "null" for nil, numbers as Java prints them (doubles as
// Double.toString, e.g. 1.0 and 1.0E10), maps as {k=v, k2=v2} in
// java.util.HashMap order, lists as [a, b], structs, decimals and logical
// dates as their Java toString. Bytes are written as their raw text.
func appendJavaString(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return append(dst, x...)
	case []byte:
		return append(dst, x...)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int8:
		return strconv.AppendInt(dst, int64(x), 10)
	case int16:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(dst, x, 10)
	case float32:
		return javajson.AppendFloatString(dst, x)
	case float64:
		return javajson.AppendDoubleString(dst, x)
	case *connect.Struct:
		if x == nil {
			return append(dst, "null"...)
		}
		return append(dst, x.String()...)
	case *connect.Decimal:
		if x == nil {
			return append(dst, "null"...)
		}
		return append(dst, x.String()...)
	case time.Time:
		// java.util.Date.toString, in the local time zone.
		return x.Local().AppendFormat(dst, "Mon Jan 02 15:04:05 MST 2006")
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJavaString(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range javajson.HashMapOrder(keys) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, k...)
			dst = append(dst, '=')
			dst = appendJavaString(dst, x[k])
		}
		return append(dst, '}')
	case []connect.MapEntry:
		dst = append(dst, '{')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJavaString(dst, e.Key)
			dst = append(dst, '=')
			dst = appendJavaString(dst, e.Value)
		}
		return append(dst, '}')
	case fmt.Stringer:
		return append(dst, x.String()...)
	case error:
		return append(dst, x.Error()...)
	}
	return appendReflect(dst, v)
}

// appendReflect handles other slices and maps, e.g. []string or
// map[string]string, as Java's collections print.
func appendReflect(dst []byte, v any) []byte {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		dst = append(dst, '[')
		for i := range rv.Len() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJavaString(dst, rv.Index(i).Interface())
		}
		return append(dst, ']')
	case reflect.Map:
		type entry struct{ k, v string }
		entries := make([]entry, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			entries = append(entries, entry{
				string(appendJavaString(nil, it.Key().Interface())),
				string(appendJavaString(nil, it.Value().Interface())),
			})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].k < entries[j].k })
		dst = append(dst, '{')
		for i, e := range entries {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, e.k...)
			dst = append(dst, '=')
			dst = append(dst, e.v...)
		}
		return append(dst, '}')
	case reflect.Pointer:
		if rv.IsNil() {
			return append(dst, "null"...)
		}
	}
	return fmt.Append(dst, v)
}
