package console_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/console"
)

// FuzzResetRequest: whatever body a client posts to a group's reset, the
// console answers a 4xx in Kafka Connect's error shape, never a 5xx or a
// panic. Without Kafka, a request that passes every check ends at the 404
// saying Kafka is not known.
func FuzzResetRequest(f *testing.F) {
	for _, s := range []string{`{"to":"earliest"}`, `{"to":"offset","offset":5,"dry_run":true}`, `{"to":"datetime","datetime":"2026-07-10T14:30:00"}`,
		`{"to":"shift"}`, `{"topic":1}`, `[]`, ``, `{"to":"current","extra":true}`} {
		f.Add(s)
	}
	h := console.New(console.Options{})
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/ui/api/groups/g/reset", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code < 400 || rec.Code >= 500 {
			t.Fatalf("%q: status %d", body, rec.Code)
		}
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code != rec.Code || e.Message == "" {
			t.Fatalf("%q: body %s", body, rec.Body)
		}
		if rec.Code == http.StatusNotFound && !strings.Contains(e.Message, "does not know the Kafka cluster") {
			t.Fatalf("%q: %s", body, e.Message)
		}
	})
}
