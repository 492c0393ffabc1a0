package rest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/javajson"
)

// Request bodies from the spec (§1.4.19) and the seed document.
const (
	specSourcePatch = `{"offsets":[{"partition":{"filename":"test.txt"},"offset":{"position":30}}]}`
	specSinkPatch   = `{"offsets":[{"partition":{"kafka_topic":"test","kafka_partition":0},"offset":{"kafka_offset":5}},
            {"partition":{"kafka_topic":"test","kafka_partition":1},"offset":null}]}`
	seedJDBCPatch = `{
    "offsets": [
      {
        "partition": {
          "protocol": "1",
          "table": "orders.orders"
        },
        "offset": {
          "incrementing": 500,
          "timestamp": 1720540000000,
          "timestamp_nanos": 0
        }
      }
    ]
  }`
	seedSinkPatch = `{
    "offsets": [
      {"partition": {"topic": "eip.orders.placed", "partition": 0}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 1}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 2}, "offset": {"offset": 0}}
    ]
  }`
	seedSkipPatch = `{
    "offsets": [
      {
        "partition": {"protocol": "1", "table": "orders.orders"},
        "offset": {"incrementing": 1043}
      }
    ]
  }`
)

// The bodies Kafka's OffsetsApiIntegrationTest sends to check that bad
// requests are refused (§1.1).
var invalidOffsetBodies = []string{
	`[]`,
	`{"key":[]}`,
	`{"offsets":{}}`,
	`{"offsets":[123]}`,
	`{"offsets":[{"key":"val"}]}`,
	`{"offsets":[{"partition":[]]}]}`,
}

type m = map[string]any

