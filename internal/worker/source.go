package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sourceTask moves records from a connect.SourceTask into Kafka and keeps
// the offsets of acknowledged records for the next commit.
type sourceTask struct {
	*Task
	task       connect.SourceTask
	config     map[string]string
	offsets    OffsetStore // where the connector's offsets are
	keyConv    connect.Converter
	valueConv  connect.Converter
	headerConv connect.HeaderConverter
	// The converters' classes, for error reports.
	keyClass, valueClass, headerClass string
	client                            *kgo.Client
	// producer is client when the task shares it (at least once); nil
	// when the client is the task's own (exactly once). inflight is the
	// task's records in a shared client; once stopped, what the client
	// still answers for the task no longer reaches it.
	producer *sharedProducer
	inflight inflight
	stopped  atomic.Bool
	// lastBatchBytes is how many bytes the converters wrote for the
	// last batch; only prepare uses it.
	lastBatchBytes int
	committer      connect.Committer
	recordAcks     connect.RecordCommitter
	releaser       connect.RecordReleaser
	chain          *chain         // nil without transforms
	scratch        []chainScratch // per goroutine of prepare: what it fills for the chain
	errs           *errorHandler

	tracker offsetTracker
	// txn is the transactions of a task run exactly once; nil otherwise.
	txn *txnState
	// trackSent: prepare notes the polled record of each Kafka record
	// (for a RecordCommitter, or connector-defined transactions).
	trackSent bool

	mu        sync.Mutex // guards sendErr
	sendErr   error
	topicSeen map[string]bool // used by the polling goroutine only
	lastTopic string          // the topic noteTopic saw last
	creation  *topicCreation  // nil: the task creates no topics
	ctx       context.Context
}

func (w *Worker) newSourceTask(t *Task, task connect.SourceTask, connConfig, taskConfig map[string]string, eos *ExactlyOnce) (*sourceTask, error) {
	kc, kclass, err := w.converter(connConfig, true)
	if err != nil {
		return nil, err
	}
	vc, vclass, err := w.converter(connConfig, false)
	if err != nil {
		return nil, err
	}
	hc, hclass, err := w.headerConverter(connConfig)
	if err != nil {
		return nil, err
	}
	ch, err := newChain(w.plugins, connConfig)
	if err != nil {
		return nil, err
	}
	offsets := w.offsets
	if w.offsetsOf != nil {
		if offsets, err = w.offsetsOf(connConfig); err != nil {
			ch.close()
			return nil, fmt.Errorf("the connector's offsets topic: %w", err)
		}
	}
	var txn *txnState
	if eos != nil {
		if txn, err = newTxnState(t.Connector, eos, offsets, connConfig, w.cfg.OffsetFlush); err != nil {
			ch.close()
			return nil, err
		}
	}
	taskClientID := fmt.Sprintf("connector-producer-%s-%d", t.Connector, t.ID) // Kafka's (KIP-411)
	props := w.clientProps(map[string]string{
		"client.id": taskClientID,
		// Kafka's producer default; franz-go's is snappy.
		"compression.type": "none",
		// Kafka 4.0's default (KIP-1030): batches of a few ms rather than
		// of whatever is there, which costs the broker a write per batch.
		"linger.ms": "5",
	}, "producer.", "producer.override.", connConfig)
	opts := []kgo.Opt{
		kgo.RecordPartitioner(sourcePartitioner{}),
		kgo.AllowAutoTopicCreation(),
		// Kafka Connect retries sends without end (delivery.timeout.ms
		// is Integer.MAX_VALUE): a record is never dropped for a slow
		// broker.
		kgo.RecordDeliveryTimeout(0),
	}
	if eos != nil {
		// As Kafka's worker does, whatever the producer settings say:
		// the id is the task's, which fences its older incarnations.
		opts = append(opts, kgo.TransactionalID(eos.TransactionalID))
		if _, set := props["transaction.timeout.ms"]; !set {
			opts = append(opts, kgo.TransactionTimeout(time.Minute)) // Kafka's producer default
		}
	}
	var cl *kgo.Client
	var shared *sharedProducer
	if eos == nil {
		if props["client.id"] == taskClientID {
			props["client.id"] = sharedProducerClientID
		}
		shared, err = w.acquireProducer(props, opts)
		if shared != nil {
			cl = shared.cl
		}
	} else {
		cl, err = w.newClient(props, opts...)
	}
	if err != nil {
		ch.close()
		return nil, err
	}
	st := &sourceTask{
		Task: t, task: task, config: taskConfig, keyConv: kc, valueConv: vc, keyClass: kclass, valueClass: vclass, headerConv: hc, headerClass: hclass, client: cl,
		producer: shared, tracker: newOffsetTracker(t.Connector), topicSeen: map[string]bool{}, offsets: offsets,
		chain: ch, errs: newErrorHandler(t.log, t.Connector, t.ID, connConfig, &t.Metrics), txn: txn,
	}
	if st.creation, err = w.newTopicCreation(t.Connector, connConfig); err != nil {
		st.closeProducer()
		return nil, err
	}
	st.committer, _ = task.(connect.Committer)
	st.recordAcks, _ = task.(connect.RecordCommitter)
	st.releaser, _ = task.(connect.RecordReleaser)
	st.trackSent = st.recordAcks != nil || (txn != nil && txn.ctx != nil)
	return st, nil
}

