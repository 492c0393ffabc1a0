package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// StatusTopic is the distributed worker's status store over the status
// topic (Kafka's KafkaStatusBackingStore). Its view is what has been read
// back from the topic; writes do not change it until they are read. It is
// safe for concurrent use.
//
// Kafka's store sends with retries=0 and re-sends retriable failures
// itself, dropping the retry when the status was deleted or the generation
// moved on meanwhile. Here the idempotent franz-go producer retries
// underneath, which keeps writes to a key in order, so a retried old
// status can never land after a newer one.
type StatusTopic struct {
	topicStore

	mu         sync.Mutex
	connectors map[string]StatusRecord
	tasks      map[string]map[int]StatusRecord
	topics     map[string]map[string]TopicStatus // connector → topic (from key)
}

// NewStatusTopic creates the store. cfg.OnRecord and cfg.OnCaughtUp must
// be nil.
func NewStatusTopic(cfg KafkaLogConfig) (*StatusTopic, error) {
	s := &StatusTopic{
		connectors: map[string]StatusRecord{},
		tasks:      map[string]map[int]StatusRecord{},
		topics:     map[string]map[string]TopicStatus{},
	}
	if err := s.open(cfg, s.onRecord, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// Put writes a status unconditionally and waits for the acknowledgement.
// State DESTROYED writes a tombstone.
func (s *StatusTopic) Put(ctx context.Context, rec StatusRecord) error {
	if err := checkStatus(rec); err != nil {
		return err
	}
	return s.send(ctx, rec.Key(), EncodeStatus(rec))
}

// PutSafe writes a status only if no status is known for it, the known one
// was written by the same worker, or its generation is not newer than
// rec's (spec §2.1). It reports whether it wrote.
func (s *StatusTopic) PutSafe(ctx context.Context, rec StatusRecord) (bool, error) {
	if err := checkStatus(rec); err != nil {
		return false, err
	}
	s.mu.Lock()
	cur, ok := s.lookupLocked(rec)
	s.mu.Unlock()
	if ok && cur.WorkerID != rec.WorkerID && cur.Generation > rec.Generation {
		return false, nil
	}
	return true, s.send(ctx, rec.Key(), EncodeStatus(rec))
}

// DeleteConnector writes the tombstone for a connector's status (its
// DESTROYED status). Readers then forget its task statuses too.
func (s *StatusTopic) DeleteConnector(ctx context.Context, connector string) error {
	return s.send(ctx, ConnectorStatusKey(connector), nil)
}

// DeleteTask writes the tombstone for a task's status.
func (s *StatusTopic) DeleteTask(ctx context.Context, connector string, task int) error {
	return s.send(ctx, TaskStatusKey(connector, task), nil)
}

// PutTopic records that a connector uses a topic.
func (s *StatusTopic) PutTopic(ctx context.Context, ts TopicStatus) error {
	if ts.Topic == "" || ts.Connector == "" {
		return errors.New("storage: topic status needs a topic and a connector")
	}
	return s.send(ctx, TopicStatusKey(ts.Topic, ts.Connector), EncodeTopicStatus(ts))
}

// ResetTopics writes tombstones for every topic the connector is known to
// use (PUT /connectors/{c}/topics/reset) and waits for the
// acknowledgements.
func (s *StatusTopic) ResetTopics(ctx context.Context, connector string) error {
	s.mu.Lock()
	topics := slices.Sorted(maps.Keys(s.topics[connector]))
	s.mu.Unlock()
	if len(topics) == 0 {
		return nil
	}
	kvs := make([]KeyValue, len(topics))
	for i, t := range topics {
		kvs[i] = KeyValue{Key: []byte(TopicStatusKey(t, connector))}
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := s.log.SendAll(ctx, kvs); err != nil {
		return fmt.Errorf("resetting active topics of connector %q: %w", connector, err)
	}
	return nil
}

// Connector returns the connector's status.
func (s *StatusTopic) Connector(name string) (StatusRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.connectors[name]
	return r, ok
}

// Connectors returns the names of connectors with a status, sorted.
func (s *StatusTopic) Connectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.connectors))
}

