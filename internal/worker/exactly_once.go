package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ExactlyOnce is what a source task needs from its herder to run exactly
// once (KIP-618, exactly.once.source.support=enabled): its records and
// their offsets are written in the same Kafka transactions, by a producer
// whose transactional id fences out any older incarnation of the task.
type ExactlyOnce struct {
	// TransactionalID is the task producer's (Kafka's
	// <group.id>-<connector>-<task>).
	TransactionalID string
	// Fence is called on the task's goroutine before its producer
	// claims the transactional id: it returns once the connector's
	// earlier task generations, which may still run somewhere, are fenced
	// out (Kafka's preflight zombie fencing, done by the leader).
	Fence func(ctx context.Context) error
	// Verify is called once the producer holds its transactional id: an
	// error (the connector made new task configs since the task was
	// started here, or the task moved) stops the task before it writes.
	// The task reads its offsets to their end after it, so that it starts
	// from what the last transaction before it committed.
	Verify func(ctx context.Context) error
}

// TransactionalOffsets is an offset store whose writes an exactly-once
// task makes itself, in its own transactions.
type TransactionalOffsets interface {
	OffsetStore
	// Topic is where the task writes its offsets: the connector's own
	// offsets topic, else the worker's.
	Topic() string
	// Records are the records that write entries to Topic.
	Records(connector string, entries []storage.PartitionOffset) ([]storage.KeyValue, error)
}

// CommitListener is implemented by a TransactionalOffsets that keeps a
// copy of the offsets beside Topic (the worker's topic, behind a
// connector's own): it is told what each transaction committed.
type CommitListener interface {
	Committed(connector string, entries []storage.PartitionOffset)
}

// Transaction boundaries (transaction.boundary).
const (
	boundaryPoll      = "poll"
	boundaryInterval  = "interval"
	boundaryConnector = "connector"
)

// txnState is an exactly-once source task's transaction bookkeeping. The
// sending goroutine owns it, except ctx (TransactionContext), which the
// task calls.
type txnState struct {
	eos      *ExactlyOnce
	store    TransactionalOffsets
	boundary string
	interval time.Duration
	ctx      *txnContext // transaction.boundary=connector only

	open       bool
	lastCommit time.Time
	records    int // in the open transaction, for the metrics
	// offsets are the newest offset of each source partition whose
	// records went into the open transaction (or were dropped since the
	// last commit), by canonical key.
	offsets map[string]*storage.PartitionOffset
	keys    partitionKeys
	// last is offsets' entry of lastKey, the partition noted last.
	last    *storage.PartitionOffset
	lastKey string
	// acked are the records Kafka acknowledged in the open transaction,
	// for a RecordCommitter: CommitRecord comes once it committed.
	acked []ackedRecord
	// release are the batches to hand back to a RecordReleaser once the
	// open transaction's CommitRecord calls are made.
	release [][]*connect.SourceRecord
	ackMu   sync.Mutex // guards acked and release, which producer promises fill
}

type ackedRecord struct {
	rec  *connect.SourceRecord
	meta connect.RecordMetadata
}

func newTxnState(connector string, eos *ExactlyOnce, store OffsetStore, connConfig map[string]string, flush time.Duration) (*txnState, error) {
	ts, ok := store.(TransactionalOffsets)
	if !ok {
		return nil, errors.New("the connector's offsets store cannot be written in a transaction")
	}
	t := &txnState{eos: eos, store: ts, boundary: strings.ToLower(strings.TrimSpace(connConfig["transaction.boundary"])), interval: flush, offsets: map[string]*storage.PartitionOffset{}, keys: partitionKeys{connector: connector}}
	if t.boundary == "" {
		t.boundary = boundaryPoll
	}
	if v := strings.TrimSpace(connConfig["transaction.boundary.interval.ms"]); v != "" {
		ms, err := parseMillis("transaction.boundary.interval.ms", v)
		if err != nil {
			return nil, err
		}
		t.interval = ms
	}
	if t.boundary == boundaryConnector {
		t.ctx = &txnContext{}
	}
	return t, nil
}

func parseMillis(key, v string) (time.Duration, error) {
	n, err := connect.ParseValue(key, connect.ConfigLong, v)
	if err != nil {
		return 0, err
	}
	if n.(int64) < 0 {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Value must be at least 0", v, key)
	}
	return time.Duration(n.(int64)) * time.Millisecond, nil
}

