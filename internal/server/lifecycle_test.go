package server

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
)

// Connectors created through REST survive a restart with their target
// state, which Apache's standalone mode does not do.
func TestConnectorsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a", "b")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "kept", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "t"},
		"initial_state": "PAUSED",
	}))
	if st := w.state("kept"); st != "PAUSED" {
		t.Fatalf("state = %s, want PAUSED", st)
	}
	w.close()

	w = startWorker(t, dir, stringConverters)
	if st := w.state("kept"); st != "PAUSED" {
		t.Fatalf("after restart state = %s, want PAUSED", st)
	}
	w.must(202, "PUT", "/connectors/kept/resume", "")
	if got := readTopic(t, w.bootstrap(), "t", 2); got[0] != "a" || got[1] != "b" {
		t.Fatalf("topic holds %v", got)
	}
	eventually(t, "RUNNING", func() bool { return w.state("kept") == "RUNNING/RUNNING" })
}

// A corrupted offsets file stops the worker with an error naming the
// file: it is never read as empty, which would silently reset every
// source connector.
func TestCorruptedOffsetsFileStopsTheWorker(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "connect.offsets")
	if err := os.WriteFile(path, []byte(`{"format":"connectd.offsets","version":1,"offsets":[{"conn`), 0o644); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": path,
	}
	s, err := StartStandalone(context.Background(), props, nil, builtin.Plugins(), logging.NewRegistry(io.Discard))
	if err == nil {
		s.Close()
		t.Fatal("the worker started on a corrupted offsets file")
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name the file %s", err, path)
	}
}

