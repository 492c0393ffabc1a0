package rest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

// peer is a herder for the forwarding tests: it answers every request
// for another worker with target, or with answer when target is nil.
type peer struct {
	stub
	target *herder.RequestTargetError
	answer error
	mu     sync.Mutex
	got    []client.ConnectorOffset
}

func (p *peer) DeleteConnector(context.Context, string) error {
	if p.target != nil {
		return p.target
	}
	return p.answer
}

func (p *peer) AlterConnectorOffsets(_ context.Context, _ string, offsets []client.ConnectorOffset) (string, error) {
	if p.target != nil {
		return "", p.target
	}
	p.mu.Lock()
	p.got = offsets
	p.mu.Unlock()
	return "The offsets for this connector have been altered successfully", nil
}

// received is what a worker received, as it came over the wire.
type received struct {
	method, path, query, auth, contentType, body string
}

// recording serves h, keeping what each request brought.
func recording(t *testing.T, h http.Handler) (*httptest.Server, func() []received) {
	t.Helper()
	var mu sync.Mutex
	var log []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		log = append(log, received{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(body)})
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), log...)
	}
}

func sendWith(t *testing.T, url, method, path, body string, header http.Header) response {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
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

// A request the herder hands to another worker goes there as it came:
// method, escaped path, query, body bytes, Authorization; the answer is
// this worker's own, its Location naming this worker.
func TestForwardSendsTheRequestAsItCame(t *testing.T) {
	leader := &peer{stub: stub{put: func(_ context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error) {
		return &client.ConnectorInfo{Name: name, Config: config, Type: client.TypeSource}, true, nil
	}}}
	target, got := recording(t, New(leader, logging.NewRegistry(io.Discard), DefaultOptions()))
	follower := &peer{target: &herder.RequestTargetError{URL: target.URL + "/"}}
	follower.put = func(context.Context, string, map[string]string) (*client.ConnectorInfo, bool, error) {
		return nil, false, follower.target
	}
	srv := serve(t, follower, DefaultOptions())

	body := `{"connector.class": "X",  "tasks.max": 2}`
	header := http.Header{"Authorization": {"Bearer t0ken"}, "Content-Type": {"application/x-www-form-urlencoded"}}
	resp := sendWith(t, srv.URL, "PUT", "/connectors/my%2Fconn/config?x=y", body, header)
	expect(t, resp, 201, `{"name":"my/conn","config":{"connector.class":"X","name":"my/conn","tasks.max":"2"},"tasks":[],"type":"source"}`)
	if loc, want := resp.header.Get("Location"), srv.URL+"/connectors/my/conn"; loc != want {
		t.Errorf("Location %q, want %q", loc, want)
	}
	want := received{"PUT", "/connectors/my%2Fconn/config", "forward=true&x=y", "Bearer t0ken", "application/json", body}
	if g := got(); len(g) != 1 || g[0] != want {
		t.Errorf("the leader received %+v, want %+v", g, want)
	}

	// A double stays a double: the body is not decoded and encoded again
	// on its way.
	follower.target = &herder.RequestTargetError{URL: target.URL}
	resp = send(t, srv, "PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{"file":"a"},"offset":{"position":1.0}}]}`)
	expect(t, resp, 200, `{"message":"The offsets for this connector have been altered successfully"}`)
	leader.mu.Lock()
	defer leader.mu.Unlock()
	if len(leader.got) != 1 || leader.got[0].Offset["position"] != float64(1) {
		t.Errorf("the leader was asked for %#v", leader.got)
	}
}

// Kafka Connect's hops: a user's request is forwarded with forward=true,
// a forwarded one with forward=false, and one that came with
// forward=false is answered 409 rather than sent on.
func TestForwardHops(t *testing.T) {
	target, got := recording(t, New(&peer{}, logging.NewRegistry(io.Discard), DefaultOptions()))
	follower := serve(t, &peer{target: &herder.RequestTargetError{URL: target.URL}}, DefaultOptions())
	noLeader := serve(t, &peer{target: &herder.RequestTargetError{}}, DefaultOptions())

	expect(t, send(t, follower, "DELETE", "/connectors/c", ""), 204, "")
	expect(t, send(t, follower, "DELETE", "/connectors/c?forward=true", ""), 204, "")
	expect(t, send(t, follower, "DELETE", "/connectors/c?forward=false", ""), 409,
		`{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`)
	expect(t, send(t, noLeader, "DELETE", "/connectors/c", ""), 409,
		`{"error_code":409,"message":"Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."}`)
	expect(t, send(t, noLeader, "DELETE", "/connectors/c?forward=false", ""), 409,
		`{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`)

	g := got()
	if len(g) != 2 || g[0].query != "forward=true" || g[1].query != "forward=false" {
		t.Errorf("the target received %+v", g)
	}
}

// What the target answers is the answer: its status and message, the text
// of a body not in Kafka's shape, and Kafka's IO error when it cannot be
// reached.
func TestForwardRelaysTheTargetsErrors(t *testing.T) {
	leader := serve(t, &peer{answer: herder.NotFound("Connector c not found")}, DefaultOptions())
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	to := func(url string) *httptest.Server {
		return serve(t, &peer{target: &herder.RequestTargetError{URL: url}}, DefaultOptions())
	}
	expect(t, send(t, to(leader.URL), "DELETE", "/connectors/c", ""), 404, `{"error_code":404,"message":"Connector c not found"}`)
	expect(t, send(t, to(proxy.URL), "DELETE", "/connectors/c", ""), 502, `{"error_code":502,"message":"upstream down"}`)
	resp := send(t, to(gone.URL), "DELETE", "/connectors/c", "")
	if resp.status != 500 || !strings.HasPrefix(resp.body, `{"error_code":500,"message":"IO Error trying to forward REST request: `) {
		t.Errorf("unreachable target: %d %s", resp.status, resp.body)
	}
}
