package server

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
)

// admin.listeners as Kafka serves it: /admin/loggers on the admin
// listener alone (over HTTPS with admin.listeners.https.*), not on the
// regular one; the rest of the API not on the admin listener; and basic
// authentication, a REST extension, guarding the regular listener only.
func TestAdminListeners(t *testing.T) {
	ca := servertest.NewCA(t)
	leaf := ca.Issue(t, "admin")
	dir := t.TempDir()
	props := basicAuthProps(t)
	for k, v := range map[string]string{
		"listeners":       "http://127.0.0.1:0",
		"admin.listeners": "https://127.0.0.1:0",
		"admin.listeners.https.ssl.keystore.type":     "PEM",
		"admin.listeners.https.ssl.keystore.location": servertest.WriteFile(t, "admin.pem", leaf.PEM),
		"embedded.kafka.listeners":                    "127.0.0.1:0",
		"embedded.kafka.data.dir":                     filepath.Join(dir, "kafka"),
		"offset.storage.file.filename":                filepath.Join(dir, "connect.offsets"),
	} {
		props[k] = v
	}
	s, err := StartStandalone(context.Background(), props, nil, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if s.AdminAddr == "" {
		t.Fatal("no admin listener")
	}
	admin := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	do := func(c *http.Client, method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	adminURL := "https://" + s.AdminAddr
	if code, body := do(admin, "GET", adminURL+"/admin/loggers", ""); code != 200 || !strings.Contains(body, `"root"`) {
		t.Errorf("GET /admin/loggers on the admin listener, no credentials: %d %s", code, body)
	}
	if code, body := do(admin, "PUT", adminURL+"/admin/loggers/org.apache.kafka.connect", `{"level":"DEBUG"}`); code != 200 {
		t.Errorf("PUT /admin/loggers on the admin listener: %d %s", code, body)
	}
	if code, body := do(admin, "GET", adminURL+"/admin/loggers/org.apache.kafka.connect", ""); code != 200 || !strings.Contains(body, "DEBUG") {
		t.Errorf("the level set on the admin listener: %d %s", code, body)
	}
	if code, _ := do(admin, "GET", adminURL+"/connectors", ""); code != 404 {
		t.Errorf("GET /connectors on the admin listener: %d, want 404", code)
	}
	if resp, err := http.Get("http://" + s.AdminAddr + "/admin/loggers"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on the HTTPS admin listener")
		}
	}
	base := "http://" + s.RESTAddr
	if code, _ := get(t, base, "alice", "s3cret", "/admin/loggers"); code != 404 {
		t.Errorf("GET /admin/loggers on the regular listener: %d, want 404", code)
	}
	if code, _ := get(t, base, "", "", "/connectors"); code != 401 {
		t.Errorf("GET /connectors on the regular listener without credentials: %d, want 401", code)
	}
	if code, _ := get(t, base, "alice", "s3cret", "/connectors"); code != 200 {
		t.Errorf("GET /connectors on the regular listener: %d", code)
	}
}
