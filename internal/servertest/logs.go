package servertest

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// LogOnFailure is a writer for the logs of the workers a test starts: it
// keeps them, and prints the last maxLogBytes of them when the test
// failed, so that a failure seen only under load (in CI) shows what the
// workers did.
func LogOnFailure(t testing.TB) io.Writer {
	w := &SyncBuffer{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b := w.Tail(maxLogBytes)
		t.Logf("worker logs (last %d bytes):\n%s", len(b), b)
	})
	return w
}

const maxLogBytes = 64 << 10

// SyncBuffer is a bytes.Buffer that loggers on several goroutines can
// write to while a test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail returns a copy of the last n bytes written at most.
func (b *SyncBuffer) Tail(n int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf.Bytes()
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return bytes.Clone(out)
}
