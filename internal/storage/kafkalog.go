package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrLogClosed is returned by KafkaLog methods once Close has been called
// (and by waits that Close interrupted).
var ErrLogClosed = errors.New("storage: kafka log is closed")

// KafkaLogConfig configures a KafkaLog.
type KafkaLogConfig struct {
	// Topic is the internal topic to read and write. It must exist (see
	// EnsureTopic) before Start can finish.
	Topic string
	// Seeds are the bootstrap brokers (host:port).
	Seeds []string
	// ClientOpts are extra franz-go options (TLS, SASL, client id, ...).
	// They are applied after the log's own options, so they may override
	// them; options that change how the log consumes (groups, regex,
	// explicit partitions) break it.
	ClientOpts []kgo.Opt
	// OnRecord receives every record of every partition, in offset order
	// per partition, one at a time, on the log's own goroutine. Transaction
	// control records are not passed on. It must not call ReadToEnd or the
	// Send methods that wait for the reader (they would wait for the very
	// goroutine that is blocked in OnRecord). A panic in OnRecord is
	// logged and the record skipped.
	OnRecord func(*kgo.Record)
	// OnCaughtUp, if set, is called once on the log's goroutine when the
	// reader first reaches the end offsets Start listed, before any record
	// after them in the same partition reaches OnRecord, and before Start
	// returns. Stores use it to tell history from live updates.
	OnCaughtUp func()
	// ProducerPartitioner chooses partitions for written records. The
	// default is kgo.StickyKeyPartitioner(nil), which for keyed records is
	// the Java producer's murmur2 partitioner (see PartitionFor); that is
	// what keeps our records in the partition a Java worker would use.
	ProducerPartitioner kgo.Partitioner
	// Logger receives the log's warnings; nil means slog.Default().
	Logger *slog.Logger
	// ReadCommitted reads only committed transactions' records, as
	// Kafka's stores read the config and offsets topics when exactly-once
	// source support is on: what a task's aborted transaction or a fenced
	// leader wrote never counts. ReadToEnd then also waits for the
	// transactions open at the call to end, as Kafka's KafkaBasedLog
	// does, so that what it returns after is what is committed.
	ReadCommitted bool
	// TransactionalID, when set, is the id of the transactional producer
	// SendPrivilegedAndRead writes with (the config topic's leader writes
	// when exactly-once source support is on or being prepared).
	TransactionalID string
	// Pace is how long the reader waits, once caught up, after a fetch
	// that returned records before it fetches again, unless someone waits
	// for the reader (ReadToEnd, SendAllAndRead, which end the wait).
	// Zero fetches again at once, as Kafka's KafkaBasedLog does. For a
	// topic written many times a second whose readers read it to the end
	// before they rely on it: each fetch then brings many records rather
	// than one, and the broker and this process are spared the fetches in
	// between.
	Pace time.Duration
}

// KeyValue is one record to write. A nil Value is a tombstone.
type KeyValue struct {
	Key, Value []byte
}

// KafkaLog reads and writes one internal topic the way Kafka Connect's
// KafkaBasedLog does: it consumes every partition from the earliest offset
// by direct assignment (no consumer group) and hands each record to
// OnRecord, and it can block until everything written to the topic so far,
// by anyone, has been handed over (ReadToEnd).
//
// Positions are tracked per partition as "next offset to read". Control
// records count as read, so transactional writes by other workers do not
// stall ReadToEnd.
type KafkaLog struct {
	topic      string
	onRecord   func(*kgo.Record)
	onCaughtUp func()
	log        *slog.Logger
	cl         *kgo.Client
	adm        *kadm.Client

	// txn writes the privileged records, when the log has a
	// transactional id.
	txn txnWriter

	runCtx    context.Context
	runCancel context.CancelFunc
	closedCh  chan struct{}
	done      chan struct{} // closed when the reader goroutine exits

	mu         sync.Mutex
	started    bool
	running    bool
	closed     bool
	caughtUp   bool
	partitions int
	known      map[int32]bool  // partitions that existed at Start
	pos        map[int32]int64 // next offset to read
	remaining  map[int32]int64 // partitions not yet at Start's end offsets
	waiters    map[*logWaiter]struct{}
	pace       time.Duration
	wake       chan struct{} // a waiter came: the reader's pause ends

	endMu    sync.Mutex
	nextEnds *endListing // the listing that calls join, not started yet
	listing  bool        // listEnds runs
}