// note records rec's offset as one the next commit writes. A record
// without an offset moves nothing, as in the at-least-once tracker. Most
// records are of the partition before: then only the offset changes.
func (t *txnState) note(rec *connect.SourceRecord) {
	if rec.SourcePartition == nil || rec.SourceOffset == nil {
		return
	}
	key := t.keys.of(rec.SourcePartition)
	if t.last == nil || key != t.lastKey {
		t.last = t.offsets[key]
		if t.last == nil {
			t.last = &storage.PartitionOffset{Partition: rec.SourcePartition}
			t.offsets[key] = t.last
		}
		t.lastKey = key
	}
	t.last.Offset = rec.SourceOffset
}

// txnRequests are the requests a task made through its TransactionContext
// while it polled one batch, taken when Poll returned: they apply to that
// batch, whatever the task asks while the next one is polled.
type txnRequests struct {
	commitBatch, abortBatch bool
	commitOn, abortOn       map[*connect.SourceRecord]bool
}

// txnContext implements connect.TransactionContext.
type txnContext struct {
	mu  sync.Mutex
	req txnRequests
}

func (c *txnContext) CommitTransaction() {
	c.mu.Lock()
	c.req.commitBatch = true
	c.mu.Unlock()
}

func (c *txnContext) AbortTransaction() {
	c.mu.Lock()
	c.req.abortBatch = true
	c.mu.Unlock()
}

func (c *txnContext) CommitTransactionAfter(rec *connect.SourceRecord) { c.after(&c.req.commitOn, rec) }

func (c *txnContext) AbortTransactionAfter(rec *connect.SourceRecord) { c.after(&c.req.abortOn, rec) }

// after marks rec in *on, one of c.req's maps.
func (c *txnContext) after(on *map[*connect.SourceRecord]bool, rec *connect.SourceRecord) {
	c.mu.Lock()
	if *on == nil {
		*on = map[*connect.SourceRecord]bool{}
	}
	(*on)[rec] = true
	c.mu.Unlock()
}

// take returns the requests made so far and forgets them, refusing, as
// Kafka does, a commit and an abort of the same batch or record.
func (c *txnContext) take() (txnRequests, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.req
	c.req = txnRequests{}
	if r.commitBatch && r.abortBatch {
		return r, errors.New("Connector requested both commit and abort of same batch")
	}
	for rec := range r.commitOn {
		if r.abortOn[rec] {
			return r, fmt.Errorf("Connector requested both commit and abort of same record: %v", rec.Topic)
		}
	}
	return r, nil
}

// TransactionContext implements connect.SourceTaskContext.
func (s *sourceTask) TransactionContext() connect.TransactionContext {
	if s.txn == nil || s.txn.ctx == nil {
		return nil
	}
	return s.txn.ctx
}

// startTransactions fences the task's earlier generations, claims the
// transactional id and checks that the task may still run here.
func (s *sourceTask) startTransactions(ctx context.Context) error {
	if err := s.txn.eos.Fence(ctx); err != nil {
		return fmt.Errorf("Failed to perform round of zombie fencing: %w", err)
	}
	if _, _, err := s.client.ProducerID(ctx); err != nil {
		return fmt.Errorf("initializing the transactions of producer %s: %w", s.txn.eos.TransactionalID, err)
	}
	s.txn.lastCommit = time.Now()
	return s.txn.eos.Verify(ctx)
}

