package rest

import (
	"errors"
	"testing"

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
