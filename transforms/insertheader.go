package transforms

import (
	"fmt"
	"slices"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/connectvalues"
)

// InsertHeader is Kafka's InsertHeader: it adds the header header, whose
// schema and value are what Values.parseString makes of value.literal
// ("42" is an INT8, "[1,2]" an array, "null" a null), to every record.
type InsertHeader struct {
	header connect.Header
}

var insertHeaderConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "header", Type: connect.ConfigString, Required: true,
		Importance: connect.High, Doc: "The name of the header."}).
	Define(connect.ConfigKey{Name: "value.literal", Type: connect.ConfigString, Required: true,
		Importance: connect.High, Doc: "The literal value that is to be set as the header value on all records."})

// Config returns InsertHeader's keys.
func (t *InsertHeader) Config() *connect.ConfigDef { return insertHeaderConfig }

// Configure reads header and parses value.literal.
func (t *InsertHeader) Configure(config map[string]string) error {
	pc, err := insertHeaderConfig.Parse(config)
	if err != nil {
		return err
	}
	literal := pc.String("value.literal")
	schema, value, err := connectvalues.ParseString(literal)
	if err != nil {
		return &connect.ConfigError{Name: "value.literal", Message: fmt.Sprintf("Invalid value %s for configuration value.literal: %v", literal, err)}
	}
	t.header = connect.Header{Key: pc.String("header"), Schema: schema, Value: value}
	return nil
}

// Apply appends the header to a copy of the record's headers. Every
// record shares the parsed value, as in Java.
func (t *InsertHeader) Apply(r *connect.Record) (*connect.Record, error) {
	r.Headers = append(slices.Clip(r.Headers), t.header)
	return r, nil
}
