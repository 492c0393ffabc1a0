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
	w := &testLog{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		b := w.buf.Bytes()
		if len(b) > maxLogBytes {
			b = b[len(b)-maxLogBytes:]
		}
		t.Logf("worker logs (last %d bytes):\n%s", len(b), b)
	})
	return w
}

const maxLogBytes = 64 << 10

type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *testLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}
