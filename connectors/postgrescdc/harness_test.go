package postgrescdc

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
)

// offsetStore plays the runtime's offset store: offsets go through the
// JSON round trip a real store does (integers come back as int64).
type offsetStore struct {
	mu      sync.Mutex
	offsets map[string]map[string]any // by server name
}

func newOffsetStore() *offsetStore { return &offsetStore{offsets: map[string]map[string]any{}} }

// Offset implements connect.SourceTaskContext.
func (s *offsetStore) Offset(p map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.offsets[fmt.Sprint(p[PartitionServerKey])]), nil
}

// Logger implements connect.SourceTaskContext.
func (s *offsetStore) Logger() *slog.Logger { return slog.Default() }

func (s *offsetStore) TransactionContext() connect.TransactionContext { return nil }

func (s *offsetStore) put(tb testing.TB, partition, offset map[string]any) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := fmt.Sprint(partition[PartitionServerKey])
	if offset == nil {
		delete(s.offsets, key)
		return
	}
	b, err := javajson.Marshal(offset)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := javajson.Unmarshal(b)
	if err != nil {
		tb.Fatal(err)
	}
	s.offsets[key] = v.(map[string]any)
}

func (s *offsetStore) get(server string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.offsets[server])
}

// runner drives a task as the runtime does: Poll, and on commit() store
// the newest offset of the records polled so far, then call Commit.
type runner struct {
	tb     testing.TB
	task   *Task
	store  *offsetStore
	ctx    context.Context
	cancel context.CancelFunc

	records   []*connect.SourceRecord // every record polled
	newest    map[string]any          // newest offset among them
	partition map[string]any
	committed int // records covered by the last commit
}

func startRunner(tb testing.TB, store *offsetStore, config map[string]string) *runner {
	tb.Helper()
	r, err := tryStartRunner(tb, store, config)
	if err != nil {
		tb.Fatalf("starting the task: %v", err)
	}
	return r
}

func tryStartRunner(tb testing.TB, store *offsetStore, config map[string]string) (*runner, error) {
	tb.Helper()
	t := NewTask()
	if err := t.Start(store, config); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{tb: tb, task: t, store: store, ctx: ctx, cancel: cancel}
	tb.Cleanup(func() { r.stop() })
	return r, nil
}

// poll polls once and returns the new records.
func (r *runner) poll() []*connect.SourceRecord {
	r.tb.Helper()
	recs, err := r.task.Poll(r.ctx)
	if err != nil {
		r.tb.Fatalf("Poll: %v", err)
	}
	for _, rec := range recs {
		if rec.SourcePartition != nil {
			r.partition = rec.SourcePartition
		}
		if rec.SourceOffset != nil {
			r.newest = rec.SourceOffset
		}
	}
	r.records = append(r.records, recs...)
	return recs
}

// pollUntil polls until cond holds, failing after a deadline.
func (r *runner) pollUntil(what string, cond func() bool) {
	r.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.tb.Fatalf("timed out waiting for %s (%d records polled)", what, len(r.records))
		}
		r.poll()
	}
}

// pollN polls until n more records than now were polled, and returns them.
func (r *runner) pollN(n int) []*connect.SourceRecord {
	r.tb.Helper()
	start := len(r.records)
	r.pollUntil(fmt.Sprintf("%d records", n), func() bool { return len(r.records)-start >= n })
	return r.records[start:]
}

// commit stores the newest offset polled, as the runtime does once Kafka
// acknowledged the records, then calls Commit.
func (r *runner) commit() {
	r.tb.Helper()
	if r.newest == nil {
		return
	}
	r.store.put(r.tb, r.partition, r.newest)
	r.committed = len(r.records)
	if err := r.task.Commit(); err != nil {
		r.tb.Fatalf("Commit: %v", err)
	}
}

func (r *runner) stop() {
	if r.task != nil {
		r.cancel()
		r.task.Stop()
		r.task = nil
	}
}

// kill abandons the task as a crash would: it is neither stopped nor
// committed, and its connections drop after a while (as the server
// notices the death of a process); the returned flag is set just before
// they do.
func (r *runner) kill(after time.Duration) *atomic.Bool {
	dropping := new(atomic.Bool)
	t := r.task
	r.task = nil
	r.cancel()
	t.mu.Lock()
	s := t.stream
	t.mu.Unlock()
	if s != nil {
		// The reader stops reading: nothing answers the server any more.
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
	}
	go func() {
		time.Sleep(after)
		dropping.Store(true)
		if s != nil {
			s.conn.Conn().Close()
			<-s.done
		}
		if t.repl != nil {
			t.repl.Conn().Close()
		}
		if t.meta != nil {
			t.meta.PgConn().Conn().Close()
		}
		if t.cancel != nil {
			t.cancel()
		}
	}()
	return dropping
}
