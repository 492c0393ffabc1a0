package servertest

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
)

// LogOnFailure is a writer for the logs of the workers a test starts: it
// keeps them, and prints the last maxLogBytes of them when the test
// failed, so that a failure seen only under load (in CI) shows what the
// workers did. Successful GETs are left out: a test polling a status
// for 30 s would otherwise fill the tail with them and push out what
// happened before.
func LogOnFailure(t testing.TB) io.Writer {
	w := &SyncBuffer{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b := tail(withoutPolls(w.String()), maxLogBytes)
		t.Logf("worker logs without successful GETs (last %d bytes):\n%s", len(b), b)
	})
	return w
}

// withoutPolls drops the request lines of successful GETs.
func withoutPolls(log string) string {
	var out strings.Builder
	for line := range strings.Lines(log) {
		if strings.Contains(line, "msg=request") && strings.Contains(line, "method=GET") && strings.Contains(line, " status=2") {
			continue
		}
		out.WriteString(line)
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
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
