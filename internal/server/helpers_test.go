package server

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// worker is a standalone connectd started in-process for a test, with its
// own embedded broker and REST listener on free ports, running the
// built-in plugins and the test's.
type testWorker struct {
	t     *testing.T
	s     *Standalone
	dir   string
	props map[string]string
}

func startWorker(t *testing.T, dir string, extra map[string]string, plugins ...connect.Plugin) *testWorker {
	t.Helper()
	return startWorkerLogging(t, dir, io.Discard, extra, plugins...)
}

// startWorkerLogging is startWorker with the worker's log lines written to
// logs.
func startWorkerLogging(t *testing.T, dir string, logs io.Writer, extra map[string]string, plugins ...connect.Plugin) *testWorker {
	t.Helper()
	props := map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":     "100",
	}
	for k, v := range extra {
		props[k] = v
	}
	s, err := StartStandalone(context.Background(), props, nil, append(builtin.Plugins(), plugins...), logging.NewRegistry(logs))
	if err != nil {
		t.Fatalf("starting the worker: %v", err)
	}
	w := &testWorker{t: t, s: s, dir: dir, props: props}
	t.Cleanup(w.close)
	return w
}

func (w *testWorker) close() {
	if w.s != nil {
		w.s.Close()
		w.s = nil
	}
}

func (w *testWorker) bootstrap() string { return w.s.Broker.Addr() }

// client returns a franz-go client of the worker's broker that may
// auto-create topics, closed with the test.
func (w *testWorker) client() *kgo.Client {
	w.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.bootstrap()), kgo.AllowAutoTopicCreation())
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(cl.Close)
	return cl
}

func (w *testWorker) state(name string) string {
	code, body := w.do("GET", "/connectors/"+name+"/status", "")
	if code != 200 {
		return ""
	}
	var st struct {
		Connector struct{ State string }
		Tasks     []struct{ State string }
	}
	_ = json.Unmarshal([]byte(body), &st)
	s := st.Connector.State
	for _, t := range st.Tasks {
		s += "/" + t.State
	}
	return s
}

// readTopic returns every record value in a topic, all partitions, in
// partition then offset order, once at least n are there.
func readTopic(t *testing.T, bootstrap, topic string, n int) []string {
	t.Helper()
	var out []string
	for _, r := range readRecords(t, bootstrap, topic, n) {
		out = append(out, string(r.Value))
	}
	return out
}

// readRecords returns every record in a topic, all partitions, in
// partition then offset order, once at least n are there.
func readRecords(t *testing.T, bootstrap, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	byPart := map[int32][]*kgo.Record{}
	count := 0
	for count < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: got %d records, want at least %d", topic, count, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			byPart[r.Partition] = append(byPart[r.Partition], r)
			count++
		})
	}
	var out []*kgo.Record
	for p := int32(0); len(out) < count; p++ {
		out = append(out, byPart[p]...)
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (w *testWorker) rest() servertest.REST { return servertest.REST{T: w.t, Addr: w.s.RESTAddr} }

// do sends a request and returns the status and body.
func (w *testWorker) do(method, path, body string) (int, string) {
	w.t.Helper()
	return w.rest().Do(method, path, body)
}

// must sends a request and fails the test unless the status is want.
func (w *testWorker) must(want int, method, path, body string) string {
	w.t.Helper()
	return w.rest().Must(want, method, path, body)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	servertest.Eventually(t, what, 60*time.Second, cond)
}

var (
	writeLines = servertest.WriteLines
	readLines  = servertest.ReadLines
)

// testSink is a sink plugin of class whose connector runs one task, made
// by newTask, with no config.
func testSink(class string, newTask func() connect.SinkTask) connect.Plugin {
	return connect.Plugin{Class: class, Type: connect.PluginSink, Version: "test",
		New: func() any { return &testSinkConnector{class: class, newTask: newTask} }}
}

type testSinkConnector struct {
	class   string
	newTask func() connect.SinkTask
}

func (*testSinkConnector) Version() string                                         { return "test" }
func (*testSinkConnector) Config() *connect.ConfigDef                              { return connect.NewConfigDef() }
func (*testSinkConnector) Start(connect.ConnectorContext, map[string]string) error { return nil }
func (*testSinkConnector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{{}}, nil
}
func (*testSinkConnector) Stop() error                 { return nil }
func (c *testSinkConnector) TaskClass() string         { return c.class + "Task" }
func (c *testSinkConnector) NewTask() connect.SinkTask { return c.newTask() }
