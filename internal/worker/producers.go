package worker

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// sharedProducerClientID is the client.id of a producer that at-least-once
// source tasks share, unless their settings name one.
const sharedProducerClientID = "connector-producer"

// taskBufferedRecords bounds the records one at-least-once source task has
// handed to a shared producer and Kafka has not answered: franz-go's
// default bound of one client, which each task had when it had a client
// of its own.
const taskBufferedRecords = 50_000

// A producerPool shares a client among a worker's at-least-once source
// tasks whose producer settings are the same. Kafka gives each task a
// producer of its own; thousands of them cost the broker three
// ApiVersions, a Metadata and an InitProducerID each as they start, and
// the worker a client's goroutines and buffers each, which made a
// cluster of thousands of connectors slow to start and every create
// during that start slow to answer. What a producer of its own isolated
// stays the task's: how much it may buffer (inflight), and what it waits
// for as it stops. Exactly-once tasks keep a transactional producer each.
type producerPool struct {
	mu    sync.Mutex
	byKey map[string]*sharedProducer
}

// A sharedProducer is a client and the tasks that use it.
type sharedProducer struct {
	cl   *kgo.Client
	key  string
	refs int
}

// producerKey is props in a canonical form: tasks whose keys are equal
// may share a client.
func producerKey(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(props[k])
		b.WriteByte(0)
	}
	return b.String()
}

// acquireProducer returns the client for props, made with opts if no task uses
// one yet.
func (w *Worker) acquireProducer(props map[string]string, opts []kgo.Opt) (*sharedProducer, error) {
	key := producerKey(props)
	p := &w.producers
	p.mu.Lock()
	defer p.mu.Unlock()
	if sp := p.byKey[key]; sp != nil {
		sp.refs++
		return sp, nil
	}
	// Each task bounds its own records (inflight); the client's bound
	// would make one task's stuck topic every task's.
	cl, err := w.newClient(props, append(opts, kgo.MaxBufferedRecords(math.MaxInt32))...)
	if err != nil {
		return nil, err
	}
	if p.byKey == nil {
		p.byKey = map[string]*sharedProducer{}
	}
	sp := &sharedProducer{cl: cl, key: key, refs: 1}
	p.byKey[key] = sp
	return sp, nil
}

// releaseProducer ends a task's use of a shared client, closing it when
// no task uses it any more.
func (w *Worker) releaseProducer(sp *sharedProducer) {
	p := &w.producers
	p.mu.Lock()
	sp.refs--
	last := sp.refs == 0
	if last {
		p.forgetLocked(sp)
	}
	p.mu.Unlock()
	if last {
		sp.cl.Close()
	}
}

// detachProducer keeps tasks that start from now on off a shared client
// that still holds records of a task that stopped: franz-go cannot fail
// one task's records alone, so the client fails them as it closes, once
// the tasks already on it stopped too, where Kafka's producer fails them
// as its one task stops. Records stuck on a partition without a leader
// then do not pile up in one client, stop after stop.
func (w *Worker) detachProducer(sp *sharedProducer) {
	p := &w.producers
	p.mu.Lock()
	p.forgetLocked(sp)
	p.mu.Unlock()
}

// forgetLocked gives sp to no task that starts from now on; a detached
// client is no longer under its key, which may hold a newer one.
func (p *producerPool) forgetLocked(sp *sharedProducer) {
	if p.byKey[sp.key] == sp {
		delete(p.byKey, sp.key)
	}
}

// inflight counts the records a task handed to a shared producer that
// Kafka has not answered yet: its bound on what it buffers, and what it
// waits for as it stops. Batches are counted whole, so that a record
// costs no more than its batch's promise already does.
type inflight struct {
	n       atomic.Int64
	waiters atomic.Bool
	mu      sync.Mutex
	changed chan struct{} // closed when n falls, if someone waits
}

// acquire adds a batch of n records once fewer than limit are in flight.
func (f *inflight) acquire(n, limit int64) {
	f.waitUntil(context.Background(), func(cur int64) bool { return cur < limit })
	f.n.Add(n)
}

// release ends n records.
func (f *inflight) release(n int64) {
	f.n.Add(-n)
	if f.waiters.Load() {
		f.mu.Lock()
		if f.changed != nil {
			close(f.changed)
			f.changed = nil
		}
		f.waiters.Store(false)
		f.mu.Unlock()
	}
}

// drain waits until no record is in flight, or ctx ends.
func (f *inflight) drain(ctx context.Context) error {
	return f.waitUntil(ctx, func(cur int64) bool { return cur == 0 })
}

func (f *inflight) waitUntil(ctx context.Context, ok func(int64) bool) error {
	for !ok(f.n.Load()) {
		f.mu.Lock()
		f.waiters.Store(true)
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		// Read again now that release sees a waiter: a release between
		// the first read and here would otherwise be missed.
		if ok(f.n.Load()) {
			f.mu.Unlock()
			return nil
		}
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
