package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Bodies as Apache Kafka Connect 3.9 writes them.
const (
	expandedBody = `{"file-src":{"status":{"name":"file-src","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083"}],"type":"source"},"info":{"name":"file-src","config":{"connector.class":"FileStreamSource","file":"/tmp/in.txt","tasks.max":"1","name":"file-src","topic":"lines"},"tasks":[{"connector":"file-src","task":0}],"type":"source"}},` +
		`"file-sink":{"status":{"name":"file-sink","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083"},"tasks":[{"id":0,"state":"FAILED","worker_id":"10.0.0.6:8083","trace":"org.apache.kafka.connect.errors.ConnectException: boom\n\tat org.apache.kafka.connect.runtime.WorkerTask.<init>(WorkerTask.java:1)\n"},{"id":1,"state":"RUNNING","worker_id":"10.0.0.5:8083"}],"type":"sink"},"info":{"name":"file-sink","config":{"connector.class":"FileStreamSink","topics":"lines","name":"file-sink"},"tasks":[{"connector":"file-sink","task":0},{"connector":"file-sink","task":1}],"type":"sink"}},` +
		`"a-very-long-connector-name":{"status":{"name":"a-very-long-connector-name","connector":{"state":"STOPPED","worker_id":"10.0.0.5:8083"},"tasks":[],"type":"source"},"info":{"name":"a-very-long-connector-name","config":{"connector.class":"FileStreamSource","name":"a-very-long-connector-name"},"tasks":[],"type":"source"}}}`
	infoBody      = `{"name":"file-src","config":{"connector.class":"FileStreamSource","file":"/tmp/in.txt","tasks.max":"1","name":"file-src","topic":"lines"},"tasks":[{"connector":"file-src","task":0}],"type":"source"}`
	statusBody    = `{"name":"file-src","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083"}],"type":"source"}`
	restartBody   = `{"name":"file-sink","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"10.0.0.6:8083"},{"id":1,"state":"RUNNING","worker_id":"10.0.0.5:8083"}],"type":"sink"}`
	sinkOffsets   = `{"offsets":[{"partition":{"kafka_partition":10,"kafka_topic":"lines"},"offset":{"kafka_offset":3}},{"partition":{"kafka_partition":1,"kafka_topic":"lines"},"offset":{"kafka_offset":17}},{"partition":{"kafka_partition":0,"kafka_topic":"lines"},"offset":{"kafka_offset":4711}}]}`
	alteredBody   = `{"message":"The offsets for this connector have been altered successfully"}`
	resetBody     = `{"message":"The offsets for this connector have been reset successfully"}`
	pluginsBody   = `[{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"3.9.0"},{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"3.9.0"},{"class":"org.apache.kafka.connect.mirror.MirrorSourceConnector","type":"source"}]`
	notStopped    = `{"error_code":400,"message":"Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/file-sink/stop' endpoint"}`
	notFoundRoute = `{"error_code":404,"message":"HTTP 404 Not Found"}`
)

type reply struct {
	status int
	body   string
}

type request struct {
	method, uri, body string
}

// worker is a fake Kafka Connect worker answering "METHOD URI" from a
// table, recording the requests it gets.
type worker struct {
	*httptest.Server
	mu       sync.Mutex
	routes   map[string]reply
	requests []request
}

func newWorker(t *testing.T, routes map[string]reply) *worker {
	w := &worker{routes: routes}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.requests = append(w.requests, request{r.Method, r.RequestURI, string(body)})
		rep, ok := w.routes[r.Method+" "+r.RequestURI]
		w.mu.Unlock()
		if !ok {
			rep = reply{404, notFoundRoute}
		}
		if rep.body != "" {
			rw.Header().Set("Content-Type", "application/json")
		}
		rw.WriteHeader(rep.status)
		io.WriteString(rw, rep.body)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *worker) got() []request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]request(nil), w.requests...)
}

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return env[k] })
	return result{code, out.String(), errOut.String()}
}

func check(t *testing.T, got result, want result) {
	t.Helper()
	if got.code != want.code {
		t.Errorf("exit code = %d, want %d", got.code, want.code)
	}
	if got.stdout != want.stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", got.stdout, want.stdout)
	}
	if got.stderr != want.stderr {
		t.Errorf("stderr:\n%s\nwant:\n%s", got.stderr, want.stderr)
	}
}

