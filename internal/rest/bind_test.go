package rest

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
)

func str(s string) *string { return &s }

func wantBadRequest(t *testing.T, err error, want string) {
	t.Helper()
	var he *herder.Error
	if !errors.As(err, &he) {
		t.Errorf("error %v, want 400 %q", err, want)
		return
	}
	if he.Status != 400 || he.Message != want {
		t.Errorf("got  %d %q\nwant 400 %q", he.Status, he.Message, want)
	}
}

func TestParseCreateRequest(t *testing.T) {
	body := `{"name":"  file-src\t","config":{"connector.class":"FileStreamSource","tasks.max":1,"enabled":true,"ratio":1.50,"n":null,"tasks.max":2},
	          "initial_state":"stopped","initial_offsets":[{"partition":{"filename":"/tmp/in.txt"},"offset":{"position":12}}]}`
	req, err := parseCreateRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if req.name != "file-src" {
		t.Errorf("name %q", req.name)
	}
	wantKeys := []string{"connector.class", "tasks.max", "enabled", "ratio", "n"}
	if !reflect.DeepEqual(req.config.keys, wantKeys) {
		t.Errorf("keys %v, want %v", req.config.keys, wantKeys)
	}
	wantVals := map[string]*string{"connector.class": str("FileStreamSource"), "tasks.max": str("2"), "enabled": str("true"), "ratio": str("1.50"), "n": nil}
	if !reflect.DeepEqual(req.config.vals, wantVals) {
		t.Errorf("vals %v", req.config.vals)
	}
	if req.initialState != herder.Stopped {
		t.Errorf("initial state %q", req.initialState)
	}
	wantOffsets := []client.ConnectorOffset{{Partition: m{"filename": "/tmp/in.txt"}, Offset: m{"position": int64(12)}}}
	if !reflect.DeepEqual(req.initialOffsets, wantOffsets) {
		t.Errorf("initial offsets %v", req.initialOffsets)
	}

	// A missing name is "" (validation later says it may not be empty);
	// nulls mean absent; Java's trim leaves non-ASCII spaces alone.
	req, err = parseCreateRequest([]byte(`{"config":{},"initial_state":null,"initial_offsets":null}`))
	if err != nil || req.name != "" || req.initialState != "" || req.initialOffsets != nil {
		t.Errorf("defaults: %+v, %v", req, err)
	}
	req, _ = parseCreateRequest([]byte(`{"name":"\u00a0x ","config":{}}`))
	if req.name != "\u00a0x" {
		t.Errorf("trim: %q", req.name)
	}
	req, _ = parseCreateRequest([]byte(`{"name":42,"config":{},"initial_state":"Paused"}`))
	if req.name != "42" || req.initialState != herder.Paused {
		t.Errorf("coercion: %+v", req)
	}
}

func TestParseCreateRequestRejects(t *testing.T) {
	cases := []struct{ body, want string }{
		{``, `Request body is missing: expected a JSON object with "name" and "config"`},
		{`null`, "Invalid request body: expected a JSON object, got null"},
		{`[]`, "Invalid request body: expected a JSON object, got an array"},
		{`{"name":"a","config":{}`, "Invalid JSON in request body: unexpected end of input"},
		{`{"name":"a","config":{},"tasks":[]}`, `Unrecognized field "tasks" in request body (known fields: "name", "config", "initial_state", "initial_offsets")`},
		{`{"Name":"a","config":{}}`, `Unrecognized field "Name" in request body (known fields: "name", "config", "initial_state", "initial_offsets")`},
		{`{"name":"a"}`, `Missing field "config": a JSON object of connector configuration strings is required`},
		{`{"name":"a","config":null}`, `Missing field "config": a JSON object of connector configuration strings is required`},
		{`{"name":"a","config":["x"]}`, `Invalid field "config": expected a JSON object of string values, got an array`},
		{`{"name":"a","config":{"tasks.max":{"v":1}}}`, `Invalid value for key "tasks.max" in field "config": expected a string, got an object`},
		{`{"name":"a","config":{"topics":["a","b"]}}`, `Invalid value for key "topics" in field "config": expected a string, got an array`},
		{`{"name":{},"config":{}}`, `Invalid field "name": expected a string, got an object`},
		{`{"name":"a","config":{},"initial_state":"running!"}`, "Invalid initial state running!; valid values are RUNNING, PAUSED, STOPPED"},
		{`{"name":"a","config":{},"initial_state":["RUNNING"]}`, `Invalid field "initial_state": expected a string, got an array`},
		{`{"name":"a","config":{},"initial_offsets":{}}`, `Invalid field "initial_offsets": expected an array of objects with "partition" and "offset" fields, got an object`},
		{`{"name":"a","config":{},"initial_offsets":[{"partition":{"f":{}}}]}`, "Offsets may only contain primitive types as values, but field f contains MAP"},
		{`{"name":"a","config":{},"initial_offsets":[{"offsets":1}]}`, `Unrecognized field "offsets" in initial_offsets[0] (known fields: "partition", "offset")`},
	}
	for _, c := range cases {
		_, err := parseCreateRequest([]byte(c.body))
		wantBadRequest(t, err, c.want)
	}
}

