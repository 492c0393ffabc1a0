package worker

import (
	"context"
	"testing"
	"time"
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