type logWaiter struct {
	target map[int32]int64
	ch     chan struct{}
}

// NewKafkaLog creates the log's client. Nothing is read until Start.
func NewKafkaLog(cfg KafkaLogConfig) (*KafkaLog, error) {
	if cfg.Topic == "" {
		return nil, errors.New("storage: KafkaLogConfig.Topic is empty")
	}
	if len(cfg.Seeds) == 0 {
		return nil, errors.New("storage: KafkaLogConfig.Seeds is empty")
	}
	partitioner := cfg.ProducerPartitioner
	if partitioner == nil {
		partitioner = kgo.StickyKeyPartitioner(nil)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// What the log's client and its transactional producer share.
	producer := []kgo.Opt{kgo.SeedBrokers(cfg.Seeds...), kgo.RecordPartitioner(partitioner), kgo.ProducerLinger(0)}
	opts := append(slices.Clone(producer),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.KeepControlRecords(),
		// Java's consumer default; franz-go's is 5 s, which would make
		// every ReadToEnd after a quiet period that slow.
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	if cfg.ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	opts = append(opts, cfg.ClientOpts...)
	// A privileged write's records are held until they are all handed
	// over and flushed together (sendTxnLocked): one batch, one produce
	// request, once the producer knows the topic. Sent as they come, in
	// requests in flight together, a later one could be appended while
	// an earlier one waits on a retriable error, and the earlier one be
	// refused for its sequence (OUT_OF_ORDER_SEQUENCE_NUMBER), failing
	// the write.
	txnOpts := append(append(producer, kgo.TransactionalID(cfg.TransactionalID), kgo.ProducerLinger(time.Minute)), cfg.ClientOpts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("storage: creating Kafka client for topic %q: %w", cfg.Topic, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &KafkaLog{
		topic:      cfg.Topic,
		onRecord:   cfg.OnRecord,
		onCaughtUp: cfg.OnCaughtUp,
		log:        logger.With("topic", cfg.Topic),
		cl:         cl,
		adm:        kadm.NewClient(cl),
		runCtx:     ctx,
		runCancel:  cancel,
		closedCh:   make(chan struct{}),
		done:       make(chan struct{}),
		pos:        map[int32]int64{},
		waiters:    map[*logWaiter]struct{}{},
		pace:       cfg.Pace,
		wake:       make(chan struct{}, 1),
		txn:        txnWriter{id: cfg.TransactionalID, opts: txnOpts},
	}, nil
}

// Topic returns the topic the log reads and writes.
func (l *KafkaLog) Topic() string { return l.topic }

// Client returns the underlying franz-go client (for admin requests on the
// same connection, e.g. kadm.NewClient(l.Client())).
func (l *KafkaLog) Client() *kgo.Client { return l.cl }

// Partitions returns the partition count Start found (0 before Start).
func (l *KafkaLog) Partitions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.partitions
}

// Start lists the topic's end offsets, starts the reader and returns once
// everything up to those offsets has been passed to OnRecord. It retries
// while the topic does not exist yet or the cluster is unavailable, until
// ctx ends. If it fails, Close the log.
func (l *KafkaLog) Start(ctx context.Context) error {
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return ErrLogClosed
	case l.started:
		l.mu.Unlock()
		return fmt.Errorf("storage: kafka log for topic %q already started", l.topic)
	}
	l.started = true
	l.mu.Unlock()

	starts, err := l.listOffsets(ctx, false)
	if err != nil {
		return err
	}
	ends, err := l.listOffsets(ctx, true)
	if err != nil {
		return err
	}

	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrLogClosed
	}
	// A partition whose records were all deleted (retention, DeleteRecords)
	// will never deliver one, so reading starts at the log start offset.
	for p, o := range starts {
		if o > l.pos[p] {
			l.pos[p] = o
		}
	}
	l.partitions = len(ends)
	l.known = make(map[int32]bool, len(ends))
	for p := range ends {
		l.known[p] = true
	}
	l.remaining = map[int32]int64{}
	for p, end := range ends {
		if l.pos[p] < end {
			l.remaining[p] = end
		}
	}
	w := l.addWaiterLocked(ends)
	l.running = true
	l.mu.Unlock()

	go l.run()
	return l.wait(ctx, w)
}

// ReadToEnd returns once every record written to the topic before the call
// (by this worker or any other) has been passed to OnRecord. Like Kafka's
// KafkaBasedLog it waits only for the partitions that existed at Start (or
// that records have since arrived from): partitions added to the topic
// later are consumed once the client's metadata finds them, but are not
// waited for.
func (l *KafkaLog) ReadToEnd(ctx context.Context) error {
	if err := l.checkRunning(); err != nil {
		return err
	}
	ends, err := l.endOffsets(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	for p := range ends {
		if _, seen := l.pos[p]; !seen && !l.known[p] {
			l.log.Debug("not waiting for a partition added after start", "partition", p)
			delete(ends, p)
		}
	}
	w := l.addWaiterLocked(ends)
	l.mu.Unlock()
	return l.wait(ctx, w)
}

// An endListing is one listing of the topic's end offsets, shared by the
// ReadToEnd calls made before it started, as Kafka's KafkaBasedLog serves
// the readToEnd calls pending at once with one request: a burst of task
// starts costs the broker a few requests rather than one each.
type endListing struct {
	done  chan struct{}
	calls int             // how many ReadToEnd calls joined it
	ends  map[int32]int64 // read-only once done is closed
	err   error
}

// endOffsets returns end offsets listed after the call.
func (l *KafkaLog) endOffsets(ctx context.Context) (map[int32]int64, error) {
	l.endMu.Lock()
	e := l.nextEnds
	if e == nil {
		e = &endListing{done: make(chan struct{})}
		l.nextEnds = e
		if !l.listing {
			l.listing = true
			go l.listEnds()
		}
	}
	e.calls++
	l.endMu.Unlock()
	select {
	case <-e.done:
		if e.err != nil {
			return nil, e.err
		}
		return maps.Clone(e.ends), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("reading topic %q to the end: %w", l.topic, ctx.Err())
	}
}

// listEnds makes the pending listings one after another, each for every
// call that joined it while the one before was made.
func (l *KafkaLog) listEnds() {
	for {
		l.endMu.Lock()
		e := l.nextEnds
		l.nextEnds = nil
		if e == nil {
			l.listing = false
			l.endMu.Unlock()
			return
		}
		calls := e.calls
		l.endMu.Unlock()
		e.ends, e.err = l.listOffsets(l.runCtx, true)
		l.log.Debug("listed the end offsets", "calls", calls, "error", e.err)
		close(e.done)
	}
}

// Send writes one record and waits for the broker's acknowledgement. A nil
// value is a tombstone.
func (l *KafkaLog) Send(ctx context.Context, key, value []byte) error {
	_, err := l.produce(ctx, []KeyValue{{Key: key, Value: value}})
	return err
}

// SendAsync writes one record without waiting; done (if not nil) is called
// with the outcome from a producer goroutine.
func (l *KafkaLog) SendAsync(key, value []byte, done func(error)) {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		if done != nil {
			done(ErrLogClosed)
		}
		return
	}
	rec := &kgo.Record{Topic: l.topic, Key: key, Value: value}
	l.cl.Produce(l.runCtx, rec, func(_ *kgo.Record, err error) {
		if done != nil {
			done(err)
		}
	})
}

// SendAll writes the records in order and waits until all of them are
// acknowledged. It returns the first error; records that succeeded stay
// written.
func (l *KafkaLog) SendAll(ctx context.Context, records []KeyValue) error {
	_, err := l.produce(ctx, records)
	return err
}

// SendAllAndRead is SendAll followed by waiting until this log's own reader
// has passed every one of the records to OnRecord. It is cheaper than
// SendAll plus ReadToEnd (no offsets request) and is what a store needs so
// that a read after the write sees it.
func (l *KafkaLog) SendAllAndRead(ctx context.Context, records []KeyValue) error {
	if err := l.checkRunning(); err != nil {
		return err
	}
	next, err := l.produce(ctx, records)
	if err != nil {
		return err
	}
	return l.waitFor(ctx, next)
}

// waitFor returns once the reader has passed, in every partition of next,
// the records before its offset.
func (l *KafkaLog) waitFor(ctx context.Context, next map[int32]int64) error {
	l.mu.Lock()
	w := l.addWaiterLocked(next)
	l.mu.Unlock()
	return l.wait(ctx, w)
}

// txnWriter is the transactional producer of a log's privileged writes,
// as Kafka's KafkaConfigBackingStore keeps its "fencable producer": made
// when its writer claims the id, which fences out the previous holder (a
// leader that does not know it lost the lead), and dropped when a write
// fails, as one fenced out can write no more.
type txnWriter struct {
	id   string
	opts []kgo.Opt
	mu   sync.Mutex // one privileged write at a time; guards cl
	cl   *kgo.Client
}

// ClaimWrites creates the log's transactional producer, if it has a
// transactional id and none is made, and claims the id, fencing out any
// other producer of it.
func (l *KafkaLog) ClaimWrites(ctx context.Context) error {
	if l.txn.id == "" {
		return nil
	}
	l.txn.mu.Lock()
	defer l.txn.mu.Unlock()
	return l.claimLocked(ctx)
}

func (l *KafkaLog) claimLocked(ctx context.Context) error {
	if l.txn.cl != nil {
		return nil
	}
	cl, err := kgo.NewClient(l.txn.opts...)
	if err != nil {
		return err
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return fmt.Errorf("claiming transactional id %s for writing to topic %q: %w", l.txn.id, l.topic, err)
	}
	l.txn.cl = cl
	return nil
}

// ReleaseWrites drops the transactional producer, if any.
func (l *KafkaLog) ReleaseWrites() {
	l.txn.mu.Lock()
	defer l.txn.mu.Unlock()
	l.dropTxnLocked()
}

func (l *KafkaLog) dropTxnLocked() {
	if l.txn.cl != nil {
		l.txn.cl.Close()
		l.txn.cl = nil
	}
}

// SendPrivilegedAndRead is SendAllAndRead for the writes only a leader
// makes: with a transactional id, the records are written in one
// transaction of the log's transactional producer (claimed first if it is
// not); a failure drops that producer, to be claimed again by the next
// write.
func (l *KafkaLog) SendPrivilegedAndRead(ctx context.Context, records []KeyValue) error {
	if l.txn.id == "" {
		return l.SendAllAndRead(ctx, records)
	}
	if err := l.checkRunning(); err != nil {
		return err
	}
	l.txn.mu.Lock()
	next, err := l.sendTxnLocked(ctx, records)
	if claimAgain(err) {
		l.dropTxnLocked()
		next, err = l.sendTxnLocked(ctx, records)
	}
	if err != nil {
		l.dropTxnLocked()
	}
	l.txn.mu.Unlock()
	if err != nil {
		return fmt.Errorf("writing to topic %q in a transaction of %s: %w", l.topic, l.txn.id, err)
	}
	return l.waitFor(ctx, next)
}

// claimAgain tells whether a privileged write that failed with err is
// made once more by a producer that claims the id anew:
//   - another worker claimed the id while it led the cluster for a
//     generation, and this one leads again: it claims it back, as Kafka's
//     leader does on its next tick (the embedded broker answers the commit
//     of a transaction that a claim aborted with INVALID_TXN_STATE rather
//     than PRODUCER_FENCED, when the claim bumped the epoch by one);
//   - the broker refused the batch for the producer's state
//     (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
//     INVALID_PRODUCER_ID_MAPPING): franz-go then fails its producer id
//     for good, and a new claim starts the sequences over. The batch was
//     not appended, and the claim aborts its transaction.
func claimAgain(err error) bool {
	for _, e := range []error{kerr.InvalidProducerEpoch, kerr.ProducerFenced, kerr.InvalidTxnState,
		kerr.OutOfOrderSequenceNumber, kerr.UnknownProducerID, kerr.InvalidProducerIDMapping} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (l *KafkaLog) sendTxnLocked(ctx context.Context, records []KeyValue) (map[int32]int64, error) {
	if err := l.claimLocked(ctx); err != nil {
		return nil, err
	}
	cl := l.txn.cl
	if err := cl.BeginTransaction(); err != nil {
		return nil, err
	}
	wait := produceWith(ctx, cl, l.topic, records)
	err := cl.Flush(ctx)
	if err != nil {
		// What is still buffered fails, so that wait returns. (After a
		// flush, nothing is.)
		abortCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = cl.AbortBufferedRecords(abortCtx)
		cancel()
	}
	next, werr := wait()
	if err = cmp.Or(err, werr); err != nil {
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		return nil, err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return nil, err
	}
	return next, nil
}

// Close flushes buffered writes (for at most 10 s), stops the reader and
// closes the client. Waiting calls return ErrLogClosed.
func (l *KafkaLog) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	running := l.running
	close(l.closedCh)
	l.mu.Unlock()

	flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := l.cl.Flush(flushCtx); err != nil {
		l.log.Warn("could not flush pending writes before closing", "error", err)
	}
	cancel()
	l.runCancel()
	l.ReleaseWrites()
	l.cl.Close()
	if running {
		<-l.done
	}
}

func (l *KafkaLog) checkRunning() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLogClosed
	}
	if !l.running {
		return fmt.Errorf("storage: kafka log for topic %q is not started", l.topic)
	}
	return nil
}

