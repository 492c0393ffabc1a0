package server

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/logging"
)

// A worker whose Kafka goes away answers GET /health with KIP-1017's 500
// unhealthy, saying why; until then, 200 healthy.
func TestHealthWhenKafkaIsGone(t *testing.T) {
	dir := t.TempDir()
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartStandalone(context.Background(), map[string]string{
		"bootstrap.servers":            b.Addr(),
		"listeners":                    "http://127.0.0.1:0",
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
	}, nil, builtin.Plugins(), logging.NewRegistry(io.Discard))
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	w := &testWorker{t: t, s: s, dir: dir}
	t.Cleanup(w.close)
	eventually(t, "healthy", func() bool { code, _ := w.do("GET", "/health", ""); return code == 200 })
	b.Close()
	code, body := w.do("GET", "/health", "")
	if code != 500 || !strings.Contains(body, `"status":"unhealthy"`) ||
		!strings.Contains(body, "Worker was unable to handle this request and may be unable to handle other requests. The worker cannot reach Kafka") {
		t.Errorf("GET /health with Kafka gone: %d %s", code, body)
	}
}
