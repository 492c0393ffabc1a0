package connectd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// connectd config lists the worker keys of both modes from the spec the
// workers parse them with: each key's mode, type, default and doc.
func TestConfigCommand(t *testing.T) {
	got, err := execute("config")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"offset.flush.interval.ms\n  mode: standalone, distributed; type: LONG; default: \"60000\"\n  Interval at which to try committing offsets for tasks.\n\n",
		"tasks.max.per.connector\n  mode: standalone, distributed; type: INT; default: \"256\"\n",
		"listeners\n  mode: standalone, distributed; type: LIST; default: \"http://:8083\"\n",
		"offset.storage.file.filename\n  mode: standalone; type: STRING; default: \"connectd-data/connect.offsets\"\n",
		"group.id\n  mode: distributed; type: STRING; required\n",
		"offset.storage.partitions\n  mode: distributed; type: INT; default: \"25\"\n",
		"bootstrap.servers\n  mode: standalone, distributed; type: LIST; default: none\n",
		"sasl.jaas.config\n  mode: standalone, distributed\n  Connection security",
		"plugin.path\n  mode: standalone, distributed\n  Kafka's; not used: connectd's plugins are built into its binary",
		"producer.*\n  mode: standalone, distributed\n  Settings of source tasks' producers",
		"status.storage.*\n  mode: distributed\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Count(got, "\n\n") < 100 {
		t.Errorf("only %d keys listed", strings.Count(got, "\n\n"))
	}
}

// A worker file that is not a properties file stops either worker before
// it starts, naming the file and the line.
func TestWorkerFileNotProperties(t *testing.T) {
	path := filepath.Join(t.TempDir(), "worker.json")
	if err := os.WriteFile(path, []byte("{\n  \"bootstrap.servers\": \"x:9092\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"standalone", "distributed"} {
		_, err := execute(mode, path)
		if want := path + `: line 1: not a properties file: "{" is not a config key`; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", mode, err, want)
		}
	}
}
