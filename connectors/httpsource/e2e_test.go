package httpsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/httpsource"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/clustertest"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ordersAPI serves /api/orders: orders 1..n after ?since_id=, 10 a page
// (?page= from 1); order 42 was updated at the seed's timestamp.
type ordersAPI struct {
	n    int
	mu   sync.Mutex
	reqs []string
}

func (a *ordersAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.reqs = append(a.reqs, r.URL.RequestURI())
	n := a.n
	a.mu.Unlock()
	if r.URL.Path != "/api/orders" {
		http.NotFound(w, r)
		return
	}
	since, _ := strconv.Atoi(r.URL.Query().Get("since_id"))
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		page, _ = strconv.Atoi(p)
	}
	out := []map[string]any{}
	for id := since + 1 + (page-1)*10; id <= n && len(out) < 10; id++ {
		at := time.Date(2026, 7, 10, 14, 30, 0, 0, time.UTC).Add(time.Duration(id-42) * time.Minute)
		out = append(out, map[string]any{"id": id, "updated_at": at.Format(time.RFC3339), "item": fmt.Sprintf("item-%d", id)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (a *ordersAPI) count(uri string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.reqs {
		if r == uri {
			n++
		}
	}
	return n
}

type worker struct {
	t *testing.T
	s *server.Standalone
}

type kv struct{ key, value string }

// readTopic returns the records of a one-partition topic once there are
// at least n.
func readTopic(t *testing.T, bootstrap, topic string, n int) []kv {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out []kv
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: got %d records, want at least %d", topic, len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, kv{string(r.Key), string(r.Value)}) })
	}
	return out
}

// The seed's flow through a real standalone worker: the connector reads
// the orders, GET offsets shows {"endpoint":"/api/orders"} ->
// {"last_id":42,"timestamp":...}; stopped, its offset altered to last_id
// 40 and resumed, it emits orders 41 and 42 again.
func TestSeedHTTPSourceOffsets(t *testing.T) {
	api := &ordersAPI{n: 42}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	w := startWorker(t)
	s := w.s

	config := map[string]string{
		"connector.class":                "HttpSource",
		"http.url":                       srv.URL + "/api/orders",
		"http.cursor.id.field":           "id",
		"http.cursor.timestamp.field":    "updated_at",
		"http.cursor.param":              "since_id",
		"http.page.param":                "page",
		"poll.interval.ms":               "100",
		"topic":                          "orders",
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
	body, _ := json.Marshal(map[string]any{"name": "orders-source", "config": config})
	w.must(201, "POST", "/connectors", string(body))

	recs := readTopic(t, s.Broker.Addr(), "orders", 42)
	for i, r := range recs[:42] {
		var v struct {
			ID   int    `json:"id"`
			Item string `json:"item"`
		}
		if err := json.Unmarshal([]byte(r.value), &v); err != nil || r.key != strconv.Itoa(i+1) || v.ID != i+1 || v.Item != fmt.Sprintf("item-%d", i+1) {
			t.Fatalf("record %d: key %q value %s (%v)", i, r.key, r.value, err)
		}
	}
	want := `{"offsets":[{"partition":{"endpoint":"/api/orders"},"offset":{"last_id":42,"timestamp":"2026-07-10T14:30:00Z"}}]}`
	eventually(t, "the offset of order 42", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return body == want
	})

	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	code, resp := w.do("PATCH", "/connectors/orders-source/offsets",
		`{"offsets":[{"partition":{"endpoint":"/api/orders"},"offset":{"timestamp":"2026-07-10T14:28:00Z"}}]}`)
	if code != 400 || !strings.Contains(resp, "Offset objects should either be null or contain the key 'last_id'") {
		t.Fatalf("PATCH without last_id: %d %s", code, resp)
	}
	resp = w.must(200, "PATCH", "/connectors/orders-source/offsets",
		`{"offsets":[{"partition":{"endpoint":"/api/orders"},"offset":{"last_id":40}}]}`)
	if resp != `{"message":"The offsets for this connector have been altered successfully"}` {
		t.Fatalf("PATCH answer %s", resp)
	}
	if body := w.must(200, "GET", "/connectors/orders-source/offsets", ""); body != `{"offsets":[{"partition":{"endpoint":"/api/orders"},"offset":{"last_id":40}}]}` {
		t.Fatalf("offsets after PATCH: %s", body)
	}
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	recs = readTopic(t, s.Broker.Addr(), "orders", 44)
	if got := []string{recs[42].key, recs[43].key}; !slices.Equal(got, []string{"41", "42"}) {
		t.Fatalf("after altering to 40 the source emitted %v", recs[42:])
	}
	eventually(t, "the offset of order 42 again", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return body == want
	})
	// Later polls ask after 42 and find nothing new.
	eventually(t, "two more polls", func() bool { return api.count("/api/orders?page=1&since_id=42") >= 3 })
	if recs := readTopic(t, s.Broker.Addr(), "orders", 44); len(recs) != 44 {
		t.Fatalf("topic holds %d records, want 44", len(recs))
	}
}

// startWorker starts a standalone worker with its embedded broker.
func startWorker(t *testing.T) *worker {
	t.Helper()
	dir := t.TempDir()
	s, err := server.StartStandalone(context.Background(), map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":     "100",
	}, nil, append(httpsource.Plugins(), converters.Plugins()...), logging.NewRegistry(io.Discard))
	if err != nil {
		t.Fatalf("starting the worker: %v", err)
	}
	t.Cleanup(s.Close)
	return &worker{t: t, s: s}
}

