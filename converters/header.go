package converters

import (
	"fmt"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/connectvalues"
)

// SimpleHeaderConverterClass is the Java class name SimpleHeaderConverter
// is registered under; it is Kafka Connect's default header.converter.
const SimpleHeaderConverterClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

// SimpleHeaderConverter is Kafka's SimpleHeaderConverter: a header is the
// UTF-8 text Values.convertToString writes, without its schema, and is
// read back with the schema Values.parseString infers (numbers,
// booleans, dates, arrays, maps, else a string).
type SimpleHeaderConverter struct{}

// Configure accepts any settings; the converter has none.
func (SimpleHeaderConverter) Configure(map[string]string) error { return nil }

// FromConnectHeader writes the value's text; a nil value is a nil header.
func (SimpleHeaderConverter) FromConnectHeader(topic, key string, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	s, err := connectvalues.ConvertToString(schema, value)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// ToConnectHeader parses the header's text. Text too deeply nested to
// parse is kept as BYTES, as Java keeps a header whose parse failed.
func (SimpleHeaderConverter) ToConnectHeader(topic, key string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	schema, value, err := connectvalues.ParseString(decodeUTF8(data))
	if err != nil {
		return connect.BytesSchema, data, nil
	}
	return schema, value, nil
}

// StringHeaderConverter is StringConverter as a header converter, as
// Kafka's StringConverter is both: the header side reads the value
// side's keys (converter.encoding, value.serializer.encoding, ...).
type StringHeaderConverter struct{ c StringConverter }

// Configure checks the encoding.
func (h *StringHeaderConverter) Configure(config map[string]string) error {
	return h.c.Configure(config, false)
}

// FromConnectHeader writes the value's Java toString().
func (h *StringHeaderConverter) FromConnectHeader(topic, key string, schema *connect.Schema, value any) ([]byte, error) {
	return h.c.FromConnectData(topic, schema, value)
}

// ToConnectHeader reads the bytes as an optional string.
func (h *StringHeaderConverter) ToConnectHeader(topic, key string, data []byte) (*connect.Schema, any, error) {
	return h.c.ToConnectData(topic, data)
}

// ByteArrayHeaderConverter is ByteArrayConverter as a header converter.
type ByteArrayHeaderConverter struct{ c ByteArrayConverter }

// Configure accepts any settings; the converter has none.
func (h *ByteArrayHeaderConverter) Configure(config map[string]string) error {
	return h.c.Configure(config, false)
}

// FromConnectHeader passes BYTES through.
func (h *ByteArrayHeaderConverter) FromConnectHeader(topic, key string, schema *connect.Schema, value any) ([]byte, error) {
	return h.c.FromConnectData(topic, schema, value)
}

// ToConnectHeader returns the bytes with an optional BYTES schema.
func (h *ByteArrayHeaderConverter) ToConnectHeader(topic, key string, data []byte) (*connect.Schema, any, error) {
	return h.c.ToConnectData(topic, data)
}

// JSONHeaderConverter is JSONConverter as a header converter: each
// header is a JSON document, in a schema envelope unless
// header.converter.schemas.enable=false, exactly as a value would be.
type JSONHeaderConverter struct{ c JSONConverter }

// Configure reads the JsonConverter keys (schemas.enable,
// schemas.cache.size, decimal.format, replace.null.with.default).
func (h *JSONHeaderConverter) Configure(config map[string]string) error {
	return h.c.Configure(config, false)
}

// FromConnectHeader writes the header as the JsonConverter writes a
// value.
func (h *JSONHeaderConverter) FromConnectHeader(topic, key string, schema *connect.Schema, value any) ([]byte, error) {
	return h.c.FromConnectData(topic, schema, value)
}

// ToConnectHeader reads the header as the JsonConverter reads a value.
func (h *JSONHeaderConverter) ToConnectHeader(topic, key string, data []byte) (*connect.Schema, any, error) {
	return h.c.ToConnectData(topic, data)
}

// headerConverterPlugins are Kafka's four header converters.
func headerConverterPlugins() []connect.Plugin {
	p := func(class string, newH func() connect.HeaderConverter) connect.Plugin {
		return connect.Plugin{Class: class, Type: connect.PluginHeaderConverter, Version: kafkaVersion, New: func() any { return newH() }}
	}
	return []connect.Plugin{
		p(SimpleHeaderConverterClass, func() connect.HeaderConverter { return SimpleHeaderConverter{} }),
		p(StringConverterClass, func() connect.HeaderConverter { return new(StringHeaderConverter) }),
		p(ByteArrayConverterClass, func() connect.HeaderConverter { return new(ByteArrayHeaderConverter) }),
		p(JSONConverterClass, func() connect.HeaderConverter { return new(JSONHeaderConverter) }),
	}
}

// NewHeaderConverter returns a configured header converter of the given
// class of plugins, named in full or by an alias, as header.converter
// allows; config holds the header.converter.* keys without the prefix.
func NewHeaderConverter(plugins *connect.PluginSet, class string, config map[string]string) (connect.HeaderConverter, error) {
	p, err := plugins.Lookup(class, connect.PluginHeaderConverter)
	if err != nil {
		return nil, fmt.Errorf("Failed to find any class that implements HeaderConverter and which name matches %s: %w", class, err)
	}
	hc, ok := p.New().(connect.HeaderConverter)
	if !ok {
		return nil, fmt.Errorf("Class %s does not implement HeaderConverter", class)
	}
	if config == nil {
		config = map[string]string{}
	}
	if err := hc.Configure(config); err != nil {
		return nil, err
	}
	return hc, nil
}
