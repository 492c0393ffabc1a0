package converters

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// ByteArrayConverterClass is the Java class name ByteArrayConverter is
// registered under.
const ByteArrayConverterClass = "org.apache.kafka.connect.converters.ByteArrayConverter"

// ByteArrayConverter is Kafka's ByteArrayConverter: raw bytes pass through
// unchanged.
type ByteArrayConverter struct{}

// Configure accepts any settings; the converter has none.
func (c *ByteArrayConverter) Configure(config map[string]string, isKey bool) error { return nil }

// FromConnectData returns the value's bytes. Only a BYTES schema, or none,
// with a []byte or nil value is accepted.
func (c *ByteArrayConverter) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if schema != nil && schema.Type != connect.TypeBytes {
		return nil, fmt.Errorf("Invalid schema type for ByteArrayConverter: %s", schema.Type)
	}
	if value == nil {
		return nil, nil
	}
	b, ok := value.([]byte)
	if !ok {
		return nil, fmt.Errorf("ByteArrayConverter is not compatible with objects of type %T", value)
	}
	return b, nil
}

// ToConnectData returns the bytes with an optional BYTES schema; nil data
// is a null value.
func (c *ByteArrayConverter) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalBytesSchema, nil, nil
	}
	return connect.OptionalBytesSchema, data, nil
}
