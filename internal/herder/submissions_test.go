package herder

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A worker's submissions to the leader hold at most submissionsAtOnce of
// its connections, reused from one request to the next, however many its
// connectors send at once; the base client's TLS settings still apply.
func TestLeaderClientBoundsConnections(t *testing.T) {
	release := make(chan struct{})
	var inFlight, most, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()

	cl := leaderClient(srv.Client())
	const requests = 3 * submissionsAtOnce
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for range requests {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/connectors/c/tasks?forward=true", http.NoBody)
			if err == nil {
				var resp *http.Response
				if resp, err = cl.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			errs <- err
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for inFlight.Load() < submissionsAtOnce {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests reached the leader, want %d", inFlight.Load(), submissionsAtOnce)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := most.Load(); m != submissionsAtOnce {
		t.Errorf("at most %d requests at once at the leader, want %d", m, submissionsAtOnce)
	}
	if n := conns.Load(); n > submissionsAtOnce {
		t.Errorf("%d connections opened for %d requests, want at most %d", n, requests, submissionsAtOnce)
	}
}
