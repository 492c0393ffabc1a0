// Package servertest holds what end-to-end tests of several packages
// share: talking to a worker's REST API, waiting for a condition with a
// deadline, and reading and writing line files.
package servertest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// REST sends requests to a worker's REST API at Addr (host:port).
type REST struct {
	T    testing.TB
	Addr string
}

// Do sends a request and returns the status and body; a transport error
// fails the test.
func (r REST) Do(method, path, body string) (int, string) {
	r.T.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+r.Addr+path, rd)
	if err != nil {
		r.T.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Must sends a request and fails the test unless the status is want.
func (r REST) Must(want int, method, path, body string) string {
	r.T.Helper()
	code, resp := r.Do(method, path, body)
	if code != want {
		r.T.Fatalf("%s %s: status %d, want %d; body %s", method, path, code, want, resp)
	}
	return resp
}

// Eventually polls cond until it holds, failing the test after timeout.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WriteLines appends lines, each with a newline, to the file at path.
func WriteLines(t testing.TB, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// ReadLines returns the lines of a file, none when it is missing or empty.
func ReadLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago, for a server a test starts as another process.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Process is a command a test runs as another process, its standard
// error kept for the test to read and shown if the test fails.
type Process struct {
	Cmd  *exec.Cmd
	Logs *SyncBuffer
	done chan struct{}
	err  error
}

// StartProcess starts cmd, and kills it when the test ends.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Logs: &SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.Logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s's log:\n%s", filepath.Base(cmd.Path), p.Logs.String())
		}
	})
	return p
}

// Stop sends sig and fails the test unless the process then exits
// cleanly within timeout.
func (p *Process) Stop(t testing.TB, sig os.Signal, timeout time.Duration) {
	t.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("%s exited with %v after %v", filepath.Base(p.Cmd.Path), p.err, sig)
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not stop within %v of %v", filepath.Base(p.Cmd.Path), timeout, sig)
	}
}
