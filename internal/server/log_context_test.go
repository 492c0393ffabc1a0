package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/servertest"
)

// A connector's and a task's own log lines name them as Kafka's log
// context does ([name|task-0]), as fields, under the logger of their
// class, whose level /admin/loggers sets.
func TestConnectorLogContext(t *testing.T) {
	dir := t.TempDir()
	logs := &servertest.SyncBuffer{}
	w := startWorkerLogging(t, dir, logs, nil)
	// The task's class logs at DEBUG too, once asked.
	w.must(200, "PUT", "/admin/loggers/org.apache.kafka.connect.file.FileStreamSourceTask", `{"level":"DEBUG"}`)
	// The file does not exist yet: the task says so, then opens it.
	in := filepath.Join(dir, "in.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "lines", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "t"}}))
	line := func(msg string) string {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, msg) {
				return l
			}
		}
		return ""
	}
	eventually(t, "the task's warning", func() bool { return line("Couldn't find file for FileStreamSourceTask") != "" })
	servertest.WriteLines(t, in, "a")
	eventually(t, "the task's DEBUG line", func() bool { return line("Opened file for reading") != "" })
	for msg, want := range map[string][]string{
		"Starting file source connector":              {"logger=org.apache.kafka.connect.file.FileStreamSourceConnector", "connector=lines"},
		"Couldn't find file for FileStreamSourceTask": {"logger=org.apache.kafka.connect.file.FileStreamSourceTask", "connector=lines", "task=0"},
		"Opened file for reading":                     {"level=DEBUG", "logger=org.apache.kafka.connect.file.FileStreamSourceTask", "connector=lines", "task=0"},
	} {
		l := line(msg)
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("%q has no %s: %s", msg, w, l)
			}
		}
	}
}