func checkRequests(t *testing.T, w *worker, want ...request) {
	t.Helper()
	got := w.got()
	if len(got) != len(want) {
		t.Fatalf("requests = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("request %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestGetConnectors(t *testing.T) {
	w := newWorker(t, map[string]reply{"GET /connectors?expand=status&expand=info": {200, expandedBody}})
	check(t, runCLI(t, nil, "", "get", "connectors", "--url", w.URL), result{0,
		"NAME                         STATE     TASKS   TYPE\n" +
			"a-very-long-connector-name   STOPPED   0/0     source\n" +
			"file-sink                    RUNNING   1/2     sink\n" +
			"file-src                     RUNNING   1/1     source\n", ""})
	res := runCLI(t, nil, "", "get", "connectors", "--url", w.URL, "-o", "json")
	if res.code != 0 || !strings.Contains(res.stdout, `WorkerTask.<init>(WorkerTask.java:1)\n"`) || !strings.HasPrefix(res.stdout, "{\n  \"a-very-long-connector-name\": {\n    \"status\": {") {
		t.Errorf("get connectors -o json = %+v", res)
	}
	checkRequests(t, w, request{"GET", "/connectors?expand=status&expand=info", ""}, request{"GET", "/connectors?expand=status&expand=info", ""})
}

func TestGetConnectorsEnvAndJSON(t *testing.T) {
	w := newWorker(t, map[string]reply{"GET /connectors?expand=status&expand=info": {200,
		`{"x":{"status":{"name":"x","connector":{"state":"RUNNING","worker_id":"w:8083"},"tasks":[],"type":"sink"}}}`}})
	res := runCLI(t, map[string]string{"CONNECT_URL": w.URL}, "", "get", "connectors", "-o", "json")
	check(t, res, result{0, `{
  "x": {
    "status": {
      "name": "x",
      "connector": {
        "state": "RUNNING",
        "worker_id": "w:8083"
      },
      "tasks": [],
      "type": "sink"
    }
  }
}
`, ""})
	// --url wins over $CONNECT_URL.
	res = runCLI(t, map[string]string{"CONNECT_URL": "http://127.0.0.1:1"}, "", "--url", w.URL, "get", "connectors")
	check(t, res, result{0, "NAME   STATE     TASKS   TYPE\nx      RUNNING   0/0     sink\n", ""})
	if n := len(w.got()); n != 2 {
		t.Errorf("worker got %d requests", n)
	}
}

func TestDescribe(t *testing.T) {
	w := newWorker(t, map[string]reply{
		"GET /connectors/file-src":        {200, infoBody},
		"GET /connectors/file-src/status": {200, statusBody},
		"GET /connectors/new":             {200, `{"name":"new","config":{"name":"new"},"tasks":[],"type":"source"}`},
		"GET /connectors/new/status":      {404, `{"error_code":404,"message":"No status found for connector new"}`},
		"GET /connectors/nope":            {404, `{"error_code":404,"message":"Connector nope not found"}`},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "describe", "file-src"), result{0, `{
  "status": {
    "name": "file-src",
    "connector": {
      "state": "RUNNING",
      "worker_id": "10.0.0.5:8083"
    },
    "tasks": [
      {
        "id": 0,
        "state": "RUNNING",
        "worker_id": "10.0.0.5:8083"
      }
    ],
    "type": "source"
  },
  "info": {
    "name": "file-src",
    "config": {
      "connector.class": "FileStreamSource",
      "file": "/tmp/in.txt",
      "name": "file-src",
      "tasks.max": "1",
      "topic": "lines"
    },
    "tasks": [
      {
        "connector": "file-src",
        "task": 0
      }
    ],
    "type": "source"
  }
}
`, ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "describe", "new"), result{0, `{
  "info": {
    "name": "new",
    "config": {
      "name": "new"
    },
    "tasks": [],
    "type": "source"
  }
}
`, ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "describe", "nope"), result{1, "", "Error: Connector nope not found\n"})
}

func TestLifecycle(t *testing.T) {
	w := newWorker(t, map[string]reply{
		"PUT /connectors/file-src/pause":  {202, ""},
		"PUT /connectors/file-src/resume": {202, ""},
		"PUT /connectors/file-src/stop":   {204, ""},
		"DELETE /connectors/my%20conn":    {204, ""},
		"PUT /connectors/nope/pause":      {404, `{"error_code":404,"message":"Unknown connector nope"}`},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "pause", "file-src"), result{0, "connector file-src paused\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "resume", "file-src"), result{0, "connector file-src resumed\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "stop", "file-src"), result{0, "connector file-src stopped\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "delete", "my conn"), result{0, "connector my conn deleted\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "pause", "nope"), result{1, "", "Error: Unknown connector nope\n"})
	checkRequests(t, w,
		request{"PUT", "/connectors/file-src/pause", ""},
		request{"PUT", "/connectors/file-src/resume", ""},
		request{"PUT", "/connectors/file-src/stop", ""},
		request{"DELETE", "/connectors/my%20conn", ""},
		request{"PUT", "/connectors/nope/pause", ""},
	)
}

func TestRestart(t *testing.T) {
	w := newWorker(t, map[string]reply{
		"POST /connectors/file-src/restart":                                    {204, ""},
		"POST /connectors/file-sink/restart?includeTasks=true&onlyFailed=true": {202, restartBody},
		"POST /connectors/file-sink/restart?includeTasks=true":                 {202, restartBody},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "restart", "file-src"), result{0, "connector file-src restarted\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "restart", "file-sink", "--include-tasks", "--only-failed"), result{0,
		"restart of connector file-sink requested\n" +
			"INSTANCE    STATE        WORKER\n" +
			"connector   RUNNING      10.0.0.5:8083\n" +
			"task 0      RESTARTING   10.0.0.6:8083\n" +
			"task 1      RUNNING      10.0.0.5:8083\n", ""})
	res := runCLI(t, nil, "", "--url", w.URL, "-o", "json", "restart", "file-sink", "--include-tasks")
	if res.code != 0 || !strings.Contains(res.stdout, `"state": "RESTARTING"`) {
		t.Errorf("restart -o json = %+v", res)
	}
	checkRequests(t, w,
		request{"POST", "/connectors/file-src/restart", ""},
		request{"POST", "/connectors/file-sink/restart?includeTasks=true&onlyFailed=true", ""},
		request{"POST", "/connectors/file-sink/restart?includeTasks=true", ""},
	)
}

func TestOffsetsGet(t *testing.T) {
	w := newWorker(t, map[string]reply{
		"GET /connectors/file-sink/offsets": {200, sinkOffsets},
		"GET /connectors/empty/offsets":     {200, `{"offsets":[]}`},
		"GET /connectors/nope/offsets":      {404, `{"error_code":404,"message":"Connector nope not found"}`},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "get", "file-sink"), result{0,
		"PARTITION                                      OFFSET\n" +
			`{"kafka_partition":0,"kafka_topic":"lines"}    {"kafka_offset":4711}` + "\n" +
			`{"kafka_partition":1,"kafka_topic":"lines"}    {"kafka_offset":17}` + "\n" +
			`{"kafka_partition":10,"kafka_topic":"lines"}   {"kafka_offset":3}` + "\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "get", "file-sink", "-o", "json"), result{0, `{
  "offsets": [
    {
      "partition": {
        "kafka_partition": 10,
        "kafka_topic": "lines"
      },
      "offset": {
        "kafka_offset": 3
      }
    },
    {
      "partition": {
        "kafka_partition": 1,
        "kafka_topic": "lines"
      },
      "offset": {
        "kafka_offset": 17
      }
    },
    {
      "partition": {
        "kafka_partition": 0,
        "kafka_topic": "lines"
      },
      "offset": {
        "kafka_offset": 4711
      }
    }
  ]
}
`, ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "get", "empty", "-o", "json"), result{0, "{\n  \"offsets\": []\n}\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "get", "empty"), result{0, "PARTITION   OFFSET\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "get", "nope"), result{1, "", "Error: Connector nope not found\n"})
}

func TestOffsetsSetAndReset(t *testing.T) {
	const body = `{"offsets":[{"partition":{"kafka_topic":"lines","kafka_partition":0},"offset":{"kafka_offset":5}},
	  {"partition":{"kafka_topic":"lines","kafka_partition":1},"offset":null}]}`
	const sent = `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"lines"},"offset":{"kafka_offset":5}},{"partition":{"kafka_partition":1,"kafka_topic":"lines"},"offset":null}]}`
	file := filepath.Join(t.TempDir(), "offsets.json")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, map[string]reply{
		"PATCH /connectors/file-sink/offsets":  {200, alteredBody},
		"PATCH /connectors/running/offsets":    {400, notStopped},
		"DELETE /connectors/file-sink/offsets": {200, resetBody},
		"DELETE /connectors/running/offsets":   {400, notStopped},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "file-sink", "-f", file), result{0,
		"The offsets for this connector have been altered successfully\n", ""})
	check(t, runCLI(t, nil, body, "--url", w.URL, "offsets", "set", "file-sink", "--file", "-"), result{0,
		"The offsets for this connector have been altered successfully\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "running", "-f", file), result{1, "",
		"Error: Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/file-sink/stop' endpoint\n" +
			"hint: stop it first: connectctl stop running\n"})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "reset", "file-sink"), result{0,
		"The offsets for this connector have been reset successfully\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "reset", "running"), result{1, "",
		"Error: Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/file-sink/stop' endpoint\n" +
			"hint: stop it first: connectctl stop running\n"})
	checkRequests(t, w,
		request{"PATCH", "/connectors/file-sink/offsets", sent},
		request{"PATCH", "/connectors/file-sink/offsets", sent},
		request{"PATCH", "/connectors/running/offsets", sent},
		request{"DELETE", "/connectors/file-sink/offsets", ""},
		request{"DELETE", "/connectors/running/offsets", ""},
	)
}

func TestOffsetsSetBadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	w := newWorker(t, nil)
	list := write("list.json", `[{"partition":{},"offset":{}}]`)
	res := runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "x", "-f", list)
	if res.code != 1 || !strings.HasPrefix(res.stderr, "Error: "+list+`: want {"offsets":[{"partition":{...},"offset":{...}}]}: `) {
		t.Errorf("list file: %+v", res)
	}
	typo := write("typo.json", `{"offset":[]}`)
	res = runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "x", "-f", typo)
	if res.code != 1 || !strings.Contains(res.stderr, `unknown field "offset"`) {
		t.Errorf("typo file: %+v", res)
	}
	empty := write("empty.json", `{}`)
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "x", "-f", empty), result{1, "", "Error: " + empty + `: no "offsets" list` + "\n"})
	missing := filepath.Join(dir, "missing.json")
	res = runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "x", "-f", missing)
	if res.code != 1 || !strings.Contains(res.stderr, missing) {
		t.Errorf("missing file: %+v", res)
	}
	check(t, runCLI(t, nil, "", "--url", w.URL, "offsets", "set", "x"), result{1, "", "Error: required flag(s) \"file\" not set\n"})
	if n := len(w.got()); n != 0 {
		t.Errorf("worker got %d requests for bad files", n)
	}
}

func TestPlugins(t *testing.T) {
	w := newWorker(t, map[string]reply{
		"GET /connector-plugins?connectorsOnly=true":  {200, pluginsBody},
		"GET /connector-plugins?connectorsOnly=false": {200, `[{"class":"org.apache.kafka.connect.json.JsonConverter","type":"converter","version":"3.9.0"}]`},
	})
	check(t, runCLI(t, nil, "", "--url", w.URL, "plugins"), result{0,
		"CLASS                                                     TYPE     VERSION\n" +
			"org.apache.kafka.connect.file.FileStreamSinkConnector     sink     3.9.0\n" +
			"org.apache.kafka.connect.file.FileStreamSourceConnector   source   3.9.0\n" +
			"org.apache.kafka.connect.mirror.MirrorSourceConnector     source   -\n", ""})
	check(t, runCLI(t, nil, "", "--url", w.URL, "plugins", "--all", "-o", "json"), result{0, `[
  {
    "class": "org.apache.kafka.connect.json.JsonConverter",
    "type": "converter",
    "version": "3.9.0"
  }
]
`, ""})
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"pause"}, "Error: connectctl pause needs exactly one connector name\n"},
		{[]string{"describe", "a", "b"}, "Error: connectctl describe needs exactly one connector name\n"},
		{[]string{"get"}, "Error: get needs a resource: connectors\n"},
		{[]string{"get", "tasks"}, "Error: unknown resource \"tasks\": want connectors\n"},
		{[]string{"offsets"}, "Error: offsets needs a subcommand: get, set or reset\n"},
		{[]string{"-o", "yaml", "plugins"}, "Error: invalid output format \"yaml\": want json or table\n"},
		{[]string{"--url", "localhost:8083", "plugins"}, "Error: client: bad base URL \"localhost:8083\": want http(s)://host[:port]\n"},
		{[]string{"frobnicate"}, "Error: unknown command \"frobnicate\" for \"connectctl\"\n"},
	}
	for _, tt := range tests {
		check(t, runCLI(t, nil, "", tt.args...), result{1, "", tt.stderr})
	}
}

func TestServerErrorWithoutJSON(t *testing.T) {
	w := newWorker(t, map[string]reply{"PUT /connectors/x/stop": {500, `{"error_code":500,"message":"No connector ` + "`x`" + ` configured"}`}})
	check(t, runCLI(t, nil, "", "--url", w.URL, "stop", "x"), result{1, "", "Error: No connector `x` configured\n"})
	w2 := newWorker(t, map[string]reply{"PUT /connectors/x/stop": {502, "Bad Gateway"}})
	check(t, runCLI(t, nil, "", "--url", w2.URL, "stop", "x"), result{1, "", "Error: Bad Gateway\n"})
}