// Task returns one task's status.
func (s *StatusTopic) Task(connector string, task int) (StatusRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.tasks[connector][task]
	return r, ok
}

// Tasks returns the connector's task statuses sorted by task number.
func (s *StatusTopic) Tasks(connector string) []StatusRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	tasks := s.tasks[connector]
	if len(tasks) == 0 {
		return nil
	}
	out := make([]StatusRecord, 0, len(tasks))
	for _, r := range tasks {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b StatusRecord) int { return a.Task - b.Task })
	return out
}

// Topics returns the names of the topics the connector uses, sorted.
func (s *StatusTopic) Topics(connector string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.topics[connector]))
	for _, ts := range s.topics[connector] {
		out = append(out, ts.Topic)
	}
	sort.Strings(out)
	return out
}

// TopicStatus returns the record of the connector's use of a topic.
func (s *StatusTopic) TopicStatus(connector, topic string) (TopicStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.topics[connector][topic]
	return ts, ok
}

func checkStatus(rec StatusRecord) error {
	if rec.Connector == "" {
		return errors.New("storage: status without a connector name")
	}
	if !ValidStatusState(rec.State) {
		return fmt.Errorf("storage: invalid status state %q", rec.State)
	}
	if rec.IsTask && rec.Task < 0 {
		return fmt.Errorf("storage: invalid task number %d", rec.Task)
	}
	return nil
}

func (s *StatusTopic) send(ctx context.Context, key string, value []byte) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := s.log.Send(ctx, []byte(key), value); err != nil {
		return fmt.Errorf("writing status update: %w", err)
	}
	return nil
}

func (s *StatusTopic) lookupLocked(rec StatusRecord) (StatusRecord, bool) {
	if rec.IsTask {
		r, ok := s.tasks[rec.Connector][rec.Task]
		return r, ok
	}
	r, ok := s.connectors[rec.Connector]
	return r, ok
}

func (s *StatusTopic) onRecord(r *kgo.Record) {
	ev, err := DecodeStatusRecord(r.Key, r.Value)
	if err != nil {
		s.logger.Warn("discarding status record", "key", string(r.Key), "offset", r.Offset, "error", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.Kind {
	case StatusEventConnector:
		if ev.Tombstone {
			delete(s.connectors, ev.Connector)
			delete(s.tasks, ev.Connector)
			return
		}
		s.connectors[ev.Connector] = ev.Status
	case StatusEventTask:
		if ev.Tombstone {
			if ts := s.tasks[ev.Connector]; ts != nil {
				delete(ts, ev.Task)
				if len(ts) == 0 {
					delete(s.tasks, ev.Connector)
				}
			}
			return
		}
		ts := s.tasks[ev.Connector]
		if cur, ok := ts[ev.Task]; ok && ev.Status.State == StateUnassigned &&
			cur.State == StateRunning && cur.Generation >= ev.Status.Generation &&
			cur.WorkerID != ev.Status.WorkerID {
			// A stale "unassigned" from a worker that lost the task in an
			// earlier rebalance must not hide the new owner's RUNNING
			// (KAFKA-12525). Kafka ignores it from the same worker too;
			// here a worker's own writes arrive in order, so its
			// UNASSIGNED after its RUNNING is the news that the task
			// stopped, which a stop waits for.
			s.logger.Debug("ignoring stale UNASSIGNED task status", "connector", ev.Connector, "task", ev.Task,
				"generation", ev.Status.Generation, "current_generation", cur.Generation)
			return
		}
		if ts == nil {
			ts = map[int]StatusRecord{}
			s.tasks[ev.Connector] = ts
		}
		ts[ev.Task] = ev.Status
	case StatusEventTopic:
		if ev.Tombstone {
			if m := s.topics[ev.Connector]; m != nil {
				delete(m, ev.Topic)
				if len(m) == 0 {
					delete(s.topics, ev.Connector)
				}
			}
			return
		}
		m := s.topics[ev.Connector]
		if m == nil {
			m = map[string]TopicStatus{}
			s.topics[ev.Connector] = m
		}
		m[ev.Topic] = ev.TopicStatus
	}
}
