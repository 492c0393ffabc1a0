// Package clustertest starts, for a connector package's tests, a
// distributed worker with exactly-once source support on an embedded
// broker of its own, as a cluster of one runs it.
package clustertest

import (
	"context"
	"io"
	"maps"
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
)

// ExactlyOnce starts the broker and the worker (exactly.once.source.support
// =enabled) running plugins, with extra worker properties, and returns the
// broker's address and the worker's REST API. Both stop with the test.
func ExactlyOnce(t testing.TB, plugins []connect.Plugin, extra map[string]string) (string, servertest.REST) {
	t.Helper()
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(t.TempDir(), "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	props := map[string]string{
		"bootstrap.servers": b.Addr(), "listeners": "http://127.0.0.1:0", "group.id": "exactly-once",
		"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"exactly.once.source.support": "enabled",
	}
	maps.Copy(props, extra)
	d, err := server.StartDistributed(context.Background(), props, plugins, logging.NewRegistry(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return b.Addr(), servertest.REST{T: t, Addr: d.RESTAddr}
}
