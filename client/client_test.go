package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// exchange is one request the fake worker expects and its answer.
type exchange struct {
	method string
	uri    string // the exact request URI: escaped path and query
	body   string // the exact request body; "" for none
	status int
	file   string // the answer body from testdata, or
	resp   string // this answer body
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fake starts a worker that answers ex once, checking the request.
func fake(t *testing.T, ex exchange, opts ...Option) *Client {
	t.Helper()
	answer := []byte(ex.resp)
	if ex.file != "" {
		answer = readTestdata(t, ex.file)
	}
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.Method != ex.method {
			t.Errorf("method = %s, want %s", r.Method, ex.method)
		}
		if r.RequestURI != ex.uri {
			t.Errorf("request URI = %s, want %s", r.RequestURI, ex.uri)
		}
		body, _ := io.ReadAll(r.Body)
		if string(body) != ex.body {
			t.Errorf("body = %s\nwant %s", body, ex.body)
		}
		if ct := r.Header.Get("Content-Type"); ex.body != "" && ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		if a := r.Header.Get("Accept"); a != "application/json" {
			t.Errorf("Accept = %q", a)
		}
		if strings.HasSuffix(ex.file, ".json") || strings.HasPrefix(ex.resp, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(ex.status)
		w.Write(answer)
	}))
	t.Cleanup(func() {
		srv.Close()
		if calls != 1 {
			t.Errorf("worker got %d requests, want 1", calls)
		}
	})
	c, err := New(srv.URL+"/", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

const failedTrace = "org.apache.kafka.connect.errors.ConnectException: Exiting WorkerSinkTask due to unrecoverable exception.\n" +
	"\tat org.apache.kafka.connect.runtime.WorkerSinkTask.deliverMessages(WorkerSinkTask.java:636)\n" +
	"\tat org.apache.kafka.connect.runtime.WorkerSinkTask.poll(WorkerSinkTask.java:345)\n" +
	"\tat java.base/java.lang.Thread.run(Thread.java:840)\n" +
	"Caused by: org.apache.kafka.connect.errors.ConnectException: java.io.FileNotFoundException: /root/out.txt (Permission denied)\n" +
	"\tat org.apache.kafka.connect.file.FileStreamSinkTask.put(FileStreamSinkTask.java:90)\n" +
	"\t... 11 more\n"

var fileSrcConfig = map[string]string{
	"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "tasks.max": "1", "name": "file-src", "topic": "lines",
}

func TestMethods(t *testing.T) {
	tests := []struct {
		name string
		ex   exchange
		call func(context.Context, *Client) (any, error)
		want any
	}{
		{
			name: "ServerInfo",
			ex:   exchange{method: "GET", uri: "/", status: 200, file: "server_info.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.ServerInfo(ctx) },
			want: &ServerInfo{Version: "3.9.0", Commit: "a60e31147e6b01ee", KafkaClusterID: "Nk018hRAQFytWskYqtQduw"},
		},
		{
			name: "Health",
			ex:   exchange{method: "GET", uri: "/health", status: 200, file: "health.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Health(ctx) },
			want: &WorkerStatus{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests."},
		},
		{
			name: "Connectors",
			ex:   exchange{method: "GET", uri: "/connectors", status: 200, file: "connectors.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Connectors(ctx) },
			want: []string{"file-src", "file-sink"},
		},
		{
			name: "ConnectorsExpanded status only",
			ex:   exchange{method: "GET", uri: "/connectors?expand=status", status: 200, file: "connectors_expanded_status.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.ConnectorsExpanded(ctx, "status") },
			want: map[string]ConnectorExpanded{"file-src": {Status: &ConnectorStatus{
				Name: "file-src", Type: "source",
				Connector: State{State: "PAUSED", WorkerID: "10.0.0.5:8083"},
				Tasks:     []TaskState{{ID: 0, State: "PAUSED", WorkerID: "10.0.0.5:8083"}},
			}}},
		},
		{
			name: "Connector",
			ex:   exchange{method: "GET", uri: "/connectors/file-src", status: 200, file: "connector_info.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Connector(ctx, "file-src") },
			want: &ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{{"file-src", 0}}, Type: "source"},
		},
		{
			name: "Config",
			ex:   exchange{method: "GET", uri: "/connectors/file-src/config", status: 200, file: "config.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Config(ctx, "file-src") },
			want: fileSrcConfig,
		},
		{
			name: "CreateConnector",
			ex: exchange{method: "POST", uri: "/connectors", status: 201, file: "connector_created.json",
				body: `{"name":"file-src","config":{"connector.class":"FileStreamSource","file":"/tmp/in.txt","tasks.max":"1","topic":"lines"},"initial_state":"STOPPED"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateConnector(ctx, "file-src", map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": "/tmp/in.txt", "topic": "lines"}, "STOPPED", nil)
			},
			want: &ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{}, Type: "source"},
		},
		{
			name: "CreateConnector minimal body",
			ex: exchange{method: "POST", uri: "/connectors", status: 201, file: "connector_created.json",
				body: `{"name":"file-src"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateConnector(ctx, "file-src", nil, "", nil)
			},
			want: &ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{}, Type: "source"},
		},
		{
			name: "CreateConnector with initial offsets",
			ex: exchange{method: "POST", uri: "/connectors", status: 201, file: "connector_created.json",
				body: `{"name":"file-src","config":{"connector.class":"FileStreamSource"},"initial_offsets":[{"partition":{"filename":"/tmp/in.txt"},"offset":{"position":30}}]}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateConnector(ctx, "file-src", map[string]string{"connector.class": "FileStreamSource"}, "",
					[]ConnectorOffset{{Partition: map[string]any{"filename": "/tmp/in.txt"}, Offset: map[string]any{"position": int64(30)}}})
			},
			want: &ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{}, Type: "source"},
		},
		{
			name: "PutConfig created",
			ex: exchange{method: "PUT", uri: "/connectors/file-src/config", status: 201, file: "connector_created.json",
				body: `{"connector.class":"FileStreamSource"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				info, created, err := c.PutConfig(ctx, "file-src", map[string]string{"connector.class": "FileStreamSource"})
				return []any{info, created}, err
			},
			want: []any{&ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{}, Type: "source"}, true},
		},
		{
			name: "PutConfig updated",
			ex: exchange{method: "PUT", uri: "/connectors/file-src/config", status: 200, file: "connector_info.json",
				body: `{"connector.class":"FileStreamSource","name":"file-src"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				info, created, err := c.PutConfig(ctx, "file-src", map[string]string{"connector.class": "FileStreamSource", "name": "file-src"})
				return []any{info, created}, err
			},
			want: []any{&ConnectorInfo{Name: "file-src", Config: fileSrcConfig, Tasks: []TaskID{{"file-src", 0}}, Type: "source"}, false},
		},
		{
			name: "PatchConfig",
			ex: exchange{method: "PATCH", uri: "/connectors/file-src/config", status: 200, file: "connector_patched.json",
				body: `{"batch.size":null,"file":"/tmp/in2.txt"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.PatchConfig(ctx, "file-src", map[string]*string{"file": ptr("/tmp/in2.txt"), "batch.size": nil})
			},
			want: &ConnectorInfo{Name: "file-src", Type: "source", Tasks: []TaskID{{"file-src", 0}}, Config: map[string]string{
				"connector.class": "FileStreamSource", "file": "/tmp/in2.txt", "tasks.max": "1", "name": "file-src", "topic": "lines"}},
		},
		{
			name: "Delete",
			ex:   exchange{method: "DELETE", uri: "/connectors/file-src", status: 204},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.Delete(ctx, "file-src") },
		},
		{
			name: "Status with a failed task",
			ex:   exchange{method: "GET", uri: "/connectors/file-sink/status", status: 200, file: "status_failed.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Status(ctx, "file-sink") },
			want: &ConnectorStatus{
				Name: "file-sink", Type: "sink",
				Connector: State{State: "RUNNING", WorkerID: "10.0.0.5:8083"},
				Tasks: []TaskState{
					{ID: 0, State: "FAILED", WorkerID: "10.0.0.6:8083", Trace: failedTrace},
					{ID: 1, State: "RUNNING", WorkerID: "10.0.0.5:8083"},
				},
			},
		},
		{
			name: "Tasks",
			ex:   exchange{method: "GET", uri: "/connectors/file-sink/tasks", status: 200, file: "tasks.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Tasks(ctx, "file-sink") },
			want: []TaskInfo{{ID: TaskID{"file-sink", 0}, Config: map[string]string{
				"connector.class": "FileStreamSink", "file": "/tmp/out.txt", "name": "file-sink",
				"task.class": "org.apache.kafka.connect.file.FileStreamSinkTask", "tasks.max": "1", "topics": "lines"}}},
		},
		{
			name: "TaskStatus",
			ex:   exchange{method: "GET", uri: "/connectors/file-sink/tasks/0/status", status: 200, file: "task_status_failed.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.TaskStatus(ctx, "file-sink", 0) },
			want: &TaskState{ID: 0, State: "FAILED", WorkerID: "10.0.0.6:8083",
				Trace: "org.apache.kafka.connect.errors.ConnectException: Exiting WorkerSinkTask due to unrecoverable exception.\n\tat org.apache.kafka.connect.runtime.WorkerSinkTask.deliverMessages(WorkerSinkTask.java:636)\n"},
		},
		{
			name: "Restart legacy",
			ex:   exchange{method: "POST", uri: "/connectors/file-sink/restart", status: 204},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Restart(ctx, "file-sink", false, false) },
			want: (*ConnectorStatus)(nil),
		},
		{
			name: "Restart with tasks",
			ex:   exchange{method: "POST", uri: "/connectors/file-sink/restart?includeTasks=true&onlyFailed=true", status: 202, file: "restart_accepted.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Restart(ctx, "file-sink", true, true) },
			want: &ConnectorStatus{
				Name: "file-sink", Type: "sink",
				Connector: State{State: "RUNNING", WorkerID: "10.0.0.5:8083"},
				Tasks: []TaskState{
					{ID: 0, State: "RESTARTING", WorkerID: "10.0.0.6:8083"},
					{ID: 1, State: "RUNNING", WorkerID: "10.0.0.5:8083"},
				},
			},
		},
		{
			name: "RestartTask",
			ex:   exchange{method: "POST", uri: "/connectors/file-sink/tasks/3/restart", status: 204},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.RestartTask(ctx, "file-sink", 3) },
		},
		{
			name: "Pause",
			ex:   exchange{method: "PUT", uri: "/connectors/file-src/pause", status: 202},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.Pause(ctx, "file-src") },
		},
		{
			name: "Resume",
			ex:   exchange{method: "PUT", uri: "/connectors/file-src/resume", status: 202},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.Resume(ctx, "file-src") },
		},
		{
			name: "Stop",
			ex:   exchange{method: "PUT", uri: "/connectors/file-src/stop", status: 204},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.Stop(ctx, "file-src") },
		},
		{
			name: "Topics",
			ex:   exchange{method: "GET", uri: "/connectors/file-sink/topics", status: 200, file: "topics.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Topics(ctx, "file-sink") },
			want: []string{"lines"},
		},
		{
			name: "ResetTopics",
			ex:   exchange{method: "PUT", uri: "/connectors/file-sink/topics/reset", status: 202},
			call: func(ctx context.Context, c *Client) (any, error) { return nil, c.ResetTopics(ctx, "file-sink") },
		},
		{
			name: "Offsets sink",
			ex:   exchange{method: "GET", uri: "/connectors/file-sink/offsets", status: 200, file: "offsets_sink.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Offsets(ctx, "file-sink") },
			want: []ConnectorOffset{{
				Partition: map[string]any{"kafka_partition": int64(0), "kafka_topic": "lines"},
				Offset:    map[string]any{"kafka_offset": int64(4711)},
			}},
		},
		{
			name: "Offsets source",
			ex:   exchange{method: "GET", uri: "/connectors/file-src/offsets", status: 200, file: "offsets_source.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Offsets(ctx, "file-src") },
			want: []ConnectorOffset{{
				Partition: map[string]any{"filename": "/tmp/in.txt"},
				Offset:    map[string]any{"position": int64(1234)},
			}},
		},
		{
			name: "Offsets empty",
			ex:   exchange{method: "GET", uri: "/connectors/file-src/offsets", status: 200, file: "offsets_empty.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Offsets(ctx, "file-src") },
			want: []ConnectorOffset{},
		},
		{
			name: "AlterOffsets",
			ex: exchange{method: "PATCH", uri: "/connectors/file-sink/offsets", status: 200, file: "offsets_altered.json",
				body: `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"test"},"offset":{"kafka_offset":5}},{"partition":{"kafka_partition":1,"kafka_topic":"test"},"offset":null}]}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.AlterOffsets(ctx, "file-sink", []ConnectorOffset{
					{Partition: map[string]any{"kafka_topic": "test", "kafka_partition": 0}, Offset: map[string]any{"kafka_offset": int64(5)}},
					{Partition: map[string]any{"kafka_topic": "test", "kafka_partition": 1}},
				})
			},
			want: "The offsets for this connector have been altered successfully",
		},
		{
			name: "ResetOffsets",
			ex:   exchange{method: "DELETE", uri: "/connectors/file-src/offsets", status: 200, file: "offsets_reset.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.ResetOffsets(ctx, "file-src") },
			want: "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses.",
		},
		{
			name: "Plugins connectors only",
			ex:   exchange{method: "GET", uri: "/connector-plugins?connectorsOnly=true", status: 200, file: "plugins.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Plugins(ctx, true) },
			want: []PluginInfo{
				{"org.apache.kafka.connect.file.FileStreamSinkConnector", "sink", "3.9.0"},
				{"org.apache.kafka.connect.file.FileStreamSourceConnector", "source", "3.9.0"},
				{"org.apache.kafka.connect.mirror.MirrorCheckpointConnector", "source", "3.9.0"},
				{"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector", "source", "3.9.0"},
				{"org.apache.kafka.connect.mirror.MirrorSourceConnector", "source", "3.9.0"},
			},
		},
		{
			name: "Plugins all",
			ex:   exchange{method: "GET", uri: "/connector-plugins?connectorsOnly=false", status: 200, file: "plugins_all.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Plugins(ctx, false) },
			want: []PluginInfo{
				{"org.apache.kafka.connect.file.FileStreamSinkConnector", "sink", "3.9.0"},
				{"org.apache.kafka.connect.transforms.InsertField$Value", "transformation", "3.9.0"},
				{"org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicate", "3.9.0"},
				{"org.apache.kafka.connect.json.JsonConverter", "converter", "3.9.0"},
				{"org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter", ""},
			},
		},
		{
			name: "PluginConfig",
			ex:   exchange{method: "GET", uri: "/connector-plugins/FileStreamSource/config", status: 200, file: "plugin_config.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.PluginConfig(ctx, "FileStreamSource") },
			want: []ConfigKeyInfo{
				{Name: "file", Type: "STRING", Importance: "HIGH", Documentation: "Source filename. If not specified, the standard input will be used", Order: -1, Width: "NONE", DisplayName: "file", Dependents: []string{}},
				{Name: "topic", Type: "LIST", Required: true, Importance: "HIGH", Documentation: "The topic to publish data to", Order: -1, Width: "NONE", DisplayName: "topic", Dependents: []string{}},
				{Name: "batch.size", Type: "INT", DefaultValue: ptr("2000"), Importance: "LOW", Documentation: "The maximum number of records the source task can read from the file each time it is polled", Order: -1, Width: "NONE", DisplayName: "batch.size", Dependents: []string{}},
			},
		},
		{
			name: "Validate",
			ex: exchange{method: "PUT", uri: "/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config/validate", status: 200, file: "validate.json",
				body: `{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","custom.key":"v","name":"x"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Validate(ctx, "org.apache.kafka.connect.file.FileStreamSourceConnector",
					map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "name": "x", "custom.key": "v"})
			},
			want: &ConfigInfos{
				Name: "org.apache.kafka.connect.file.FileStreamSourceConnector", ErrorCount: 1,
				Groups: []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"},
				Configs: []ConfigInfo{
					{
						Definition: &ConfigKeyInfo{Name: "name", Type: "STRING", Required: true, Importance: "HIGH", Documentation: "Globally unique name to use for this connector.", Group: ptr("Common"), Order: 1, Width: "MEDIUM", DisplayName: "Connector name", Dependents: []string{}},
						Value:      &ConfigValueInfo{Name: "name", Value: ptr("x"), RecommendedValues: []string{}, Errors: []string{}, Visible: true},
					},
					{
						Definition: &ConfigKeyInfo{Name: "topic", Type: "LIST", Required: true, Importance: "HIGH", Documentation: "The topic to publish data to", Order: -1, Width: "NONE", DisplayName: "topic", Dependents: []string{}},
						Value:      &ConfigValueInfo{Name: "topic", RecommendedValues: []string{}, Errors: []string{`Missing required configuration "topic" which has no default value.`}, Visible: true},
					},
					{
						Value: &ConfigValueInfo{Name: "custom.key", Value: ptr("v"), RecommendedValues: []string{}, Errors: []string{}, Visible: true},
					},
				},
			},
		},
		{
			name: "Loggers",
			ex:   exchange{method: "GET", uri: "/admin/loggers", status: 200, file: "loggers.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Loggers(ctx) },
			want: map[string]LoggerLevel{
				"org.apache.kafka.connect": {Level: "DEBUG", LastModified: ptr(int64(1729800000000))},
				"root":                     {Level: "INFO"},
			},
		},
		{
			name: "Logger",
			ex:   exchange{method: "GET", uri: "/admin/loggers/org.apache.kafka.connect", status: 200, file: "logger.json"},
			call: func(ctx context.Context, c *Client) (any, error) { return c.Logger(ctx, "org.apache.kafka.connect") },
			want: &LoggerLevel{Level: "DEBUG", LastModified: ptr(int64(1729800000000))},
		},
		{
			name: "SetLogger worker scope",
			ex: exchange{method: "PUT", uri: "/admin/loggers/org.apache.kafka.connect", status: 200, file: "set_logger.json",
				body: `{"level":"DEBUG"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SetLogger(ctx, "org.apache.kafka.connect", "DEBUG", "")
			},
			want: []string{"org.apache.kafka.connect", "org.apache.kafka.connect.runtime.Worker", "org.apache.kafka.connect.runtime.WorkerSinkTask"},
		},
		{
			name: "SetLogger cluster scope",
			ex: exchange{method: "PUT", uri: "/admin/loggers/root?scope=cluster", status: 204,
				body: `{"level":"WARN"}`},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SetLogger(ctx, "root", "WARN", ScopeCluster)
			},
			want: []string(nil),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake(t, tt.ex)
			got, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("got  %#v\nwant %#v\n(%s\n vs %s)", got, tt.want, g, w)
			}
		})
	}
}

func TestConnectorsExpanded(t *testing.T) {
	c := fake(t, exchange{method: "GET", uri: "/connectors?expand=status&expand=info", status: 200, file: "connectors_expanded.json"})
	got, err := c.ConnectorsExpanded(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d connectors", len(got))
	}
	sink := got["file-sink"]
	if sink.Status == nil || sink.Info == nil {
		t.Fatalf("file-sink = %+v", sink)
	}
	if sink.Status.Tasks[0].State != StateFailed || !strings.HasPrefix(sink.Status.Tasks[0].Trace, "org.apache.kafka.connect.errors.ConnectException: Couldn't find or create file '/root/out.txt'") {
		t.Errorf("task 0 = %+v", sink.Status.Tasks[0])
	}
	if sink.Info.Type != TypeSink || len(sink.Info.Tasks) != 2 || sink.Info.Tasks[1] != (TaskID{"file-sink", 1}) || sink.Info.Config["topics"] != "lines" {
		t.Errorf("info = %+v", sink.Info)
	}
	src := got["file-src"]
	if src.Status.Connector.State != StateRunning || src.Info.Config["file"] != "/tmp/in.txt" {
		t.Errorf("file-src = %+v %+v", src.Status, src.Info)
	}
}

// Names are one path segment: '/', '?', '#', '%' and spaces are escaped.
func TestNameEscaping(t *testing.T) {
	const name = "my conn/1?x#%é"
	const esc = "/connectors/my%20conn%2F1%3Fx%23%25%C3%A9"
	tests := []struct {
		ex   exchange
		call func(context.Context, *Client) error
	}{
		{exchange{method: "GET", uri: esc + "/status", status: 200, file: "status_failed.json"},
			func(ctx context.Context, c *Client) error { _, err := c.Status(ctx, name); return err }},
		{exchange{method: "PUT", uri: esc + "/stop", status: 204},
			func(ctx context.Context, c *Client) error { return c.Stop(ctx, name) }},
		{exchange{method: "DELETE", uri: esc, status: 204},
			func(ctx context.Context, c *Client) error { return c.Delete(ctx, name) }},
		{exchange{method: "POST", uri: esc + "/restart?onlyFailed=true", status: 202, file: "restart_accepted.json"},
			func(ctx context.Context, c *Client) error { _, err := c.Restart(ctx, name, false, true); return err }},
		{exchange{method: "GET", uri: "/connector-plugins/a%2Fb%20c/config", status: 200, resp: "[]"},
			func(ctx context.Context, c *Client) error { _, err := c.PluginConfig(ctx, "a/b c"); return err }},
		{exchange{method: "GET", uri: "/admin/loggers/a%2Fb", status: 200, file: "logger.json"},
			func(ctx context.Context, c *Client) error { _, err := c.Logger(ctx, "a/b"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.ex.method+" "+tt.ex.uri, func(t *testing.T) {
			if err := tt.call(context.Background(), fake(t, tt.ex)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestEmptyName(t *testing.T) {
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(context.Background(), ""); err == nil || err.Error() != "client: empty connector name" {
		t.Errorf("Status(\"\") = %v", err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		ex   exchange
		call func(context.Context, *Client) error
		want Error
	}{
		{
			name: "400 alter offsets while running",
			ex: exchange{method: "PATCH", uri: "/connectors/file-sink/offsets", status: 400, file: "error_400_not_stopped.json",
				body: `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"lines"},"offset":{"kafka_offset":0}}]}`},
			call: func(ctx context.Context, c *Client) error {
				_, err := c.AlterOffsets(ctx, "file-sink", []ConnectorOffset{{
					Partition: map[string]any{"kafka_topic": "lines", "kafka_partition": 0},
					Offset:    map[string]any{"kafka_offset": 0},
				}})
				return err
			},
			want: Error{400, 400, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/file-sink/stop' endpoint"},
		},
		{
			name: "404 not found",
			ex:   exchange{method: "GET", uri: "/connectors/nope", status: 404, file: "error_404.json"},
			call: func(ctx context.Context, c *Client) error { _, err := c.Connector(ctx, "nope"); return err },
			want: Error{404, 404, "Connector nope not found"},
		},
		{
			name: "409 conflict",
			ex: exchange{method: "POST", uri: "/connectors", status: 409, file: "error_409.json",
				body: `{"name":"file-src","config":{"connector.class":"FileStreamSource"}}`},
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateConnector(ctx, "file-src", map[string]string{"connector.class": "FileStreamSource"}, "", nil)
				return err
			},
			want: Error{409, 409, "Connector file-src already exists"},
		},
		{
			name: "500 with null message",
			ex:   exchange{method: "PUT", uri: "/connectors/x/stop", status: 500, file: "error_500_null.json"},
			call: func(ctx context.Context, c *Client) error { return c.Stop(ctx, "x") },
			want: Error{500, 500, "500 Internal Server Error"},
		},
		{
			name: "unknown route",
			ex:   exchange{method: "GET", uri: "/connectors/x/offsets", status: 404, file: "error_404_route.json"},
			call: func(ctx context.Context, c *Client) error { _, err := c.Offsets(ctx, "x"); return err },
			want: Error{404, 404, "HTTP 404 Not Found"},
		},
		{
			name: "non-JSON body",
			ex:   exchange{method: "GET", uri: "/connectors", status: 502, file: "error_502_proxy.html"},
			call: func(ctx context.Context, c *Client) error { _, err := c.Connectors(ctx); return err },
			want: Error{502, 0, "<html>\n<head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center></body>\n</html>"},
		},
		{
			name: "JSON of another shape",
			ex:   exchange{method: "GET", uri: "/connectors", status: 401, resp: `{"error":"unauthorized"}`},
			call: func(ctx context.Context, c *Client) error { _, err := c.Connectors(ctx); return err },
			want: Error{401, 0, `{"error":"unauthorized"}`},
		},
		{
			name: "empty body",
			ex:   exchange{method: "GET", uri: "/", status: 503},
			call: func(ctx context.Context, c *Client) error { _, err := c.ServerInfo(ctx); return err },
			want: Error{503, 0, "503 Service Unavailable"},
		},
		{
			name: "health starting",
			ex:   exchange{method: "GET", uri: "/health", status: 503, file: "health_starting.json"},
			call: func(ctx context.Context, c *Client) error { _, err := c.Health(ctx); return err },
			want: Error{503, 0, "Worker is still starting up."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(context.Background(), fake(t, tt.ex))
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if *got != tt.want {
				t.Errorf("err = %#v\nwant %#v", *got, tt.want)
			}
			if err.Error() != tt.want.Message {
				t.Errorf("Error() = %q", err.Error())
			}
			if IsNotFound(err) != (tt.want.StatusCode == 404) || IsConflict(err) != (tt.want.StatusCode == 409) {
				t.Errorf("IsNotFound/IsConflict wrong for %d", tt.want.StatusCode)
			}
		})
	}
}

// Offsets keep integral numbers as int64 and others as float64, nested
// values included, and write float64 back with a fraction.
func TestOffsetNumbers(t *testing.T) {
	const in = `{"offsets":[{"partition":{"protocol":"1","table":"orders.orders","nested":{"n":[1,2.5,"x",null,true]}},` +
		`"offset":{"incrementing":1042,"timestamp":1720627800000,"timestamp_nanos":0,"ratio":0.25,"whole":1.0,"exp":1e3,"neg":-9223372036854775808,"huge":9223372036854775808}}]}`
	c := fake(t, exchange{method: "GET", uri: "/connectors/orders-source/offsets", status: 200, resp: in})
	got, err := c.Offsets(context.Background(), "orders-source")
	if err != nil {
		t.Fatal(err)
	}
	want := []ConnectorOffset{{
		Partition: map[string]any{"protocol": "1", "table": "orders.orders", "nested": map[string]any{"n": []any{int64(1), 2.5, "x", nil, true}}},
		Offset: map[string]any{"incrementing": int64(1042), "timestamp": int64(1720627800000), "timestamp_nanos": int64(0),
			"ratio": 0.25, "whole": 1.0, "exp": 1000.0, "neg": int64(-9223372036854775808), "huge": 9223372036854775808.0},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	out, err := json.Marshal(ConnectorOffsets{Offsets: got})
	if err != nil {
		t.Fatal(err)
	}
	const wantOut = `{"offsets":[{"partition":{"nested":{"n":[1,2.5,"x",null,true]},"protocol":"1","table":"orders.orders"},` +
		`"offset":{"exp":1000.0,"huge":9223372036854776000.0,"incrementing":1042,"neg":-9223372036854775808,"ratio":0.25,"timestamp":1720627800000,"timestamp_nanos":0,"whole":1.0}}]}`
	if string(out) != wantOut {
		t.Errorf("marshal\n got %s\nwant %s", out, wantOut)
	}
	var back ConnectorOffsets
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Offsets, want) {
		t.Errorf("round trip %#v", back.Offsets)
	}
}

func TestOptions(t *testing.T) {
	// The slow handler below outlives the call that gave up on it, so
	// what handlers share is locked.
	var mu sync.Mutex
	var auth string
	gotAuth := func() string { mu.Lock(); defer mu.Unlock(); return auth }
	body := readTestdata(t, "connectors.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/prefix/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		} else {
			mu.Lock()
			auth = r.Header.Get("Authorization")
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()

	hc := &http.Client{}
	c, err := New(srv.URL+"/prefix/", WithHTTPClient(hc), WithBasicAuth("connect", "s3cret"), WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != srv.URL+"/prefix" {
		t.Errorf("BaseURL = %s", c.BaseURL())
	}
	if _, err := c.Connectors(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("connect:s3cret")); gotAuth() != want {
		t.Errorf("Authorization = %q, want %q", gotAuth(), want)
	}
	start := time.Now()
	_, err = c.do(context.Background(), "GET", "/slow", nil, nil, new([]string))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Errorf("slow call = %v after %v, want a deadline error", err, time.Since(start))
	}

	// Credentials in the URL.
	u := strings.Replace(srv.URL, "http://", "http://u:p@", 1)
	c, err = New(u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connectors(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:p")); gotAuth() != want || strings.Contains(c.BaseURL(), "u:p") {
		t.Errorf("Authorization = %q, base %s", gotAuth(), c.BaseURL())
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8083", "ftp://x", "http://", "http://x/?a=b", "http://x/#f", "://x"} {
		if _, err := New(u); err == nil {
			t.Errorf("New(%q) succeeded", u)
		}
	}
}

func TestBadSuccessBody(t *testing.T) {
	c := fake(t, exchange{method: "GET", uri: "/connectors/x/status", status: 200, resp: "<html>"})
	if _, err := c.Status(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "decoding GET /connectors/x/status response") {
		t.Errorf("err = %v", err)
	}
	c = fake(t, exchange{method: "GET", uri: "/connectors/x/status", status: 200})
	if _, err := c.Status(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "empty response body") {
		t.Errorf("err = %v", err)
	}
}

func TestTLSAndUserAgent(t *testing.T) {
	var gotUA string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.Header.Get("User-Agent")
		w.Header().Set("Content-Type", "application/json")
		w.Write(readTestdata(t, "connectors.json"))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	// Not trusted by default.
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connectors(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	cfg := &tls.Config{RootCAs: pool}
	c, err = New(srv.URL, WithTLSConfig(cfg), WithUserAgent("connectctl/test"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := c.Connectors(context.Background())
	if err != nil || len(names) != 2 || gotUA != "connectctl/test" {
		t.Fatalf("with the CA: %v %v, User-Agent %q", names, err, gotUA)
	}
	// The config is copied: changing it later changes nothing.
	cfg.RootCAs = nil
	if _, err := c.Connectors(context.Background()); err != nil {
		t.Fatalf("after changing the caller's config: %v", err)
	}
	// A nil config leaves the client alone.
	if _, err := New(srv.URL, WithTLSConfig(nil)); err != nil {
		t.Fatal(err)
	}
}
