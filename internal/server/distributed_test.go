package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cluster is a set of distributed workers started in-process on one
// embedded broker.
type cluster struct {
	t       *testing.T
	broker  *embedded.Broker
	workers []*Distributed
	props   map[string]string
	plugins []connect.Plugin // the built-in plugins and the test's
}

func startCluster(t *testing.T, n int, extra map[string]string, plugins ...connect.Plugin) *cluster {
	t.Helper()
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(t.TempDir(), "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c := &cluster{t: t, broker: b, plugins: append(builtin.Plugins(), plugins...), props: map[string]string{
		"bootstrap.servers":                 b.Addr(),
		"listeners":                         "http://127.0.0.1:0",
		"group.id":                          "connect-cluster",
		"config.storage.topic":              "connect-configs",
		"offset.storage.topic":              "connect-offsets",
		"status.storage.topic":              "connect-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.flush.interval.ms":          "100",
		"scheduled.rebalance.max.delay.ms":  "1000",
		"heartbeat.interval.ms":             "300",
		"session.timeout.ms":                "6000",
		"rebalance.timeout.ms":              "10000",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
	}}
	for k, v := range extra {
		c.props[k] = v
	}
	for range n {
		c.add()
	}
	return c
}

func (c *cluster) add() *Distributed {
	c.t.Helper()
	d, err := StartDistributed(context.Background(), c.props, c.plugins, testLoggers(c.t))
	if err != nil {
		c.t.Fatalf("starting a worker: %v", err)
	}
	c.workers = append(c.workers, d)
	c.t.Cleanup(d.Close)
	return d
}

func (c *cluster) worker(i int) *testWorker {
	return &testWorker{t: c.t, s: &Standalone{RESTAddr: c.workers[i].RESTAddr}}
}

// healthy returns worker i once its /health answers 200.
func (c *cluster) healthy(i int) *testWorker {
	w := c.worker(i)
	eventually(c.t, fmt.Sprintf("worker %d healthy", i), func() bool {
		code, _ := w.do("GET", "/health", "")
		return code == 200
	})
	return w
}

// postFileSource creates a one-task FileStreamSource of file.
func postFileSource(w *testWorker, name, file string) {
	w.t.Helper()
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": name, "config": map[string]string{"connector.class": "FileStreamSource", "file": file, "topic": "lines", "tasks.max": "1"},
	}))
}

func taskWorker(w *testWorker, name string) string {
	_, body := w.do("GET", "/connectors/"+name+"/status", "")
	var st struct {
		Tasks []struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
		} `json:"tasks"`
	}
	_ = json.Unmarshal([]byte(body), &st)
	if len(st.Tasks) == 0 || st.Tasks[0].State != "RUNNING" {
		return ""
	}
	return st.Tasks[0].WorkerID
}

