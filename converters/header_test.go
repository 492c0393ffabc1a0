package converters

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// The bytes a Java worker's SimpleHeaderConverter writes for each value
// (Values.convertToString), and what it reads back from them.
func TestSimpleHeaderConverterGoldenBytes(t *testing.T) {
	st := connect.StructSchema("order",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "note", Schema: connect.OptionalStringSchema})
	for _, c := range []struct {
		name     string
		schema   *connect.Schema
		value    any
		want     string
		back     *connect.Schema
		backWant any
	}{
		{"string", connect.StringSchema, "simple", "simple", connect.StringSchema, "simple"},
		{"empty string", connect.StringSchema, "", "", connect.StringSchema, ""},
		{"delimiters", connect.StringSchema, "three\"blind\\\"mice", "three\"blind\\\"mice", connect.StringSchema, "three\"blind\\\"mice"},
		{"int32", connect.Int32Schema, int32(1234567890), "1234567890", connect.Int32Schema, int32(1234567890)},
		{"int8", connect.Int8Schema, int8(-3), "-3", connect.Int8Schema, int8(-3)},
		{"int64", connect.Int64Schema, int64(1) << 40, "1099511627776", connect.Int64Schema, int64(1) << 40},
		{"double", connect.Float64Schema, 1.0, "1.0", connect.Int8Schema, int8(1)},
		{"boolean", connect.BooleanSchema, true, "true", connect.BooleanSchema, true},
		{"struct", st, connect.NewStruct(st).Put("id", int64(7)).Put("note", `say "hi"`), `{"id":7,"note":"say \"hi\""}`,
			&connect.Schema{Type: connect.TypeMap, Key: connect.StringSchema},
			[]connect.MapEntry{{Key: "id", Value: int8(7)}, {Key: "note", Value: `say \"hi\"`}}},
		{"map", connect.MapOf(connect.StringSchema, connect.Int16Schema),
			[]connect.MapEntry{{Key: "foo", Value: int16(12345)}, {Key: "bar", Value: int16(0)}, {Key: "baz", Value: int16(-4321)}},
			`{"foo":12345,"bar":0,"baz":-4321}`, connect.MapOf(connect.StringSchema, connect.Int16Schema),
			[]connect.MapEntry{{Key: "foo", Value: int16(12345)}, {Key: "bar", Value: int16(0)}, {Key: "baz", Value: int16(-4321)}}},
		{"list", connect.ArrayOf(connect.Int32Schema), []any{int32(1234567890), int32(-987654321)}, "[1234567890,-987654321]",
			connect.ArrayOf(connect.Int32Schema), []any{int32(1234567890), int32(-987654321)}},
		{"list of strings", connect.ArrayOf(connect.StringSchema), []any{"foo", "bar"}, `["foo","bar"]`,
			connect.ArrayOf(connect.StringSchema), []any{"foo", "bar"}},
		{"mixed list", nil, []any{"foo", int16(13344)}, `["foo",13344]`, &connect.Schema{Type: connect.TypeArray}, []any{"foo", int16(13344)}},
		{"null in a list", nil, []any{nil}, `[null]`, &connect.Schema{Type: connect.TypeArray}, []any{nil}},
	} {
		var h SimpleHeaderConverter
		got, err := h.FromConnectHeader("t", "h", c.schema, c.value)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: wrote %q, %v; want %q", c.name, got, err, c.want)
			continue
		}
		schema, value, err := h.ToConnectHeader("t", "h", got)
		if err != nil || !reflect.DeepEqual(schema, c.back) || !reflect.DeepEqual(value, c.backWant) {
			t.Errorf("%s: read back %#v, %#v, %v; want %#v, %#v", c.name, schema, value, err, c.back, c.backWant)
		}
	}
}

