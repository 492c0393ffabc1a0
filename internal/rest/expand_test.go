package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

// expandHerder answers the lookups of GET /connectors?expand=... from
// fixed documents; a connector without one is not found.
type expandHerder struct {
	Herder
	names  []string
	status map[string]*client.ConnectorStatus
	info   map[string]*client.ConnectorInfo
}

func (h *expandHerder) Connectors(context.Context) ([]string, error) { return h.names, nil }

func (h *expandHerder) ConnectorStatus(_ context.Context, name string) (*client.ConnectorStatus, error) {
	if st, ok := h.status[name]; ok {
		return st, nil
	}
	return nil, herder.NotFound("No status found for connector %s", name)
}

func (h *expandHerder) ConnectorInfo(_ context.Context, name string) (*client.ConnectorInfo, error) {
	if info, ok := h.info[name]; ok {
		return info, nil
	}
	return nil, herder.NotFound("Connector %s not found", name)
}

func TestExpandConnectors(t *testing.T) {
	status := func(name, trace string) *client.ConnectorStatus {
		return &client.ConnectorStatus{Name: name, Type: client.TypeSink,
			Connector: client.State{State: "RUNNING", WorkerID: "w1:8083"},
			Tasks:     []client.TaskState{{ID: 0, State: "FAILED", WorkerID: "w2:8083", Trace: trace}, {ID: 1, State: "RUNNING", WorkerID: "w1:8083", Version: "3.9.0"}}}
	}
	h := &expandHerder{
		// b is listed twice; gone has an info but no status.
		names: []string{"b", "a", "gone", "b", "c"},
		status: map[string]*client.ConnectorStatus{
			"a": status("a", "org.apache.kafka.connect.errors.ConnectException: \"bad\"\n\tat x <y> & \u2028 é"),
			"b": status("b", ""),
			"c": {Name: "c", Type: client.TypeSource, Connector: client.State{State: "PAUSED", WorkerID: "w1:8083", Version: "1"}},
		},
		info: map[string]*client.ConnectorInfo{
			"a":    {Name: "a", Config: map[string]string{"topics": "t"}, Type: client.TypeSink},
			"b":    {Name: "b", Config: map[string]string{}, Type: client.TypeSink},
			"c":    {Name: "c", Config: map[string]string{"topic": "t"}, Type: client.TypeSource},
			"gone": {Name: "gone", Type: client.TypeSource},
		},
	}
	handler := New(h, logging.NewRegistry(io.Discard), DefaultOptions())
	doc := func(v any) string {
		b, err := marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	st := func(name string) string { return doc(fixStatus(h.status[name])) }
	info := func(name string) string { return doc(fixInfo(h.info[name])) }
	// Both maps are written in a Java HashMap's order: the names by
	// bucket (a 1, b 2, c 3, gone 15), the keys "info" and "status" by
	// the order they were first asked in (both fall in bucket 15). A
	// repeated expansion is written once, an unknown one never; a
	// connector one of whose lookups is not found is left out; one listed
	// twice comes once.
	for _, c := range []struct{ query, want string }{
		{"expand=status", `{"a":{"status":` + st("a") + `},"b":{"status":` + st("b") + `},"c":{"status":` + st("c") + `}}`},
		{"expand=info&expand=status&expand=info&expand=nope", `{"a":{"info":` + info("a") + `,"status":` + st("a") + `},"b":{"info":` + info("b") + `,"status":` + st("b") + `},"c":{"info":` + info("c") + `,"status":` + st("c") + `}}`},
		{"expand=status&expand=info", `{"a":{"status":` + st("a") + `,"info":` + info("a") + `},"b":{"status":` + st("b") + `,"info":` + info("b") + `},"c":{"status":` + st("c") + `,"info":` + info("c") + `}}`},
		{"expand=info", `{"a":{"info":` + info("a") + `},"b":{"info":` + info("b") + `},"c":{"info":` + info("c") + `},"gone":{"info":` + info("gone") + `}}`},
		{"expand=nope", `{"a":{},"b":{},"c":{},"gone":{}}`},
	} {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest("GET", "/connectors?"+c.query, nil))
		if rec.Code != 200 || rec.Body.String() != c.want {
			t.Errorf("GET /connectors?%s = %d\n%s\nwant\n%s", c.query, rec.Code, rec.Body.String(), c.want)
		}
		var parsed map[string]map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &parsed); err != nil {
			t.Errorf("GET /connectors?%s: %v", c.query, err)
		}
	}
}

// appendStatus writes what the encoder the other answers use writes.
func FuzzAppendStatus(f *testing.F) {
	f.Add("c", "RUNNING", "w:8083", "", "", 0, "trace\n\t\"x\" <b> & \u2028", "3.9.0", "source")
	f.Add("名前", "FAILED", "", "\x00\x7f\xff", "1", -1, "", "", "sink")
	f.Fuzz(func(t *testing.T, name, state, worker, trace, version string, id int, taskTrace, taskVersion, typ string) {
		st := &client.ConnectorStatus{Name: name, Type: typ, Connector: client.State{State: state, WorkerID: worker, Trace: trace, Version: version}}
		if id >= 0 {
			st.Tasks = []client.TaskState{{ID: id, State: state, WorkerID: worker, Trace: taskTrace, Version: taskVersion}, {ID: id + 1}}
		}
		want, err := marshal(fixStatus(st))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendStatus(nil, fixStatus(st)); string(got) != string(want) {
			t.Fatalf("appendStatus = %s\nmarshal     = %s", got, want)
		}
	})
}