// offsetsReader is an offset store that others write to, which must be
// read to its end to hold what they wrote (distributed mode's topics).
type offsetsReader interface {
	ReadToEnd(ctx context.Context) error
}

// offsetsReadTimeout bounds a source task's read of its offsets before it
// starts: a topic that cannot be read (deleted, unreachable) fails the
// task, saying so, rather than leave it starting for ever.
const offsetsReadTimeout = time.Minute

// readOffsets reads the task's offsets topics to their end before it
// starts, as Kafka's offset reader does before it answers a task, and as
// Kafka starts an exactly-once task's offset store only once its producer
// fenced out the earlier ones: the task starts from the offsets committed
// last, on this worker or another, not from what this worker had read.
func (s *sourceTask) readOffsets(ctx context.Context) error {
	r, ok := s.offsets.(offsetsReader)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, offsetsReadTimeout)
	defer cancel()
	if err := r.ReadToEnd(ctx); err != nil {
		return fmt.Errorf("Failed to fetch offsets: %w", err)
	}
	return nil
}

// Offset implements connect.SourceTaskContext.
func (s *sourceTask) Offset(partition map[string]any) (map[string]any, error) {
	off, _ := s.offsets.Get(s.Connector, partition)
	return off, nil
}

func (s *sourceTask) run(ctx context.Context) {
	defer close(s.done)
	defer s.closeProducer()
	defer s.chain.close()
	defer s.creation.close()
	s.ctx = ctx
	var err error
	if s.txn != nil {
		err = s.startTransactions(ctx)
	} else {
		// The producer gets its producer id (an idempotent producer's
		// first request) while the task starts, rather than after the
		// first batch.
		warmCtx, stopWarm := context.WithTimeout(ctx, 10*time.Second)
		warmed := make(chan struct{})
		go func() {
			defer close(warmed)
			// An error is the first record's to meet and report, after
			// franz-go's retries.
			s.client.ProducerID(warmCtx)
		}()
		defer func() { stopWarm(); <-warmed }()
	}
	if err == nil {
		err = s.readOffsets(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			s.report("UNASSIGNED", "")
			return
		}
		s.fail(err)
		return
	}
	if err := safeCall(func() error { return s.task.Start(s, s.config) }); err != nil {
		s.fail(err)
		return
	}
	if paused, _ := s.pauseState(); !paused {
		s.report("RUNNING", "")
	}
	// The task's goroutine polls and converts; a second one hands the
	// converted records to the producer, whose work per record is as
	// much again, so that the next batch is read while this one is
	// sent. The channel holds one batch: enough to overlap the two,
	// little enough that a stop leaves almost nothing in flight.
	batches := make(chan *sendBatch, 1)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		// transaction.boundary=interval: the interval may end while the
		// task polls, and the open transaction is committed then, not
		// once the next batch comes.
		var interval *time.Timer
		var due <-chan time.Time
		if s.txn != nil && s.txn.boundary == boundaryInterval {
			interval = time.NewTimer(s.txn.interval)
			defer interval.Stop()
			due = interval.C
		}
		for {
			var b *sendBatch
			select {
			case next, ok := <-batches:
				if !ok {
					return
				}
				b = next
			case <-due:
				b = &sendBatch{}
			}
			if s.sendErrNow() != nil {
				continue // the task is failing: send nothing more
			}
			if s.txn == nil {
				s.send(b)
			} else {
				if err := s.sendTxn(b); err != nil {
					s.setSendErr(err)
					s.cancel()
				}
				if s.recordAcks == nil && b.recs != nil {
					s.release(b.recs)
				}
			}
			if interval != nil {
				interval.Reset(max(time.Until(s.txn.lastCommit.Add(s.txn.interval)), time.Millisecond))
			}
		}
	}()
	err = s.loop(ctx, batches)
	close(batches)
	<-sent
	if err == nil {
		err = s.sendErrNow()
	}
	if stopErr := safeCall(s.task.Stop); stopErr != nil && err == nil {
		err = stopErr
	}
	if s.txn != nil {
		// What a task run exactly once sent is committed in its
		// transactions, with its offsets, or not at all.
		if terr := s.finishTxn(err != nil); terr != nil && err == nil {
			err = terr
		}
		if err != nil {
			s.fail(err)
			return
		}
		s.report("UNASSIGNED", "")
		return
	}
	// Whatever happened, the records Kafka acknowledged are safe: commit
	// their offsets so a restart does not send them again.
	flushCtx, cancel := context.WithTimeout(context.Background(), s.w.cfg.OffsetFlushTimeout)
	defer cancel()
	if ferr := s.awaitSent(flushCtx); ferr != nil {
		s.log.Warn("timed out waiting for Kafka to acknowledge the last records; their offsets are not committed")
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

func (s *sourceTask) loop(ctx context.Context, batches chan<- *sendBatch) error {
	lastCommit := time.Now()
	var beforePause func()
	if s.txn != nil {
		// Kafka commits the open transaction when the task is paused,
		// rather than leave it to its timeout.
		beforePause = func() {
			b := &sendBatch{pause: true}
			if s.txn.ctx != nil {
				b.req, _ = s.txn.ctx.take()
			}
			batches <- b
		}
	}
	for {
		if !s.waitWhilePaused(ctx, beforePause) {
			return nil
		}
		var recs []*connect.SourceRecord
		err := safeCall(func() error {
			var err error
			recs, err = s.task.Poll(ctx)
			return err
		})
		if err != nil && ctx.Err() == nil {
			return err
		}
		if err == nil && len(recs) > 0 {
			s.Metrics.Polled.Add(int64(len(recs)))
			// Records polled while stopping are still sent: the task
			// has moved past them.
			b, err := s.prepare(ctx, recs)
			if err != nil {
				return err
			}
			if s.txn != nil && s.txn.ctx != nil {
				if b.req, err = s.txn.ctx.take(); err != nil {
					return err
				}
			}
			batches <- b
		}
		if ctx.Err() != nil {
			return nil
		}
		if s.txn == nil && time.Since(lastCommit) >= s.w.cfg.OffsetFlush {
			if err := s.commit(); err != nil {
				return err
			}
			lastCommit = time.Now()
		}
	}
}

// A sendBatch is a polled batch converted to Kafka records.
type sendBatch struct {
	recs []*connect.SourceRecord // as polled
	sent []*connect.SourceRecord // for a RecordCommitter, the polled record of each Kafka record, in blocks' order
	// blks hold the Kafka records, in order: one block, or one per
	// goroutine that transformed and converted a part of the batch.
	blks []*recordBlock
	n    int // Kafka records in all
	ack  *batchAck
	// Exactly-once tasks only: the records a transform dropped or
	// errors.tolerance skipped (for a RecordCommitter, once their
	// transaction committed); the task's TransactionContext requests made
	// while it polled the batch; pause: no records, the task is pausing.
	dropped []*connect.SourceRecord
	req     txnRequests
	pause   bool
}

// A preparedPart is what one goroutine of prepare made of a part of a
// batch.
type preparedPart struct {
	blk     *recordBlock
	sent    []*connect.SourceRecord // for a RecordCommitter
	dropped []*connect.SourceRecord // for a RecordCommitter
	topics  []string                // each topic the part's records go to, as first met
	err     error                   // the first failure not tolerated
}

// minTransformSlice is the fewest records worth a goroutine of their own
// in prepare, for a connector with transforms; transformChunk is how many
// each takes at a time.
const (
	minTransformSlice = 512
	transformChunk    = 256
)

// prepare transforms and converts a polled batch and queues its offsets.
// It runs on the polling goroutine, right after Poll: the converters then
// read records the task has just written, while they are still in this
// core's cache, rather than on another core a batch later. A connector
// with transforms has a large batch transformed and converted by as many
// goroutines as CPUs, in chunks (inChunks), each into a block of its own:
// transforms cost as much again as the rest of the polling goroutine's
// work. A record that fails to transform or convert fails the task with
// none of its batch sent, unless errors.tolerance=all skips it.
func (s *sourceTask) prepare(ctx context.Context, recs []*connect.SourceRecord) (*sendBatch, error) {
	// Records without a timestamp get the batch's: franz-go would read
	// the clock for each.
	now := time.Now()
	parts := 1
	if s.chain != nil {
		parts = max(1, min(runtime.GOMAXPROCS(0), len(recs)/minTransformSlice))
	}
	if len(s.scratch) < parts {
		s.scratch = make([]chainScratch, parts)
	}
	var one [1]preparedPart
	results := one[:]
	if parts == 1 {
		s.preparePart(ctx, recs, &s.scratch[0], now, s.lastBatchBytes, &results[0])
	} else {
		results = make([]preparedPart, (len(recs)+transformChunk-1)/transformChunk)
		inChunks(len(recs), parts, transformChunk, func(w, c, from, to int) {
			s.preparePart(ctx, recs[from:to], &s.scratch[w], now, s.lastBatchBytes*(to-from)/len(recs), &results[c])
		})
	}
	fail := func(err error) (*sendBatch, error) {
		for i := range results {
			recordBlocks.Put(results[i].blk)
		}
		return nil, err
	}
	// The first failure in record order, as one goroutine finds it.
	for i := range results {
		if results[i].err != nil {
			return fail(results[i].err)
		}
	}
	b := &sendBatch{recs: recs}
	bytes := 0
	for i := range results {
		r := &results[i]
		for _, topic := range r.topics {
			if err := s.noteTopic(topic); err != nil {
				return fail(err)
			}
		}
		if s.txn != nil {
			b.dropped = append(b.dropped, r.dropped...)
		} else {
			for _, rec := range r.dropped {
				// Dropped or skipped: its offset is committed with the others.
				s.commitRecord(rec, nil)
			}
		}
		b.sent = append(b.sent, r.sent...)
		b.blks = append(b.blks, r.blk)
		b.n += len(r.blk.recs)
		bytes += len(r.blk.buf)
	}
	s.lastBatchBytes = bytes
	if s.txn != nil {
		// The transaction, not the acknowledgements, makes the offsets
		// committable.
		b.ack = &batchAck{}
		b.ack.outstanding.Store(int64(b.n))
	} else {
		b.ack = s.tracker.track(recs, b.n)
	}
	if s.txn == nil && (s.recordAcks == nil || b.n == 0) {
		// The Kafka records hold converted bytes of their own, and the
		// tracker the offsets. An exactly-once task's offsets are noted
		// as its batch goes into a transaction: it gets the batch back
		// then (sendTxn), or once it committed, for a RecordCommitter.
		s.release(recs)
	}
	return b, nil
}

// preparePart transforms and converts recs into a block of its own, in
// out, with scratch for the chain and room for about bufBytes of
// converted bytes.
func (s *sourceTask) preparePart(ctx context.Context, recs []*connect.SourceRecord, scratch *chainScratch, now time.Time, bufBytes int, out *preparedPart) {
	// The Kafka records and their converted bytes in one block:
	// per-record allocations are what bounds throughput here.
	blk := recordBlockFor(len(recs))
	if cap(blk.buf) == 0 {
		// Sized to the last batch's bytes rather than grown to them.
		blk.buf = make([]byte, 0, bufBytes+bufBytes/8)
	}
	out.blk = blk
	if s.trackSent {
		out.sent = make([]*connect.SourceRecord, 0, len(recs))
	}
	lastTopic := ""
	n := 0
	for _, rec := range recs {
		topic, kept, err := s.attempt(rec, blk, n, now, scratch)
		if err != nil {
			err = s.errs.retry(ctx, err, func() (err error) {
				topic, kept, err = s.attempt(rec, blk, n, now, scratch)
				return err
			})
		}
		if err != nil {
			if ok, _ := s.errs.tolerate(err, nil, rec); !ok {
				out.err = s.errs.failure(err)
				blk.recs = blk.recs[:n]
				return
			}
			kept = false
		}
		if !kept {
			if s.recordAcks != nil {
				out.dropped = append(out.dropped, rec)
			}
			continue
		}
		if s.trackSent {
			out.sent = append(out.sent, rec)
		}
		if topic != lastTopic || n == 0 {
			lastTopic = topic
			out.topics = append(out.topics, topic)
		}
		n++
	}
	blk.recs = blk.recs[:n]
}

// attempt transforms rec and converts it into blk's i-th record, and
// returns the topic it goes to; kept is false when a transform dropped it.
// scratch is what the chain fills, on this goroutine.
func (s *sourceTask) attempt(rec *connect.SourceRecord, blk *recordBlock, i int, now time.Time, scratch *chainScratch) (topic string, kept bool, err error) {
	if s.chain == nil {
		// On the stack: toKafka keeps nothing of it.
		r := connect.Record{
			Topic: rec.Topic, Partition: rec.Partition, KeySchema: rec.KeySchema, Key: rec.Key,
			ValueSchema: rec.ValueSchema, Value: rec.Value, Timestamp: rec.Timestamp, Headers: rec.Headers,
		}
		return rec.Topic, true, s.toKafka(&r, blk, i, now)
	}
	scratch.rec = connect.Record{
		Topic: rec.Topic, Partition: rec.Partition, KeySchema: rec.KeySchema, Key: rec.Key,
		ValueSchema: rec.ValueSchema, Value: rec.Value, Timestamp: rec.Timestamp, Headers: rec.Headers,
	}
	out, err := s.chain.apply(&scratch.rec, &scratch.own)
	if err != nil || out == nil {
		return "", false, err
	}
	err = s.toKafka(out, blk, i, now)
	// Converted (or refused), a value the chain made for the record is
	// held by nothing: the next record's chain makes its struct of it.
	if scratch.own.Parts&owned.Value != 0 {
		if v, ok := out.Value.(*connect.Struct); ok {
			scratch.own.Spare = v
		}
	}
	return out.Topic, true, err
}

// send hands a prepared batch to the producer, with one promise for the
// whole batch.
func (s *sourceTask) send(b *sendBatch) {
	next := s.sender(b)
	for range b.n {
		next()
	}
}

// sender returns the function that hands the batch's next Kafka record to
// the producer, with the promise of the whole batch, for the batch's n
// calls.
func (s *sourceTask) sender(b *sendBatch) func() {
	recs, ack := b.recs, b.ack
	putBlocks := func() {
		for _, blk := range b.blks {
			recordBlocks.Put(blk)
		}
	}
	// releaseRecs hands the batch back to a RecordReleaser after every
	// CommitRecord call, which an exactly-once task makes only once their
	// transaction committed.
	releaseRecs := func() {
		if s.txn == nil {
			s.release(recs)
			return
		}
		s.txn.ackMu.Lock()
		s.txn.release = append(s.txn.release, recs)
		s.txn.ackMu.Unlock()
	}
	if b.n == 0 {
		// Every record was dropped: nothing to wait for.
		putBlocks()
		if s.recordAcks != nil {
			releaseRecs()
		}
		return func() {}
	}
	// answered counts the batch's records Kafka answered, failed ones
	// too, for the task's bound in a shared client.
	var answered func()
	if s.producer != nil {
		s.inflight.acquire(int64(b.n), taskBufferedRecords)
		var left atomic.Int64
		left.Store(int64(b.n))
		answered = func() {
			if left.Add(-1) == 0 {
				s.inflight.release(int64(b.n))
			}
		}
	}
	promise := func(r *kgo.Record, err error) {
		if answered != nil {
			defer answered()
		}
		// Under exactly-once a record Kafka refused fails its
		// transaction, whatever errors.tolerance says, as in Kafka.
		if err != nil && (s.txn != nil || !s.sendTolerated(r, err, nil)) {
			s.setSendErr(s.sendError(r.Topic, err))
			s.cancel()
			return
		}
		if err == nil {
			s.Metrics.Written.Add(1)
		}
		if ack.outstanding.Add(-1) == 0 {
			// Kafka acknowledged every record of the blocks, and franz-go
			// uses none of them after its promise: the next batch can.
			putBlocks()
			if s.recordAcks != nil {
				// CommitRecord ran for each record, before its promise.
				releaseRecs()
			}
		}
	}
	blk, i, sent := 0, 0, 0
	return func() {
		for i == len(b.blks[blk].recs) {
			blk, i = blk+1, 0
		}
		kafka := &b.blks[blk].recs[i]
		i++
		p := promise
		switch {
		case s.recordAcks != nil && s.txn != nil:
			rec := b.sent[sent]
			p = func(r *kgo.Record, err error) {
				if err == nil {
					s.txn.ackMu.Lock()
					s.txn.acked = append(s.txn.acked, ackedRecord{rec, recordMetadata(r)})
					s.txn.ackMu.Unlock()
				}
				promise(r, err)
			}
		case s.recordAcks != nil:
			rec := b.sent[sent]
			p = func(r *kgo.Record, err error) {
				// Before promise, which may hand r on to another batch.
				switch {
				case err == nil:
					s.commitRecord(rec, r)
				case s.sendTolerated(r, err, rec):
					s.commitRecord(rec, nil)
					err = nil
				}
				promise(r, err)
			}
		}
		sent++
		// Produce blocks while the client buffers too many records,
		// which is the back-pressure on Poll. No context cancels it: a
		// record the task handed over is sent even while it stops.
		s.client.Produce(context.Background(), kafka, p)
	}
}

// awaitSent waits for Kafka to answer the records the task handed over:
// its own client's flush, or in a shared client its own records only,
// after which a client still holding some takes no new task.
func (s *sourceTask) awaitSent(ctx context.Context) error {
	if s.producer == nil {
		return s.client.Flush(ctx)
	}
	err := s.inflight.drain(ctx)
	if err != nil {
		s.w.detachProducer(s.producer)
	}
	return err
}

// closeProducer ends the task's use of its client: closes its own, or
// leaves a shared one to the other tasks.
func (s *sourceTask) closeProducer() {
	if s.producer == nil {
		s.client.Close()
		return
	}
	s.stopped.Store(true)
	s.w.releaseProducer(s.producer)
}

// sendTolerated reports a record Kafka refused to the error log and
// says whether errors.tolerance=all skips it, its offset committed as if
// sent (KIP-779). rec is the polled record, when the task kept it.
func (s *sourceTask) sendTolerated(r *kgo.Record, err error, rec *connect.SourceRecord) bool {
	if !s.errs.tolerateAll {
		return false
	}
	s.errs.tolerate(&recordError{stage: stageKafkaProduce, class: "org.apache.kafka.connect.runtime.WorkerSourceTask", err: s.sendError(r.Topic, err)}, nil, rec)
	return true
}

// sendError is the task's failure for a record Kafka refused. The
// embedded broker answers UNKNOWN_SERVER_ERROR for a record it could not
// write to its data dir: its storage error is what says why.
func (s *sourceTask) sendError(topic string, err error) error {
	err = fmt.Errorf("sending a record to topic %s: %w", topic, err)
	if !errors.Is(err, kerr.UnknownServerError) || s.w.cfg.BrokerStorageError == nil {
		return err
	}
	if serr := s.w.cfg.BrokerStorageError(); serr != nil {
		return fmt.Errorf("%w (the embedded broker's last storage error: %v)", err, serr)
	}
	return err
}

// release hands a sent batch back to a task that reuses its records.
func (s *sourceTask) release(recs []*connect.SourceRecord) {
	if s.releaser == nil || s.stopped.Load() {
		return
	}
	if s.chain != nil {
		// A transform may keep what it was given: none of it is the
		// task's to reuse.
		clear(recs)
	}
	if err := safeCall(func() error { s.releaser.ReleaseRecords(recs); return nil }); err != nil {
		s.log.Warn("ReleaseRecords failed", "error", err)
	}
}

// A recordBlock holds a batch's Kafka records and the bytes its
// converters appended for them. Blocks whose records Kafka acknowledged
// go back to recordBlocks for prepare to fill again: a block of 10,000
// records is almost 2 MB plus the bytes, which fresh allocations zero and
// the collector chases.
type recordBlock struct {
	recs []kgo.Record
	buf  []byte
}

var recordBlocks = sync.Pool{New: func() any { return new(recordBlock) }}

func recordBlockFor(n int) *recordBlock {
	b := recordBlocks.Get().(*recordBlock)
	b.buf = b.buf[:0]
	if cap(b.recs) < n {
		b.recs = make([]kgo.Record, n)
		return b
	}
	// Not cleared: toKafka writes each record whole.
	b.recs = b.recs[:n]
	return b
}

// convert writes v with c, into blk's bytes when c can append.
func convert(c connect.Converter, blk *recordBlock, topic string, schema *connect.Schema, v any) ([]byte, error) {
	ac, ok := c.(connect.AppendConverter)
	if !ok || v == nil {
		return c.FromConnectData(topic, schema, v)
	}
	start := len(blk.buf)
	out, err := ac.AppendFromConnectData(blk.buf, topic, schema, v)
	if err != nil {
		blk.buf = blk.buf[:start]
		return nil, err
	}
	// A later append that outgrows the buffer moves it; what is written
	// here stays where it is, and the capped slice keeps it from being
	// written over.
	blk.buf = out
	return out[start:len(out):len(out)], nil
}

func (s *sourceTask) setSendErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendErr == nil {
		s.sendErr = err
	}
}

