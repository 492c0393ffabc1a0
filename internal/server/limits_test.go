package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/file"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
	"github.com/twmb/franz-go/pkg/kgo"
)

// gatedSinkClass is a FileStreamSink whose connector generates
// extra.tasks task configs beyond tasks.max, and whose tasks' Start waits
// for startGate when one is set.
const gatedSinkClass = "test.GatedFileSink"

var startGate atomic.Pointer[chan struct{}]

var gatedSink = connect.Plugin{Class: gatedSinkClass, Type: connect.PluginSink, Version: "test",
	New: func() any { return &gatedSinkConnector{} }}

type gatedSinkConnector struct {
	file.SinkConnector
	extra int
}

func (c *gatedSinkConnector) Start(ctx connect.ConnectorContext, config map[string]string) error {
	c.extra, _ = strconv.Atoi(config["extra.tasks"])
	return c.SinkConnector.Start(ctx, config)
}

func (c *gatedSinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return c.SinkConnector.TaskConfigs(maxTasks + c.extra)
}

func (*gatedSinkConnector) TaskClass() string         { return gatedSinkClass + "Task" }
func (*gatedSinkConnector) NewTask() connect.SinkTask { return &gatedSinkTask{} }

type gatedSinkTask struct{ file.SinkTask }

func (t *gatedSinkTask) Start(ctx connect.SinkTaskContext, config map[string]string) error {
	if g := startGate.Load(); g != nil {
		<-*g
	}
	return t.SinkTask.Start(ctx, config)
}

func errorMessage(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.ErrorCode != 400 {
		t.Fatalf("not Kafka Connect's 400 error body: %s", body)
	}
	return e.Message
}

// A tasks.max above the worker's tasks.max.per.connector is refused at
// create, PUT and PATCH with a 400 naming both keys and numbers, and shown
// by the validate endpoint as an error of tasks.max.
func TestTasksMaxAboveWorkerLimitIsRefused(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, map[string]string{"tasks.max.per.connector": "8"})
	config := func(tasksMax string) map[string]string {
		return map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "t", "tasks.max": tasksMax}
	}
	wantRefusal := func(what string, code int, body string) {
		t.Helper()
		if code != 400 {
			t.Fatalf("%s: status %d, want 400", what, code)
		}
		msg := errorMessage(t, body)
		for _, s := range []string{"tasks.max", "9", "8", "tasks.max.per.connector"} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q does not name %s", what, msg, s)
			}
		}
	}
	code, body := w.do("POST", "/connectors", jsonString(map[string]any{"name": "big", "config": config("9")}))
	wantRefusal("create", code, body)
	code, body = w.do("PUT", "/connectors/big/config", jsonString(config("9")))
	wantRefusal("PUT creating", code, body)
	w.must(404, "GET", "/connectors/big", "")

	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "big", "config": config("8")}))
	eventually(t, "8 tasks running", func() bool { return strings.Count(w.state("big"), "RUNNING") == 9 })
	code, body = w.do("PUT", "/connectors/big/config", jsonString(config("9")))
	wantRefusal("PUT", code, body)
	code, body = w.do("PATCH", "/connectors/big/config", `{"tasks.max":"9"}`)
	wantRefusal("PATCH", code, body)
	if body := w.must(200, "GET", "/connectors/big/config", ""); !strings.Contains(body, `"tasks.max":"8"`) {
		t.Fatalf("a refused change altered the config: %s", body)
	}

	validated := config("9")
	validated["name"] = "big"
	body = w.must(200, "PUT", "/connector-plugins/FileStreamSink/config/validate", jsonString(validated))
	var infos struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(body), &infos); err != nil || infos.ErrorCount != 1 {
		t.Fatalf("validate: %v %s", err, body)
	}
	for _, c := range infos.Configs {
		if c.Value.Name == "tasks.max" && (len(c.Value.Errors) != 1 || !strings.Contains(c.Value.Errors[0], "tasks.max.per.connector")) {
			t.Fatalf("tasks.max errors: %v", c.Value.Errors)
		}
	}
}

