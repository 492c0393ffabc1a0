package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/file"
	"github.com/connectd/connectd/internal/worker"
)

// gatedSinkClass is a FileStreamSink whose connector generates
// extra.tasks task configs beyond tasks.max, and whose tasks' Start waits
// for startGate when one is set.
const gatedSinkClass = "test.GatedFileSink"

var startGate atomic.Pointer[chan struct{}]

func init() {
	connect.Register(connect.Plugin{Class: gatedSinkClass, Type: connect.PluginSink, Version: "test",
		New: func() any { return &gatedSinkConnector{} }})
}

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
	wantRefusal := func(what, body string) {
		t.Helper()
		msg := errorMessage(t, body)
		for _, s := range []string{"tasks.max", "9", "8", "tasks.max.per.connector"} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: message %q does not name %s", what, msg, s)
			}
		}
	}
	_, body := w.do("POST", "/connectors", jsonString(map[string]any{"name": "big", "config": config("9")}))
	wantRefusal("create", body)
	_, body = w.do("PUT", "/connectors/big/config", jsonString(config("9")))
	wantRefusal("PUT creating", body)
	w.must(404, "GET", "/connectors/big", "")

	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "big", "config": config("8")}))
	eventually(t, "8 tasks running", func() bool { return strings.Count(w.state("big"), "RUNNING") == 9 })
	_, body = w.do("PUT", "/connectors/big/config", jsonString(config("9")))
	wantRefusal("PUT", body)
	_, body = w.do("PATCH", "/connectors/big/config", `{"tasks.max":"9"}`)
	wantRefusal("PATCH", body)
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
	w := startWorker(t, dir, map[string]string{"tasks.max.per.connector": "4"})
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
	w := startWorker(t, dir, stringConverters)
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
	eventually(t, "files closed and goroutines gone", func() bool {
		return openFiles(t) <= baseFiles+2 && runtime.NumGoroutine() <= baseGoroutines+10
	})
}
