package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordSink collects what a KafkaLog hands to OnRecord.
type recordSink struct {
	mu       sync.Mutex
	byPart   map[int32][]*kgo.Record
	caughtUp int
	// seenAtCaughtUp is how many records had arrived when OnCaughtUp ran.
	seenAtCaughtUp int
	total          int
}

func newRecordSink() *recordSink { return &recordSink{byPart: map[int32][]*kgo.Record{}} }

func (s *recordSink) onRecord(r *kgo.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byPart[r.Partition] = append(s.byPart[r.Partition], r)
	s.total++
}

func (s *recordSink) onCaughtUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caughtUp++
	s.seenAtCaughtUp = s.total
}

// records are partition p's records as key=value, in the order read.
func (s *recordSink) records(p int32) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.byPart[p] {
		out = append(out, string(r.Key)+"="+string(r.Value))
	}
	return out
}

func (s *recordSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

func (s *recordSink) checkOrder(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for p, rs := range s.byPart {
		for i := 1; i < len(rs); i++ {
			if rs[i].Offset <= rs[i-1].Offset {
				t.Fatalf("partition %d: offset %d delivered after %d", p, rs[i].Offset, rs[i-1].Offset)
			}
		}
	}
}

func keyed(n int, prefix string) []fixtureRecord {
	out := make([]fixtureRecord, n)
	for i := range out {
		out[i] = fixtureRecord{Key: fmt.Appendf(nil, "%s-%d", prefix, i), Value: fmt.Appendf(nil, "v%d", i)}
	}
	return out
}

func TestKafkaLogStartAndReadToEnd(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(3, "log"))
	raw := rawClient(t, c)
	produceRaw(t, raw, "log", keyed(30, "a"))

	sink := newRecordSink()
	cfg := logCfg(c, "log")
	cfg.OnRecord, cfg.OnCaughtUp = sink.onRecord, sink.onCaughtUp
	l := startLog(t, cfg)
	ctx := testCtx(t)
	if got := sink.count(); got != 30 {
		t.Fatalf("after Start: %d records delivered, want 30", got)
	}
	if sink.caughtUp != 1 || sink.seenAtCaughtUp != 30 {
		t.Fatalf("OnCaughtUp ran %d times, after %d records; want once after 30", sink.caughtUp, sink.seenAtCaughtUp)
	}
	if l.Partitions() != 3 {
		t.Fatalf("Partitions() = %d, want 3", l.Partitions())
	}

	// Another writer; ReadToEnd must see its records.
	produceRaw(t, raw, "log", keyed(7, "b"))
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.count(); got != 37 {
		t.Fatalf("after ReadToEnd: %d records delivered, want 37", got)
	}
	sink.checkOrder(t)
	if err := l.Start(ctx); err == nil {
		t.Fatal("second Start succeeded")
	}
}

func TestKafkaLogEmptyTopicAndOwnWrites(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "log"))
	sink := newRecordSink()
	cfg := logCfg(c, "log")
	cfg.OnRecord, cfg.OnCaughtUp = sink.onRecord, sink.onCaughtUp
	l, err := NewKafkaLog(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)
	if err := l.SendAllAndRead(ctx, nil); err == nil {
		t.Fatal("SendAllAndRead before Start succeeded")
	}
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if sink.caughtUp != 1 || sink.count() != 0 {
		t.Fatalf("empty topic: caughtUp=%d records=%d", sink.caughtUp, sink.count())
	}
	kvs := []KeyValue{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2"), Value: []byte("v2")}, {Key: []byte("k1")}}
	if err := l.SendAllAndRead(ctx, kvs); err != nil {
		t.Fatal(err)
	}
	if got := sink.count(); got != 3 {
		t.Fatalf("%d records delivered after SendAllAndRead, want 3", got)
	}
	var tomb *kgo.Record
	for _, rs := range sink.byPart {
		for _, r := range rs {
			if string(r.Key) == "k1" && r.Value == nil {
				tomb = r
			}
		}
	}
	if tomb == nil {
		t.Fatal("the tombstone did not come back with a nil value")
	}

	if err := l.Send(ctx, []byte("k3"), []byte("v3")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	l.SendAsync([]byte("k4"), []byte("v4"), func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.count(); got != 5 {
		t.Fatalf("%d records delivered, want 5", got)
	}

	l.Close()
	if err := l.ReadToEnd(ctx); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("ReadToEnd after Close: %v, want ErrLogClosed", err)
	}
	if err := l.Send(ctx, []byte("k"), nil); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("Send after Close: %v, want ErrLogClosed", err)
	}
	l.SendAsync([]byte("k"), nil, func(err error) { done <- err })
	if err := <-done; !errors.Is(err, ErrLogClosed) {
		t.Fatalf("SendAsync after Close: %v, want ErrLogClosed", err)
	}
}