// Create through one worker, read through another, change offsets through
// a follower, lose the worker running the task: the cluster carries on.
func TestDistributedClusterInProcess(t *testing.T) {
	c := startCluster(t, 3, nil)
	for i := range c.workers {
		c.healthy(i)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lines(1, 10)...)
	w1, w2, w3 := c.worker(0), c.worker(1), c.worker(2)
	w1.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"},
	}))
	eventually(t, "the task running", func() bool { return taskWorker(w3, "src") != "" })
	if got := readTopic(t, c.broker.Addr(), "lines", 10); !slices.Equal(got, lines(1, 10)) {
		t.Fatalf("topic holds %v", got)
	}
	eventually(t, "offsets committed", func() bool {
		_, body := w2.do("GET", "/connectors/src/offsets", "")
		return strings.Contains(body, `"position":90`)
	})
	w2.must(204, "PUT", "/connectors/src/stop", "")
	eventually(t, "stopped", func() bool { return w3.state("src") == "STOPPED" })
	w3.must(200, "PATCH", "/connectors/src/offsets", fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":45}}]}`, in))
	if body := w1.must(200, "GET", "/connectors/src/offsets", ""); !strings.Contains(body, `"position":45`) {
		t.Fatalf("offsets after PATCH through a follower: %s", body)
	}
	w2.must(202, "PUT", "/connectors/src/resume", "")
	if got := readTopic(t, c.broker.Addr(), "lines", 15); !slices.Equal(got[10:], lines(6, 10)) {
		t.Fatalf("after altering to 45 the source emitted %v", got[10:])
	}

	// The internal endpoint takes task configs only with the cluster's
	// signature (KIP-507).
	code, body := w1.do("POST", "/connectors/src/tasks", `[{"task.class":"x"}]`)
	if code != 400 || !strings.Contains(body, "Internal request missing required signature") {
		t.Fatalf("unsigned internal request: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", "http://"+c.workers[0].RESTAddr+"/connectors/src/tasks", strings.NewReader(`[{"task.class":"x"}]`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Connect-Authorization", "bm90IGEgc2lnbmF0dXJl")
	req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(b), "Internal request contained invalid signature.") {
		t.Fatalf("badly signed internal request: %d %s", resp.StatusCode, b)
	}

	// Lose the worker running the task.
	var owner string
	eventually(t, "the task running again", func() bool { owner = taskWorker(w1, "src"); return owner != "" })
	victim := -1
	for i, d := range c.workers {
		if strings.HasSuffix(owner, ":"+d.RESTAddr[strings.LastIndex(d.RESTAddr, ":")+1:]) {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no worker matches %s", owner)
	}
	c.workers[victim].Close()
	survivor := c.worker((victim + 1) % 3)
	eventually(t, "the task running on a survivor", func() bool {
		w := taskWorker(survivor, "src")
		return w != "" && w != owner
	})
	writeLines(t, in, "line-011")
	got := readTopic(t, c.broker.Addr(), "lines", 16)
	if !slices.Contains(got, "line-011") {
		t.Fatalf("the moved task did not go on: %v", got)
	}
}

// testLoggers is where a test's workers log: to stderr at DEBUG with
// CONNECTD_TEST_LOG set, else kept and printed if the test fails, so
// that a failure seen only under load (in CI) shows what they did.
func testLoggers(t testing.TB) *logging.Registry {
	if !testingVerbose() {
		return logging.NewRegistry(servertest.LogOnFailure(t))
	}
	loggers := logging.NewRegistry(os.Stderr)
	_, _ = loggers.SetLevel("root", "DEBUG")
	return loggers
}

func testingVerbose() bool { return os.Getenv("CONNECTD_TEST_LOG") != "" }

// A stop makes the cluster rebalance; under the eager protocol the worker
// revokes its tasks before it rejoins, racing the pass that stops them for
// their config being gone. Whichever stops a task, the stop returns, and
// the stopped connector shows no task, as Kafka Connect's does.
func TestDistributedStopWhileRevoking(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"connect.protocol": "eager"})
	w := c.healthy(0)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lines(1, 3)...)
	for i := range 6 {
		name := fmt.Sprintf("src-%d", i)
		postFileSource(w, name, in)
		eventually(t, name+" running", func() bool { return w.state(name) == "RUNNING/RUNNING" })
		w.must(204, "PUT", "/connectors/"+name+"/stop", "")
		eventually(t, name+" stopped without tasks", func() bool { return w.state(name) == "STOPPED" })
	}
}

// runningSource starts a one-worker cluster running FileStreamSource src.
func runningSource(t *testing.T, plugins ...connect.Plugin) (*cluster, *testWorker) {
	c := startCluster(t, 1, nil, plugins...)
	w := c.healthy(0)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lines(1, 3)...)
	postFileSource(w, "src", in)
	eventually(t, "src running", func() bool { return w.state("src") == "RUNNING/RUNNING" })
	return c, w
}

// A worker that died running a task leaves its RUNNING status behind.
// Once the task's config is gone (here: a stop), the leader deletes that
// status, as Kafka Connect's leader does, so the stop returns and the
// stopped connector shows no task.
func TestDistributedStopForgetsDeadWorkersTasks(t *testing.T) {
	c, w := runningSource(t)

	// Task 1, from when the connector had two tasks, on a worker gone
	// since.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ghost := storage.StatusRecord{Connector: "src", IsTask: true, Task: 1, State: storage.StateRunning, WorkerID: "192.0.2.1:8083", Generation: 1000}
	rec := &kgo.Record{Topic: "connect-status", Key: []byte(storage.TaskStatusKey("src", 1)), Value: storage.EncodeStatus(ghost)}
	if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	w.must(204, "PUT", "/connectors/src/stop", "")
	eventually(t, "src stopped without tasks", func() bool { return w.state("src") == "STOPPED" })
}