// An endpoint's error body reaches the task's trace, which anyone who
// reaches the REST API reads, only as a short quoted excerpt: not what
// follows it, and not its line breaks.
func TestFailureTraceQuotesOnlyTheStartOfTheBody(t *testing.T) {
	body := "internal error: db=10.0.0.5\r\nFAKE-LINE " + strings.Repeat("x", 150) + " SECRET-MARKER"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	w := startWorker(t)
	w.must(201, "POST", "/connectors", `{"name":"internal","config":{"connector.class":"HttpSource","http.url":"`+srv.URL+`/admin","http.cursor.id.field":"id","topic":"internal"}}`)
	var st struct {
		Tasks []struct{ State, Trace string }
	}
	eventually(t, "the task to fail", func() bool {
		_, resp := w.do("GET", "/connectors/internal/status", "")
		return json.Unmarshal([]byte(resp), &st) == nil && len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED"
	})
	trace := st.Tasks[0].Trace
	want := `failed with HTTP status 403 Forbidden: "internal error: db=10.0.0.5\r\nFAKE-LINE xxx`
	if !strings.Contains(trace, want) || strings.Contains(trace, "SECRET-MARKER") || strings.ContainsAny(trace, "\r\n") {
		t.Fatalf("trace %q, want the quoted start of the body (%s) and nothing after it", trace, want)
	}
}

func (w *worker) do(method, path, body string) (int, string) {
	w.t.Helper()
	return servertest.REST{T: w.t, Addr: w.s.RESTAddr}.Do(method, path, body)
}

func (w *worker) must(want int, method, path, body string) string {
	w.t.Helper()
	return servertest.REST{T: w.t, Addr: w.s.RESTAddr}.Must(want, method, path, body)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	servertest.Eventually(t, what, 15*time.Second, cond)
}

// Exactly once, in a cluster with exactly-once source support: the pages
// a task reads and their cursor commit together, and a restart resumes
// from the committed cursor; a read_committed consumer sees each order
// once.
func TestExactlyOnceCluster(t *testing.T) {
	api := &ordersAPI{n: 42}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	bootstrap, rest := clustertest.ExactlyOnce(t, append(httpsource.Plugins(), converters.Plugins()...), nil)
	body, _ := json.Marshal(map[string]any{"name": "orders", "config": map[string]string{
		"connector.class": "HttpSource", "http.url": srv.URL + "/api/orders", "http.cursor.id.field": "id",
		"http.cursor.param": "since_id", "http.page.param": "page", "poll.interval.ms": "100", "topic": "orders",
		"exactly.once.support": "required",
		"key.converter":        "org.apache.kafka.connect.storage.StringConverter",
	}})
	eventually(t, "the connector created", func() bool {
		code, _ := rest.Do("POST", "/connectors", string(body))
		return code == 201
	})
	keys := func(n int) []string {
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var got []string
		for len(got) < n && ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)) })
		}
		return got
	}
	want := make([]string, 42)
	for i := range want {
		want[i] = strconv.Itoa(i + 1)
	}
	if got := keys(42); !slices.Equal(got, want) {
		t.Fatalf("read_committed keys %v", got)
	}
	api.mu.Lock()
	api.n = 45
	api.mu.Unlock()
	rest.Must(202, "POST", "/connectors/orders/restart?includeTasks=true", "")
	if got := keys(45); !slices.Equal(got, append(want, "43", "44", "45")) {
		t.Fatalf("after a restart and three more orders, read_committed keys %v", got)
	}
}