// produce writes records and returns, per partition, the offset after the
// last record written there.
func (l *KafkaLog) produce(ctx context.Context, records []KeyValue) (map[int32]int64, error) {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, ErrLogClosed
	}
	next, err := produceWith(ctx, l.cl, l.topic, records)()
	if err != nil {
		return nil, fmt.Errorf("writing to topic %q: %w", l.topic, err)
	}
	return next, nil
}

// produceWith hands records for topic to cl and returns what waits for
// them to be written: per partition, the offset after the last record
// written there.
func produceWith(ctx context.Context, cl *kgo.Client, topic string, records []KeyValue) func() (map[int32]int64, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = map[int32]int64{}
	)
	for _, kv := range records {
		wg.Add(1)
		rec := &kgo.Record{Topic: topic, Key: kv.Key, Value: kv.Value}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			if r.Offset+1 > next[r.Partition] {
				next[r.Partition] = r.Offset + 1
			}
		})
	}
	return func() (map[int32]int64, error) {
		wg.Wait()
		return next, firstErr
	}
}

// listOffsets lists the start or end offsets of every partition, retrying
// while the topic is missing or the cluster unavailable.
func (l *KafkaLog) listOffsets(ctx context.Context, end bool) (map[int32]int64, error) {
	what := "start"
	if end {
		what = "end"
	}
	backoff := 20 * time.Millisecond
	for {
		m, err := l.listOffsetsOnce(ctx, end)
		if err == nil {
			return m, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("listing %s offsets of topic %q: %w (last error: %v)", what, l.topic, ctx.Err(), err)
		}
		if fatalKafkaError(err) {
			return nil, fmt.Errorf("listing %s offsets of topic %q: %w", what, l.topic, err)
		}
		l.log.Debug("retrying offsets listing", "which", what, "error", err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-l.closedCh:
			t.Stop()
			return nil, ErrLogClosed
		}
		backoff = min(backoff*2, time.Second)
	}
}

