package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http/httptest"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/logging"

	"github.com/connectd/connectd/internal/herder"
)

// The POST /connectors and config bodies come from anyone who can reach
// the port: whatever they hold, binding answers a value or a 400.
func FuzzParseCreateRequest(f *testing.F) {
	f.Add([]byte(`{"name":"file-src","config":{"connector.class":"FileStreamSource","tasks.max":"1","file":"/tmp/in.txt","topic":"lines"},"initial_state":"STOPPED"}`))
	f.Add([]byte(`{"name":" x ","config":{"name":"y","tasks.max":1,"enabled":true}}`))
	f.Add([]byte(`{"name":"x","config":{"k":null},"initial_offsets":{"offsets":[{"partition":{"filename":"a"},"offset":{"position":1}}]}}`))
	f.Add([]byte(`{"name":"x","config":{"k":{"nested":1}},"extra":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseCreateRequest(body)
		if err != nil {
			var he *herder.Error
			if !errors.As(err, &he) || he.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if req.config != nil {
			_, _ = req.config.strings()
			_ = req.config.javaString()
		}
	})
}

func FuzzBindConfig(f *testing.F) {
	f.Add([]byte(`{"connector.class":"FileStreamSink","topics":"t","file":"/tmp/out"}`))
	f.Add([]byte(`{"a":1,"b":true,"c":null,"d":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		raw, err := parseJSON(body)
		if err != nil || raw == nil {
			return
		}
		c, err := bindConfig(raw, "connector config")
		if err != nil {
			var he *herder.Error
			if !errors.As(err, &he) || he.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		_ = c.checkName("x")
		_, _ = c.strings()
	})
}

// A PATCH body that binds is the patch the handler hands the herder, and
// never renames the connector; one that does not is the handler's 400,
// with the same message, and reaches no herder.
func FuzzBindPatch(f *testing.F) {
	f.Add([]byte(`{"file":"/tmp/in2.txt","batch.size":null}`))
	f.Add([]byte(`{"name":"src","tasks.max":2,"enabled":true,"ratio":1.5e3}`))
	f.Add([]byte(`{"name":"other"}`))
	f.Add([]byte(`{"name":null,"name":"src"}`))
	f.Add([]byte(`{"k":{"nested":1}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Add([]byte(`["a"]`))
	var got map[string]*string
	h := New(&stub{patch: func(_ context.Context, name string, p map[string]*string) (*client.ConnectorInfo, error) {
		got = p
		return &client.ConnectorInfo{Name: name, Config: map[string]string{}}, nil
	}}, logging.NewRegistry(io.Discard), Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		patch, err := bindPatch(body, "src")
		got = nil
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("PATCH", "/connectors/src/config", bytes.NewReader(body)))
		if err != nil {
			var he *herder.Error
			if !errors.As(err, &he) || he.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			var answer struct {
				Code    int    `json:"error_code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if rec.Code != 400 || answer.Code != 400 || answer.Message != he.Message || got != nil {
				t.Fatalf("binding says %q; the handler answered %d %s and passed %v on", he.Message, rec.Code, rec.Body, got)
			}
			return
		}
		if v, ok := patch["name"]; ok && v != nil && *v != "src" {
			t.Fatalf("a patch renaming the connector to %q binds", *v)
		}
		if rec.Code != 200 || !maps.EqualFunc(got, patch, func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }) {
			t.Fatalf("bound %v; the handler answered %d %s and passed %v on", patch, rec.Code, rec.Body, got)
		}
	})
}
