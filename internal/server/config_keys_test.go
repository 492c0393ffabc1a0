package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
)

// warnings returns the WARN lines of a worker's log.
func warnings(log string) []string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, "level=WARN") {
			out = append(out, line)
		}
	}
	return out
}

// A standalone worker names, at WARN and in Kafka's words, each key it
// does not know, the known key a typo is close to, the mode a key is for,
// and a key Kafka knows that connectd does not use; it says nothing of the
// keys it reads.
func TestStandaloneLogsUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	var log servertest.SyncBuffer
	s, err := StartStandalone(context.Background(), map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"producer.linger.ms":           "5",
		"key.converter.schemas.enable": "false",
		"offset.flush.intervall.ms":    "100",
		"servers.bootstrap":            "x:9092",
		"garbage":                      "",
		"group.id":                     "connect-cluster",
		"plugin.path":                  "/usr/share/java",
	}, nil, builtin.Plugins(), logging.NewRegistry(&log))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := []string{
		`msg="The configuration 'garbage' was supplied but isn't a known config."`,
		`msg="The configuration 'group.id' was supplied but isn't a known config. It is a distributed worker's key."`,
		`msg="The configuration 'offset.flush.intervall.ms' was supplied but isn't a known config. Did you mean 'offset.flush.interval.ms'?"`,
		`msg="The configuration 'plugin.path' was supplied but connectd does not use it: connectd's plugins are built into its binary; it loads none from directories."`,
		`msg="The configuration 'servers.bootstrap' was supplied but isn't a known config. Did you mean 'bootstrap.servers'?"`,
	}
	got := warnings(log.String())
	if len(got) != len(want) {
		t.Fatalf("warnings:\n%s\nwant %d of them", strings.Join(got, ""), len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) || !strings.Contains(got[i], "logger=org.apache.kafka.common.config.AbstractConfig") {
			t.Errorf("warning %d: %s want %s", i, got[i], w)
		}
	}
}

// A distributed worker names a typo of the key it then misses, and a
// standalone key even under a prefix of its own.
func TestDistributedLogsUnknownKeys(t *testing.T) {
	var log servertest.SyncBuffer
	_, err := StartDistributed(context.Background(), map[string]string{
		"group.idd": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"offset.storage.min.insync.replicas": "1", "offset.storage.file.filename": "/tmp/x",
	}, builtin.Plugins(), logging.NewRegistry(&log))
	if err == nil || !strings.Contains(err.Error(), `"group.id"`) {
		t.Fatalf("got %v, want group.id missing", err)
	}
	got := warnings(log.String())
	if len(got) != 2 || !strings.Contains(got[0], `msg="The configuration 'group.idd' was supplied but isn't a known config. Did you mean 'group.id'?"`) ||
		!strings.Contains(got[1], `msg="The configuration 'offset.storage.file.filename' was supplied but isn't a known config. It is a standalone worker's key."`) {
		t.Errorf("warnings: %q", got)
	}
}
