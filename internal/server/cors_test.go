package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// CORS as Kafka configures Jetty's CrossOriginFilter, and response
// headers as its HeaderFilter: an allowed origin's preflight and requests
// get the Access-Control-* headers for the allowed methods; another
// origin or method is refused; every response carries the header rules.
func TestCORSAndResponseHeaders(t *testing.T) {
	w := startWorker(t, t.TempDir(), map[string]string{
		"access.control.allow.origin":  "https://*.example.com,http://tools.internal",
		"access.control.allow.methods": "GET,POST",
		"response.http.headers.config": `set X-Frame-Options:DENY,"add Cache-Control: no-cache, no-store",setDate Expires:3600000`,
	})
	base := "http://" + w.s.RESTAddr
	send := func(method, path, origin string, h map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	pre := send("OPTIONS", "/connectors", "https://ui.example.com", map[string]string{"Access-Control-Request-Method": "POST"}, "")
	if pre.StatusCode != 200 || pre.Header.Get("Access-Control-Allow-Origin") != "https://ui.example.com" ||
		pre.Header.Get("Access-Control-Allow-Methods") != "GET,POST" || pre.Header.Get("Access-Control-Max-Age") != "1800" {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	if r := send("OPTIONS", "/connectors", "https://ui.example.com", map[string]string{"Access-Control-Request-Method": "DELETE"}, ""); r.StatusCode != 403 {
		t.Errorf("preflight for DELETE: %d", r.StatusCode)
	}
	create := jsonString(map[string]any{"name": "c", "config": map[string]string{"connector.class": "FileStreamSource", "file": "/nonexistent", "topic": "t"}})
	r := send("POST", "/connectors", "http://tools.internal", map[string]string{"Content-Type": "application/json"}, create)
	if r.StatusCode != 201 || r.Header.Get("Access-Control-Allow-Origin") != "http://tools.internal" {
		t.Errorf("POST from an allowed origin: %d %v", r.StatusCode, r.Header)
	}
	if r := send("DELETE", "/connectors/c", "http://tools.internal", nil, ""); r.StatusCode != 403 {
		t.Errorf("DELETE from an allowed origin, not an allowed method: %d", r.StatusCode)
	}
	if r := send("POST", "/connectors/c/restart", "https://evil.example.org", nil, ""); r.StatusCode != 403 {
		t.Errorf("POST from another origin: %d", r.StatusCode)
	}
	r = send("GET", "/", "", nil, "")
	if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("Cache-Control") != "no-cache, no-store" {
		t.Errorf("header rules: %v", r.Header)
	}
	if exp, err := http.ParseTime(r.Header.Get("Expires")); err != nil || exp.Before(time.Now().Add(50*time.Minute)) {
		t.Errorf("setDate Expires:3600000 gave %q", r.Header.Get("Expires"))
	}
}