func (s *sourceTask) sendErrNow() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendErr
}

func (s *sourceTask) noteTopic(topic string) error {
	// Records of a batch mostly go to one topic: a string compare
	// rather than a map lookup for each.
	if topic == s.lastTopic {
		return nil
	}
	if !s.topicSeen[topic] {
		if s.txn != nil && topic == s.txn.store.Topic() {
			// Its records would commit offsets nobody chose.
			return errors.New("Source tasks may not produce to their own offsets topics when exactly-once support is enabled")
		}
		if err := s.creation.ensure(s.ctx, topic); err != nil {
			return err
		}
		s.topicSeen[topic] = true
		s.w.listener.TopicUsed(s.Connector, topic, s.ID)
	}
	s.lastTopic = topic
	return nil
}

// toKafka converts rec into blk's i-th record.
func (s *sourceTask) toKafka(rec *connect.Record, blk *recordBlock, i int, now time.Time) error {
	if rec.Topic == "" {
		return errors.New("source record has no topic")
	}
	kr := &blk.recs[i]
	key, err := convert(s.keyConv, blk, rec.Topic, rec.KeySchema, rec.Key)
	if err != nil {
		return &recordError{stage: stageKeyConverter, class: s.keyClass, err: fmt.Errorf("converting the key of a record for topic %s: %w", rec.Topic, err)}
	}
	value, err := convert(s.valueConv, blk, rec.Topic, rec.ValueSchema, rec.Value)
	if err != nil {
		return &recordError{stage: stageValueConverter, class: s.valueClass, err: fmt.Errorf("converting the value of a record for topic %s: %w", rec.Topic, err)}
	}
	// Whole, so that nothing of the record it was before remains.
	*kr = kgo.Record{Topic: rec.Topic, Key: key, Value: value, Timestamp: rec.Timestamp}
	if kr.Timestamp.IsZero() {
		kr.Timestamp = now
	}
	if rec.Partition != nil {
		kr.Partition = *rec.Partition
		kr.Context = explicitPartition
	}
	for _, h := range rec.Headers {
		b, err := s.headerConv.FromConnectHeader(rec.Topic, h.Key, h.Schema, h.Value)
		if err != nil {
			return &recordError{stage: stageHeaderConv, class: s.headerClass, err: fmt.Errorf("converting the header %s of a record for topic %s: %w", h.Key, rec.Topic, err)}
		}
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: b})
	}
	return nil
}

