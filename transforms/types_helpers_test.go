package transforms

import (
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

func valueRecord(schema *connect.Schema, value any) *connect.Record {
	return &connect.Record{Topic: "t", ValueSchema: schema, Value: value}
}

func configured(t *testing.T, tr connect.Transformation, props map[string]string) connect.Transformation {
	t.Helper()
	if err := tr.Configure(props); err != nil {
		t.Fatalf("Configure(%v): %v", props, err)
	}
	return tr
}

// jsonConverter returns Kafka's JsonConverter with its defaults, schemas
// enabled unless schemaless.
func jsonConverter(t *testing.T, schemaless bool) *converters.JSONConverter {
	t.Helper()
	c := &converters.JSONConverter{}
	cfg := map[string]string{}
	if schemaless {
		cfg["schemas.enable"] = "false"
	}
	if err := c.Configure(cfg, false); err != nil {
		t.Fatal(err)
	}
	return c
}

// decodeJSON reads a record's value as the worker's JsonConverter does.
func decodeJSON(t *testing.T, schemaless bool, text string) (*connect.Schema, any) {
	t.Helper()
	s, v, err := jsonConverter(t, schemaless).ToConnectData("t", []byte(text))
	if err != nil {
		t.Fatalf("ToConnectData(%s): %v", text, err)
	}
	return s, v
}

// encodeJSON writes a value as Kafka's JsonConverter does.
func encodeJSON(t *testing.T, schemaless bool, s *connect.Schema, v any) string {
	t.Helper()
	b, err := jsonConverter(t, schemaless).FromConnectData("t", s, v)
	if err != nil {
		t.Fatalf("FromConnectData: %v", err)
	}
	return string(b)
}

// applyErr applies tr and returns the error's text, "" for none.
func applyErr(tr connect.Transformation, r *connect.Record) (*connect.Record, string) {
	out, err := tr.Apply(r)
	if err != nil {
		return nil, err.Error()
	}
	return out, ""
}
