package transforms

import (
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestTimestampConverterConfigErrors(t *testing.T) {
	tests := []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, `Missing required configuration "target.type" which has no default value.`},
		{map[string]string{"target.type": "invalid"}, "Invalid value invalid for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"},
		{map[string]string{"target.type": "string"}, "TimestampConverter requires format option to be specified when using string timestamps"},
		{map[string]string{"target.type": "string", "format": "   "}, "TimestampConverter requires format option to be specified when using string timestamps"},
		{map[string]string{"target.type": "string", "format": "bad-formatj"}, "Invalid value java.lang.IllegalArgumentException: Illegal pattern character 'b' for configuration TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: bad-formatj"},
		{map[string]string{"target.type": "unix", "unix.precision": "hours"}, "Invalid value hours for configuration unix.precision: String must be one of: nanoseconds, microseconds, milliseconds, seconds"},
	}
	for _, tc := range tests {
		err := (&TimestampConverter{part: Value}).Configure(tc.props)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Configure(%v) = %v, want %q", tc.props, err, tc.want)
		}
	}
}

// The instant of Kafka's TimestampConverterTest: 1970-01-01T01:02:03.004Z
// with a date of 2017... as there: DATE 2017-01-01, TIME 01:02:03.004.
var (
	tcDate      = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(47, 0, 0) // 2017-01-01
	tcTime      = time.UnixMilli(((1*60+2)*60+3)*1000 + 4).UTC()
	tcDateTime  = tcDate.Add(time.Duration(tcTime.UnixMilli()) * time.Millisecond)
	tcFormat    = "yyyy MM dd HH mm ss SSS z"
	tcString    = "2017 01 01 01 02 03 004 UTC"
	tcUnixMilli = tcDateTime.UnixMilli()
)

func TestTimestampConverterSchemaless(t *testing.T) {
	tests := []struct {
		name   string
		props  map[string]string
		in     any
		want   any
		errMsg string
	}{
		{"timestamp to Date", map[string]string{"target.type": "Date"}, tcDateTime, tcDate, ""},
		{"timestamp to Time", map[string]string{"target.type": "Time"}, tcDateTime, tcTime, ""},
		{"timestamp to Timestamp", map[string]string{"target.type": "Timestamp"}, tcDateTime, tcDateTime, ""},
		{"timestamp to unix", map[string]string{"target.type": "unix"}, tcDateTime, tcUnixMilli, ""},
		{"timestamp to string", map[string]string{"target.type": "string", "format": tcFormat}, tcDateTime, tcString, ""},
		{"unix to Timestamp", map[string]string{"target.type": "Timestamp"}, tcUnixMilli, tcDateTime, ""},
		{"unix seconds", map[string]string{"target.type": "Timestamp", "unix.precision": "seconds"}, tcUnixMilli / 1000, tcDateTime.Truncate(time.Second), ""},
		{"unix micros", map[string]string{"target.type": "Timestamp", "unix.precision": "microseconds"}, tcUnixMilli*1000 + 999, tcDateTime, ""},
		{"unix nanos", map[string]string{"target.type": "Timestamp", "unix.precision": "nanoseconds"}, tcUnixMilli*1_000_000 + 999_999, tcDateTime, ""},
		{"to unix seconds", map[string]string{"target.type": "unix", "unix.precision": "seconds"}, tcDateTime, tcUnixMilli / 1000, ""},
		{"to unix nanos", map[string]string{"target.type": "unix", "unix.precision": "nanoseconds"}, tcDateTime, tcUnixMilli * 1_000_000, ""},
		{"to unix micros saturates", map[string]string{"target.type": "unix", "unix.precision": "microseconds"}, time.UnixMilli(1e16).UTC(), int64(1<<63 - 1), ""},
		{"string to Timestamp", map[string]string{"target.type": "Timestamp", "format": tcFormat}, tcString, tcDateTime, ""},
		{"string that does not match", map[string]string{"target.type": "Timestamp", "format": tcFormat}, "2017-01-01", nil,
			"Could not parse timestamp: value (2017-01-01) does not match pattern (yyyy MM dd HH mm ss SSS z)"},
		{"null passes", map[string]string{"target.type": "Date"}, nil, nil, ""},
		{"unsupported type", map[string]string{"target.type": "Date"}, 3.5, nil, "TimestampConverter does not support class java.lang.Double objects as timestamps"},
		{"field of a map", map[string]string{"target.type": "unix", "field": "ts"}, map[string]any{"ts": tcDateTime, "other": "x"}, map[string]any{"ts": tcUnixMilli, "other": "x"}, ""},
		{"field absent from the map", map[string]string{"target.type": "unix", "field": "ts"}, map[string]any{"other": "x"}, map[string]any{"ts": nil, "other": "x"}, ""},
		{"field of a non-map", map[string]string{"target.type": "unix", "field": "ts"}, "x", nil, "Only Map objects supported in absence of schema for [converting timestamp formats], found: java.lang.String"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := configured(t, &TimestampConverter{part: Value}, tc.props)
			out, msg := applyErr(tr, valueRecord(nil, tc.in))
			if msg != tc.errMsg {
				t.Fatalf("error %q, want %q", msg, tc.errMsg)
			}
			if msg == "" && (out.ValueSchema != nil || !reflect.DeepEqual(out.Value, tc.want)) {
				t.Errorf("got %v %#v, want %#v", out.ValueSchema, out.Value, tc.want)
			}
		})
	}
}

