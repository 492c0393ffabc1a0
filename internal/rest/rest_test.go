package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

// stub implements only what a test touches; anything else panics on the
// nil embedded interface, which is also how the panic tests panic.
type stub struct {
	Herder
	config func(ctx context.Context, name string) (map[string]string, error)
	info   func(ctx context.Context, name string) (*client.ConnectorInfo, error)
	put    func(ctx context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error)
	offs   func(ctx context.Context, name string) (*client.ConnectorOffsets, error)
	patch  func(ctx context.Context, name string, patch map[string]*string) (*client.ConnectorInfo, error)
}

func (s *stub) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*client.ConnectorInfo, error) {
	return s.patch(ctx, name, patch)
}

func (s *stub) ConnectorOffsets(ctx context.Context, name string) (*client.ConnectorOffsets, error) {
	return s.offs(ctx, name)
}

func (s *stub) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error) {
	return s.put(ctx, name, config)
}

func (s *stub) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	return s.config(ctx, name)
}

func (s *stub) ConnectorInfo(ctx context.Context, name string) (*client.ConnectorInfo, error) {
	return s.info(ctx, name)
}

func serve(t *testing.T, h Herder, opts Options) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(h, logging.NewRegistry(io.Discard), opts))
	t.Cleanup(srv.Close)
	return srv
}

type response struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, srv *httptest.Server, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func expect(t *testing.T, got response, status int, body string) {
	t.Helper()
	if got.status != status || got.body != body {
		t.Errorf("got  %d %s\nwant %d %s", got.status, got.body, status, body)
	}
	if body != "" {
		if ct := got.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	}
}

func TestRoutingErrors(t *testing.T) {
	srv := serve(t, &stub{}, DefaultOptions())
	const notFound = `{"error_code":404,"message":"HTTP 404 Not Found"}`
	const notAllowed = `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`

	expect(t, send(t, srv, "GET", "/nope", ""), 404, notFound)
	expect(t, send(t, srv, "GET", "/connectors/a/b/c", ""), 404, notFound)
	// Removed in Kafka 4.0; we answer like 4.x.
	expect(t, send(t, srv, "GET", "/connectors/a/tasks-config", ""), 404, notFound)

	got := send(t, srv, "DELETE", "/connectors", "")
	expect(t, got, 405, notAllowed)
	if allow := got.header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow %q", allow)
	}
	expect(t, send(t, srv, "POST", "/connectors/a/status", ""), 405, notAllowed)
	expect(t, send(t, srv, "GET", "/connectors/a/pause", ""), 405, notAllowed)

	// A task id that is not an int is a plain 404, before the herder.
	expect(t, send(t, srv, "GET", "/connectors/a/tasks/abc/status", ""), 404, notFound)
	expect(t, send(t, srv, "POST", "/connectors/a/tasks/1.5/restart", ""), 404, notFound)
	expect(t, send(t, srv, "GET", "/connectors/a/tasks/99999999999/status", ""), 404, notFound)

	// The inter-worker endpoints answer as standalone Kafka does.
	expect(t, send(t, srv, "POST", "/connectors/a/tasks", "[]"), 500,
		`{"error_code":500,"message":"Kafka Connect in standalone mode does not support externally setting task configurations."}`)
	expect(t, send(t, srv, "PUT", "/connectors/a/fence", ""), 500,
		`{"error_code":500,"message":"Kafka Connect in standalone mode does not support exactly-once source connectors."}`)
}

