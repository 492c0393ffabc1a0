package worker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A task's batch waits while its records in flight are at the bound, and
// goes once an answer brings them under it; a stop waits for the last
// answer, or gives up at its deadline.
func TestInflightBoundsAndDrains(t *testing.T) {
	var f inflight
	f.acquire(3, 4)
	f.acquire(2, 4) // 3 in flight, under the bound: a batch may pass it
	got := make(chan struct{})
	go func() {
		f.acquire(1, 4) // 5 in flight: waits
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a batch went in with 5 records in flight, bound 4")
	case <-time.After(50 * time.Millisecond):
	}
	f.release(2)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch still waits with 3 records in flight, bound 4")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := f.drain(ctx); err == nil {
		t.Fatal("drain returned with 4 records in flight")
	}
	drained := make(chan error, 1)
	go func() { drained <- f.drain(context.Background()) }()
	f.release(3)
	f.release(1)
	select {
	case err := <-drained:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("drain did not return once every record was answered")
	}
}

// Tasks of the same producer settings get the same client, others
// another; a client a stopped task left records in is given to no task
// that starts after, and closes once its tasks stopped.
func TestProducerPoolSharesAndDetaches(t *testing.T) {
	w := &Worker{}
	props := map[string]string{"bootstrap.servers": "127.0.0.1:1"}
	other := map[string]string{"bootstrap.servers": "127.0.0.1:1", "linger.ms": "1"}
	a, err := w.acquireProducer(props, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := w.acquireProducer(props, nil)
	c, _ := w.acquireProducer(other, nil)
	if a != b || a == c {
		t.Fatalf("same settings: same client %v (want true); other settings: same client %v (want false)", a == b, a == c)
	}
	w.detachProducer(a)
	d, _ := w.acquireProducer(props, nil)
	if d == a {
		t.Fatal("a task that started after the client was detached got it")
	}
	w.releaseProducer(a)
	if err := a.cl.Ping(context.Background()); err == kgo.ErrClientClosed {
		t.Fatal("the detached client closed while a task still used it")
	}
	w.releaseProducer(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.cl.Ping(ctx); err != kgo.ErrClientClosed {
		t.Fatalf("the detached client after its last task stopped: ping %v, want %v", err, kgo.ErrClientClosed)
	}
	if e, _ := w.acquireProducer(props, nil); e != d {
		t.Fatal("the client of the tasks that started after the detach was not shared")
	}
	for _, sp := range []*sharedProducer{c, d, d} {
		w.releaseProducer(sp)
	}
	if len(w.producers.byKey) != 0 {
		t.Fatalf("%d clients left once every task stopped", len(w.producers.byKey))
	}
}
