package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// connectctl console serves the console for a worker: the page, the
// worker's API through it with connectctl's settings, the consumer groups
// from Kafka; requests from other origins and non-JSON bodies refused.
func TestConsoleCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, map[string]string{"console.enable": "false"})
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"--url", "http://" + w.RESTAddr, "console", "--listen", "127.0.0.1:0", "--bootstrap-server", w.Broker.Addr()},
			env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, getenv: func(string) string { return "" }})
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("console exited %d", code)
		}
	})
	line := make([]byte, 256)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`at (http://[^ ]+)/ui/`).FindStringSubmatch(string(line[:n]))
	if m == nil {
		t.Fatalf("console said %q", line[:n])
	}
	base := m[1]
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/ui/"); code != 200 || !strings.Contains(body, "connectd console") {
		t.Errorf("GET /ui/: %d %.80s", code, body)
	}
	// The worker itself serves no console here; through connectctl it has one.
	if resp, err := http.Get("http://" + w.RESTAddr + "/ui/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("the worker with console.enable=false answers /ui/ with %d", resp.StatusCode)
		}
	}
	if code, body := get("/connectors"); code != 200 || body != "[]" {
		t.Errorf("GET /connectors through the console: %d %s", code, body)
	}
	if code, body := get("/ui/api/groups"); code != 200 || !strings.HasPrefix(body, "[") {
		t.Errorf("GET /ui/api/groups: %d %s", code, body)
	}
	post := func(origin, contentType, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/connectors", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	cfg := `{"name":"c","config":{"connector.class":"FileStreamSource","topic":"t","file":"` + dir + `/in.txt"}}`
	if code, body := post("http://evil.example", "application/json", cfg); code != 403 || !strings.Contains(body, "another origin") {
		t.Errorf("a cross-origin POST: %d %s", code, body)
	}
	if code, body := post("", "text/plain", cfg); code != 415 {
		t.Errorf("a text/plain POST: %d %s", code, body)
	}
	if code, body := post(base, "application/json", cfg); code != 201 {
		t.Errorf("a same-origin POST: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for code, body := get("/connectors"); body != `["c"]`; code, body = get("/connectors") {
		if time.Now().After(deadline) {
			t.Fatalf("GET /connectors after the POST: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
