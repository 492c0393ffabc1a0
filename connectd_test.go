package connectd

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/connectors/file"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/servertest"
)

func standaloneProps(dir string) map[string]string {
	return map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
	}
}

// A worker knows the plugins it was given and no others: the listing
// shows them, and a built-in class left out is refused as unknown.
func TestStartRunsExactlyItsPlugins(t *testing.T) {
	logs := &servertest.SyncBuffer{}
	w, err := Start(context.Background(), Config{
		Worker:  standaloneProps(t.TempDir()),
		Plugins: append(file.Plugins(), converters.Plugins()...),
		Log:     logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The start is logged with what runs, how and where.
	if l := logs.String(); !strings.Contains(l, `msg="Kafka Connect started"`) || !strings.Contains(l, "mode=standalone") ||
		!strings.Contains(l, "rest="+w.RESTAddr()) || !strings.Contains(l, "connector_plugins=org.apache.kafka.connect.file.FileStreamSinkConnector,org.apache.kafka.connect.file.FileStreamSourceConnector") {
		t.Errorf("the start's log line:\n%s", l)
	}
	if w.BrokerAddr() == "" {
		t.Error("no embedded broker address")
	}
	rest := servertest.REST{T: t, Addr: w.RESTAddr()}
	want := `[{"class":"org.apache.kafka.connect.file.FileStreamSinkConnector","type":"sink","version":"3.9.0"},{"class":"org.apache.kafka.connect.file.FileStreamSourceConnector","type":"source","version":"3.9.0"}]`
	if got := rest.Must(200, "GET", "/connector-plugins", ""); got != want {
		t.Errorf("GET /connector-plugins = %s, want %s", got, want)
	}
	body := rest.Must(400, "POST", "/connectors", `{"name":"j","config":{"connector.class":"JdbcSource","connection.url":"jdbc:sqlite::memory:","topic.prefix":"t"}}`)
	if !strings.Contains(body, "Failed to find any class that implements Connector and which name matches JdbcSource") {
		t.Errorf("a class not given: %s", body)
	}
}

func TestStartRefusesWhatItCannotRun(t *testing.T) {
	dir := t.TempDir()
	dup := append(Builtin(), file.Plugins()[0])
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no plugins", Config{Worker: standaloneProps(dir)}, "no plugins: pass connectd.Builtin(), extended or not"},
		{"a class twice", Config{Worker: standaloneProps(dir), Plugins: dup}, "plugin " + file.SourceConnectorClass + " is given twice as a source"},
		{"connector files for a cluster", Config{Worker: standaloneProps(dir), Distributed: true, ConnectorFiles: []string{"c.properties"}, Plugins: Builtin()},
			"a distributed worker takes no connector files (c.properties): create connectors through its REST API"},
	} {
		c.cfg.Log = io.Discard
		w, err := Start(context.Background(), c.cfg)
		if err == nil {
			w.Close()
			t.Errorf("%s: started", c.name)
		} else if err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