// A task started again on the worker that ran it reports RUNNING even
// when its first report comes before the herder has recorded it as the
// task's current incarnation.
func TestDistributedTaskStartedAgainReportsRunning(t *testing.T) {
	_, w := runningSource(t)
	for i := range 8 {
		w.must(204, "PUT", "/connectors/src/stop", "")
		eventually(t, fmt.Sprintf("src stopped (%d)", i), func() bool { return w.state("src") == "STOPPED" })
		w.must(202, "PUT", "/connectors/src/resume", "")
		eventually(t, fmt.Sprintf("src running again (%d)", i), func() bool { return w.state("src") == "RUNNING/RUNNING" })
	}
}

// A follower forwards a request for the leader as it came, so that the
// leader answers it exactly as if asked directly: a last_id of 1.0 is a
// double, which the HTTP source refuses, through either worker.
func TestDistributedForwardedBodyKeepsItsNumbers(t *testing.T) {
	c := startCluster(t, 2, nil)
	w1, w2 := c.healthy(0), c.healthy(1)
	w1.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "api", "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": "io.connectd.connect.http.HttpSourceConnector", "http.url": "http://127.0.0.1:1/items", "topic": "items"},
	}))
	patch := `{"offsets":[{"partition":{"endpoint":"/items"},"offset":{"last_id":1.0}}]}`
	var answers []string
	for _, w := range []*testWorker{w1, w2} {
		code, body := w.do("PATCH", "/connectors/api/offsets", patch)
		answers = append(answers, fmt.Sprintf("%d %s", code, body))
	}
	if answers[0] != answers[1] || !strings.HasPrefix(answers[0], "400 ") || !strings.Contains(answers[0], "expected to be an integer or a string") {
		t.Fatalf("the two workers answered\n%s\n%s", answers[0], answers[1])
	}
}

// A source connector with an offsets topic of its own (KIP-618) keeps its
// offsets there, in a compacted topic made as the worker's is, and in the
// worker's topic too, as Kafka's workers do; the offsets API reads and
// changes them there. The worker's own topic named is the worker's store.
func TestDistributedConnectorOffsetsTopic(t *testing.T) {
	c := startCluster(t, 1, nil)
	w := c.healthy(0)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, "a", "b", "c")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "own", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "t", "offsets.storage.topic": "own-offsets"}}))
	eventually(t, "the offsets of the 3 lines", func() bool {
		_, body := w.do("GET", "/connectors/own/offsets", "")
		return strings.Contains(body, `"position":6`)
	})
	key := `["own",{"filename":"` + in + `"}]`
	for _, topic := range []string{"own-offsets", "connect-offsets"} {
		eventually(t, "the offset in "+topic, func() bool { return latestValues(t, c.broker.Addr(), topic)[key] == `{"position":6}` })
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	configs, err := kadm.NewClient(cl).DescribeTopicConfigs(context.Background(), "own-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if policy, err := configs.On("own-offsets", nil); err != nil || !slices.ContainsFunc(policy.Configs, func(c kadm.Config) bool {
		return c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "compact"
	}) {
		t.Errorf("own-offsets is not compacted: %+v %v", policy, err)
	}

	w.must(204, "PUT", "/connectors/own/stop", "")
	w.must(200, "PATCH", "/connectors/own/offsets", `{"offsets":[{"partition":{"filename":"`+in+`"},"offset":{"position":2}}]}`)
	eventually(t, "the altered offset in own-offsets", func() bool { return latestValues(t, c.broker.Addr(), "own-offsets")[key] == `{"position":2}` })
	if body := w.must(200, "GET", "/connectors/own/offsets", ""); !strings.Contains(body, `"position":2`) {
		t.Errorf("GET after PATCH: %s", body)
	}
	w.must(200, "DELETE", "/connectors/own/offsets", "")
	if body := w.must(200, "GET", "/connectors/own/offsets", ""); body != `{"offsets":[]}` {
		t.Errorf("GET after DELETE, the worker's topic reset too: %s", body)
	}
	// Resumed, the task finds no offset in either topic: every line again.
	w.must(202, "PUT", "/connectors/own/resume", "")
	if got := readTopic(t, c.broker.Addr(), "t", 6); !slices.Equal(got, []string{"a", "b", "c", "a", "b", "c"}) {
		t.Errorf("topic t after the reset and resume: %q", got)
	}
}

