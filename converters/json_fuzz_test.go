package converters

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/valuefields"
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

// readsNamed is a valuefields.Reader that reads the fields of a struct
// value named in its list.
type readsNamed []string

func (r readsNamed) ValueFieldsRead(*connect.Schema) ([]string, bool) { return r, false }

// FuzzJSONFields checks that a value converted for a reader of some of
// its fields is the full conversion's, those fields built and the others
// null (or built, where the converter could not check them), and that it fails exactly when the full conversion fails, with
// its message: checking a field rather than building it takes nothing
// the conversion refuses.
func FuzzJSONFields(f *testing.F) {
	addGoldenSeeds(f)
	const schema = `{"type":"struct","fields":[{"field":"after","type":"struct","optional":true,"fields":[{"field":"id","type":"int64"}]},` +
		`{"field":"source","type":"struct","fields":[{"field":"v","type":"string"},{"field":"n","type":"int64","optional":true},` +
		`{"field":"b","type":"boolean","default":false},{"field":"d","type":"double","optional":true},{"field":"i","type":"int32","optional":true}]},` +
		`{"field":"op","type":"string"},{"field":"ts","type":"int64","name":"org.apache.kafka.connect.data.Timestamp","optional":true}],"name":"x.Envelope"}`
	for _, payload := range []string{
		`{"after":{"id":1},"source":{"v":"2.7","n":5,"b":true,"d":1.5,"i":3},"op":"c","ts":1}`,
		`{"after":{"id":1},"source":{"v":"2.7"},"op":"c"}`,
		`{"after":{"id":1},"source":{"n":5},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":7},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","v":"b"},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","d":"NaN"},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","d":"x"},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","n":1.5e3,"i":12345678901},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","n":1e99999999999},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a","zz":[1,{"q":null}]},"op":"c"}`,
		`{"after":{"id":1},"source":null,"op":"c"}`,
		`{"after":{"id":1},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a"},"source":{"v":"b"},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a"},"op":"c","ts":"1"}`,
		`{"after":null,"source":{"v":"\u00e9\ud800"},"op":"d","ts":null}`,
		`{"after":{"id":1},"source":{"v":"a","b":null},"op":"c"}`,
		`{"after":{"id":1},"source":{"v":"a"},"op":"c"`,
	} {
		f.Add([]byte(`{"schema":` + schema + `,"payload":` + payload + `}`))
	}
	conv := new(JSONConverter)
	if err := conv.Configure(map[string]string{"decimal.format": "NUMERIC"}, false); err != nil {
		f.Fatal(err)
	}
	keepNulls := new(JSONConverter)
	if err := keepNulls.Configure(map[string]string{"replace.null.with.default": "false"}, false); err != nil {
		f.Fatal(err)
	}
	needs := valuefields.New(readsNamed{"after", "op", "a"})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*JSONConverter{conv, keepNulls} {
			ws, wv, werr := c.ToConnectData("topic", data)
			gs, gv, gerr := c.ToConnectDataFields("topic", data, needs)
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("%q: error %v reading some fields, %v reading all", data, gerr, werr)
			}
			if werr != nil {
				continue
			}
			if gs != ws {
				t.Fatalf("%q: schema %v reading some fields, %v reading all", data, gs, ws)
			}
			same := func(what string, s *connect.Schema, g, w any) {
				gb, gerr := c.FromConnectData("topic", s, g)
				wb, werr := c.FromConnectData("topic", s, w)
				if (gerr == nil) != (werr == nil) || !bytes.Equal(gb, wb) {
					t.Fatalf("%q: %s encodes as %s (%v) reading some fields, %s (%v) reading all", data, what, gb, gerr, wb, werr)
				}
			}
			want := needs.Of(ws)
			if want == nil {
				same("the value", ws, gv, wv)
				continue
			}
			gst, wst := gv.(*connect.Struct), wv.(*connect.Struct)
			for i, fd := range ws.Fields {
				// A field not read is null, or built as usual where
				// the check could not tell.
				if g, w := gst.At(i), wst.At(i); want[i] || g != nil {
					same("field "+fd.Name, fd.Schema, g, w)
				}
			}
		}
	})
}