// commitRecord tells a RecordCommitter that Kafka acknowledged rec as r,
// or with a nil r that rec was dropped by a transform or skipped.
func (s *sourceTask) commitRecord(rec *connect.SourceRecord, r *kgo.Record) {
	if s.stopped.Load() {
		// The task stopped before Kafka answered (a shared client
		// outlives it): as after Kafka's producer closed, it hears of
		// the record no more.
		return
	}
	meta := recordMetadata(r)
	if err := safeCall(func() error { return s.recordAcks.CommitRecord(rec, meta) }); err != nil {
		s.log.Warn("commitRecord failed", "error", err)
	}
}

// commit writes the newest acknowledged offset of every source partition
// to the offset store.
func (s *sourceTask) commit() (err error) {
	defer func() { s.countCommit(err) }()
	entries := s.tracker.takeCommittable()
	if len(entries) == 0 {
		return nil
	}
	if err := s.offsets.Put(s.Connector, entries); err != nil {
		return fmt.Errorf("committing offsets: %w", err)
	}
	if s.committer != nil {
		if err := safeCall(s.committer.Commit); err != nil {
			s.log.Warn("task commit failed", "error", err)
		}
	}
	return nil
}

// recordMetadata is where Kafka wrote r; with a nil r, a record not sent.
func recordMetadata(r *kgo.Record) connect.RecordMetadata {
	if r == nil {
		return connect.RecordMetadata{Offset: -1}
	}
	return connect.RecordMetadata{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
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
