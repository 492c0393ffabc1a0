package transforms

import (
	"math"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javatime"
)

func timestampConverterPlugins() []connect.Plugin {
	return keyValuePlugins("TimestampConverter", func(p Part) connect.Transformation { return &TimestampConverter{part: p} })
}

// The target types and unix precisions TimestampConverter knows.
const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

var timestampConverterConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Default: "", Importance: connect.High,
		Doc: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
	Define(connect.ConfigKey{Name: "target.type", Type: connect.ConfigString, Required: true,
		Validator: connect.OneOf(tsString, tsUnix, tsDate, tsTime, tsTimestamp), Importance: connect.High,
		Doc: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"}).
	Define(connect.ConfigKey{Name: "format", Type: connect.ConfigString, Default: "", Importance: connect.Medium,
		Doc: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string " +
			"or used to parse the input if the input is a string."}).
	Define(connect.ConfigKey{Name: "unix.precision", Type: connect.ConfigString, Default: "milliseconds",
		Validator: connect.OneOf("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance: connect.Low,
		Doc: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. " +
			"Used to generate the output when type=unix or used to parse the input if the input is a Long." +
			"Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."}).
	Define(replaceNullWithDefaultKey)

// TimestampConverter is Kafka's TimestampConverter$Key and $Value: a
// timestamp, the whole key or value or one of its fields, converted
// between a string in a SimpleDateFormat pattern, a Unix time, and the
// Date, Time and Timestamp logical types, all in UTC.
type TimestampConverter struct {
	part                   Part
	field                  string
	target                 string
	format                 *javatime.Format
	precision              string
	replaceNullWithDefault bool
	cache                  schemaCache
}

const timestampConverterPurpose = "converting timestamp formats"

func (t *TimestampConverter) Config() *connect.ConfigDef { return timestampConverterConfig }

func (t *TimestampConverter) Configure(props map[string]string) error {
	c, err := timestampConverterConfig.Parse(props)
	if err != nil {
		return err
	}
	t.field = c.String("field")
	t.target = c.String("target.type")
	t.precision = c.String("unix.precision")
	t.replaceNullWithDefault = c.Bool("replace.null.with.default")
	pattern := c.String("format")
	blank := strings.TrimSpace(pattern) == ""
	if t.target == tsString && blank {
		return &connect.ConfigError{Name: "format", Message: "TimestampConverter requires format option to be specified when using string timestamps"}
	}
	if !blank {
		f, err := javatime.Compile(pattern, time.UTC)
		if err != nil {
			// Kafka builds this ConfigException with the (name, value)
			// constructor, so the pattern ends up where a key's name goes.
			return &connect.ConfigError{Name: "format", Message: "Invalid value java.lang.IllegalArgumentException: " + err.Error() +
				" for configuration TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: " + pattern}
		}
		t.format = f
	}
	return nil
}

func (t *TimestampConverter) Apply(r *connect.Record) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if schema == nil {
		return t.applySchemaless(r, value)
	}
	if t.field == "" {
		from, err := timestampTypeFromSchema(schema)
		if err != nil {
			return nil, err
		}
		v, err := t.convert(value, from)
		if err != nil {
			return nil, err
		}
		t.part.Set(r, t.typeSchema(schema.Optional), v)
		return r, nil
	}
	st, err := requireStructOrNull(value, timestampConverterPurpose)
	if err != nil {
		return nil, err
	}
	updated := t.cache.get(schema)
	if updated == nil {
		fields := make([]connect.Field, len(schema.Fields))
		for i, f := range schema.Fields {
			fields[i] = connect.Field{Name: f.Name, Schema: f.Schema}
			if f.Name == t.field {
				fields[i].Schema = t.typeSchema(f.Schema.Optional)
			}
		}
		updated = structSchema(copySchemaBasics(schema, connect.TypeStruct), fields)
		updated.Optional = schema.Optional
		if def, ok := schema.Default.(*connect.Struct); ok {
			if updated.Default, err = t.applyStruct(def, updated); err != nil {
				return nil, err
			}
		}
		t.cache.put(schema, updated)
	}
	out, err := t.applyStruct(st, updated)
	if err != nil {
		return nil, err
	}
	t.part.Set(r, updated, out)
	return r, nil
}

func (t *TimestampConverter) applyStruct(st *connect.Struct, updated *connect.Schema) (any, error) {
	if st == nil {
		return nil, nil
	}
	out := connect.NewStruct(updated)
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		v := getField(st, f, t.replaceNullWithDefault)
		if f.Name == t.field {
			from, err := timestampTypeFromSchema(f.Schema)
			if err != nil {
				return nil, err
			}
			if v, err = t.convert(v, from); err != nil {
				return nil, err
			}
		}
		if err := putField(out, updated.Field(f.Name), v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *TimestampConverter) applySchemaless(r *connect.Record, value any) (*connect.Record, error) {
	if value == nil || t.field == "" {
		v, err := t.convert(value, "")
		if err != nil {
			return nil, err
		}
		t.part.Set(r, nil, v)
		return r, nil
	}
	m, err := requireMap(value, timestampConverterPurpose)
	if err != nil {
		return nil, err
	}
	out := copyMap(m)
	if out[t.field], err = t.convert(m[t.field], ""); err != nil {
		return nil, err
	}
	t.part.Set(r, nil, out)
	return r, nil
}

// timestampTypeFromSchema is what a schema says a timestamp is: a logical
// type by its name, else a STRING a formatted time and an INT64 a Unix
// time.
func timestampTypeFromSchema(s *connect.Schema) (string, error) {
	switch {
	case s.Name == connect.TimestampName:
		return tsTimestamp, nil
	case s.Name == connect.DateName:
		return tsDate, nil
	case s.Name == connect.TimeName:
		return tsTime, nil
	case s.Type == connect.TypeString:
		return tsString, nil
	case s.Type == connect.TypeInt64:
		return tsUnix, nil
	}
	// A ConnectException in Kafka, which fails the record as a
	// DataException does.
	return "", dataError("Schema %s does not correspond to a known timestamp type format", schemaString(s))
}

func (t *TimestampConverter) typeSchema(optional bool) *connect.Schema {
	var s *connect.Schema
	switch t.target {
	case tsString:
		s = connect.StringSchema
	case tsUnix:
		s = connect.Int64Schema
	case tsDate:
		s = connect.DateSchema()
	case tsTime:
		s = connect.TimeSchema()
	default:
		s = connect.TimestampSchema()
	}
	if optional {
		return s.AsOptional()
	}
	return s
}

// convert turns a timestamp of type from (inferred from its Go type when
// "") into the target type; null stays null.
func (t *TimestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case time.Time:
			from = tsTimestamp
		case int64:
			from = tsUnix
		case string:
			from = tsString
		default:
			return nil, dataError("TimestampConverter does not support %s objects as timestamps", javaClass(v))
		}
	}
	ms, err := t.toMillis(v, from)
	if err != nil {
		return nil, err
	}
	switch t.target {
	case tsString:
		return t.format.Format(time.UnixMilli(ms)), nil
	case tsUnix:
		switch t.precision {
		case "seconds":
			return ms / 1000, nil
		case "microseconds":
			return saturatingMul(ms, 1000), nil
		case "nanoseconds":
			return saturatingMul(ms, 1_000_000), nil
		}
		return ms, nil
	case tsDate:
		return time.UnixMilli(floorDiv(ms, msPerDay) * msPerDay).UTC(), nil
	case tsTime:
		return time.UnixMilli(ms - floorDiv(ms, msPerDay)*msPerDay).UTC(), nil
	}
	return time.UnixMilli(ms).UTC(), nil
}

// toMillis reads a timestamp of type from as milliseconds since the epoch,
// java.util.Date's precision.
func (t *TimestampConverter) toMillis(v any, from string) (int64, error) {
	switch from {
	case tsString:
		s, ok := v.(string)
		if !ok {
			return 0, dataError("Expected string timestamp to be a String, but found %s", javaClass(v))
		}
		if t.format == nil {
			// Kafka fails here with a NullPointerException.
			return 0, dataError("TimestampConverter requires format option to be specified to parse string timestamps")
		}
		ts, err := t.format.Parse(s)
		if err != nil {
			return 0, dataError("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.Pattern())
		}
		return ts.UnixMilli(), nil
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return 0, dataError("Expected Unix timestamp to be a Long, but found %s", javaClass(v))
		}
		switch t.precision {
		case "seconds":
			return saturatingMul(n, 1000), nil
		case "microseconds":
			return n / 1000, nil
		case "nanoseconds":
			return n / 1_000_000, nil
		}
		return n, nil
	}
	ts, ok := v.(time.Time)
	if !ok {
		what := map[string]string{tsDate: "Date", tsTime: "Time", tsTimestamp: "Timestamp"}[from]
		return 0, dataError("Expected %s to be a java.util.Date, but found %s", what, javaClass(v))
	}
	return ts.UnixMilli(), nil
}

// saturatingMul is TimeUnit's conversion to a finer unit: it saturates
// instead of overflowing.
func saturatingMul(n, by int64) int64 {
	switch {
	case n > math.MaxInt64/by:
		return math.MaxInt64
	case n < math.MinInt64/by:
		return math.MinInt64
	}
	return n * by
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
