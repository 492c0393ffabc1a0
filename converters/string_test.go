package converters

import (
	"math"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestStringConverterWrite(t *testing.T) {
	c := new(StringConverter)
	if err := c.Configure(map[string]string{"converter.encoding": "utf8"}, false); err != nil {
		t.Fatal(err)
	}
	s := connect.StructSchema("s",
		connect.Field{Name: "a", Schema: connect.StringSchema},
		connect.Field{Name: "b", Schema: connect.OptionalInt32Schema})
	cases := []struct {
		value any
		want  string
	}{
		{"plain ✓", "plain ✓"},
		{true, "true"},
		{int8(-8), "-8"},
		{int32(42), "42"},
		{int64(math.MaxInt64), "9223372036854775807"},
		{1.0, "1.0"},
		{1e10, "1.0E10"},
		{float32(0.1), "0.1"},
		{math.NaN(), "NaN"},
		{math.Inf(-1), "-Infinity"},
		{dec(1250, 2), "12.50"},
		{dec(1, -2), "1E+2"},
		{[]byte("raw"), "raw"},
		{time.UnixMilli(0), "Thu Jan 01 00:00:00 UTC 1970"},
		{[]any{int32(1), "a", nil, 2.5}, "[1, a, null, 2.5]"},
		{map[string]any{"kafka_topic": "t", "kafka_partition": int32(0)}, "{kafka_partition=0, kafka_topic=t}"},
		{[]connect.MapEntry{{Key: int32(2), Value: "b"}, {Key: int32(1), Value: "a"}}, "{2=b, 1=a}"},
		{connect.NewStruct(s).Put("a", "x"), connect.NewStruct(s).Put("a", "x").String()},
	}
	for _, tc := range cases {
		got, err := c.FromConnectData("topic", connect.StringSchema, tc.value)
		if err != nil || string(got) != tc.want {
			t.Errorf("FromConnectData(%#v) = %q, %v; want %q", tc.value, got, err, tc.want)
		}
	}
	if got, err := c.FromConnectData("topic", nil, nil); got != nil || err != nil {
		t.Errorf("nil value written as %q, %v", got, err)
	}
}

func TestStringConverterRead(t *testing.T) {
	c := new(StringConverter)
	cases := []struct {
		in   []byte
		want any
	}{
		{nil, nil},
		{[]byte{}, ""},
		{[]byte("héllo"), "héllo"},
		// Java's decoder replaces each maximal ill-formed subsequence with
		// one U+FFFD: a truncated three-byte sequence is one, two stray
		// bytes are two, and a surrogate's encoding is three.
		{[]byte("a\xE2\x82b"), "a\uFFFDb"},
		{[]byte("\xFF\xFE"), "\uFFFD\uFFFD"},
		{[]byte("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD"},
		{[]byte("\xF0\x9F\x98"), "\uFFFD"},
		{[]byte("\xC0\xAF"), "\uFFFD\uFFFD"},
	}
	for _, tc := range cases {
		s, v, err := c.ToConnectData("topic", tc.in)
		if err != nil || s != connect.OptionalStringSchema || v != tc.want {
			t.Errorf("ToConnectData(%q) = %v, %q, %v; want %q", tc.in, s, v, err, tc.want)
		}
	}
}

func TestStringConverterEncoding(t *testing.T) {
	c := new(StringConverter)
	for _, config := range []map[string]string{nil, {"converter.encoding": "UTF-8"}, {"converter.encoding": " utf-8 "}} {
		if err := c.Configure(config, true); err != nil {
			t.Errorf("Configure(%v): %v", config, err)
		}
	}
	for _, config := range []map[string]string{
		{"converter.encoding": "ISO-8859-1"},
		{"key.serializer.encoding": "UTF-16"},
	} {
		if err := c.Configure(config, true); err == nil {
			t.Errorf("Configure(%v) accepted a non-UTF-8 encoding", config)
		}
	}
	// The other side's serializer setting does not apply.
	if err := c.Configure(map[string]string{"value.serializer.encoding": "UTF-16"}, true); err != nil {
		t.Errorf("a value setting refused for a key converter: %v", err)
	}
}

func TestByteArrayConverter(t *testing.T) {
	c := new(ByteArrayConverter)
	in := []byte{0, 1, 0xFF}
	for _, s := range []*connect.Schema{nil, connect.BytesSchema, connect.OptionalBytesSchema} {
		got, err := c.FromConnectData("topic", s, in)
		if err != nil || string(got) != string(in) {
			t.Errorf("FromConnectData(%v) = % X, %v", s, got, err)
		}
	}
	if got, err := c.FromConnectData("topic", connect.BytesSchema, nil); got != nil || err != nil {
		t.Errorf("nil value written as %q, %v", got, err)
	}
	if _, err := c.FromConnectData("topic", connect.StringSchema, in); err == nil || err.Error() != "Invalid schema type for ByteArrayConverter: STRING" {
		t.Errorf("string schema: %v", err)
	}
	if _, err := c.FromConnectData("topic", nil, "text"); err == nil || err.Error() != "ByteArrayConverter is not compatible with objects of type string" {
		t.Errorf("string value: %v", err)
	}
	s, v, err := c.ToConnectData("topic", in)
	if err != nil || s != connect.OptionalBytesSchema || string(v.([]byte)) != string(in) {
		t.Errorf("ToConnectData = %v, %v, %v", s, v, err)
	}
	if s, v, err := c.ToConnectData("topic", nil); err != nil || s != connect.OptionalBytesSchema || v != nil {
		t.Errorf("ToConnectData(nil) = %v, %#v, %v", s, v, err)
	}
}