func TestParseOffsetsRequestAccepts(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []client.ConnectorOffset
	}{
		{"spec source", specSourcePatch, []client.ConnectorOffset{
			{Partition: m{"filename": "test.txt"}, Offset: m{"position": int64(30)}},
		}},
		{"spec sink with a reset", specSinkPatch, []client.ConnectorOffset{
			{Partition: m{"kafka_topic": "test", "kafka_partition": int64(0)}, Offset: m{"kafka_offset": int64(5)}},
			{Partition: m{"kafka_topic": "test", "kafka_partition": int64(1)}, Offset: nil},
		}},
		{"seed JDBC source", seedJDBCPatch, []client.ConnectorOffset{
			{Partition: m{"protocol": "1", "table": "orders.orders"},
				Offset: m{"incrementing": int64(500), "timestamp": int64(1720540000000), "timestamp_nanos": int64(0)}},
		}},
		{"seed skip", seedSkipPatch, []client.ConnectorOffset{
			{Partition: m{"protocol": "1", "table": "orders.orders"}, Offset: m{"incrementing": int64(1043)}},
		}},
		// The seed's short sink keys pass through unchanged: aliasing
		// them is the herder's business.
		{"seed short sink form", seedSinkPatch, []client.ConnectorOffset{
			{Partition: m{"topic": "eip.orders.placed", "partition": int64(0)}, Offset: m{"offset": int64(0)}},
			{Partition: m{"topic": "eip.orders.placed", "partition": int64(1)}, Offset: m{"offset": int64(0)}},
			{Partition: m{"topic": "eip.orders.placed", "partition": int64(2)}, Offset: m{"offset": int64(0)}},
		}},
		{"missing offset and empty element", `{"offsets":[{"partition":{"a":"b"}},{}]}`, []client.ConnectorOffset{
			{Partition: m{"a": "b"}}, {},
		}},
		{"null partition passes to the herder", `{"offsets":[{"partition":null,"offset":{"kafka_offset":1}}]}`, []client.ConnectorOffset{
			{Offset: m{"kafka_offset": int64(1)}},
		}},
		{"scalar kinds", `{"offsets":[{"partition":{"s":"x","t":true,"n":null,"f":1.5,"e":1e2,"z":-0,"max":9223372036854775807,"min":-9223372036854775808},"offset":{}}]}`,
			[]client.ConnectorOffset{{
				Partition: m{"s": "x", "t": true, "n": nil, "f": 1.5, "e": 100.0, "z": int64(0), "max": int64(9223372036854775807), "min": int64(-9223372036854775808)},
				Offset:    m{},
			}}},
		{"surrounding whitespace", " \n" + specSourcePatch + "\n\t", []client.ConnectorOffset{
			{Partition: m{"filename": "test.txt"}, Offset: m{"position": int64(30)}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseOffsetsRequest([]byte(c.body))
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

func TestParseOffsetsRequestRejects(t *testing.T) {
	const none = "Partitions / offsets need to be provided for an alter offsets request"
	cases := []struct {
		body, want string
	}{
		{``, none},
		{" \n ", none},
		{`null`, none},
		{`{}`, none},
		{`{"offsets":null}`, none},
		{`{"offsets":[]}`, none},

		{`[]`, "Invalid request body: expected a JSON object, got an array"},
		{`"offsets"`, "Invalid request body: expected a JSON object, got a string"},
		{`{"key":[]}`, `Unrecognized field "key" in request body (known fields: "offsets")`},
		{`{"offsets":[{"partition":{},"offset":{}}],"Offsets":1}`, `Unrecognized field "Offsets" in request body (known fields: "offsets")`},
		{`{"offsets":{}}`, `Invalid field "offsets": expected an array of objects with "partition" and "offset" fields, got an object`},
		{`{"offsets":"x"}`, `Invalid field "offsets": expected an array of objects with "partition" and "offset" fields, got a string`},
		{`{"offsets":[123]}`, `Invalid offsets[0]: expected an object with "partition" and "offset" fields, got a number`},
		{`{"offsets":[{},null]}`, `Invalid offsets[1]: expected an object with "partition" and "offset" fields, got null`},
		{`{"offsets":[{"key":"val"}]}`, `Unrecognized field "key" in offsets[0] (known fields: "partition", "offset")`},
		{`{"offsets":[{"partition":[]}]}`, "Invalid offsets[0].partition: expected an object or null, got an array"},
		{`{"offsets":[{"partition":{},"offset":"5"}]}`, "Invalid offsets[0].offset: expected an object or null, got a string"},

		{`{"offsets":[{"partition":{"a":{"b":1}}}]}`, "Offsets may only contain primitive types as values, but field a contains MAP"},
		{`{"offsets":[{"partition":{"a":1},"offset":{"p":[1]}}]}`, "Offsets may only contain primitive types as values, but field p contains ARRAY"},
		{`{"offsets":[{"partition":{"a":1},"offset":{"p":9223372036854775808}}]}`, "Offsets may only contain primitive types as values, but field p contains class java.math.BigInteger"},
		{`{"offsets":[{"partition":{"a":-9223372036854775809}}]}`, "Offsets may only contain primitive types as values, but field a contains class java.math.BigInteger"},
		{`{"offsets":[{"partition":{"a":1e400}}]}`, "Offsets may only contain finite numbers, but field a contains 1e400"},

		{`{"offsets":[{"partition":[]]}]}`, "Invalid JSON in request body: invalid character ']' after object key:value pair at byte 28"},
		{`{"offsets":[`, "Invalid JSON in request body: unexpected end of input"},
		{`{"offsets":[{}]} {}`, "Invalid JSON in request body: unexpected data after the top-level value"},
		{`{"offsets":[{}]}x`, "Invalid JSON in request body: unexpected data after the top-level value"},
		{`{offsets:[]}`, "Invalid JSON in request body: invalid character 'o' looking for beginning of object key string at byte 2"},
	}
	for _, c := range cases {
		got, err := ParseOffsetsRequest([]byte(c.body))
		var he *herder.Error
		if !errors.As(err, &he) {
			t.Errorf("%s: got %v, %v; want a *herder.Error", c.body, got, err)
			continue
		}
		if he.Status != 400 || he.Message != c.want {
			t.Errorf("%s:\n got  %d %q\n want 400 %q", c.body, he.Status, he.Message, c.want)
		}
	}
}

func TestEncodeOffsetsJavaOrder(t *testing.T) {
	got, err := encodeOffsets(&client.ConnectorOffsets{Offsets: []client.ConnectorOffset{
		{Partition: m{"kafka_topic": "lines", "kafka_partition": int64(0)}, Offset: m{"kafka_offset": int64(4711)}},
		{Partition: m{"filename": "/tmp/in.txt"}, Offset: nil},
		{Partition: m{"d": 1.0, "s": "<&>\u2028"}, Offset: m{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"lines"},"offset":{"kafka_offset":4711}},` +
		`{"partition":{"filename":"/tmp/in.txt"},"offset":null},` +
		`{"partition":{"s":"<&>` + "\u2028" + `","d":1.0},"offset":{}}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, _ := encodeOffsets(nil); string(got) != `{"offsets":[]}` {
		t.Errorf("nil offsets: %s", got)
	}
}

// A large body is sent with its length, not chunked: a client of a
// connector with many partitions can size its buffer once.
func TestLargeBodyHasContentLength(t *testing.T) {
	offs := &client.ConnectorOffsets{}
	for i := range 1000 {
		offs.Offsets = append(offs.Offsets, client.ConnectorOffset{
			Partition: map[string]any{"filename": fmt.Sprintf("/data/file-%d.txt", i)},
			Offset:    map[string]any{"position": int64(i)},
		})
	}
	srv := serve(t, &stub{offs: func(context.Context, string) (*client.ConnectorOffsets, error) { return offs, nil }}, DefaultOptions())
	got := send(t, srv, "GET", "/connectors/c/offsets", "")
	if got.status != 200 || !strings.HasPrefix(got.body, `{"offsets":[{"partition":{"filename":"/data/file-0.txt"},"offset":{"position":0}},`) {
		t.Fatalf("got %d %.200s", got.status, got.body)
	}
	if cl := got.header.Get("Content-Length"); cl != strconv.Itoa(len(got.body)) {
		t.Errorf("Content-Length %q for a %d-byte body", cl, len(got.body))
	}
}

func FuzzParseOffsetsRequest(f *testing.F) {
	for _, body := range []string{specSourcePatch, specSinkPatch, seedJDBCPatch, seedSinkPatch, seedSkipPatch} {
		f.Add([]byte(body))
	}
	for _, body := range invalidOffsetBodies {
		f.Add([]byte(body))
	}
	f.Add([]byte(`{"offsets":[{"partition":{"a":9223372036854775808},"offset":{"b":[{}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offsets, err := ParseOffsetsRequest(body)
		if err != nil {
			var he *herder.Error
			if !errors.As(err, &he) || he.Status != 400 || he.Message == "" {
				t.Fatalf("error %#v is not a 400 *herder.Error", err)
			}
			if offsets != nil {
				t.Fatalf("offsets %v returned with an error", offsets)
			}
			return
		}
		if len(offsets) == 0 {
			t.Fatal("success without offsets")
		}
		for _, o := range offsets {
			for _, mp := range []map[string]any{o.Partition, o.Offset} {
				for k, v := range mp {
					switch v.(type) {
					case nil, string, bool, int64, float64:
					default:
						t.Fatalf("field %s holds %T", k, v)
					}
				}
				if _, err := javajson.Marshal(mp); err != nil {
					t.Fatalf("cannot re-encode %v: %v", mp, err)
				}
			}
		}
	})
}
