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

// FuzzJSONSchemaCache checks that a converter reading schemas through its
// cache (small, so that it evicts) reads every record, valid or not,
// exactly as one that reads each schema anew: same error, or values that
// encode to the same bytes.
func FuzzJSONSchemaCache(f *testing.F) {
	addGoldenSeeds(f)
	for _, s := range []string{
		`{"schema":{"type":"int32"},"payload":7}`,
		` { "payload" : {"a":1}, "schema" : {"type":"struct","fields":[{"field":"a","type":"int8"}]} } `,
		`{"schema":{"type":"int32"},"payload":7,"schema":{"type":"int32"}}`,
		`{"schema":{"type":"int32"}}`,
		`{"schema":{"type":"int32"},"payload":"x"}`,
		`{"schema":{"type":"nope"},"payload":1}`,
		`{"schema":null,"payload":[1,{"b":"\u00e9"}]}`,
		`{"sch\u0065ma":{"type":"int32"},"payload":7}`,
		`{"schema":{"type":"string","default":"\ud800"},"payload":null}`,
		`{"schema":{"type":"int32"},"payload":7} x`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int8"},{"field":"b","type":"string","optional":true},` +
			`{"field":"c","type":"array","items":{"type":"double"}},{"field":"d","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"1"}}]},` +
			`"payload":{"b":"x","zz":{"q":[1]},"a":300,"c":[1.5e3,2],"a":-1,"d":1.25E+1}}`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int64","default":5},{"field":"b","type":"boolean"}]},"payload":{"b":true}}`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int64"}]},"payload":{"a":"1"}}`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int64"},{"field":"f","type":"double"}]},"payload":{"a":-0,"f":-0.0}}`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int64"},{"field":"f","type":"double"}]},"payload":{"a":123456789012345678901,"f":1.5e400}}`,
		`{"schema":{"type":"struct","fields":[{"field":"a","type":"int64"},{"field":"f","type":"double"}]},"payload":{"a":007,"f":01.5}}`,
		`{"schema":{"type":"struct","fields":[{"field":"s","type":"struct","optional":true,"fields":[{"field":"x","type":"int64"},{"field":"y","type":"double","default":1.5}]}]},` +
			`"payload":{"s":{"y":2.25,"x":9,"x":10}}}`,
		`{"schema":{"type":"struct","fields":[{"field":"s","type":"struct","fields":[{"field":"x","type":"int64"}]}]},"payload":{"s":{"x":1.0}}}`,
	} {
		f.Add([]byte(s))
	}
	cached := new(JSONConverter)
	if err := cached.Configure(map[string]string{"schemas.cache.size": "2", "decimal.format": "NUMERIC"}, false); err != nil {
		f.Fatal(err)
	}
	uncached := new(JSONConverter)
	if err := uncached.Configure(map[string]string{"schemas.cache.size": "0", "decimal.format": "NUMERIC"}, false); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, wv, werr := uncached.ToConnectData("topic", data)
		for range 2 { // the second time from the cache
			gs, gv, gerr := cached.ToConnectData("topic", data)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("%q: cached error %v, uncached %v", data, gerr, werr)
			}
			if werr != nil {
				continue
			}
			want, werr := uncached.FromConnectData("topic", ws, wv)
			got, gerr := cached.FromConnectData("topic", gs, gv)
			if werr != nil || gerr != nil || !bytes.Equal(got, want) {
				t.Fatalf("%q: cached read encodes as %s (%v), uncached %s (%v)", data, got, gerr, want, werr)
			}
		}
	})
}
