package httpsource

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// A paging API read until an empty page, through a 503, a timeout and a
// 429, each retried; every Poll returns one whole page.
func TestPagingUntilEmptyWithRetries(t *testing.T) {
	a := newFakeAPI(t, makeOrders(25), 10)
	a.inject = func(i int, w http.ResponseWriter, r *http.Request) bool {
		switch i {
		case 1:
			http.Error(w, "try later", http.StatusServiceUnavailable)
		case 3:
			select { // longer than http.timeout.ms
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case 5:
			w.Header().Set("Retry-After", "3600") // capped by the max backoff
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			return false
		}
		return true
	}
	task := startTask(t, nil, baseConfig(a, CursorParamConfig, "since_id", PageParamConfig, "page", TimeoutConfig, "500"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var batches [][]*connect.SourceRecord
	var all []*connect.SourceRecord
	for len(all) < 25 && ctx.Err() == nil {
		recs, err := task.Poll(ctx)
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if len(recs) > 0 {
			batches = append(batches, recs)
			all = append(all, recs...)
		}
	}
	if got := ids(all); !slices.Equal(got, idRange(1, 25)) {
		t.Fatalf("records %v", got)
	}
	var sizes []int
	for _, b := range batches {
		sizes = append(sizes, len(b))
	}
	if !slices.Equal(sizes, []int{10, 10, 5}) {
		t.Fatalf("batch sizes %v, want one per page", sizes)
	}
	pollFor(t, task, 200*time.Millisecond) // the next cycles
	want := []string{
		"/api/orders?page=1",
		"/api/orders?page=2", // 503
		"/api/orders?page=2",
		"/api/orders?page=3", // timeout
		"/api/orders?page=3",
		"/api/orders?page=4", // 429
		"/api/orders?page=4", // empty: the cycle ends
		"/api/orders?page=1&since_id=25",
	}
	if got := a.requests(); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("requests\n%v\nwant them to start with\n%v", got, want)
	}

	last := all[24]
	if !reflect.DeepEqual(last.SourcePartition, map[string]any{"endpoint": "/api/orders"}) {
		t.Fatalf("partition %v", last.SourcePartition)
	}
	if !reflect.DeepEqual(last.SourceOffset, map[string]any{"last_id": int64(25), "timestamp": orderTime(25)}) {
		t.Fatalf("offset %v", last.SourceOffset)
	}
	first := all[0]
	if first.Topic != "orders" || first.KeySchema != connect.StringSchema || first.Key != "1" || first.ValueSchema != nil {
		t.Fatalf("record %+v", first)
	}
	if !reflect.DeepEqual(first.Value, map[string]any{"id": int64(1), "updated_at": orderTime(1), "item": "item-1"}) {
		t.Fatalf("value %#v", first.Value)
	}
}

// A 429's Retry-After is honoured when it is longer than the backoff.
func TestRetryAfterHonoured(t *testing.T) {
	a := newFakeAPI(t, makeOrders(2), 10)
	a.inject = func(i int, w http.ResponseWriter, r *http.Request) bool {
		if i == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	task := startTask(t, nil, baseConfig(a, BackoffConfig, "1", BackoffMaxConfig, "5000"))
	if got := ids(collect(t, task, 2)); !slices.Equal(got, idRange(1, 2)) {
		t.Fatalf("records %v", got)
	}
	a.mu.Lock()
	gap := a.times[1].Sub(a.times[0])
	a.mu.Unlock()
	if gap < 900*time.Millisecond || gap > 3*time.Second {
		t.Fatalf("retried %v after the 429 with Retry-After: 1", gap)
	}
}

func TestRetriesExhausted(t *testing.T) {
	a := newFakeAPI(t, makeOrders(2), 10)
	a.inject = func(i int, w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "upstream down", http.StatusBadGateway)
		return true
	}
	task := startTask(t, nil, baseConfig(a, RetriesConfig, "2"))
	err := pollErr(t, task)
	for _, want := range []string{"GET " + a.url("/api/orders"), "502 Bad Gateway", "upstream down", "gave up after 2 retries"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if n := len(a.requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// A 4xx other than 429 fails the task at once, with the status and the
// start of the body, quoted.
func TestClientErrorFailsTask(t *testing.T) {
	long := strings.Repeat("x", 2000)
	a := newFakeAPI(t, makeOrders(2), 10)
	a.inject = func(i int, w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"bad since_id","detail":"%s"}`, long)
		return true
	}
	task := startTask(t, nil, baseConfig(a))
	err := pollErr(t, task)
	msg := err.Error()
	if !strings.Contains(msg, `failed with HTTP status 400 Bad Request: "{\"error\":\"bad since_id\"`) || !strings.HasSuffix(msg, `xx"... (2036 bytes in all)`) || len(msg) > 250 {
		t.Fatalf("error %q", msg)
	}
	if n := len(a.requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry)", n)
	}

	a2 := newFakeAPI(t, makeOrders(2), 10)
	task = startTask(t, nil, baseConfig(a2, URLConfig, a2.url("/api/missing")))
	if err := pollErr(t, task); !strings.Contains(err.Error(), `404 Not Found: "404 page not found"`) {
		t.Fatalf("error %q", err)
	}
}

func TestBearerAuth(t *testing.T) {
	a := newFakeAPI(t, makeOrders(3), 10)
	a.check = func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer s3cret" && r.Header.Get("X-Tenant") == "acme"
	}
	props := baseConfig(a, AuthTypeConfig, "bearer", AuthTokenConfig, "s3cret", HeadersConfig, "X-Tenant: acme, Accept: application/json")
	task := startTask(t, nil, props)
	if got := ids(collect(t, task, 3)); !slices.Equal(got, idRange(1, 3)) {
		t.Fatalf("records %v", got)
	}

	props[AuthTokenConfig] = "wrong"
	task = startTask(t, nil, props)
	if err := pollErr(t, task); !strings.Contains(err.Error(), `401 Unauthorized: "{\"error\":\"unauthorized\"}"`) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error %q", err)
	}
}

func TestBasicAuth(t *testing.T) {
	a := newFakeAPI(t, makeOrders(3), 10)
	a.check = func(r *http.Request) bool {
		u, p, ok := r.BasicAuth()
		return ok && u == "alice" && p == "pa:ss"
	}
	props := baseConfig(a, AuthTypeConfig, "BASIC", AuthUserConfig, "alice", AuthPasswordConfig, "pa:ss")
	task := startTask(t, nil, props)
	if got := ids(collect(t, task, 3)); !slices.Equal(got, idRange(1, 3)) {
		t.Fatalf("records %v", got)
	}
	props[AuthPasswordConfig] = "nope"
	task = startTask(t, nil, props)
	if err := pollErr(t, task); !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Fatalf("error %q", err)
	}
}

// jsonServer answers every request with the bodies in turn, the last one
// forever.
func jsonServer(t *testing.T, bodies ...string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, bodies[min(i, len(bodies)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRecordsPointer(t *testing.T) {
	srv, _ := jsonServer(t, `{"data":{"a/b":[
		{"ref":{"id":"b-2"},"n":1.5,"tags":["x"],"big":123456789012345678901234567890},
		{"ref":{"id":"b-1"},"n":2,"nested":{"ok":true,"none":null}}
	]},"meta":{"count":2}}`)
	props := map[string]string{
		URLConfig: srv.URL + "/v1/things", TopicConfig: "things", PollIntervalConfig: "20",
		RecordsPointerConfig: "/data/a~1b", CursorIDFieldConfig: "/ref/id",
	}
	task := startTask(t, nil, props)
	recs := collect(t, task, 2)
	if got := ids(recs); !slices.Equal(got, []string{"b-1", "b-2"}) {
		t.Fatalf("records %v", got)
	}
	if !reflect.DeepEqual(recs[0].Value, map[string]any{"ref": map[string]any{"id": "b-1"}, "n": int64(2), "nested": map[string]any{"ok": true, "none": nil}}) {
		t.Fatalf("value %#v", recs[0].Value)
	}
	if !reflect.DeepEqual(recs[1].Value, map[string]any{"ref": map[string]any{"id": "b-2"}, "n": 1.5, "tags": []any{"x"}, "big": 1.2345678901234568e29}) {
		t.Fatalf("value %#v", recs[1].Value)
	}
	if !reflect.DeepEqual(recs[1].SourceOffset, map[string]any{"last_id": "b-2"}) || recs[1].SourcePartition["endpoint"] != "/v1/things" {
		t.Fatalf("offset %v partition %v", recs[1].SourceOffset, recs[1].SourcePartition)
	}
	if more := pollFor(t, task, 100*time.Millisecond); len(more) != 0 {
		t.Fatalf("the same response again gave %v", ids(more))
	}

	// A missing or null target is an empty page; anything but an array
	// fails the task.
	srv2, _ := jsonServer(t, `{"data":null}`)
	props[URLConfig] = srv2.URL
	if recs := pollFor(t, startTask(t, nil, props), 100*time.Millisecond); len(recs) != 0 {
		t.Fatalf("records %v", ids(recs))
	}
	srv3, _ := jsonServer(t, `{"data":{"a/b":{"id":1}}}`)
	props[URLConfig] = srv3.URL
	if err := pollErr(t, startTask(t, nil, props)); !strings.Contains(err.Error(), `holds a JSON object at http.records.pointer "/data/a~1b", not an array of records`) {
		t.Fatalf("error %q", err)
	}
	srv4, _ := jsonServer(t, `<html>oops</html>`)
	props[URLConfig] = srv4.URL
	if err := pollErr(t, startTask(t, nil, props)); !strings.Contains(err.Error(), "is not valid JSON") || !strings.Contains(err.Error(), "<html>oops</html>") {
		t.Fatalf("error %q", err)
	}
	srv5, _ := jsonServer(t, `{"data":{"a/b":[{"ref":{}}]}}`)
	props[URLConfig] = srv5.URL
	if err := pollErr(t, startTask(t, nil, props)); !strings.Contains(err.Error(), `record 0 of the response of GET `+srv5.URL+`: has no id field "/ref/id"`) {
		t.Fatalf("error %q", err)
	}
}

// Path templating: the cursor goes into the path (and the timestamp into
// the query), and the source pages with the cursor until nothing is new.
func TestURLTemplate(t *testing.T) {
	orders := makeOrders(12)
	var reqs recorder
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/orders/after/{id}", func(w http.ResponseWriter, r *http.Request) {
		reqs.add(r.URL.RequestURI())
		var after int64
		fmt.Sscan(r.PathValue("id"), &after)
		var page []order
		for _, o := range orders {
			if o.ID > after && len(page) < 5 {
				page = append(page, o)
			}
		}
		_ = json.NewEncoder(w).Encode(page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	props := map[string]string{
		URLConfig:             srv.URL + "/api/orders",
		URLTemplateConfig:     srv.URL + "/api/orders/after/${last_id}?ts=${timestamp}",
		CursorInitialConfig:   "0",
		CursorTimestampConfig: "updated_at",
		TopicConfig:           "orders",
		PollIntervalConfig:    "3600000",
	}
	task := startTask(t, nil, props)
	recs := collect(t, task, 12)
	if got := ids(recs); !slices.Equal(got, idRange(1, 12)) {
		t.Fatalf("records %v", got)
	}
	pollFor(t, task, 100*time.Millisecond)
	esc := func(id int64) string { return strings.ReplaceAll(orderTime(id), ":", "%3A") }
	want := []string{
		"/api/orders/after/0?ts=",
		"/api/orders/after/5?ts=" + esc(5),
		"/api/orders/after/10?ts=" + esc(10),
		"/api/orders/after/12?ts=" + esc(12), // nothing new: the cycle ends
	}
	if got := reqs.get(); !slices.Equal(got, want) {
		t.Fatalf("requests\n%v\nwant\n%v", got, want)
	}
	if recs[0].SourcePartition["endpoint"] != "/api/orders" {
		t.Fatalf("partition %v", recs[0].SourcePartition)
	}
}

// Next-page links, relative to the request, are followed until absent.
func TestNextLinkPaging(t *testing.T) {
	var reqs recorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs.add(r.URL.RequestURI())
		var from int
		fmt.Sscan(r.URL.Query().Get("cursor"), &from)
		var items []map[string]any
		for i := from + 1; i <= min(from+4, 10); i++ {
			items = append(items, map[string]any{"seq": i})
		}
		next := any(nil)
		if from+4 < 10 {
			next = fmt.Sprintf("events?cursor=%d", from+4)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items, "links": map[string]any{"next": next}})
	}))
	t.Cleanup(srv.Close)
	props := map[string]string{
		URLConfig: srv.URL + "/api/events", TopicConfig: "events", PollIntervalConfig: "20",
		RecordsPointerConfig: "/items", CursorIDFieldConfig: "seq", PageNextPointerConfig: "/links/next",
	}
	task := startTask(t, nil, props)
	if got := ids(collect(t, task, 10)); !slices.Equal(got, idRange(1, 10)) {
		t.Fatalf("records %v", got)
	}
	if more := pollFor(t, task, 100*time.Millisecond); len(more) > 0 {
		t.Fatalf("duplicates %v", ids(more))
	}
	want := []string{"/api/events", "/api/events?cursor=4", "/api/events?cursor=8", "/api/events"}
	if got := reqs.get(); len(got) < 4 || !slices.Equal(got[:4], want) {
		t.Fatalf("requests %v", got)
	}
}

// Restarting from a stored offset emits only newer records, also when the
// server ignores the cursor parameter; string and numeric ids compare as
// numbers.
func TestResumeFromStoredOffset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lastID any
		ignore bool
	}{
		{"int64", int64(40), false},
		{"server ignores the cursor", int64(40), true},
		{"string id", "40", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newFakeAPI(t, makeOrders(42), 100)
			a.ignoreCursor = tc.ignore
			stored := storedOffsets{"/api/orders": {"last_id": tc.lastID, "timestamp": orderTime(40)}}
			task := startTask(t, stored, baseConfig(a, CursorParamConfig, "since_id", CursorTimestampParamConf, "updated_since"))
			recs := collect(t, task, 2)
			recs = append(recs, pollFor(t, task, 150*time.Millisecond)...)
			if got := ids(recs); !slices.Equal(got, []string{"41", "42"}) {
				t.Fatalf("records %v", got)
			}
			first := a.requests()[0]
			if want := "/api/orders?since_id=40&updated_since=2026-07-10T14%3A28%3A00Z"; first != want {
				t.Fatalf("first request %s, want %s", first, want)
			}
			if !reflect.DeepEqual(recs[1].SourceOffset, map[string]any{"last_id": int64(42), "timestamp": "2026-07-10T14:30:00Z"}) {
				t.Fatalf("offset %v", recs[1].SourceOffset)
			}
		})
	}
}

// Altering the offset (as PATCH does: check it, store it, restart the
// task) polls again from there.
func TestAlterOffsetReplays(t *testing.T) {
	a := newFakeAPI(t, makeOrders(42), 10)
	props := baseConfig(a, CursorParamConfig, "since_id")
	task := startTask(t, nil, props)
	recs := collect(t, task, 42)
	stored := storedOffsets{"/api/orders": recs[41].SourceOffset}
	if !reflect.DeepEqual(stored["/api/orders"], map[string]any{"last_id": int64(42), "timestamp": "2026-07-10T14:30:00Z"}) {
		t.Fatalf("offset %v", stored["/api/orders"])
	}
	_ = task.Stop()

	altered := []connect.SourceOffset{{Partition: map[string]any{"endpoint": "/api/orders"}, Offset: map[string]any{"last_id": int64(40)}}}
	handled, err := (&Connector{}).AlterOffsets(props, altered)
	if err != nil || !handled {
		t.Fatalf("AlterOffsets = %v, %v", handled, err)
	}
	stored["/api/orders"] = altered[0].Offset
	task = startTask(t, stored, props)
	recs = collect(t, task, 2)
	if got := ids(recs); !slices.Equal(got, []string{"41", "42"}) {
		t.Fatalf("after altering to 40: %v", got)
	}
}

func TestAlterOffsetsValidation(t *testing.T) {
	props := map[string]string{URLConfig: "http://example.com/api/orders?x=1", TopicConfig: "t"}
	part := map[string]any{"endpoint": "/api/orders"}
	for _, tc := range []struct {
		name    string
		offsets []connect.SourceOffset
		err     string
	}{
		{"int id and timestamp", []connect.SourceOffset{{Partition: part, Offset: map[string]any{"last_id": int64(40), "timestamp": "2026-07-10T14:00:00Z"}}}, ""},
		{"string id, null timestamp", []connect.SourceOffset{{Partition: part, Offset: map[string]any{"last_id": "abc", "timestamp": nil}}}, ""},
		{"reset of another endpoint", []connect.SourceOffset{{Partition: map[string]any{"endpoint": "/old"}}}, ""},
		{"null partition", []connect.SourceOffset{{Offset: map[string]any{"last_id": int64(1)}}}, "Partition objects cannot be null"},
		{"no endpoint", []connect.SourceOffset{{Partition: map[string]any{"url": "/api/orders"}, Offset: map[string]any{"last_id": int64(1)}}}, "Partition objects should contain the key 'endpoint'"},
		{"other endpoint", []connect.SourceOffset{{Partition: map[string]any{"endpoint": "/api/order"}, Offset: map[string]any{"last_id": int64(1)}}}, `The partition's 'endpoint' is "/api/order" but this connector polls the endpoint "/api/orders"`},
		{"no last_id", []connect.SourceOffset{{Partition: part, Offset: map[string]any{"timestamp": "x"}}}, "Offset objects should either be null or contain the key 'last_id'"},
		{"float last_id", []connect.SourceOffset{{Partition: part, Offset: map[string]any{"last_id": 4.5}}}, "The value for the 'last_id' key in the offset is expected to be an integer or a string, not the number 4.5"},
		{"numeric timestamp", []connect.SourceOffset{{Partition: part, Offset: map[string]any{"last_id": int64(1), "timestamp": int64(5)}}}, "The value for the 'timestamp' key in the offset is expected to be a string, not 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handled, err := (&Connector{}).AlterOffsets(props, tc.offsets)
			if tc.err == "" {
				if err != nil || !handled {
					t.Fatalf("AlterOffsets = %v, %v", handled, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// A bad stored offset fails Start with a hint.
func TestBadStoredOffset(t *testing.T) {
	a := newFakeAPI(t, makeOrders(1), 10)
	err := NewTask().Start(storedOffsets{"/api/orders": {"last_id": true}}, baseConfig(a))
	if err == nil || !strings.Contains(err.Error(), "the stored offset of endpoint /api/orders is invalid") {
		t.Fatalf("Start: %v", err)
	}
}

// Records come sorted by id, duplicates and records at or before the
// cursor dropped; a server that ignores the page parameter ends the cycle
// instead of looping.
func TestSortDedupeAndIgnoredPageParam(t *testing.T) {
	srv, n := jsonServer(t, `[{"id":3},{"id":1},{"id":2},{"id":2}]`)
	props := map[string]string{URLConfig: srv.URL + "/x", TopicConfig: "t", PollIntervalConfig: "3600000", PageParamConfig: "page"}
	task := startTask(t, nil, props)
	recs := collect(t, task, 3)
	recs = append(recs, pollFor(t, task, 100*time.Millisecond)...)
	if got := ids(recs); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Fatalf("records %v", got)
	}
	if got := n.Load(); got != 2 {
		t.Fatalf("%d requests, want 2 (page 1, page 2 identical: stop)", got)
	}
}

// Poll returns promptly when its ctx is done, in a request and while
// waiting for the next one; it never blocks much longer than a second.
func TestPollReturnsPromptly(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		fmt.Fprint(w, `[{"id":1}]`)
	}))
	t.Cleanup(srv.Close)
	task := startTask(t, nil, map[string]string{URLConfig: srv.URL, TopicConfig: "t", PollIntervalConfig: "3600000"})
	task.maxIdle = 200 * time.Millisecond

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	recs, err := task.Poll(ctx)
	if err != nil || recs != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("Poll during a hanging request: %v, %v after %v", recs, err, time.Since(start))
	}

	close(release)
	recs = collect(t, task, 1) // the interrupted request is sent again
	if got := ids(recs); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("records %v", got)
	}
	start = time.Now()
	if recs, err := task.Poll(context.Background()); err != nil || recs != nil || time.Since(start) > time.Second {
		t.Fatalf("idle Poll: %v, %v after %v", recs, err, time.Since(start))
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if recs, err := task.Poll(ctx); err != nil || recs != nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("Poll with a done ctx: %v, %v after %v", recs, err, time.Since(start))
	}
}

// A POST with a templated body and a 204 as an empty page.
func TestPostBody(t *testing.T) {
	var bodies recorder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, r.Method, " ", r.Header.Get("Content-Type"), " ")
		buf := make([]byte, 1024)
		k, _ := r.Body.Read(buf)
		b.Write(buf[:k])
		if bodies.add(b.String()) == 1 {
			fmt.Fprint(w, `{"rows":[{"id":7}]}`)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	props := map[string]string{
		URLConfig: srv.URL + "/graphql", TopicConfig: "t", PollIntervalConfig: "20", MethodConfig: "post",
		BodyConfig: `{"after":"${last_id}"}`, RecordsPointerConfig: "/rows", CursorInitialConfig: "5",
	}
	task := startTask(t, nil, props)
	if got := ids(collect(t, task, 1)); !slices.Equal(got, []string{"7"}) {
		t.Fatalf("records %v", got)
	}
	pollFor(t, task, 50*time.Millisecond)
	if got := bodies.get(); len(got) < 2 || got[0] != `POST application/json {"after":"5"}` || got[1] != `POST application/json {"after":"7"}` {
		t.Fatalf("requests %q", got)
	}
}

// A redirect to another host (here another port) is not followed while
// the requests carry credentials, which would reach it: the task fails
// naming the settings, and the other server hears nothing. Redirects
// within the origin, and any redirect of a request without credentials,
// are followed.
func TestRedirectsKeepCredentialsAtHome(t *testing.T) {
	other := newFakeAPI(t, makeOrders(2), 10)
	var leaked atomic.Int32
	other.check = func(r *http.Request) bool {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			leaked.Add(1)
		}
		return true
	}
	home := newFakeAPI(t, makeOrders(3), 10)
	home.inject = func(_ int, w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.url("/api/orders"), http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/api/orders", http.StatusMovedPermanently)
		default:
			return false
		}
		return true
	}
	home.check = func(r *http.Request) bool {
		return r.Header.Get("Authorization") == "Bearer s3cret" && r.Header.Get("X-Api-Key") == "k"
	}
	creds := []string{AuthTypeConfig, "bearer", AuthTokenConfig, "s3cret", HeadersConfig, "X-Api-Key: k"}

	err := pollErr(t, startTask(t, nil, baseConfig(home, append(creds, URLConfig, home.url("/away"))...)))
	want := "the redirect to " + other.url("/api/orders") + " leads to another host (or scheme or port), and the request carries credentials (http.auth.type, http.headers)"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
	if n := len(other.requests()); n != 0 || leaked.Load() != 0 {
		t.Fatalf("the other host got %d requests (%d with credentials)", n, leaked.Load())
	}

	task := startTask(t, nil, baseConfig(home, append(creds, URLConfig, home.url("/moved"))...))
	if got := ids(collect(t, task, 3)); !slices.Equal(got, idRange(1, 3)) {
		t.Fatalf("through a redirect within the origin: records %v", got)
	}
	home.check = nil
	task = startTask(t, nil, baseConfig(home, URLConfig, home.url("/away")))
	if got := ids(collect(t, task, 2)); !slices.Equal(got, idRange(1, 2)) {
		t.Fatalf("without credentials, through a redirect to another host: records %v", got)
	}
	if leaked.Load() != 0 {
		t.Fatalf("%d requests brought credentials to the other host", leaked.Load())
	}
}

// A next-page link to another host is a redirect by other means: with
// credentials it fails the task before any request goes there.
func TestNextLinkToAnotherHostWithCredentials(t *testing.T) {
	other, hits := jsonServer(t, `{"items":[]}`)
	srv, _ := jsonServer(t, `{"items":[{"seq":1}],"links":{"next":"`+other.URL+`/p2"}}`)
	props := map[string]string{
		URLConfig: srv.URL, TopicConfig: "t", RecordsPointerConfig: "/items", CursorIDFieldConfig: "seq",
		PageNextPointerConfig: "/links/next", AuthTypeConfig: "basic", AuthUserConfig: "bob", AuthPasswordConfig: "pw",
	}
	err := pollErr(t, startTask(t, nil, props))
	if want := `the next-page link "` + other.URL + `/p2" of the response of ` + srv.URL + ` leads to another host`; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
	if hits.Load() != 0 {
		t.Fatalf("the other host got %d requests", hits.Load())
	}
}

// A failure names the URL without the passwords of its user info and its
// password= parameters, as the JDBC connectors hide theirs.
func TestFailureHidesURLPasswords(t *testing.T) {
	a := newFakeAPI(t, makeOrders(1), 10)
	u := strings.Replace(a.url("/api/missing?password=pw2"), "://", "://bob:pw1@", 1)
	err := pollErr(t, startTask(t, nil, baseConfig(a, URLConfig, u)))
	want := "GET " + strings.Replace(a.url("/api/missing?password=[hidden]"), "://", "://bob:[hidden]@", 1) + " failed with HTTP status 404"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "pw") {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
}