// sendTxn hands a prepared batch to the producer inside the open
// transaction (begun if none is), and ends the transaction where the
// connector's boundary says.
func (s *sourceTask) sendTxn(b *sendBatch) error {
	t := s.txn
	if b.recs == nil {
		switch {
		case b.pause && t.boundary == boundaryConnector:
			// Kafka's final commit at a pause: what the task asked.
			if b.req.abortBatch {
				if err := s.abortTxn(false); err != nil {
					return err
				}
				return s.commitTxn()
			}
			if b.req.commitBatch {
				return s.commitTxn()
			}
		case b.pause:
			return s.commitTxn()
		case t.boundary == boundaryInterval && time.Since(t.lastCommit) >= t.interval:
			// The interval ended while the task polled.
			return s.commitTxn()
		}
		return nil
	}
	if err := s.beginTxn(); err != nil {
		return err
	}
	if s.recordAcks != nil && len(b.dropped) > 0 {
		t.ackMu.Lock()
		for _, rec := range b.dropped {
			t.acked = append(t.acked, ackedRecord{rec, recordMetadata(nil)})
		}
		t.ackMu.Unlock()
	}
	if t.boundary != boundaryConnector {
		for _, rec := range b.recs {
			t.note(rec)
		}
		t.records += b.n
		s.send(b)
		if t.boundary == boundaryPoll || time.Since(t.lastCommit) >= t.interval {
			return s.commitTxn()
		}
		return nil
	}
	// Connector-defined boundaries: record by record, so that a commit
	// or an abort after one of them takes in what came before it only.
	next, kafka := s.sender(b), 0
	for _, rec := range b.recs {
		t.note(rec)
		if kafka < len(b.sent) && b.sent[kafka] == rec {
			next()
			kafka++
			t.records++
		}
		switch {
		case b.req.abortOn[rec]:
			if err := s.abortTxn(false); err != nil {
				return err
			}
			// The aborted records' offsets are committed, so that the
			// task does not read them again.
			if err := s.commitTxn(); err != nil {
				return err
			}
		case b.req.commitOn[rec]:
			if err := s.commitTxn(); err != nil {
				return err
			}
		}
		if err := s.beginTxn(); err != nil {
			return err
		}
	}
	switch {
	case b.req.abortBatch:
		if err := s.abortTxn(false); err != nil {
			return err
		}
		return s.commitTxn()
	case b.req.commitBatch:
		return s.commitTxn()
	}
	return nil
}

func (s *sourceTask) beginTxn() error {
	if s.txn.open {
		return nil
	}
	if err := s.client.BeginTransaction(); err != nil {
		return s.txnError("beginning a transaction", err)
	}
	s.txn.open = true
	return nil
}

// commitTxn writes the offsets noted since the last commit in the open
// transaction (begun for them if none is) and commits it; then tells the
// task which records it committed.
func (s *sourceTask) commitTxn() (err error) {
	t := s.txn
	defer func() { s.countCommit(err) }()
	if !t.open && len(t.offsets) == 0 {
		t.lastCommit = time.Now()
		return nil
	}
	entries, err := s.writeOffsets()
	if err != nil {
		return err
	}
	// Not the task's context: what was sent is committed or aborted even
	// while the task stops, never left to the transaction's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), s.w.cfg.OffsetFlushTimeout+time.Minute)
	defer cancel()
	if err := s.client.Flush(ctx); err != nil {
		return s.txnError("flushing the transaction's records", err)
	}
	if err := s.sendErrNow(); err != nil {
		return err
	}
	if err := s.client.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return s.txnError("committing the transaction", err)
	}
	t.open, t.lastCommit = false, time.Now()
	s.Metrics.TransactionSizes.observe(int64(t.records))
	t.records = 0
	clear(t.offsets)
	t.last = nil
	if l, ok := t.store.(CommitListener); ok {
		l.Committed(s.Connector, entries)
	}
	s.afterCommit()
	return nil
}

// writeOffsets produces the records of the offsets noted so far into the
// open transaction (begun for them if none is), and returns them.
func (s *sourceTask) writeOffsets() ([]storage.PartitionOffset, error) {
	t := s.txn
	entries := make([]storage.PartitionOffset, 0, len(t.offsets))
	for _, po := range t.offsets {
		entries = append(entries, *po)
	}
	kvs, err := t.store.Records(s.Connector, entries)
	if err != nil {
		return nil, fmt.Errorf("committing offsets: %w", err)
	}
	if err := s.beginTxn(); err != nil {
		return nil, err
	}
	topic := t.store.Topic()
	for _, kv := range kvs {
		s.client.Produce(context.Background(), &kgo.Record{Topic: topic, Key: kv.Key, Value: kv.Value}, func(r *kgo.Record, err error) {
			if err != nil {
				s.setSendErr(fmt.Errorf("writing the offsets of the transaction to %s: %w", topic, err))
			}
		})
	}
	return entries, nil
}

// afterCommit tells the task what the transaction just committed holds.
func (s *sourceTask) afterCommit() {
	t := s.txn
	t.ackMu.Lock()
	acked, release := t.acked, t.release
	t.acked, t.release = nil, nil
	t.ackMu.Unlock()
	for _, a := range acked {
		if err := safeCall(func() error { return s.recordAcks.CommitRecord(a.rec, a.meta) }); err != nil {
			s.log.Warn("commitRecord failed", "error", err)
		}
	}
	for _, recs := range release {
		s.release(recs)
	}
	if s.committer != nil {
		if err := safeCall(s.committer.Commit); err != nil {
			s.log.Warn("task commit failed", "error", err)
		}
	}
}