func TestCheckedConfig(t *testing.T) {
	bind := func(s string) *configMap {
		t.Helper()
		c, err := bindConfig([]byte(s), "request body")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	c := bind(`{"connector.class":"FileStreamSink","topics":"t"}`)
	got, err := checkedConfig(c, "sink")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"connector.class": "FileStreamSink", "topics": "t", "name": "sink"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if c.keys[len(c.keys)-1] != "name" {
		t.Errorf("name not appended: %v", c.keys)
	}

	_, err = checkedConfig(bind(`{"name":"other","connector.class":"X"}`), "sink")
	wantBadRequest(t, err, "Connector name configuration (other) doesn't match connector name in the URL (sink)")
	_, err = checkedConfig(bind(`{"name":null,"connector.class":"X"}`), "sink")
	wantBadRequest(t, err, "Connector name configuration (null) doesn't match connector name in the URL (sink)")
	// The name check comes before the class check, as in Kafka.
	_, err = checkedConfig(bind(`{"name":"a"}`), "b")
	wantBadRequest(t, err, "Connector name configuration (a) doesn't match connector name in the URL (b)")

	_, err = checkedConfig(bind(`{"topic":"lines","file":"/tmp/in.txt","tasks.max":"1"}`), "src")
	wantBadRequest(t, err, "Connector config {name=src, topic=lines, file=/tmp/in.txt, tasks.max=1} contains no connector type")
	_, err = checkedConfig(bind(`{"connector.class":null}`), "src")
	wantBadRequest(t, err, "Connector config {connector.class=null, name=src} contains no connector type")

	_, err = checkedConfig(bind(`{"connector.class":"X","b":null,"a":null}`), "src")
	wantBadRequest(t, err, "Null value can not be supplied as the configuration value (keys: a, b)")
	_, err = checkedConfig(bind(`{"connector.class":"X","file":null}`), "src")
	wantBadRequest(t, err, "Null value can not be supplied as the configuration value (key: file)")
}

func TestBindConfigRejects(t *testing.T) {
	cases := []struct{ body, want string }{
		{`[]`, "Invalid request body: expected a JSON object of string values, got an array"},
		{`"x"`, "Invalid request body: expected a JSON object of string values, got a string"},
		{`null`, "Invalid request body: expected a JSON object of string values, got null"},
		{`{"a":"b","c":{}}`, `Invalid value for key "c" in request body: expected a string, got an object`},
		{`{"c":[]}`, `Invalid value for key "c" in request body: expected a string, got an array`},
	}
	for _, c := range cases {
		_, err := bindConfig([]byte(c.body), "request body")
		wantBadRequest(t, err, c.want)
	}
}

// The expected texts are what JDK 17 prints for
// new HashMap<>(linkedHashMapWithTheseKeysInOrder).toString().
func TestJavaMapString(t *testing.T) {
	cases := []struct{ keys, want string }{
		{"", "{}"},
		{"topic|file|tasks.max", "{topic=v5, file=v4, tasks.max=null}"},
		{"tasks.max|file|topic|name", "{name=v4, topic=v5, file=v4, tasks.max=null}"},
		{"connector.class_|tasks.max|file|topic|key.converter|value.converter|name",
			"{file=v4, tasks.max=null, name=v4, topic=v5, value.converter=null, connector.class_=v16, key.converter=v13}"},
		{"file|topic|tasks.max|errors.tolerance|errors.deadletterqueue.topic.name|transforms|transforms.x.type|consumer.override.max.poll.records|header.converter|value.converter.schemas.enable|name",
			"{file=v4, tasks.max=null, errors.deadletterqueue.topic.name=null, consumer.override.max.poll.records=v34, transforms=v10, value.converter.schemas.enable=null, name=v4, topic=v5, errors.tolerance=v16, transforms.x.type=v17, header.converter=v16}"},
		{"a|b|c|d|e|f|g|h|i|j|k|l", "{a=v1, b=v1, c=v1, d=v1, e=v1, f=v1, g=v1, h=v1, i=v1, j=v1, k=v1, l=v1}"},
		{"x1|x2|x3|x4|x5|x6|x7|x8|x9|x10|x11|x12|x13|x14|x15|x16|x17|x18|x19|x20|x21|x22|x23|x24",
			"{x8=v2, x9=v2, x10=null, x12=null, x11=null, x14=null, x13=null, x16=null, x15=null, x18=null, x17=null, x19=null, x21=null, x20=null, x23=null, x1=v2, x22=null, x2=v2, x3=v2, x24=null, x4=v2, x5=v2, x6=v2, x7=v2}"},
	}
	for _, c := range cases {
		cm := &configMap{vals: map[string]*string{}}
		if c.keys != "" {
			for _, k := range strings.Split(c.keys, "|") {
				// The generator's values: null when len%3==0, else "v<len>".
				if len(k)%3 == 0 {
					cm.set(k, nil)
				} else {
					cm.set(k, str("v"+strconv.Itoa(len(k))))
				}
			}
		}
		if got := cm.javaString(); got != c.want {
			t.Errorf("keys %s:\n got  %s\n want %s", c.keys, got, c.want)
		}
	}
}