func (l *KafkaLog) listOffsetsOnce(ctx context.Context, end bool) (map[int32]int64, error) {
	var (
		listed kadm.ListedOffsets
		err    error
	)
	if end {
		listed, err = l.adm.ListEndOffsets(ctx, l.topic)
	} else {
		listed, err = l.adm.ListStartOffsets(ctx, l.topic)
	}
	if err != nil {
		return nil, err
	}
	ps := listed[l.topic]
	if len(ps) == 0 {
		return nil, kerr.UnknownTopicOrPartition
	}
	out := make(map[int32]int64, len(ps))
	for p, o := range ps {
		if o.Err != nil {
			return nil, fmt.Errorf("partition %d: %w", p, o.Err)
		}
		out[p] = o.Offset
	}
	return out, nil
}

// fatalKafkaError reports errors that retrying will not fix.
func fatalKafkaError(err error) bool {
	return errors.Is(err, kgo.ErrClientClosed) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.Is(err, kerr.SaslAuthenticationFailed) ||
		errors.Is(err, kerr.UnsupportedVersion)
}

func (l *KafkaLog) addWaiterLocked(target map[int32]int64) *logWaiter {
	w := &logWaiter{target: target, ch: make(chan struct{})}
	if l.satisfiedLocked(w) {
		close(w.ch)
		return w
	}
	l.waiters[w] = struct{}{}
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return w
}

