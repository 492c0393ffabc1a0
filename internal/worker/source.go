package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sourceTask moves records from a connect.SourceTask into Kafka and keeps
// the offsets of acknowledged records for the next commit.
type sourceTask struct {
	*Task
	task       connect.SourceTask
	config     map[string]string
	keyConv    connect.Converter
	valueConv  connect.Converter
	client     *kgo.Client
	committer  connect.Committer
	recordAcks connect.RecordCommitter

	mu sync.Mutex
	// pending holds, per source partition, the offsets of records sent
	// but not yet committed, in send order. An offset may be committed
	// once it and every earlier record of its partition were acknowledged:
	// committing past an unacknowledged record could lose it in a crash.
	pending   map[string]*partitionQueue
	sendErr   error
	topicSeen map[string]bool
}

type partitionQueue struct {
	partition map[string]any
	records   []*pendingRecord
}

type pendingRecord struct {
	offset map[string]any
	acked  bool
}

func (w *Worker) newSourceTask(t *Task, task connect.SourceTask, connConfig, taskConfig map[string]string) (*sourceTask, error) {
	kc, err := w.converter(connConfig, true)
	if err != nil {
		return nil, err
	}
	vc, err := w.converter(connConfig, false)
	if err != nil {
		return nil, err
	}
	props := w.clientProps(map[string]string{
		"client.id": fmt.Sprintf("connector-producer-%s-%d", t.Connector, t.ID),
	}, "producer.", "producer.override.", connConfig)
	cl, err := w.newClient(props,
		kgo.RecordPartitioner(sourcePartitioner{}),
		kgo.AllowAutoTopicCreation(),
		// Kafka Connect retries sends without end (delivery.timeout.ms
		// is Integer.MAX_VALUE): a record is never dropped for a slow
		// broker.
		kgo.RecordDeliveryTimeout(0),
	)
	if err != nil {
		return nil, err
	}
	st := &sourceTask{
		Task: t, task: task, config: taskConfig, keyConv: kc, valueConv: vc, client: cl,
		pending: map[string]*partitionQueue{}, topicSeen: map[string]bool{},
	}
	st.committer, _ = task.(connect.Committer)
	st.recordAcks, _ = task.(connect.RecordCommitter)
	return st, nil
}

// Offset implements connect.SourceTaskContext.
func (s *sourceTask) Offset(partition map[string]any) (map[string]any, error) {
	off, _ := s.w.offsets.Get(s.Connector, partition)
	return off, nil
}

func (s *sourceTask) run(ctx context.Context) {
	defer close(s.done)
	defer s.client.Close()
	if err := safeCall(func() error { return s.task.Start(s, s.config) }); err != nil {
		s.fail(err)
		return
	}
	if paused, _ := s.pauseState(); !paused {
		s.report("RUNNING", "")
	}
	err := s.loop(ctx)
	if err == nil {
		err = s.sendErrNow()
	}
	if stopErr := safeCall(s.task.Stop); stopErr != nil && err == nil {
		err = stopErr
	}
	// Whatever happened, the records Kafka acknowledged are safe: commit
	// their offsets so a restart does not send them again.
	flushCtx, cancel := context.WithTimeout(context.Background(), s.w.cfg.OffsetFlushTimeout)
	defer cancel()
	if ferr := s.client.Flush(flushCtx); ferr != nil {
		s.w.log.Warn("timed out waiting for Kafka to acknowledge the last records; their offsets are not committed", "connector", s.Connector, "task", s.ID)
	}
	if cerr := s.commit(); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil {
		s.fail(err)
		return
	}
	s.report("UNASSIGNED", "")
}

func (s *sourceTask) loop(ctx context.Context) error {
	lastCommit := time.Now()
	for {
		if !s.waitWhilePaused(ctx, nil) {
			return nil
		}
		var recs []*connect.SourceRecord
		err := safeCall(func() error {
			var err error
			recs, err = s.task.Poll(ctx)
			return err
		})
		if ctx.Err() != nil {
			// Records polled while stopping are still sent: the task
			// has moved past them.
			if err == nil {
				if err := s.send(ctx, recs); err != nil {
					return err
				}
			}
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.send(ctx, recs); err != nil {
			return err
		}
		if time.Since(lastCommit) >= s.w.cfg.OffsetFlush {
			if err := s.commit(); err != nil {
				return err
			}
			lastCommit = time.Now()
		}
	}
}

func (s *sourceTask) send(ctx context.Context, recs []*connect.SourceRecord) error {
	for _, rec := range recs {
		if err := s.sendErrNow(); err != nil {
			return err
		}
		kr, err := s.toKafka(rec)
		if err != nil {
			return err
		}
		pr := s.track(rec)
		s.noteTopic(rec.Topic)
		// Produce blocks while the client buffers too many records,
		// which is the back-pressure on Poll. It must not be cancelled
		// by ctx: a record the task handed over is sent even when the
		// task is being stopped.
		s.client.Produce(context.WithoutCancel(ctx), kr, func(r *kgo.Record, err error) {
			s.acked(rec, pr, r, err)
		})
	}
	return s.sendErrNow()
}

func (s *sourceTask) sendErrNow() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendErr
}

