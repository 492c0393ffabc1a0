package httpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// order is one record of the fake API.
type order struct {
	ID        int64  `json:"id"`
	UpdatedAt string `json:"updated_at"`
	Item      string `json:"item"`
}

func makeOrders(n int) []order {
	out := make([]order, n)
	for i := range out {
		id := int64(i + 1)
		out[i] = order{ID: id, UpdatedAt: orderTime(id), Item: fmt.Sprintf("item-%d", id)}
	}
	return out
}

// orderTime is order id's timestamp: order 42 is the seed's
// 2026-07-10T14:30:00Z.
func orderTime(id int64) string {
	return time.Date(2026, 7, 10, 14, 30, 0, 0, time.UTC).Add(time.Duration(id-42) * time.Minute).Format(time.RFC3339)
}

// fakeAPI serves /api/orders: the orders after ?since_id=, page ?page= (from
// 1) of pageSize, as a JSON array. inject may answer a request itself (by
// its 0-based index) to fail it.
type fakeAPI struct {
	t            *testing.T
	srv          *httptest.Server
	mu           sync.Mutex
	orders       []order
	pageSize     int
	ignoreCursor bool
	reqs         []string
	times        []time.Time
	inject       func(i int, w http.ResponseWriter, r *http.Request) bool
	check        func(r *http.Request) bool // false answers 401
}

func newFakeAPI(t *testing.T, orders []order, pageSize int) *fakeAPI {
	a := &fakeAPI{t: t, orders: orders, pageSize: pageSize}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAPI) url(path string) string { return a.srv.URL + path }

func (a *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	i := len(a.reqs)
	a.reqs = append(a.reqs, r.URL.RequestURI())
	a.times = append(a.times, time.Now())
	inject, check := a.inject, a.check
	a.mu.Unlock()
	if inject != nil && inject(i, w, r) {
		return
	}
	if check != nil && !check(r) {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if r.URL.Path != "/api/orders" {
		http.NotFound(w, r)
		return
	}
	page := a.page(r.URL.Query().Get("since_id"), r.URL.Query().Get("page"))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// page returns the orders after since (unless the cursor is ignored), page
// number p (1-based, "" is 1).
func (a *fakeAPI) page(since, p string) []order {
	a.mu.Lock()
	defer a.mu.Unlock()
	after, _ := strconv.ParseInt(since, 10, 64)
	if a.ignoreCursor {
		after = 0
	}
	var sel []order
	for _, o := range a.orders {
		if o.ID > after {
			sel = append(sel, o)
		}
	}
	n := 1
	if p != "" {
		n, _ = strconv.Atoi(p)
	}
	from := min((n-1)*a.pageSize, len(sel))
	to := min(from+a.pageSize, len(sel))
	return append([]order{}, sel[from:to]...)
}

func (a *fakeAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.reqs...)
}

// storedOffsets is a SourceTaskContext over offsets by endpoint.
type storedOffsets map[string]map[string]any

func (s storedOffsets) Offset(p map[string]any) (map[string]any, error) {
	ep, _ := p[EndpointField].(string)
	return s[ep], nil
}

func (storedOffsets) Logger() *slog.Logger { return slog.Default() }

func (storedOffsets) TransactionContext() connect.TransactionContext { return nil }

// baseConfig is a fast config for tests against the fake API.
func baseConfig(a *fakeAPI, extra ...string) map[string]string {
	c := map[string]string{
		URLConfig:             a.url("/api/orders"),
		TopicConfig:           "orders",
		PollIntervalConfig:    "20",
		BackoffConfig:         "5",
		BackoffMaxConfig:      "50",
		TimeoutConfig:         "2000",
		CursorTimestampConfig: "updated_at",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i]] = extra[i+1]
	}
	return c
}

func startTask(t *testing.T, ctx connect.SourceTaskContext, props map[string]string) *Task {
	t.Helper()
	task := NewTask()
	if err := task.Start(ctx, props); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

// collect polls until it has at least n records.
func collect(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*connect.SourceRecord
	for len(out) < n {
		if ctx.Err() != nil {
			t.Fatalf("got %d records (%v), want %d", len(out), ids(out), n)
		}
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		out = append(out, recs...)
	}
	return out
}

// pollFor polls for d and returns what came.
func pollFor(t *testing.T, task *Task, d time.Duration) []*connect.SourceRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []*connect.SourceRecord
	for ctx.Err() == nil {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		out = append(out, recs...)
	}
	return out
}

// pollErr polls until Poll fails.
func pollErr(t *testing.T, task *Task) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if _, err := task.Poll(ctx); err != nil {
			return err
		}
	}
	t.Fatal("Poll never failed")
	return nil
}

// ids returns the records' keys.
func ids(recs []*connect.SourceRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i], _ = r.Key.(string)
	}
	return out
}

func idRange(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// recorder collects strings from handlers.
type recorder struct {
	mu   sync.Mutex
	list []string
}

// add records s and returns how many there are.
func (r *recorder) add(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, s)
	return len(r.list)
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.list...)
}