func (l *KafkaLog) satisfiedLocked(w *logWaiter) bool {
	if !l.caughtUp {
		return false
	}
	for p, off := range w.target {
		if l.pos[p] < off {
			return false
		}
	}
	return true
}

func (l *KafkaLog) notifyLocked() {
	for w := range l.waiters {
		if l.satisfiedLocked(w) {
			close(w.ch)
			delete(l.waiters, w)
		}
	}
}

func (l *KafkaLog) wait(ctx context.Context, w *logWaiter) error {
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		delete(l.waiters, w)
		l.mu.Unlock()
		return fmt.Errorf("reading topic %q to the end: %w", l.topic, ctx.Err())
	case <-l.closedCh:
		return ErrLogClosed
	}
}

// run is the reader goroutine.
func (l *KafkaLog) run() {
	defer close(l.done)
	l.mu.Lock()
	initiallyDone := len(l.remaining) == 0
	l.mu.Unlock()
	if initiallyDone {
		l.markCaughtUp()
	}
	backoff := 50 * time.Millisecond
	for {
		fetches := l.cl.PollFetches(l.runCtx)
		if l.runCtx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		failed := false
		fetches.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) || errors.Is(err, kgo.ErrClientClosed) {
				return
			}
			failed = true
			l.log.Warn("error reading internal topic; retrying", "partition", p, "error", err)
		})
		got := false
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if len(fp.Records) == 0 {
				return
			}
			got = true
			l.consume(fp.Records)
		})
		if failed && !got {
			// Do not spin on a persistent error (ACLs, a deleted topic);
			// franz-go keeps retrying fetches underneath.
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-l.runCtx.Done():
				t.Stop()
				return
			}
			backoff = min(backoff*2, 5*time.Second)
		} else {
			backoff = 50 * time.Millisecond
		}
		if got && l.pace > 0 {
			l.pause()
		}
	}
}