func TestKafkaLogStartWaitsForTopic(t *testing.T) {
	c := newCluster(t)
	sink := newRecordSink()
	cfg := logCfg(c, "late")
	cfg.OnRecord = sink.onRecord
	l, err := NewKafkaLog(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	started := make(chan error, 1)
	go func() { started <- l.Start(testCtx(t)) }()
	if err := c.CreateTopic("late", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if err := l.SendAllAndRead(testCtx(t), []KeyValue{{Key: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if sink.count() != 1 {
		t.Fatalf("%d records, want 1", sink.count())
	}
}

func TestKafkaLogStartTimesOut(t *testing.T) {
	c := newCluster(t)
	l, err := NewKafkaLog(logCfg(c, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a canceled context: %v", err)
	}
}

// The default partitioner must put every keyed record where Java's would
// (murmur2, spec §4.2): otherwise compaction never pairs our records with
// a Java worker's.
func TestKafkaLogPartitionerIsJavas(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(25, "offsets"))
	l, err := NewKafkaLog(logCfg(c, "offsets"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var kvs []KeyValue
	for i := range 300 {
		kvs = append(kvs, KeyValue{Key: fmt.Appendf(nil, `["conn-%d",{"file":"/data/%d.log","n":%d}]`, i%7, i, i*i), Value: []byte("{}")})
	}
	kvs = append(kvs, KeyValue{Key: []byte(`["local-file-source",{"filename":"test.txt"}]`), Value: []byte(`{"position":1234}`)})
	if err := l.SendAll(ctx, kvs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, rs := range readAll(t, c, "offsets") {
		for _, r := range rs {
			n++
			if want := PartitionFor(r.Key, 25); p != want {
				t.Errorf("key %s landed in partition %d, Java's partitioner picks %d", r.Key, p, want)
			}
			if string(r.Key) == `["local-file-source",{"filename":"test.txt"}]` && p != 10 {
				t.Errorf("the spec's worked example landed in partition %d, want 10", p)
			}
		}
	}
	if n != len(kvs) {
		t.Fatalf("read back %d records, wrote %d", n, len(kvs))
	}
}

// A Java leader with exactly-once support writes the config topic in
// transactions, so the partition ends with a commit marker that no record
// carries. ReadToEnd must count it as read instead of waiting forever.
func TestKafkaLogTransactionMarkers(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	sink := newRecordSink()
	cfg := logCfg(c, "connect-configs")
	cfg.OnRecord = sink.onRecord
	l, err := NewKafkaLog(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := testCtx(t)

	txn, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("connect-cluster-connect"),
		kgo.DefaultProduceTopic("connect-configs"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	write := func(key string) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := txn.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(`{"tasks":0}`)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	write("commit-a")
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	write("commit-b")
	if err := l.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.count(); got != 2 {
		t.Fatalf("%d records delivered, want 2 (markers are not records)", got)
	}
}

// A paced reader does not wait out its pace when someone reads the log to
// the end.
func TestKafkaLogPaceEndsForReadToEnd(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "log"))
	raw := rawClient(t, c)
	l, sink := startSinkLog(t, c, time.Hour)
	ctx := testCtx(t)
	// Each read brings records, after which the reader waits its hour
	// unless the next ReadToEnd ends the wait.
	for i, want := range []int{3, 7, 12} {
		produceRaw(t, raw, "log", keyed(want-sink.count(), fmt.Sprint(i)))
		if err := l.ReadToEnd(ctx); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if got := sink.count(); got != want {
			t.Fatalf("read %d: %d records delivered, want %d", i, got, want)
		}
	}
}

// ReadToEnd calls made while a listing of the end offsets is under way
// share the next one, which is made after all of them.
func TestKafkaLogReadToEndSharesListings(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "log"))
	var counting atomic.Bool
	var lists atomic.Int32
	held, release := make(chan struct{}), make(chan struct{})
	// Listings of the end offsets (timestamp -1); the log's consumer
	// lists the start (-2) of the partitions it starts reading.
	c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		end := false
		for _, t := range req.(*kmsg.ListOffsetsRequest).Topics {
			for _, p := range t.Partitions {
				end = end || p.Timestamp == -1
			}
		}
		if end && counting.Load() && lists.Add(1) == 1 {
			close(held)
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	raw := rawClient(t, c)
	l, sink := startSinkLog(t, c, 0)
	ctx := testCtx(t)
	counting.Store(true)
	first := make(chan error, 1)
	go func() { first <- l.ReadToEnd(ctx) }()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the first listing never reached the broker")
	}
	// Written after the first listing: the calls that follow must see it.
	produceRaw(t, raw, "log", keyed(5, "later"))
	const calls = 20
	errs := make(chan error, calls)
	for range calls {
		go func() {
			err := l.ReadToEnd(ctx)
			if err == nil && sink.count() != 5 {
				err = fmt.Errorf("%d records read, want 5", sink.count())
			}
			errs <- err
		}()
	}
	servertest.Eventually(t, "every call waiting for the next listing", 10*time.Second, func() bool {
		l.endMu.Lock()
		defer l.endMu.Unlock()
		return l.nextEnds != nil && l.nextEnds.calls == calls
	})
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := lists.Load(); n != 2 {
		t.Fatalf("%d listings of the end offsets for %d calls, want 2", n, calls+1)
	}
}

// startSinkLog starts a log of topic "log" read at pace into a recordSink.
func startSinkLog(t *testing.T, c *kfake.Cluster, pace time.Duration) (*KafkaLog, *recordSink) {
	t.Helper()
	sink := newRecordSink()
	cfg := logCfg(c, "log")
	cfg.OnRecord = sink.onRecord
	cfg.Pace = pace
	return startLog(t, cfg), sink
}

// startLog makes a log of cfg and starts it; it is closed when the test
// ends.
func startLog(t *testing.T, cfg KafkaLogConfig) *KafkaLog {
	t.Helper()
	l, err := NewKafkaLog(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if err := l.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return l
}

// produceBatches is a kgo hook that notes the size of each batch a
// client writes.
type produceBatches struct {
	mu    sync.Mutex
	sizes []int
}

func (p *produceBatches) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sizes = append(p.sizes, m.NumRecords)
}

// A leader's privileged write reaches the broker as one batch, as many
// records as it has (1,000 here: a large connector's task configs and
// their commit). Sent as they came, in several produce requests, the
// later ones could be appended while an earlier one waits on a retriable
// error, and the earlier one then be refused for its sequence.
func TestKafkaLogPrivilegedWriteIsOneBatch(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	batches := &produceBatches{}
	cfg := logCfg(c, "connect-configs")
	cfg.TransactionalID = "connect-cluster-connect"
	cfg.ClientOpts = []kgo.Opt{kgo.WithHooks(batches)}
	l := startLog(t, cfg)
	ctx := testCtx(t)
	// The first write claims the producer, which learns the topic's
	// partitions meanwhile: its records may go out in several requests,
	// but one at a time, as franz-go sends a new producer's first
	// requests to a broker.
	if err := l.SendPrivilegedAndRead(ctx, []KeyValue{{Key: []byte("first"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		var kvs []KeyValue
		for i := range 1000 {
			kvs = append(kvs, KeyValue{Key: fmt.Appendf(nil, "k-%d-%d", round, i), Value: []byte("v")})
		}
		if err := l.SendPrivilegedAndRead(ctx, kvs); err != nil {
			t.Fatal(err)
		}
	}
	batches.mu.Lock()
	defer batches.mu.Unlock()
	if want := []int{1, 1000, 1000, 1000, 1000, 1000}; !slices.Equal(batches.sizes, want) {
		t.Fatalf("batches of %v records, want %v", batches.sizes, want)
	}
}

// onFirstProduce is a kgo hook that runs f, once armed, when the broker
// has acknowledged the first record its client writes. franz-go calls it
// before the record's promise, so that the client's Flush returns only
// after f did: what f does to the broker comes between the records and
// the commit of their transaction.
type onFirstProduce struct {
	armed atomic.Bool
	f     func()
}

func (h *onFirstProduce) OnProduceRecordUnbuffered(_ *kgo.Record, err error) {
	if err == nil && h.armed.CompareAndSwap(true, false) {
		h.f()
	}
}

// A privileged write whose transaction another writer's claim of the id
// aborted, between its records and its commit, claims the id back and is
// written again: a leader that leads again after another led for a
// generation writes what it was asked to, once.
func TestKafkaLogPrivilegedWriteOutlivesAClaim(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	other := logCfg(c, "connect-configs")
	other.TransactionalID = "connect-cluster-connect"
	rival := startLog(t, other)
	ctx := testCtx(t)
	claim := &onFirstProduce{f: func() {
		if err := rival.ClaimWrites(ctx); err != nil {
			t.Error(err)
		}
	}}
	sink := newRecordSink()
	cfg := logCfg(c, "connect-configs")
	cfg.TransactionalID = "connect-cluster-connect"
	cfg.ClientOpts = []kgo.Opt{kgo.WithHooks(claim)}
	cfg.OnRecord = sink.onRecord
	// As a worker reads its config topic with exactly-once support
	// enabled: the aborted attempt stays in the log, unread.
	cfg.ReadCommitted = true
	l := startLog(t, cfg)
	if err := l.SendPrivilegedAndRead(ctx, []KeyValue{{Key: []byte("first"), Value: []byte("1")}}); err != nil {
		t.Fatal(err)
	}
	claim.armed.Store(true)
	if err := l.SendPrivilegedAndRead(ctx, []KeyValue{{Key: []byte("second"), Value: []byte("2")}}); err != nil {
		t.Fatalf("the write after the rival's claim: %v", err)
	}
	if claim.armed.Load() {
		t.Fatal("the rival never claimed the id during the write")
	}
	if got, want := sink.records(0), []string{"first=1", "second=2"}; !slices.Equal(got, want) {
		t.Fatalf("the log holds %v, want %v (each write once)", got, want)
	}
	// Read uncommitted, the log shows the attempt the claim aborted: the
	// write above was made twice, not committed past the claim.
	uncommitted := newRecordSink()
	rawCfg := logCfg(c, "connect-configs")
	rawCfg.OnRecord = uncommitted.onRecord
	startLog(t, rawCfg)
	if got, want := uncommitted.records(0), []string{"first=1", "second=2", "second=2"}; !slices.Equal(got, want) {
		t.Fatalf("read uncommitted, the log holds %v, want %v (the aborted attempt, then the committed one)", got, want)
	}
}

// A privileged write that the broker refuses for the producer's state
// (OUT_OF_ORDER_SEQUENCE_NUMBER: the broker's idea of the producer's
// sequence is not the client's; the batch was not appended) is made once
// more by the producer claimed anew, whose sequences start over: the log
// holds it once. The embedded broker refused a fresh cluster's first
// connector so, once, in CI.
func TestKafkaLogPrivilegedWriteRefusedForItsSequence(t *testing.T) {
	for _, code := range []*kerr.Error{kerr.OutOfOrderSequenceNumber, kerr.UnknownProducerID, kerr.InvalidProducerIDMapping} {
		t.Run(code.Message, func(t *testing.T) { testPrivilegedWriteRefused(t, code) })
	}
}

func testPrivilegedWriteRefused(t *testing.T, code *kerr.Error) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	var refused atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		if pr.TransactionID == nil || refused.Add(1) > 1 {
			return nil, nil, false
		}
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		resp.SetVersion(pr.GetVersion())
		for _, rt := range pr.Topics {
			t := kmsg.NewProduceResponseTopic()
			t.Topic, t.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				p := kmsg.NewProduceResponseTopicPartition()
				p.Partition = rp.Partition
				p.ErrorCode = code.Code
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, nil, true
	})
	cfg := logCfg(c, "connect-configs")
	cfg.TransactionalID = "connect-cluster-connect"
	sink := newRecordSink()
	cfg.OnRecord = sink.onRecord
	l := startLog(t, cfg)
	if err := l.SendPrivilegedAndRead(testCtx(t), []KeyValue{{Key: []byte("first"), Value: []byte("1")}}); err != nil {
		t.Fatalf("the write refused: %v", err)
	}
	if refused.Load() < 2 {
		t.Fatal("the broker refused no write")
	}
	if got, want := sink.records(0), []string{"first=1"}; !slices.Equal(got, want) {
		t.Fatalf("the log holds %v, want %v", got, want)
	}
}