// abortTxn aborts the open transaction: what the task sent in it is never
// seen by a read_committed consumer. Its offsets stay noted, for the next
// commit (an abort the task asked for) or for nothing (a failure, where
// the records still buffered are dropped rather than waited for).
func (s *sourceTask) abortTxn(failing bool) error {
	t := s.txn
	if !t.open {
		if !failing {
			s.log.Warn("Ignoring request by task to abort transaction as the current transaction is empty")
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.w.cfg.OffsetFlushTimeout+time.Minute)
	defer cancel()
	flush := s.client.Flush
	if failing {
		flush = s.client.AbortBufferedRecords
	}
	if err := flush(ctx); err != nil {
		return s.txnError("ending the transaction's records", err)
	}
	if err := s.client.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return s.txnError("aborting the transaction", err)
	}
	t.open, t.records = false, 0
	if failing {
		// Never committed: the task is not told of them.
		t.ackMu.Lock()
		t.acked = nil
		t.ackMu.Unlock()
	}
	// An abort the task asked for commits their offsets next, and the
	// task hears of them then, as Kafka's commitRecord after an abort.
	return nil
}

// finishTxn ends the task's transactions as it stops: the open one is
// committed where the boundary says so (and the task did not fail),
// aborted otherwise.
func (s *sourceTask) finishTxn(failed bool) error {
	t := s.txn
	commit := !failed && t.boundary != boundaryConnector
	if !failed && t.boundary == boundaryConnector {
		req, err := t.ctx.take()
		if err != nil {
			return err
		}
		commit = req.commitBatch
	}
	if commit {
		return s.commitTxn()
	}
	if t.open {
		if err := s.abortTxn(failed); err != nil && !failed {
			return err
		}
	}
	return nil
}

// txnError names what failed in a transaction, with Kafka's explanation
// when the producer was fenced or its transaction expired.
func (s *sourceTask) txnError(what string, err error) error {
	switch {
	case errors.Is(err, kerr.ProducerFenced):
		return fmt.Errorf("%s: the producer with transactional id %s was fenced out by a newer one (the task runs in a newer generation, or on another worker): this one stops without writing more: %w", what, s.txn.eos.TransactionalID, err)
	case errors.Is(err, kerr.InvalidTxnState):
		// What a broker with KIP-890's transactions answers an EndTxn of
		// an epoch it has since bumped by aborting the transaction.
		return fmt.Errorf("%s: the broker had already ended the transaction: the producer with transactional id %s was fenced out by a newer one (the task runs in a newer generation, or on another worker), or its transaction timed out: this one stops without writing more: %w", what, s.txn.eos.TransactionalID, err)
	case errors.Is(err, kerr.InvalidProducerEpoch):
		return fmt.Errorf("The task %s-%d was unable to finish writing records to Kafka before its producer transaction expired. "+
			"It may be necessary to reconfigure this connector in order for it to run healthily with exactly-once support. "+
			"Options for this include: tune the connector's producer configuration for higher throughput, "+
			"increase the transaction timeout for the connector's producers, "+
			"decrease the offset commit interval (if using interval-based transaction boundaries), "+
			"or use the 'poll' transaction boundary (if the connector is not already configured to use it): %w", s.Connector, s.ID, err)
	}
	return fmt.Errorf("Failed to flush offsets and/or records for task %s-%d: %s: %w", s.Connector, s.ID, what, err)
}

// FenceProducers fences out the producers of the transactional ids, with
// the connector's admin client settings, as Kafka's Admin.fenceProducers
// does: an InitProducerId for each id, to its transaction coordinator,
// bumps the id's epoch and aborts its open transaction, so that whatever
// still holds the id can write no more.
func (w *Worker) FenceProducers(ctx context.Context, name string, connConfig map[string]string, ids []string) error {
	connConfig, err := w.resolve(connConfig)
	if err != nil {
		return err
	}
	cl, err := w.adminClient("connector-worker-adminclient-"+name, connConfig)
	if err != nil {
		return err
	}
	defer cl.Close()
	for _, id := range ids {
		if err := fenceProducer(ctx, cl, id); err != nil {
			return fmt.Errorf("fencing out the producers of transactional id %s: %w", id, err)
		}
	}
	return nil
}

func fenceProducer(ctx context.Context, cl *kgo.Client, id string) error {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(time.Minute / time.Millisecond)
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		// A transaction of the id is being ended: Kafka's admin client
		// retries the fencing until it is.
		if !errors.Is(err, kerr.ConcurrentTransactions) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}
