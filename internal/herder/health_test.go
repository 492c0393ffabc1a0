package herder

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// KIP-1017's three answers: starting before the worker is ready, healthy,
// and unhealthy when the herder's lock is not free in time or Kafka does
// not answer; a herder stuck holding its lock keeps one probe waiting,
// however many requests come.
func TestHealthProbe(t *testing.T) {
	var mu sync.Mutex
	kafkaErr := error(nil)
	p := &healthProbe{kafka: func(context.Context) error { return kafkaErr }}
	if code, st := p.check(context.Background(), false, &mu); code != 503 || st.Status != "starting" || st.Message != "Worker is still starting up." {
		t.Errorf("not ready: %d %+v", code, st)
	}
	if code, st := p.check(context.Background(), true, &mu); code != 200 || st.Status != "healthy" {
		t.Errorf("ready: %d %+v", code, st)
	}
	kafkaErr = errors.New("dial tcp 127.0.0.1:9092: connection refused")
	if code, st := p.check(context.Background(), true, &mu); code != 500 || st.Status != "unhealthy" ||
		!strings.HasPrefix(st.Message, "Worker was unable to handle this request and may be unable to handle other requests.") ||
		!strings.Contains(st.Message, "cannot reach Kafka: dial tcp 127.0.0.1:9092: connection refused") {
		t.Errorf("Kafka unreachable: %d %+v", code, st)
	}
	kafkaErr = nil

	// The herder holds its lock: the request's deadline (here shorter
	// than Kafka's 10 s) passes, and the worker is unhealthy.
	mu.Lock()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		code, st := p.check(ctx, true, &mu)
		cancel()
		if code != 500 || !strings.Contains(st.Message, "did not take a request within 10 seconds") {
			t.Errorf("herder stuck: %d %+v", code, st)
		}
	}
	p.mu.Lock()
	waiting := p.inflight != nil
	p.mu.Unlock()
	if !waiting {
		t.Error("no probe waits for the lock")
	}
	mu.Unlock()
	if code, _ := p.check(context.Background(), true, &mu); code != 200 {
		t.Errorf("once the lock is free: %d", code)
	}
}