func (s *sourceTask) noteTopic(topic string) {
	if !s.topicSeen[topic] {
		s.topicSeen[topic] = true
		s.w.listener.TopicUsed(s.Connector, topic, s.ID)
	}
}

func (s *sourceTask) toKafka(rec *connect.SourceRecord) (*kgo.Record, error) {
	if rec.Topic == "" {
		return nil, errors.New("source record has no topic")
	}
	key, err := s.keyConv.FromConnectData(rec.Topic, rec.KeySchema, rec.Key)
	if err != nil {
		return nil, fmt.Errorf("converting the key of a record for topic %s: %w", rec.Topic, err)
	}
	value, err := s.valueConv.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
	if err != nil {
		return nil, fmt.Errorf("converting the value of a record for topic %s: %w", rec.Topic, err)
	}
	kr := &kgo.Record{Topic: rec.Topic, Key: key, Value: value, Timestamp: rec.Timestamp}
	if rec.Partition != nil {
		kr.Partition = *rec.Partition
		kr.Context = explicitPartition
	}
	for _, h := range rec.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: headerBytes(h.Value)})
	}
	return kr, nil
}

func headerBytes(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return fmt.Append(nil, v)
}

func (s *sourceTask) track(rec *connect.SourceRecord) *pendingRecord {
	if rec.SourcePartition == nil || rec.SourceOffset == nil {
		return nil
	}
	key := storage.CanonicalKey(s.Connector, rec.SourcePartition)
	pr := &pendingRecord{offset: rec.SourceOffset}
	s.mu.Lock()
	q := s.pending[key]
	if q == nil {
		q = &partitionQueue{partition: rec.SourcePartition}
		s.pending[key] = q
	}
	q.records = append(q.records, pr)
	s.mu.Unlock()
	return pr
}

func (s *sourceTask) acked(rec *connect.SourceRecord, pr *pendingRecord, r *kgo.Record, err error) {
	if err != nil {
		s.mu.Lock()
		if s.sendErr == nil {
			s.sendErr = fmt.Errorf("sending a record to topic %s: %w", r.Topic, err)
		}
		s.mu.Unlock()
		s.cancel()
		return
	}
	if pr != nil {
		s.mu.Lock()
		pr.acked = true
		s.mu.Unlock()
	}
	if s.recordAcks != nil {
		meta := connect.RecordMetadata{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
		if err := safeCall(func() error { return s.recordAcks.CommitRecord(rec, meta) }); err != nil {
			s.w.log.Warn("commitRecord failed", "connector", s.Connector, "task", s.ID, "error", err)
		}
	}
}

// commit writes the newest acknowledged offset of every source partition
// to the offset store.
func (s *sourceTask) commit() error {
	s.mu.Lock()
	var entries []storage.PartitionOffset
	for key, q := range s.pending {
		n := 0
		for n < len(q.records) && q.records[n].acked {
			n++
		}
		if n == 0 {
			continue
		}
		entries = append(entries, storage.PartitionOffset{Partition: q.partition, Offset: q.records[n-1].offset})
		q.records = q.records[n:]
		if len(q.records) == 0 {
			delete(s.pending, key)
		}
	}
	s.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	if err := s.w.offsets.Put(s.Connector, entries); err != nil {
		return fmt.Errorf("committing offsets: %w", err)
	}
	if s.committer != nil {
		if err := safeCall(s.committer.Commit); err != nil {
			s.w.log.Warn("task commit failed", "connector", s.Connector, "task", s.ID, "error", err)
		}
	}
	return nil
}

// explicitPartition marks records whose task chose the Kafka partition.
var explicitPartition = context.WithValue(context.Background(), explicitKey{}, true)

type explicitKey struct{}

// sourcePartitioner is Kafka's default partitioning (murmur2 over the key,
// sticky batches for records without a key) except where the task chose
// a partition itself.
type sourcePartitioner struct{}

func (sourcePartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	def := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	onNew, _ := def.(kgo.TopicPartitionerOnNewBatch)
	return &sourceTopicPartitioner{def: def, onNew: onNew}
}

type sourceTopicPartitioner struct {
	def   kgo.TopicPartitioner
	onNew kgo.TopicPartitionerOnNewBatch
}

func (p *sourceTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Context == explicitPartition || p.def.RequiresConsistency(r)
}

func (p *sourceTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Context == explicitPartition {
		return int(r.Partition) % n
	}
	return p.def.Partition(r, n)
}

func (p *sourceTopicPartitioner) OnNewBatch() {
	if p.onNew != nil {
		p.onNew.OnNewBatch()
	}
}
