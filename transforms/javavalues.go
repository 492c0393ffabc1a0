package transforms

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/connectvalues"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/javatime"
)

// The Java renderings and checks that the type-changing transforms
// (Cast, TimestampConverter, MaskField, SetSchemaMetadata) share.

// javaClass is value.getClass() in a message: "class java.lang.Long".
func javaClass(v any) string { return "class " + ClassName(v) }

// schemaString is ConnectSchema.toString: Schema{name:TYPE} or
// Schema{TYPE}.
func schemaString(s *connect.Schema) string {
	if s == nil {
		return "null"
	}
	if s.Name != "" {
		return "Schema{" + s.Name + ":" + string(s.Type) + "}"
	}
	return "Schema{" + string(s.Type) + "}"
}

// valueString is String.valueOf of a Connect value, as Kafka's messages
// embed it.
func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return string(javajson.AppendDoubleString(nil, x))
	case float32:
		return string(javajson.AppendFloatString(nil, x))
	case *connect.Decimal:
		if x == nil || x.Unscaled == nil {
			return "null"
		}
		return connectvalues.BigDecimalString(x.Unscaled, x.Scale)
	case time.Time:
		// java.util.Date.toString in a JVM running in UTC.
		return x.UTC().Format("Mon Jan 02 15:04:05 UTC 2006")
	}
	return fmt.Sprint(v)
}

// putField is Struct.put of Kafka: the value is checked against the
// field's schema, with ConnectSchema.validateValue's message for a null
// in a required field (which a default does not excuse).
func putField(st *connect.Struct, f *connect.Field, v any) error {
	if v == nil && !f.Schema.Optional {
		return dataError("Invalid value: null used for required field: \"%s\", schema type: %s", f.Name, f.Schema.Type)
	}
	if err := st.SetAt(f.Index, v); err != nil {
		return &DataError{Message: err.Error()}
	}
	return nil
}

// javaTrim is String.trim: it drops every character up to the space from
// both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// copyMap is new HashMap<>(m).
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// isoFormatFor is Values.dateFormatFor: a time before 1970-01-02 is shown
// as a Time, a midnight as a Date, anything else as a Timestamp. Kafka's
// SimpleDateFormat uses the JVM's zone, UTC here.
func isoFormatFor(ms int64) *javatime.Format {
	switch {
	case ms < msPerDay:
		return isoTime
	case ms%msPerDay == 0:
		return isoDate
	}
	return isoTimestamp
}

var (
	isoDate      = mustCompile("yyyy-MM-dd")
	isoTime      = mustCompile("HH:mm:ss.SSS'Z'")
	isoTimestamp = mustCompile("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
)

func mustCompile(pattern string) *javatime.Format {
	f, err := javatime.Compile(pattern, time.UTC)
	if err != nil {
		panic(err)
	}
	return f
}

const msPerDay = 24 * 60 * 60 * 1000