// The REST entities have Kafka Connect's shapes.
func TestRESTShapes(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	if body := w.must(200, "GET", "/", ""); !strings.HasPrefix(body, `{"version":"3.9.0","commit":`) || !strings.Contains(body, `"kafka_cluster_id":"`) {
		t.Fatalf("GET / = %s", body)
	}
	if body := w.must(200, "GET", "/health", ""); body != `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}` {
		t.Fatalf("GET /health = %s", body)
	}
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "x")
	body := w.must(201, "POST", "/connectors", `{"name":"file-src","config":{"connector.class":"FileStreamSource","tasks.max":"1","file":"`+in+`","topic":"lines"}}`)
	if !strings.HasPrefix(body, `{"name":"file-src","config":{`) || !strings.Contains(body, `"name":"file-src"`) || !strings.HasSuffix(body, `"type":"source"}`) {
		t.Fatalf("POST answer %s", body)
	}
	code, body := w.do("POST", "/connectors", `{"name":"file-src","config":{"connector.class":"FileStreamSource","file":"`+in+`","topic":"lines"}}`)
	if code != 409 || body != `{"error_code":409,"message":"Connector file-src already exists"}` {
		t.Fatalf("duplicate POST: %d %s", code, body)
	}
	eventually(t, "running", func() bool { return w.state("file-src") == "RUNNING/RUNNING" })
	body = w.must(200, "GET", "/connectors?expand=status&expand=info", "")
	if !strings.HasPrefix(body, `{"file-src":{`) || !strings.Contains(body, `"status":{"name":"file-src","connector":{"state":"RUNNING","worker_id":"`) || !strings.Contains(body, `"info":{"name":"file-src"`) {
		t.Fatalf("expanded list = %s", body)
	}
	if body := w.must(200, "GET", "/connectors/file-src/tasks", ""); !strings.HasPrefix(body, `[{"id":{"connector":"file-src","task":0},"config":{`) || !strings.Contains(body, `"task.class":"org.apache.kafka.connect.file.FileStreamSourceTask"`) {
		t.Fatalf("tasks = %s", body)
	}
	if body := w.must(200, "GET", "/connectors/file-src/tasks/0/status", ""); !strings.HasPrefix(body, `{"id":0,"state":"RUNNING","worker_id":"`) {
		t.Fatalf("task status = %s", body)
	}
	code, body = w.do("GET", "/connectors/nope/status", "")
	if code != 404 || body != `{"error_code":404,"message":"No status found for connector nope"}` {
		t.Fatalf("unknown status: %d %s", code, body)
	}
	eventually(t, "topic tracked", func() bool {
		_, body := w.do("GET", "/connectors/file-src/topics", "")
		return body == `{"file-src":{"topics":["lines"]}}`
	})
	if body := w.must(200, "GET", "/connector-plugins", ""); !strings.Contains(body, `{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"3.9.0"}`) {
		t.Fatalf("plugins = %s", body)
	}
	body = w.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSource","name":"x"}`)
	if !strings.HasPrefix(body, `{"name":"FileStreamSource","error_count":1,`) || !strings.Contains(body, `Missing required configuration \"topic\" which has no default value.`) {
		t.Fatalf("validate = %s", body)
	}
	code, body = w.do("POST", "/connectors", `{"name":"bad","config":{"connector.class":"FileStreamSource"}}`)
	if code != 400 || !strings.Contains(body, `Connector configuration is invalid and contains the following 1 error(s):\nMissing required configuration \"topic\" which has no default value.\nYou can also find the above list of errors at the endpoint `) {
		t.Fatalf("invalid create: %d %s", code, body)
	}
	code, body = w.do("POST", "/connectors/file-src/restart?includeTasks=true", "")
	if code != 202 || !strings.Contains(body, `"state":"RESTARTING"`) {
		t.Fatalf("restart with tasks: %d %s", code, body)
	}
	eventually(t, "running after restart", func() bool { return w.state("file-src") == "RUNNING/RUNNING" })
	w.must(204, "POST", "/connectors/file-src/restart", "")
	w.must(202, "PUT", "/connectors/file-src/pause", "")
	eventually(t, "paused", func() bool { return w.state("file-src") == "PAUSED/PAUSED" })
	w.must(202, "PUT", "/connectors/file-src/resume", "")
	eventually(t, "resumed", func() bool { return w.state("file-src") == "RUNNING/RUNNING" })
	w.must(204, "DELETE", "/connectors/file-src", "")
	code, body = w.do("GET", "/connectors/file-src", "")
	if code != 404 || body != `{"error_code":404,"message":"Connector file-src not found"}` {
		t.Fatalf("after delete: %d %s", code, body)
	}
}

// KIP-995: a connector created with initial_offsets starts where they say.
func TestCreateWithInitialOffsets(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lines(1, 4)...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name":            "late",
		"config":          map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "late"},
		"initial_offsets": []any{map[string]any{"partition": map[string]any{"filename": in}, "offset": map[string]any{"position": 18}}},
	}))
	if got := readTopic(t, w.bootstrap(), "late", 2); got[0] != "line-003" || got[1] != "line-004" {
		t.Fatalf("topic holds %v, want lines 3 and 4", got)
	}
}

// A stored connector whose plugin is missing fails alone: the worker and
// the other connectors start, and it can still be deleted.
func TestStoredConnectorWithUnknownClassFailsAlone(t *testing.T) {
	dir := t.TempDir()
	stored := `{"format":"connectd.connectors","version":1,"connectors":[{"name":"gone","config":{"connector.class":"com.example.Gone","name":"gone"},"target_state":"STARTED"}]}`
	if err := os.WriteFile(filepath.Join(dir, "connect.offsets.connectors.json"), []byte(stored), 0o600); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, dir, stringConverters)
	body := w.must(200, "GET", "/connectors/gone/status", "")
	if !strings.Contains(body, `"state":"FAILED"`) || !strings.Contains(body, "com.example.Gone") || !strings.Contains(body, `"type":"unknown"`) {
		t.Fatalf("status of the connector with a missing plugin: %s", body)
	}
	w.must(204, "DELETE", "/connectors/gone", "")
}
