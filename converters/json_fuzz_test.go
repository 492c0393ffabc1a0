package converters

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzReencode checks what any record that decodes must satisfy: it
// encodes again, and that encoding is a fixed point (decoding and encoding
// it once more gives the same bytes). The only allowed write failure is a
// Decimal that BASE64 cannot hold (a number read with its own scale, or a
// schema without a usable scale); NUMERIC must then manage.
func fuzzReencode(t *testing.T, c, numeric *JSONConverter, data []byte) {
	schema, value, err := c.ToConnectData("topic", data)
	if err != nil {
		return
	}
	first, err := c.FromConnectData("topic", schema, value)
	var de *decimalError
	if errors.As(err, &de) {
		c = numeric
		first, err = c.FromConnectData("topic", schema, value)
	}
	if err != nil {
		t.Fatalf("decoded %q but cannot encode it: %v", data, err)
	}
	schema, value, err = c.ToConnectData("topic", first)
	if err != nil {
		t.Fatalf("cannot decode our own output %q: %v", first, err)
	}
	second, err := c.FromConnectData("topic", schema, value)
	if err != nil {
		t.Fatalf("cannot encode %q a second time: %v", first, err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("encoding is not stable:\n first: %s\nsecond: %s", first, second)
	}
}

func addGoldenSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
}

func FuzzJSONToConnectWithSchemas(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range []string{
		`{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, "doc": "the documentation", "parameters": { "foo": "bar" }}, "payload": true }`,
		`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":1.5E+3}`,
		`{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"string","optional":true}},"payload":[[1,"a"],[2,null]]}`,
		`{"schema":{"type":"struct","fields":[{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp","default":42,"field":"at"}]},"payload":{}}`,
		`{"schema":{"type":"array","items":{"type":"float"}},"payload":[1,"NaN",1e39,-0.0]}`,
		`{"schema":{"type":"string","name":"org.apache.kafka.connect.data.Date"},"payload":-7}`,
		`{"schema":null,"payload":{"a":[1,2.5,"x",null,{"b":false}]}}`,
		`{"schema":{"type":"int8","version":3000000000},"payload":300}`,
		`{"schema":null,"payload":null}`,
		`{"a":1}`,
		``,
	} {
		f.Add([]byte(s))
	}
	c, numeric := new(JSONConverter), new(JSONConverter)
	if err := numeric.Configure(map[string]string{"decimal.format": "NUMERIC"}, false); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReencode(t, c, numeric, data)
	})
}

func FuzzJSONToConnectSchemaless(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range []string{
		`{"kafka_partition":0,"kafka_topic":"t"}`,
		`[1,-2,3.5,1.0E10,"s",true,false,null,{},[]]`,
		`18446744073709551617`,
		`1e400`,
		`"\ud83d\ude00\ud800"`,
		`00012.50`,
		` null `,
		``,
	} {
		f.Add([]byte(s))
	}
	// Without a schema there are no Decimals, so no NUMERIC fallback.
	c := new(JSONConverter)
	if err := c.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzReencode(t, c, c, data)
	})
}
