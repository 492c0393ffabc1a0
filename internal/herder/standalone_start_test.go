package herder

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
)

// startCounter is a source connector of no tasks that counts its starts.
type startCounter struct{ starts *atomic.Int32 }

func (startCounter) Version() string            { return "1.0" }
func (startCounter) Config() *connect.ConfigDef { return connect.NewConfigDef() }
func (c startCounter) Start(connect.ConnectorContext, map[string]string) error {
	c.starts.Add(1)
	return nil
}
func (startCounter) TaskConfigs(int) ([]map[string]string, error) { return nil, nil }
func (startCounter) Stop() error                                  { return nil }
func (startCounter) TaskClass() string                            { return "com.example.StartCounterTask" }
func (startCounter) NewTask() connect.SourceTask                  { return nil }

// A connector created through the REST API while the worker starts (it
// serves before Start restores the stored connectors) runs once: Start
// finds it in the store it was just written to, and leaves it be.
func TestStandaloneStartKeepsConnectorCreatedBeforeIt(t *testing.T) {
	dir := t.TempDir()
	cfg, err := worker.ParseConfig(map[string]string{"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"), "bootstrap.servers": "127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	offsets, err := storage.OpenFileOffsetStore(cfg.OffsetFile)
	if err != nil {
		t.Fatal(err)
	}
	configs, err := storage.OpenConfigFileStore(cfg.ConnectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var starts atomic.Int32
	plugins, err := connect.NewPluginSet(connect.Plugin{Class: "com.example.StartCounter", Type: connect.PluginSource, Version: "1.0",
		New: func() any { return startCounter{&starts} }})
	if err != nil {
		t.Fatal(err)
	}
	h := NewStandalone(cfg, cfg.BootstrapServers, offsets, configs, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Plugins: plugins})
	defer h.Close()
	ctx := context.Background()
	if _, err := h.CreateConnector(ctx, "x", map[string]string{"name": "x", "connector.class": "StartCounter"}, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := starts.Load(); n != 1 {
		t.Fatalf("the connector started %d times, want 1", n)
	}
}