func TestTimestampConverterWithSchema(t *testing.T) {
	tests := []struct {
		name       string
		target     string
		schema     *connect.Schema
		in         any
		wantSchema *connect.Schema
		want       any
		errMsg     string
	}{
		{"Timestamp to Date", "Date", connect.TimestampSchema(), tcDateTime, connect.DateSchema(), tcDate, ""},
		{"Timestamp to Time", "Time", connect.TimestampSchema(), tcDateTime, connect.TimeSchema(), tcTime, ""},
		{"Date to unix", "unix", connect.DateSchema(), tcDate, connect.Int64Schema, tcDate.UnixMilli(), ""},
		{"int64 to Timestamp", "Timestamp", connect.Int64Schema, tcUnixMilli, connect.TimestampSchema(), tcDateTime, ""},
		{"string to Timestamp", "Timestamp", connect.StringSchema, tcString, connect.TimestampSchema(), tcDateTime, ""},
		{"optional stays optional", "unix", connect.TimestampSchema().AsOptional(), nil, connect.OptionalInt64Schema, nil, ""},
		{"int32 is no timestamp", "unix", connect.Int32Schema, int32(1), nil, nil, "Schema Schema{INT32} does not correspond to a known timestamp type format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := configured(t, &TimestampConverter{part: Value}, map[string]string{"target.type": tc.target, "format": tcFormat})
			out, msg := applyErr(tr, valueRecord(tc.schema, tc.in))
			if msg != tc.errMsg {
				t.Fatalf("error %q, want %q", msg, tc.errMsg)
			}
			if msg == "" && (!reflect.DeepEqual(out.ValueSchema, tc.wantSchema) || !reflect.DeepEqual(out.Value, tc.want)) {
				t.Errorf("got %v %#v, want %v %#v", out.ValueSchema, out.Value, tc.wantSchema, tc.want)
			}
		})
	}
}

func TestTimestampConverterStructField(t *testing.T) {
	for _, replace := range []bool{true, false} {
		schema := connect.StructSchema("rec",
			connect.Field{Name: "ts", Schema: connect.Int64Schema},
			connect.Field{Name: "opt", Schema: &connect.Schema{Type: connect.TypeInt64, Optional: true, Default: int64(7)}},
		)
		in := connect.NewStruct(schema).Put("ts", tcUnixMilli)
		props := map[string]string{"target.type": "string", "format": "yyyy-MM-dd", "field": "ts", "replace.null.with.default": map[bool]string{true: "true", false: "false"}[replace]}
		tr := configured(t, &TimestampConverter{part: Key}, props)
		out, err := tr.Apply(&connect.Record{Topic: "t", KeySchema: schema, Key: in})
		if err != nil {
			t.Fatal(err)
		}
		st := out.Key.(*connect.Struct)
		if out.KeySchema.Field("ts").Schema.Type != connect.TypeString || out.KeySchema.Name != "rec" {
			t.Errorf("schema %+v", out.KeySchema)
		}
		if st.Get("ts") != "2017-01-01" {
			t.Errorf("ts = %v", st.Get("ts"))
		}
		wantOpt := any(nil)
		if replace {
			wantOpt = int64(7)
		}
		if got := st.AtWithoutDefault(1); got != wantOpt {
			t.Errorf("replace.null.with.default=%v: opt = %v, want %v", replace, got, wantOpt)
		}
		if in.Get("ts") != tcUnixMilli {
			t.Error("the input struct was changed")
		}
	}
}

// Kafka's JsonConverter writes this for a Timestamp converted to a Date
// field in a struct.
func TestTimestampConverterGolden(t *testing.T) {
	s, v := decodeJSON(t, false, `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"at"}],"optional":false,"name":"ev"},"payload":{"id":1,"at":1483232523004}}`)
	tr := configured(t, &TimestampConverter{part: Value}, map[string]string{"target.type": "Date", "field": "at"})
	out, err := tr.Apply(valueRecord(s, v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"at"}],"optional":false,"name":"ev"},"payload":{"id":1,"at":17167}}`
	if got := encodeJSON(t, false, out.ValueSchema, out.Value); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