// pause waits the log's pace before the next fetch, unless someone waits
// for the reader or it has not caught up yet.
func (l *KafkaLog) pause() {
	l.mu.Lock()
	busy := len(l.waiters) > 0 || !l.caughtUp
	if !busy {
		// A wake left by a waiter the last fetch satisfied.
		select {
		case <-l.wake:
		default:
		}
	}
	l.mu.Unlock()
	if busy {
		return
	}
	t := time.NewTimer(l.pace)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.wake:
	case <-l.runCtx.Done():
	}
}

func (l *KafkaLog) consume(records []*kgo.Record) {
	for _, r := range records {
		if !r.Attrs.IsControl() && l.onRecord != nil {
			l.deliver(r)
		}
		l.mu.Lock()
		if next := r.Offset + 1; next > l.pos[r.Partition] {
			l.pos[r.Partition] = next
		}
		justCaughtUp := false
		if !l.caughtUp {
			if end, ok := l.remaining[r.Partition]; ok && l.pos[r.Partition] >= end {
				delete(l.remaining, r.Partition)
				justCaughtUp = len(l.remaining) == 0
			}
		}
		l.mu.Unlock()
		if justCaughtUp {
			l.markCaughtUp()
		}
	}
	l.mu.Lock()
	l.notifyLocked()
	l.mu.Unlock()
}

func (l *KafkaLog) deliver(r *kgo.Record) {
	defer func() {
		if v := recover(); v != nil {
			l.log.Error("panic while applying internal topic record; record skipped",
				"partition", r.Partition, "offset", r.Offset, "key", string(r.Key),
				"panic", v, "stack", string(debug.Stack()))
		}
	}()
	l.onRecord(r)
}

func (l *KafkaLog) markCaughtUp() {
	if l.onCaughtUp != nil {
		func() {
			defer func() {
				if v := recover(); v != nil {
					l.log.Error("panic in OnCaughtUp", "panic", v, "stack", string(debug.Stack()))
				}
			}()
			l.onCaughtUp()
		}()
	}
	l.mu.Lock()
	l.caughtUp = true
	l.notifyLocked()
	l.mu.Unlock()
}