func TestSimpleHeaderConverterNulls(t *testing.T) {
	var h SimpleHeaderConverter
	for _, s := range []*connect.Schema{connect.StringSchema, connect.OptionalStringSchema, nil} {
		if b, err := h.FromConnectHeader("t", "h", s, nil); b != nil || err != nil {
			t.Errorf("null with %v wrote %q, %v", s, b, err)
		}
	}
	for _, data := range [][]byte{nil, []byte("null"), []byte(" null ")} {
		if s, v, err := h.ToConnectHeader("t", "h", data); s != nil || v != nil || err != nil {
			t.Errorf("%q read as %v, %v, %v", data, s, v, err)
		}
	}
}

func TestSimpleHeaderConverterKeepsUnparsableHeadersAsBytes(t *testing.T) {
	var h SimpleHeaderConverter
	data := []byte(strings.Repeat("[", 5000))
	s, v, err := h.ToConnectHeader("t", "h", data)
	if err != nil || s != connect.BytesSchema || !bytes.Equal(v.([]byte), data) {
		t.Fatalf("got %v, %v, %v; want the bytes", s, v, err)
	}
}

func TestSimpleHeaderConverterRefusesValuesKafkaCannotWrite(t *testing.T) {
	var h SimpleHeaderConverter
	if _, err := h.FromConnectHeader("t", "h", nil, struct{}{}); err == nil || !strings.Contains(err.Error(), "Failed to serialize unexpected value type") {
		t.Fatalf("err = %v", err)
	}
}

func TestHeaderConvertersAreLookedUpByClassAndAlias(t *testing.T) {
	plugins, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		class  string
		config map[string]string
		schema *connect.Schema
		value  any
		want   string
	}{
		{"SimpleHeaderConverter", nil, connect.Int32Schema, int32(42), "42"},
		{SimpleHeaderConverterClass, nil, connect.BooleanSchema, false, "false"},
		{JSONConverterClass, nil, connect.Int32Schema, int32(42), `{"schema":{"type":"int32","optional":false},"payload":42}`},
		{"JsonConverter", map[string]string{"schemas.enable": "false"}, connect.Int32Schema, int32(42), "42"},
		{"StringConverter", nil, connect.Int32Schema, int32(42), "42"},
		{"ByteArrayConverter", nil, connect.BytesSchema, []byte{1, 2}, "\x01\x02"},
	} {
		hc, err := NewHeaderConverter(plugins, c.class, c.config)
		if err != nil {
			t.Errorf("%s: %v", c.class, err)
			continue
		}
		got, err := hc.FromConnectHeader("t", "h", c.schema, c.value)
		if err != nil || string(got) != c.want {
			t.Errorf("%s wrote %q, %v; want %q", c.class, got, err, c.want)
		}
	}
	if _, err := NewHeaderConverter(plugins, "Nope", nil); err == nil || !strings.Contains(err.Error(), "implements HeaderConverter and which name matches Nope") {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := NewHeaderConverter(plugins, "JsonConverter", map[string]string{"schemas.enable": "maybe"}); err == nil {
		t.Error("a bad schemas.enable was accepted")
	}
	if _, err := NewHeaderConverter(plugins, "StringConverter", map[string]string{"converter.encoding": "UTF-16"}); err == nil {
		t.Error("an encoding other than UTF-8 was accepted")
	}
	// The value converters are still found as converters.
	if _, err := New(plugins, "JsonConverter", nil, false); err != nil {
		t.Error(err)
	}
}

func TestJSONHeaderConverterReadsWhatItWrites(t *testing.T) {
	var h JSONHeaderConverter
	if err := h.Configure(map[string]string{}); err != nil {
		t.Fatal(err)
	}
	b, err := h.FromConnectHeader("t", "h", connect.StringSchema, "x")
	if err != nil {
		t.Fatal(err)
	}
	s, v, err := h.ToConnectHeader("t", "h", b)
	if err != nil || s.Type != connect.TypeString || v != "x" {
		t.Fatalf("read %v, %v, %v", s, v, err)
	}
}