// A connector generating more task configs than tasks.max fails, as
// Kafka's does, unless tasks.max.enforce is false (KIP-1004); even then
// it never runs more than tasks.max.per.connector tasks.
func TestTasksMaxEnforce(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, map[string]string{"tasks.max.per.connector": "4"}, gatedSink)
	create := func(name, extra, enforce string) {
		t.Helper()
		config := map[string]string{"connector.class": gatedSinkClass, "file": filepath.Join(dir, name), "topics": "t", "tasks.max": "2", "extra.tasks": extra}
		if enforce != "" {
			config["tasks.max.enforce"] = enforce
		}
		w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": name, "config": config}))
	}
	trace := func(name string) string {
		var st struct{ Connector struct{ Trace string } }
		_ = json.Unmarshal([]byte(w.must(200, "GET", "/connectors/"+name+"/status", "")), &st)
		return st.Connector.Trace
	}

	create("enforced", "1", "")
	eventually(t, "enforced failed", func() bool { return w.state("enforced") == "FAILED" })
	if tr := trace("enforced"); !strings.Contains(tr, "The connector enforced has generated 3 tasks, which is greater than 2") || !strings.Contains(tr, "'tasks.max.enforce' set to false") {
		t.Fatalf("trace %q", tr)
	}

	create("lenient", "1", "false")
	eventually(t, "three tasks running", func() bool { return w.state("lenient") == "RUNNING/RUNNING/RUNNING/RUNNING" })

	create("beyond", "3", "false")
	eventually(t, "beyond failed", func() bool { return w.state("beyond") == "FAILED" })
	if tr := trace("beyond"); !strings.Contains(tr, "5 tasks, more than the 4 tasks this worker runs per connector (tasks.max.per.connector)") {
		t.Fatalf("trace %q", tr)
	}
}

// A connector stored before the worker's limit was lowered fails at
// start-up, with a message naming the limit, instead of starting its
// tasks.
func TestStoredConnectorAboveWorkerLimitFails(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "wide", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "t", "tasks.max": "6"}}))
	eventually(t, "6 tasks running", func() bool { return strings.Count(w.state("wide"), "RUNNING") == 7 })
	w.close()

	w = startWorker(t, dir, map[string]string{"tasks.max.per.connector": "5"})
	eventually(t, "wide failed", func() bool { return w.state("wide") == "FAILED" })
	body := w.must(200, "GET", "/connectors/wide/status", "")
	if !strings.Contains(body, "tasks.max=6, more than the 5 tasks this worker runs per connector (tasks.max.per.connector)") {
		t.Fatalf("status %s", body)
	}
	if body := w.must(200, "GET", "/connectors/wide/tasks", ""); body != "[]" {
		t.Fatalf("tasks %s", body)
	}
}

func openFiles(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd on this system")
	}
	return len(fds)
}

// A connector with the default limit's worth of FileStreamSink tasks: the
// REST API answers while they start (their Start waits here), and a
// DELETE closes their files and ends their goroutines.
func TestTasksAtTheLimitStartAndGoAway(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, gatedSink)
	defaults, err := worker.ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := defaults.TasksMaxPerConnector
	baseFiles, baseGoroutines := openFiles(t), runtime.NumGoroutine()

	gate := make(chan struct{})
	startGate.Store(&gate)
	t.Cleanup(func() {
		if startGate.Swap(nil) != nil {
			close(gate)
		}
	})
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "wide", "config": map[string]string{
		"connector.class": gatedSinkClass, "file": filepath.Join(dir, "out.txt"), "topics": "t", "tasks.max": strconv.Itoa(n)}}))
	if body := w.must(200, "GET", "/connectors", ""); body != `["wide"]` {
		t.Fatalf("connectors %s", body)
	}
	if st := w.state("wide"); strings.Count(st, "/") != n || strings.Contains(st, "/RUNNING") {
		t.Fatalf("while the tasks start, status %s", st)
	}
	startGate.Store(nil)
	close(gate)
	eventually(t, fmt.Sprintf("%d tasks running", n), func() bool { return strings.Count(w.state("wide"), "/RUNNING") == n })
	if files := openFiles(t); files < baseFiles+n {
		t.Fatalf("%d files open with %d tasks running, %d before", files, n, baseFiles)
	}

	w.must(204, "DELETE", "/connectors/wide", "")
	// The slack is for what the broker and the REST connections keep; a
	// leak of the tasks' would be hundreds.
	eventually(t, "files closed and goroutines gone", func() bool {
		http.DefaultClient.CloseIdleConnections()
		return openFiles(t) <= baseFiles+8 && runtime.NumGoroutine() <= baseGoroutines+20
	})
}

// Task configs in the config topic beyond this worker's limit (written by
// a Java worker, which has none) fail each task instead of starting it.
func TestDistributedTaskSetAboveWorkerLimitFails(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"tasks.max.per.connector": "2"})
	w := c.healthy(0)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, "a")
	config := map[string]string{"name": "wide", "connector.class": "FileStreamSource", "file": in, "topic": "lines", "tasks.max": "3"}
	paused, err := storage.EncodeTargetState("PAUSED")
	if err != nil {
		t.Fatal(err)
	}
	recs := []*kgo.Record{
		{Key: []byte(storage.ConnectorConfigKey("wide")), Value: storage.EncodeConnectorConfig(config)},
		{Key: []byte(storage.TargetStateKey("wide")), Value: paused},
	}
	for i := range 3 {
		task := map[string]string{"file": in, "topic": "lines", "task.class": file.SourceTaskClass}
		recs = append(recs, &kgo.Record{Key: []byte(storage.TaskConfigKey("wide", i)), Value: storage.EncodeTaskConfig(task)})
	}
	recs = append(recs, &kgo.Record{Key: []byte(storage.TaskCommitKey("wide")), Value: storage.EncodeTaskCommit(3)})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()), kgo.DefaultProduceTopic("connect-configs"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the three tasks failed", func() bool { return w.state("wide") == "PAUSED/FAILED/FAILED/FAILED" })
	if body := w.must(200, "GET", "/connectors/wide/tasks/2/status", ""); !strings.Contains(body, "The connector wide has 3 tasks, more than the 2 tasks this worker runs per connector (tasks.max.per.connector)") {
		t.Fatalf("task status %s", body)
	}
}

