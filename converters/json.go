package converters

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/valuefields"
)

// JSONConverterClass is the Java class name JSONConverter is registered
// under.
const JSONConverterClass = "org.apache.kafka.connect.json.JsonConverter"

// Configuration keys of the JSON converter, as JsonConverterConfig names
// them.
const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
)

// kafkaVersion is the Apache Kafka release whose converters these mirror;
// the connector-plugins API reports it as their version.
const kafkaVersion = "3.9.0"

// envelopeError is Kafka's message, word for word: users search for it.
const envelopeError = `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields.` +
	` If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`

// JSONConverter is Kafka's JsonConverter: Connect data as JSON, by default
// inside a {"schema":...,"payload":...} envelope.
//
// The zero value behaves as Kafka's defaults (schemas.enable=true,
// decimal.format=BASE64, replace.null.with.default=true); the fields are
// negated so that it does.
//
// Where it knowingly differs from Java:
//   - A JSON value of the wrong kind for its schema (a string for an int32,
//     say) is an error; Jackson's accessors would quietly read 0, false or
//     null. Between number kinds it narrows as Java does (3000000000 read
//     as int32 wraps; 1.9 read as int8 is 1).
//   - "NaN", "Infinity" and "-Infinity" strings, which Jackson writes for
//     those floats, read back as those floats rather than 0.0.
//   - Text after the JSON value is an error; Jackson ignores it.
//   - Maps with non-string keys read as []connect.MapEntry in document
//     order, where Java holds a HashMap (deduplicated, in hash order), so
//     Java may write such a map back in another order.
//   - A schema's "version":0, "name":"" or "doc":"" are dropped on the way
//     through, since connect.Schema uses the zero value for "unset".
type JSONConverter struct {
	// schemas is nil in the zero value and with schemas.cache.size 0:
	// every record's schema is then read anew.
	schemas *schemaCache
	// lastLen is the length of the last value written, the capacity the
	// next one starts with (growing a buffer many times from nothing costs
	// more than the writing); nil in the zero value.
	lastLen         *atomic.Int64
	plans           *planCache // nil in the zero value
	schemaless      bool       // !schemas.enable
	numericDecimals bool       // decimal.format=NUMERIC
	keepNulls       bool       // !replace.null.with.default
}

// jsonConfig is Kafka's JsonConverterConfig.
var jsonConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: SchemasEnableConfig, Type: connect.ConfigBoolean, Default: true}).
	Define(connect.ConfigKey{Name: SchemasCacheSizeConfig, Type: connect.ConfigInt, Default: int32(defaultSchemasCacheSize)}).
	Define(connect.ConfigKey{Name: DecimalFormatConfig, Type: connect.ConfigString, Default: "BASE64",
		Validator: connect.OneOfIgnoreCase("BASE64", "NUMERIC")}).
	Define(connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.ConfigBoolean, Default: true})

// Configure reads the converter's settings. Unknown keys are ignored, as
// Kafka ignores them.
func (c *JSONConverter) Configure(config map[string]string, isKey bool) error {
	pc, err := jsonConfig.Parse(config)
	if err != nil {
		return err
	}
	enabled := pc.Bool(SchemasEnableConfig)
	*c = JSONConverter{
		schemaless:      !enabled,
		numericDecimals: strings.EqualFold(pc.String(DecimalFormatConfig), "NUMERIC"),
		keepNulls:       !pc.Bool(ReplaceNullWithDefaultConfig),
		lastLen:         new(atomic.Int64),
		plans:           new(planCache),
	}
	if enabled {
		c.schemas = newSchemaCache(pc.Int(SchemasCacheSizeConfig))
	}
	return nil
}

// FromConnectData serializes a value. A nil schema with a nil value is a
// tombstone and gives nil bytes.
func (c *JSONConverter) FromConnectData(topic string, schema *connect.Schema, value any) ([]byte, error) {
	if schema == nil && value == nil {
		return nil, nil
	}
	var out []byte
	if c.lastLen != nil {
		out = make([]byte, 0, c.lastLen.Load()+16)
	}
	out, err := c.AppendFromConnectData(out, topic, schema, value)
	if err != nil {
		return nil, err
	}
	if c.lastLen != nil {
		c.lastLen.Store(int64(len(out)))
	}
	return out, nil
}

// AppendFromConnectData appends what FromConnectData returns for a
// non-nil value to dst (connect.AppendConverter).
func (c *JSONConverter) AppendFromConnectData(dst []byte, topic string, schema *connect.Schema, value any) ([]byte, error) {
	var err error
	if p := c.planFor(schema); p != nil {
		dst = append(dst, p.head...)
		if dst, err = c.appendPlanned(dst, p, value); err == nil && !c.schemaless {
			dst = append(dst, '}')
		}
		return dst, err
	}
	if c.schemaless {
		return c.appendValue(dst, schema, value)
	}
	dst = append(dst, `{"schema":`...)
	if dst, err = c.appendSchema(dst, schema); err != nil {
		return dst, err
	}
	dst = append(dst, `,"payload":`...)
	if dst, err = c.appendValue(dst, schema, value); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// ToConnectData deserializes a value. Nil or empty data (a tombstone) gives
// a nil schema and value.
func (c *JSONConverter) ToConnectData(topic string, data []byte) (*connect.Schema, any, error) {
	if schema, v, ok, err := c.fromEnvelope(data, nil); ok {
		return schema, v, err
	}
	root, err := parseJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error: %w", err)
	}
	if root == nil {
		return nil, nil, nil
	}
	if c.schemaless {
		v, err := c.toConnect(nil, root)
		return nil, v, err
	}
	schemaNode, payload := root.get("schema"), root.get("payload")
	if root.kind != nodeObject || len(root.fields) != 2 || schemaNode == nil || payload == nil {
		return nil, nil, errors.New(envelopeError)
	}
	schema, err := c.parseSchema(schemaNode)
	if err != nil {
		return nil, nil, err
	}
	v, err := c.toConnect(schema, payload)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

// ToConnectDataFields is ToConnectData building only the top-level fields
// of a struct value that needs asks for (valuefields.Converter): the
// others are checked as they would be converted, and left null. The
// worker uses it when the first transform of a sink's chain reads only
// some of a value's fields.
func (c *JSONConverter) ToConnectDataFields(topic string, data []byte, needs *valuefields.Needs) (*connect.Schema, any, error) {
	if schema, v, ok, err := c.fromEnvelope(data, needs); ok {
		return schema, v, err
	}
	return c.ToConnectData(topic, data)
}