// latestValues reads a topic to its end and returns each key's last value
// ("" for a tombstone).
func latestValues(t *testing.T, addr, topic string) map[string]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	out := map[string]string{}
	for len(left) > 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			out[string(r.Key)] = string(r.Value)
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

// Kafka's distributed preflight checks of a source connector's
// exactly-once keys, with their texts: a worker without exactly-once
// support refuses "required", as the file source refuses it for standard
// input, and a connector-defined transaction boundary; "requested", the
// poll boundary and an interval are taken.
func TestDistributedExactlyOncePreflight(t *testing.T) {
	c := startCluster(t, 1, nil)
	w := c.healthy(0)
	validate := func(extra map[string]string) string {
		config := map[string]string{"connector.class": "FileStreamSource", "name": "src", "file": "/nonexistent", "topic": "t"}
		maps.Copy(config, extra)
		return w.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(config))
	}
	for _, c := range []struct {
		extra map[string]string
		want  []string
	}{
		{map[string]string{"exactly.once.support": "required"}, []string{`"error_count":1`, "This worker does not have exactly-once source support enabled."}},
		// Standard input: the file source cannot resume it exactly.
		{map[string]string{"exactly.once.support": "required", "file": ""}, []string{`"error_count":2`, "This worker does not have exactly-once source support enabled.", "The connector does not support exactly-once semantics with the provided configuration."}},
		{map[string]string{"transaction.boundary": "connector"}, []string{`"error_count":1`, "does not support connector-defined transaction boundaries"}},
		{map[string]string{"transaction.boundary": "sometimes"}, []string{`"error_count":1`, "transaction.boundary"}},
		{map[string]string{"transaction.boundary.interval.ms": "-1"}, []string{`"error_count":1`, "Value must be at least 0"}},
		{map[string]string{"exactly.once.support": "requested", "transaction.boundary": "INTERVAL", "transaction.boundary.interval.ms": "500"}, []string{`"error_count":0`}},
	} {
		body := validate(c.extra)
		for _, want := range c.want {
			if !strings.Contains(body, want) {
				t.Errorf("%v: no %q in %s", c.extra, want, body)
			}
		}
	}
}

// A source task starts from the offsets committed last, even those its
// worker's paced reader has not fetched yet: as Kafka's offset reader, the
// task's start reads the offsets topic to its end.
func TestSourceTaskStartsFromOffsetsNotYetRead(t *testing.T) {
	defer func(p time.Duration) { offsetsReadPace = p }(offsetsReadPace)
	offsetsReadPace = time.Hour
	task := &offsetProbeTask{started: make(chan map[string]any, 1)}
	plugin := connect.Plugin{Class: "test.OffsetProbeSource", Type: connect.PluginSource, Version: "test",
		New: func() any { return &oneTaskSource{task: task} }}
	c := startCluster(t, 1, nil, plugin)
	w := c.healthy(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	writeOffset := func(connector string, n int) {
		t.Helper()
		key, err := storage.EncodeOffsetKey(connector, map[string]any{"source": "probe"})
		if err != nil {
			t.Fatal(err)
		}
		rec := &kgo.Record{Topic: "connect-offsets", Key: key, Value: fmt.Appendf(nil, `{"n":%d}`, n)}
		if err := raw.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A record the reader fetches, after which it waits its hour: read
	// to the end by the offsets API, which ends the wait.
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "before", "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": "test.OffsetProbeSource"}}))
	writeOffset("before", 1)
	if got := w.must(200, "GET", "/connectors/before/offsets", ""); !strings.Contains(got, `"n":1`) {
		t.Fatalf("offsets of the connector before: %s", got)
	}
	// Written while the reader waits.
	writeOffset("probe", 42)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "probe", "config": map[string]string{"connector.class": "test.OffsetProbeSource"}}))
	task.mustStartFrom(ctx, t, 42)
}