func TestAdminDisabled(t *testing.T) {
	srv := serve(t, &stub{}, Options{})
	expect(t, send(t, srv, "GET", "/admin/loggers", ""), 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
}

func TestPanicsAreRecovered(t *testing.T) {
	srv := serve(t, &stub{}, DefaultOptions())
	// ConnectorStatus runs on the guarded herder goroutine; Plugins is
	// called directly by the handler. Neither may crash the server.
	for _, path := range []string{"/connectors/a/status", "/connector-plugins"} {
		got := send(t, srv, "GET", path, "")
		if got.status != 500 || !strings.HasPrefix(got.body, `{"error_code":500,"message":"runtime error: invalid memory address`) {
			t.Errorf("%s: %d %s", path, got.status, got.body)
		}
	}
	expect(t, send(t, srv, "GET", "/nope", ""), 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
}

func TestErrorsAndEscapedNames(t *testing.T) {
	h := &stub{
		config: func(_ context.Context, name string) (map[string]string, error) {
			switch name {
			case "missing":
				return nil, herder.NotFound("Connector %s not found", name)
			case "broken":
				return nil, errors.New("disk <on> fire & co")
			}
			return map[string]string{"name": name}, nil
		},
		info: func(ctx context.Context, name string) (*client.ConnectorInfo, error) {
			time.Sleep(2 * time.Second) // ignores its context
			return nil, nil
		},
	}
	srv := serve(t, h, Options{RequestTimeout: 100 * time.Millisecond})

	expect(t, send(t, srv, "GET", "/connectors/a%2Fb%20c%25/config", ""), 200, `{"name":"a/b c%"}`)
	expect(t, send(t, srv, "GET", "/connectors/missing/config", ""), 404, `{"error_code":404,"message":"Connector missing not found"}`)
	expect(t, send(t, srv, "GET", "/connectors/broken/config", ""), 500, `{"error_code":500,"message":"disk <on> fire & co"}`)

	start := time.Now()
	expect(t, send(t, srv, "GET", "/connectors/slow", ""), 500, `{"error_code":500,"message":"Request timed out"}`)
	if d := time.Since(start); d > time.Second {
		t.Errorf("timed out after %v", d)
	}
}

func TestBodiesCheckedBeforeTheHerder(t *testing.T) {
	srv := serve(t, &stub{}, DefaultOptions())
	expect(t, send(t, srv, "PATCH", "/connectors/a/offsets", `{"offsets":{}}`), 400,
		`{"error_code":400,"message":"Invalid field \"offsets\": expected an array of objects with \"partition\" and \"offset\" fields, got an object"}`)
	expect(t, send(t, srv, "POST", "/connectors", `{"name":"a","config":{}}`), 400,
		`{"error_code":400,"message":"Connector config {name=a} contains no connector type"}`)
	expect(t, send(t, srv, "PUT", "/connectors/a/config", `{"name":"b"}`), 400,
		`{"error_code":400,"message":"Connector name configuration (b) doesn't match connector name in the URL (a)"}`)
	expect(t, send(t, srv, "PUT", "/connector-plugins/FileStreamSink/config/validate", `{"connector.class":"FileStreamSourceConnector"}`), 400,
		`{"error_code":400,"message":"Included connector type FileStreamSourceConnector does not match request type FileStreamSink"}`)
	expect(t, send(t, srv, "PUT", "/connector-plugins/FileStreamSink/config/validate", `{"topics":"t"}`), 400,
		`{"error_code":400,"message":"Connector config {topics=t} contains no connector type"}`)
	// The config quoted in the message shows no password.
	expect(t, send(t, srv, "POST", "/connectors", `{"name":"a","config":{"connection.url":"jdbc:mysql://bob:s3cret@h/d","connection.password":"pw"}}`), 400,
		`{"error_code":400,"message":"Connector config {name=a, connection.url=jdbc:mysql://bob:[hidden]@h/d, connection.password=[hidden]} contains no connector type"}`)
}

func TestLoggers(t *testing.T) {
	srv := serve(t, &stub{}, DefaultOptions())
	expect(t, send(t, srv, "GET", "/admin/loggers", ""), 200, `{"root":{"level":"INFO","last_modified":null}}`)
	expect(t, send(t, srv, "GET", "/admin/loggers/ROOT", ""), 200, `{"level":"INFO","last_modified":null}`)
	expect(t, send(t, srv, "GET", "/admin/loggers/a.b", ""), 404, `{"error_code":404,"message":"Logger a.b not found."}`)
	expect(t, send(t, srv, "PUT", "/admin/loggers/a.b", `{}`), 400,
		`{"error_code":400,"message":"Desired 'level' parameter was not specified in request."}`)
	expect(t, send(t, srv, "PUT", "/admin/loggers/a.b", `{"level":"loud"}`), 404, `{"error_code":404,"message":"invalid log level 'loud'."}`)
	expect(t, send(t, srv, "PUT", "/admin/loggers/a.b", `{"level":"debug"}`), 200, `["a.b"]`)
	expect(t, send(t, srv, "PUT", "/admin/loggers/a.b.c?scope=Cluster", `{"level":"warn"}`), 204, "")
	got := send(t, srv, "GET", "/admin/loggers/a.b.c", "")
	if got.status != 200 || !strings.HasPrefix(got.body, `{"level":"WARN","last_modified":1`) {
		t.Errorf("after a cluster-scoped PUT: %d %s", got.status, got.body)
	}
}

func TestPutConfigCreatedAndLocation(t *testing.T) {
	h := &stub{put: func(_ context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error) {
		return &client.ConnectorInfo{Name: name, Config: config, Type: client.TypeSource}, config["created"] == "yes", nil
	}}
	srv := serve(t, h, DefaultOptions())
	got := send(t, srv, "PUT", "/connectors/my%20conn/config", `{"connector.class":"X","created":"yes"}`)
	expect(t, got, 201, `{"name":"my conn","config":{"connector.class":"X","created":"yes","name":"my conn"},"tasks":[],"type":"source"}`)
	if loc, want := got.header.Get("Location"), srv.URL+"/connectors/my%20conn"; loc != want {
		t.Errorf("Location %q, want %q", loc, want)
	}
	// curl -d sends a form content type; the body is still JSON to us.
	req, _ := http.NewRequest("PUT", srv.URL+"/connectors/c/config", strings.NewReader(`{"connector.class":"X","tasks.max":2}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Location") != "" {
		t.Errorf("update: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestQueryBool(t *testing.T) {
	cases := []struct {
		query string
		def   bool
		want  bool
	}{
		{"", false, false}, {"", true, true}, {"x=", true, true},
		{"x=true", false, true}, {"x=TRUE", false, true}, {"x=yes", true, false},
		{"x=1", false, false}, {"x=%20true", false, false}, {"x=true&x=false", false, true},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "/connectors/a/restart?"+c.query, nil)
		if got := queryBool(r, "x", c.def); got != c.want {
			t.Errorf("%q (default %v) = %v", c.query, c.def, got)
		}
	}
}