// The leader refuses a member's task configs beyond its limit.
func TestDistributedLeaderRefusesTaskSetAboveLimit(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"tasks.max.per.connector": "2"})
	w := c.healthy(0)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, "a")
	postFileSource(w, "src", in)
	eventually(t, "src running", func() bool { return w.state("src") == "RUNNING/RUNNING" })

	key := sessionKey(t, c.broker.Addr())
	_, got := internalRequest(t, "POST", "http://"+c.workers[0].RESTAddr+"/connectors/src/tasks", key,
		[]byte(`[{"task.class":"x"},{"task.class":"x"},{"task.class":"x"}]`))
	if msg := errorMessage(t, got); !strings.Contains(msg, "3 task configs") || !strings.Contains(msg, "at most 2 tasks per connector (tasks.max.per.connector)") {
		t.Fatalf("message %q", msg)
	}
	if body := w.must(200, "GET", "/connectors/src/tasks", ""); strings.Count(body, `"task.class"`) != 1 {
		t.Fatalf("tasks %s", body)
	}
}

// internalRequest sends an internal request (KIP-507), signed with key
// unless key is nil, and returns the answer's status and body.
func internalRequest(t *testing.T, method, url string, key, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != nil {
		mac := hmac.New(sha256.New, key)
		mac.Write(body)
		req.Header.Set("X-Connect-Authorization", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// sessionKey reads the newest session key from the config topic.
func sessionKey(t *testing.T, bootstrap string) []byte {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("connect-configs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var key []byte
	for key == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no session key in the config topic")
		}
		fs.EachRecord(func(r *kgo.Record) {
			if rec, err := storage.DecodeConfigRecord(r.Key, r.Value); err == nil && rec.Type == storage.ConfigRecordSessionKey {
				key = rec.SessionKey.Key
			}
		})
	}
	return key
}

// gatedConverterClass is a StringConverter whose Configure, called as a
// task starts, tells configuring and waits for converterGate when one is
// set.
const gatedConverterClass = "test.GatedConverter"

var (
	converterGate atomic.Pointer[chan struct{}]
	configuring   = make(chan struct{}, 16)
)

var gatedConverterPlugin = connect.Plugin{Class: gatedConverterClass, Type: connect.PluginConverter, Version: "test",
	New: func() any { return &gatedConverter{} }}

type gatedConverter struct{ converters.StringConverter }

func (c *gatedConverter) Configure(config map[string]string, isKey bool) error {
	if g := converterGate.Load(); g != nil {
		select {
		case configuring <- struct{}{}:
		default:
		}
		<-*g
	}
	return c.StringConverter.Configure(config, isKey)
}

// A distributed worker answers status and connector requests while a
// reconcile pass is starting tasks (here held in their converter's
// Configure, under the herder's lock).
func TestDistributedAnswersWhileTasksStart(t *testing.T) {
	_, w := runningSource(t, gatedConverterPlugin)
	gate := make(chan struct{})
	converterGate.Store(&gate)
	t.Cleanup(func() {
		if converterGate.Swap(nil) != nil {
			close(gate)
		}
	})
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "slow", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(t.TempDir(), "out.txt"), "topics": "t", "tasks.max": "2",
		"value.converter": gatedConverterClass}}))
	select {
	case <-configuring:
	case <-time.After(60 * time.Second):
		t.Fatal("no task of slow started")
	}
	answered := make(chan string, 1)
	go func() {
		// Not w.do: it fails the test, which only the test's goroutine may.
		var got []string
		for _, path := range []string{"/connectors/src/status", "/connectors/slow"} {
			resp, err := http.Get("http://" + w.s.RESTAddr + path)
			if err != nil {
				answered <- err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, body))
		}
		answered <- strings.Join(got, "\n")
	}()
	select {
	case got := <-answered:
		if !strings.HasPrefix(got, `200 {"name":"src","connector":{"state":"RUNNING"`) || !strings.Contains(got, "\n200 {\"name\":\"slow\"") {
			t.Fatalf("answers %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("GET status and GET connector waited for the tasks to start")
	}
	converterGate.Store(nil)
	close(gate)
	eventually(t, "slow running", func() bool { return w.state("slow") == "RUNNING/RUNNING/RUNNING" })
}
