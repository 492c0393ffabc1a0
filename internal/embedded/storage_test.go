package embedded

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A segment the broker cannot write (/dev/full answers every write with
// ENOSPC, as a full disk does) fails the produce, and the broker's log
// and StorageError say what failed, with the path and the system's error.
func TestFullDiskIsLoggedWithItsPath(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	seg := filepath.Join(dir, "partitions", "full-0", "0.dat")
	if err := os.MkdirAll(filepath.Dir(seg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", seg); err != nil {
		t.Fatal(err)
	}
	var logs servertest.SyncBuffer
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.StorageError(); err != nil {
		t.Fatalf("StorageError before any write: %v", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = cl.ProduceSync(ctx, &kgo.Record{Topic: "full", Value: []byte("x")}).FirstErr()
	if err != kerr.UnknownServerError {
		t.Fatalf("producing onto a full disk: %v, want UNKNOWN_SERVER_ERROR", err)
	}
	want := "write " + seg + ": no space left on device"
	if serr := b.StorageError(); serr == nil || !strings.Contains(serr.Error(), want) {
		t.Errorf("StorageError: %v, want it to say %q", serr, want)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "embedded broker: ") || !strings.Contains(l, want) {
		t.Errorf("the broker's log does not say %q at ERROR:\n%s", want, l)
	}
}
