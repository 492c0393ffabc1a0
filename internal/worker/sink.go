package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/valuefields"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sinkTask feeds records from the connector's consumer group into a
// connect.SinkTask and commits the offsets the task made durable.
type sinkTask struct {
	*Task
	task       connect.SinkTask
	config     map[string]string
	keyConv    connect.Converter
	valueConv  connect.Converter
	headerConv connect.HeaderConverter
	// The converters' classes, for error reports.
	keyClass, valueClass, headerClass string
	client                            *kgo.Client
	ctx                               context.Context

	// mu serializes every call into the plugin's task: the poll loop and
	// the group's rebalance callbacks both make them.
	mu        sync.Mutex
	current   map[connect.TopicPartition]int64 // next offset to consume
	committed map[connect.TopicPartition]int64
	logEnd    map[connect.TopicPartition]int64 // high watermark at the last fetch
	topicSeen map[string]bool

	amu        sync.Mutex // guards assignment and rewinds, read by the task during Put
	assignment map[connect.TopicPartition]bool
	rewinds    map[connect.TopicPartition]int64
	commitReq  bool

	finished bool // the plugin's task was stopped: rebalance callbacks must not call it

	reporter connect.ErrantRecordReporter // nil without a dead letter queue or error log
	chain    *chain                       // nil without transforms
	// valueNeeds: the value converter builds only the top-level fields
	// the chain's first transform reads (valuefields); nil when it
	// builds the whole value.
	valueNeeds *valuefields.Needs
	errs       *errorHandler
	dlq        *deadLetterQueue // nil without errors.deadletterqueue.topic.name
	connConfig map[string]string

	// While the task has a reporter: the consumed record of each record
	// converted since the last commit, under the topic, partition and
	// offset the task sees (after the transforms), so that Report sends
	// the record as it was read.
	cmu      sync.Mutex
	consumed map[recordPlace]*kgo.Record
	// putErr is the first error reported with errors.tolerance=none: the
	// Put that reported it fails the task even if the task went on.
	putErr error
}

// recordPlace is where a sink record says it was read.
type recordPlace struct {
	topic     string
	partition int32
	offset    int64
}

func (w *Worker) newSinkTask(t *Task, task connect.SinkTask, connConfig, taskConfig map[string]string) (*sinkTask, error) {
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
	dlq, err := w.newDeadLetterQueue(t.Connector, t.ID, connConfig, t.log)
	if err != nil {
		ch.close()
		return nil, err
	}
	st := &sinkTask{
		Task: t, task: task, config: taskConfig, keyConv: kc, valueConv: vc, keyClass: kclass, valueClass: vclass, headerConv: hc, headerClass: hclass,
		chain: ch, errs: newErrorHandler(t.log, t.Connector, t.ID, connConfig, &t.Metrics), dlq: dlq, connConfig: connConfig,
		current: map[connect.TopicPartition]int64{}, committed: map[connect.TopicPartition]int64{}, logEnd: map[connect.TopicPartition]int64{},
		topicSeen: map[string]bool{}, assignment: map[connect.TopicPartition]bool{}, rewinds: map[connect.TopicPartition]int64{},
	}
	props := w.clientProps(map[string]string{
		"client.id":         fmt.Sprintf("connector-consumer-%s-%d", t.Connector, t.ID),
		"auto.offset.reset": "earliest",
		// Kafka's consumer default (franz-go's is 5 s): a rewind waits for
		// the fetch in flight, which the broker holds this long at most.
		"fetch.max.wait.ms": "500",
	}, "consumer.", "consumer.override.", connConfig)
	opts := []kgo.Opt{
		kgo.ConsumerGroup(w.SinkGroupID(t.Connector, connConfig)),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(st.assigned),
		kgo.OnPartitionsRevoked(st.revoked),
		kgo.OnPartitionsLost(st.lost),
	}
	sub, err := w.subscription(connConfig, props)
	if err == nil {
		opts = append(opts, sub...)
		st.client, err = w.newClient(props, opts...)
	}
	if err != nil {
		ch.close()
		if dlq != nil {
			dlq.client.Close()
		}
		return nil, err
	}
	st.errs.dlq = dlq
	st.valueNeeds = ch.valueNeeds(vc)
	// Kafka's enableErrantRecordReporter.
	if dlq != nil || st.errs.logErrors {
		st.reporter = &errantReporter{s: st}
		st.consumed = map[recordPlace]*kgo.Record{}
	}
	return st, nil
}

// subscription is how a sink's consumer picks its topics: the names in
// topics as given, or every topic topics.regex matches as a whole name,
// as Java's Pattern.matcher(topic).matches() does (franz-go's regexes
// match anywhere in the name), except the worker's own topics: a sink
// reading them would consume the cluster's configs and offsets, so it
// gets them only by naming them in topics. franz-go never matches the
// broker's internal topics (__consumer_offsets, ...), which is what
// Kafka's consumer does with exclude.internal.topics=true, its default;
// false is refused rather than ignored.
func (w *Worker) subscription(connConfig, props map[string]string) ([]kgo.Opt, error) {
	re := strings.TrimSpace(connConfig["topics.regex"])
	if re == "" {
		return []kgo.Opt{kgo.ConsumeTopics(splitList(connConfig["topics"])...)}, nil
	}
	if _, err := regexp.Compile(re); err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration topics.regex: %v", re, err)
	}
	if v, ok := props["exclude.internal.topics"]; ok {
		exclude, err := connect.ParseValue("exclude.internal.topics", connect.ConfigBoolean, v)
		if err != nil {
			return nil, err
		}
		if !exclude.(bool) {
			return nil, fmt.Errorf("Invalid value %s for configuration exclude.internal.topics: connectd's sinks never consume the broker's internal topics through topics.regex; name them in topics instead", v)
		}
	}
	opts := []kgo.Opt{kgo.ConsumeRegex(), kgo.ConsumeTopics("^(?:" + re + ")$")}
	var own []string
	for _, topic := range w.reserved {
		own = append(own, "^"+regexp.QuoteMeta(topic)+"$")
	}
	if len(own) > 0 {
		opts = append(opts, kgo.ConsumeExcludeTopics(own...))
	}
	return opts, nil
}

// Assignment implements connect.SinkTaskContext.
func (s *sinkTask) Assignment() []connect.TopicPartition {
	s.amu.Lock()
	defer s.amu.Unlock()
	out := make([]connect.TopicPartition, 0, len(s.assignment))
	for tp := range s.assignment {
		out = append(out, tp)
	}
	return out
}

// ErrantRecordReporter implements connect.SinkTaskContext.
func (s *sinkTask) ErrantRecordReporter() connect.ErrantRecordReporter { return s.reporter }

// SetOffset implements connect.SinkTaskContext.
func (s *sinkTask) SetOffset(tp connect.TopicPartition, offset int64) {
	s.amu.Lock()
	defer s.amu.Unlock()
	s.rewinds[tp] = offset
}

// RequestCommit implements connect.SinkTaskContext.
func (s *sinkTask) RequestCommit() {
	s.amu.Lock()
	defer s.amu.Unlock()
	s.commitReq = true
}

func (s *sinkTask) run(ctx context.Context) {
	s.ctx = ctx
	defer close(s.done)
	defer s.chain.close()
	var err error
	if s.dlq != nil {
		err = s.dlq.open(ctx, s.w, s.connConfig)
	}
	if err == nil {
		err = safeCall(func() error { return s.task.Start(s, s.config) })
	}
	if err == nil {
		if paused, _ := s.pauseState(); !paused {
			s.report("RUNNING", "")
		}
		err = s.loop(ctx)
	}
	// Close commits what the task flushed, so that the next owner of the
	// partitions starts after it, and leaves the group, so that offsets
	// can be changed through the REST API once the task is gone.
	s.mu.Lock()
	if err == nil {
		err = s.commitLocked(context.Background())
	}
	parts := s.assignedList()
	if cerr := safeCall(func() error { return s.task.Close(parts) }); cerr != nil && err == nil {
		err = cerr
	}
	if serr := safeCall(s.task.Stop); serr != nil && err == nil {
		err = serr
	}
	s.finished = true
	s.mu.Unlock()
	if s.dlq != nil {
		// Even after a failure: the record that failed the task goes to
		// the queue.
		if derr := s.dlq.close(s.w.cfg.ShutdownTimeout); derr != nil && err == nil {
			err = derr
		}
	}
	s.client.AllowRebalance()
	s.client.Close()
	if err != nil {
		s.fail(err)
		return
	}
	s.report("UNASSIGNED", "")
}

// caughtUpCommitSpacing is the least time between two commits brought
// forward because the task caught up with its partitions.
const caughtUpCommitSpacing = 100 * time.Millisecond

// commitCaughtUp says whether a task that just caught up with its
// partitions commits at once. dirty is the records put since its last
// commit, since the time since it, and paced whether that commit too was
// for catching up. Only a trickle waits: caught up again within
// caughtUpCommitSpacing of the last such commit, with less than a poll's
// worth of records since. The end of a burst commits at once, also when
// a commit the task asked for or the interval's came shortly before it
// (a JDBC sink's last rows were visible up to 100 ms late when its own
// commit request fell in the burst's last polls).
func commitCaughtUp(dirty int, since time.Duration, paced bool) bool {
	return !paced || since >= caughtUpCommitSpacing || dirty >= pollMax
}

// pollMax is the most records one poll hands the task (Kafka's consumer
// gives 500 by default: max.poll.records). It is enough for a poll to take
// a whole fetch of typical records (franz-go fetches up to 1 MB per
// partition: 5,000 records of 200 bytes), because franz-go fetches again
// only once every buffered record is taken: the next fetch then runs
// while these records are converted and put, instead of after them. With
// 1,000, a fetch of the JDBC sink's figure (about 3,400 records) took
// four polls before the next was asked for: its polls waited a third
// longer in all, and its worker spent about an eighth more CPU per record
// (medians of 7 paired runs).
const pollMax = 5000

// loop polls, converts, puts and commits. Converting a poll's records
// overlaps the task's Put of the previous poll's (which holds s.mu, taken
// here and released by the Put's goroutine): a sink writing to a database
// waits on it for much of a Put, and the conversion needs no lock.
// Everything a commit or a rebalance callback sees was put: both wait for
// the Put in flight (the callbacks take s.mu, and rebalances are allowed
// only once the poll's records are handed to the task).
//
// Offsets are committed every offset.flush.interval.ms, when the task
// asks, and also as soon as the task has caught up with its partitions
// (no more records fetched): at once at the end of a burst, at most every
// caughtUpCommitSpacing for a trickle (commitCaughtUp). A task that makes data
// durable only when asked (the JDBC sink commits its transaction in
// PreCommit) then shows the last records of a burst at once, not up to an
// interval later.
func (s *sinkTask) loop(ctx context.Context) error {
	lastCommit := time.Now()
	// dirty: records put since the last commit; caughtUp: some, and the
	// last poll left none behind; paced: the last commit was for catching
	// up.
	dirty, caughtUp, paced := 0, false, false
	var putting chan error // the Put in flight, if any
	finish := func() error {
		if putting == nil {
			return nil
		}
		err := <-putting
		putting = nil
		return err
	}
	fail := func(err error) error {
		if perr := finish(); err == nil {
			err = perr
		}
		s.client.AllowRebalance()
		return err
	}
	for {
		if paused, _ := s.pauseState(); paused {
			if err := finish(); err != nil {
				return fail(err)
			}
		}
		if !s.waitWhilePaused(ctx, s.client.AllowRebalance) {
			return finish()
		}
		s.applyRewinds()
		// Poll no longer than until the next commit is due, so that an
		// idle sink still commits what it flushed.
		due := lastCommit.Add(s.w.cfg.OffsetFlush)
		if caughtUp {
			due = lastCommit.Add(min(caughtUpCommitSpacing, s.w.cfg.OffsetFlush))
		}
		if soon := time.Now().Add(time.Millisecond); due.Before(soon) {
			due = soon
		}
		pollCtx, cancel := context.WithDeadline(ctx, due)
		fetches := s.client.PollRecords(pollCtx, pollMax)
		cancel()
		if ctx.Err() != nil {
			// Rebalances stay blocked until the final commit in run, so
			// that it commits only partitions this task still owns.
			return finish()
		}
		if err := s.fetchError(fetches); err != nil {
			return fail(err)
		}
		s.Metrics.Read.Add(int64(fetches.NumRecords()))
		recs, next, err := s.convert(fetches)
		if err != nil {
			return fail(err)
		}
		fetched := len(recs)
		if err := finish(); err != nil {
			return fail(err)
		}
		s.mu.Lock()
		// A commit that is due, or that the task asked for (the JDBC sink
		// does once it committed by itself), covers what was put so far,
		// before these records: the task has less to make durable then.
		if time.Since(lastCommit) >= s.w.cfg.OffsetFlush || s.takeCommitRequest() {
			if err := s.commitLocked(ctx); err != nil {
				s.mu.Unlock()
				return fail(err)
			}
			lastCommit, dirty, paced = time.Now(), 0, false
		}
		recs = s.dropRewound(recs, next)
		for tp, off := range next {
			s.current[tp] = off
		}
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			s.logEnd[connect.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.HighWatermark
		})
		behind, atEnd := s.position()
		caughtUp = (dirty > 0 || len(recs) > 0) && s.client.BufferedFetchRecords() == 0 && !behind && (fetched < pollMax || atEnd)
		dirty += len(recs)
		// Caught up: commit these records too, once put.
		commit := caughtUp && commitCaughtUp(dirty, time.Since(lastCommit), paced)
		if len(recs) > 0 {
			putting = make(chan error, 1)
			go func() {
				err := safeCall(func() error { return s.task.Put(recs) })
				if err == nil {
					err = s.takePutError()
				}
				if err == nil {
					s.Metrics.Sent.Add(int64(len(recs)))
				}
				s.mu.Unlock()
				putting <- err
			}()
		} else {
			s.mu.Unlock()
		}
		if commit {
			if err := finish(); err != nil {
				return fail(err)
			}
			s.mu.Lock()
			err := s.commitLocked(ctx)
			s.mu.Unlock()
			if err != nil {
				return fail(err)
			}
			lastCommit, dirty, caughtUp, paced = time.Now(), 0, false, true
		}
		s.client.AllowRebalance()
	}
}

// position compares the partitions' next offsets with their log ends as
// last fetched. behind: some partition has records left to fetch, so an
// empty buffer only means the next fetch is on its way. atEnd: every
// partition was read to its end. A partition one short of its end is
// neither: a transaction's commit marker may end the log, which the
// consumer skips without a record to show for it. The caller holds s.mu.
func (s *sinkTask) position() (behind, atEnd bool) {
	atEnd = true
	for tp, end := range s.logEnd {
		cur, ok := s.current[tp]
		if !ok {
			continue // nothing consumed yet: the position is not known here
		}
		if cur < end {
			atEnd = false
		}
		if end-cur > 1 {
			behind = true
		}
	}
	return behind, atEnd
}

// fetchError is the first error of a poll that ends the task. franz-go
// retries retriable errors by itself; what surfaces here is fatal for
// this consumer (authorization, a deleted topic with
// auto.offset.reset=none, ...), except a group session's errors: its
// group loop joins again after any of them, so the task keeps polling
// through a broker's restart rather than fail on the UNKNOWN_MEMBER_ID or
// the refused connections it meets there, as Kafka's consumer does.
func (s *sinkTask) fetchError(fetches kgo.Fetches) error {
	for _, fe := range fetches.Errors() {
		if errors.Is(fe.Err, context.Canceled) || errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, kgo.ErrClientClosed) {
			continue
		}
		if gs, ok := errors.AsType[*kgo.ErrGroupSession](fe.Err); ok && rejoinable(gs.Err) {
			s.log.Warn("the sink's consumer lost its group session and joins again", "error", fe.Err)
			continue
		}
		return fmt.Errorf("consuming %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
	}
	return nil
}

// rejoinable tells whether joining the group again can get past err: a
// broker that cannot be reached or is restarting, a coordinator moving,
// a membership the coordinator forgot or fenced. Refusals (authorization,
// authentication, a bad group id, a certificate not trusted) stay, and
// fail the task as they do in Kafka Connect.
func rejoinable(err error) bool {
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return false
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return false // a plaintext listener answered a TLS client
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		return false // the broker refused the handshake
	}
	ke, ok := errors.AsType[*kerr.Error](err)
	if !ok || ke.Retriable {
		return true
	}
	switch ke {
	case kerr.UnknownMemberID, kerr.IllegalGeneration, kerr.RebalanceInProgress, kerr.MemberIDRequired,
		kerr.FencedMemberEpoch, kerr.StaleMemberEpoch, kerr.UnreleasedInstanceID:
		return true
	}
	return false
}

func (s *sinkTask) takeCommitRequest() bool {
	s.amu.Lock()
	defer s.amu.Unlock()
	r := s.commitReq
	s.commitReq = false
	return r
}

func (s *sinkTask) applyRewinds() {
	s.amu.Lock()
	rw := s.rewinds
	s.rewinds = map[connect.TopicPartition]int64{}
	s.amu.Unlock()
	if len(rw) == 0 {
		return
	}
	set := map[string]map[int32]kgo.EpochOffset{}
	s.mu.Lock()
	for tp, off := range rw {
		if set[tp.Topic] == nil {
			set[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
		s.current[tp] = off
	}
	s.mu.Unlock()
	s.client.SetOffsets(set)
}

// convert converts the fetched records; next holds, per partition, the
// offset after its last record. It runs without s.mu, beside a Put, and
// converts a large poll on as many goroutines as there are CPUs, in
// contiguous slices: converters are safe for concurrent use.
func (s *sinkTask) convert(fetches kgo.Fetches) (recs []connect.SinkRecord, next map[connect.TopicPartition]int64, err error) {
	all := make([]*kgo.Record, 0, fetches.NumRecords())
	next = map[connect.TopicPartition]int64{}
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		all = append(all, p.Records...)
		next[connect.TopicPartition{Topic: p.Topic, Partition: p.Partition}] = p.Records[len(p.Records)-1].Offset + 1
		if !s.topicSeen[p.Topic] {
			s.topicSeen[p.Topic] = true
			s.w.listener.TopicUsed(s.Connector, p.Topic, s.ID)
		}
	})
	recs = make([]connect.SinkRecord, len(all))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(all)/minConvertSlice))
	// errs[c]: the failure that ended chunk c.
	errs := make([]error, (len(all)+convertChunk-1)/convertChunk)
	// dropped[j]: a transform dropped all[j], or errors.tolerance=all
	// skipped it; nil while nothing was.
	var dropped []bool
	if s.chain != nil || s.errs.tolerateAll {
		dropped = make([]bool, len(all))
	}
	// The chain's record, one per goroutine: the chain keeps none.
	scratch := make([]chainScratch, parts)
	inChunks(len(all), parts, convertChunk, func(w, c, from, to int) {
		for j := from; j < to; j++ {
			var kept bool
			if recs[j], kept, errs[c] = s.toSink(all[j], &scratch[w]); errs[c] != nil {
				return
			}
			if !kept {
				dropped[j] = true
			}
		}
	})
	// The first failure in record order, as a serial conversion finds it.
	for _, e := range errs {
		if e != nil {
			return nil, nil, e
		}
	}
	if dropped != nil {
		n := 0
		for j := range recs {
			if !dropped[j] {
				recs[n] = recs[j]
				n++
			}
		}
		clear(recs[n:])
		recs = recs[:n]
	}
	return recs, next, nil
}

// toSink converts a consumed record and runs it through the connector's
// transforms; kept is false when a transform dropped it or
// errors.tolerance=all skipped it. It is called from several goroutines.
func (s *sinkTask) toSink(r *kgo.Record, scratch *chainScratch) (connect.SinkRecord, bool, error) {
	sr, kept, err := s.attempt(r, scratch)
	if err != nil {
		err = s.errs.retry(s.ctx, err, func() (err error) {
			sr, kept, err = s.attempt(r, scratch)
			return err
		})
	}
	if err == nil {
		if kept && s.consumed != nil {
			s.cmu.Lock()
			s.consumed[recordPlace{sr.Topic, sr.Partition, sr.Offset}] = r
			s.cmu.Unlock()
		}
		return sr, kept, nil
	}
	ok, rerr := s.errs.tolerate(err, r, nil)
	if rerr != nil {
		return connect.SinkRecord{}, false, rerr
	}
	if !ok {
		return connect.SinkRecord{}, false, s.errs.failure(err)
	}
	return connect.SinkRecord{}, false, nil
}

// attempt converts r and transforms it, in scratch.
func (s *sinkTask) attempt(r *kgo.Record, scratch *chainScratch) (connect.SinkRecord, bool, error) {
	sr, err := s.toConnect(r)
	if err != nil || s.chain == nil {
		return sr, err == nil, err
	}
	scratch.partition = sr.Partition
	scratch.rec = connect.Record{
		Topic: sr.Topic, Partition: &scratch.partition, KeySchema: sr.KeySchema, Key: sr.Key,
		ValueSchema: sr.ValueSchema, Value: sr.Value, Timestamp: sr.Timestamp, Headers: sr.Headers,
		Sink: true, Offset: sr.Offset, TimestampType: sr.TimestampType,
	}
	out, err := s.chain.apply(&scratch.rec, &scratch.own)
	if err != nil || out == nil {
		return connect.SinkRecord{}, false, err
	}
	partition := sr.Partition
	if out.Partition != nil {
		partition = *out.Partition
	}
	// Where the record was read stays what it was, as Kafka's
	// SinkRecord.newRecord keeps the offset.
	return connect.SinkRecord{
		Topic: out.Topic, Partition: partition, Offset: sr.Offset,
		KeySchema: out.KeySchema, Key: out.Key, ValueSchema: out.ValueSchema, Value: out.Value,
		Timestamp: out.Timestamp, TimestampType: sr.TimestampType, Headers: out.Headers,
	}, true, nil
}

// minConvertSlice is the fewest records worth a goroutine of their own;
// convertChunk is how many each takes at a time.
const (
	minConvertSlice = 256
	convertChunk    = 128
)

// dropRewound removes the records, and the next offsets, of partitions
// the task rewound (SetOffset) during the Put that ran beside their
// conversion: they were fetched from the old position, and applyRewinds
// seeks them to the new one before the next poll. The caller holds s.mu.
func (s *sinkTask) dropRewound(recs []connect.SinkRecord, next map[connect.TopicPartition]int64) []connect.SinkRecord {
	s.amu.Lock()
	defer s.amu.Unlock()
	if len(s.rewinds) == 0 {
		return recs
	}
	for tp := range s.rewinds {
		delete(next, tp)
	}
	return slices.DeleteFunc(recs, func(r connect.SinkRecord) bool {
		_, rewound := s.rewinds[connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}]
		return rewound
	})
}

func (s *sinkTask) toConnect(r *kgo.Record) (connect.SinkRecord, error) {
	ks, k, err := s.keyConv.ToConnectData(r.Topic, r.Key)
	if err != nil {
		return connect.SinkRecord{}, &recordError{stage: stageKeyConverter, class: s.keyClass, err: fmt.Errorf("converting the key of %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)}
	}
	var vs *connect.Schema
	var v any
	if s.valueNeeds != nil {
		vs, v, err = s.valueConv.(valuefields.Converter).ToConnectDataFields(r.Topic, r.Value, s.valueNeeds)
	} else {
		vs, v, err = s.valueConv.ToConnectData(r.Topic, r.Value)
	}
	if err != nil {
		return connect.SinkRecord{}, &recordError{stage: stageValueConverter, class: s.valueClass, err: fmt.Errorf("converting the value of %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)}
	}
	sr := connect.SinkRecord{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		KeySchema: ks, Key: k, ValueSchema: vs, Value: v,
		Timestamp: r.Timestamp, TimestampType: connect.CreateTime,
	}
	if r.Attrs.TimestampType() == 1 {
		sr.TimestampType = connect.LogAppendTime
	}
	for _, h := range r.Headers {
		hs, hv, err := s.headerConv.ToConnectHeader(r.Topic, h.Key, h.Value)
		if err != nil {
			return connect.SinkRecord{}, &recordError{stage: stageHeaderConv, class: s.headerClass, err: fmt.Errorf("converting the header %s of %s[%d]@%d: %w", h.Key, r.Topic, r.Partition, r.Offset, err)}
		}
		sr.Headers = append(sr.Headers, connect.Header{Key: h.Key, Schema: hs, Value: hv})
	}
	return sr, nil
}

// commitLocked asks the task which offsets are durable (PreCommit, or
// Flush of everything put) and commits them to the consumer group. The
// caller holds s.mu.
func (s *sinkTask) commitLocked(ctx context.Context) (err error) {
	defer func() { s.countCommit(err) }()
	offsets := map[connect.TopicPartition]int64{}
	for tp, off := range s.current {
		offsets[tp] = off
	}
	if pc, ok := s.task.(connect.PreCommitter); ok {
		err := safeCall(func() error {
			var err error
			offsets, err = pc.PreCommit(offsets)
			return err
		})
		if err != nil {
			return fmt.Errorf("preCommit: %w", err)
		}
	} else if err := safeCall(func() error { return s.task.Flush(offsets) }); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	if s.dlq != nil {
		// What was reported must be in the queue before the offsets that
		// pass it are committed.
		if err := s.dlq.flush(ctx); err != nil {
			if ctx.Err() != nil {
				return nil // stopping: the final commit waits for it
			}
			return err
		}
	}
	if err := s.takePutError(); err != nil {
		return err
	}
	s.forgetConsumed()
	commit := map[string]map[int32]kgo.EpochOffset{}
	for tp, off := range offsets {
		if prev, ok := s.committed[tp]; ok && prev == off {
			continue
		}
		if commit[tp.Topic] == nil {
			commit[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: off}
	}
	if len(commit) == 0 {
		return nil
	}
	var commitErr error
	s.client.CommitOffsetsSync(context.WithoutCancel(ctx), commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = firstCommitError(resp, err)
	})
	if commitErr != nil {
		// A failed commit loses nothing: the records are consumed again
		// after a restart. It is logged, not fatal, as in Kafka Connect.
		s.log.Warn("committing sink offsets failed", "error", commitErr)
		return nil
	}
	for t, ps := range commit {
		for p, eo := range ps {
			s.committed[connect.TopicPartition{Topic: t, Partition: p}] = eo.Offset
		}
	}
	return nil
}

func (s *sinkTask) assignedList() []connect.TopicPartition {
	parts := s.Assignment()
	slices.SortFunc(parts, func(a, b connect.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return parts
}

func toTPs(m map[string][]int32) []connect.TopicPartition {
	var out []connect.TopicPartition
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, connect.TopicPartition{Topic: t, Partition: p})
		}
	}
	return out
}

func (s *sinkTask) assigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	tps := toTPs(m)
	s.amu.Lock()
	for _, tp := range tps {
		s.assignment[tp] = true
	}
	s.amu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	if err := safeCall(func() error { return s.task.Open(tps) }); err != nil {
		s.log.Error("sink task open failed", "error", err)
	}
}

// revoked commits what the task flushed for the partitions it loses before
// another member gets them.
func (s *sinkTask) revoked(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	tps := toTPs(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	if err := s.commitLocked(ctx); err != nil {
		s.log.Warn("commit on revocation failed", "error", err)
	}
	s.closePartitions(tps)
}

func (s *sinkTask) lost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.finished {
		s.closePartitions(toTPs(m))
	}
}

func (s *sinkTask) closePartitions(tps []connect.TopicPartition) {
	if err := safeCall(func() error { return s.task.Close(tps) }); err != nil {
		s.log.Warn("sink task close failed", "error", err)
	}
	s.amu.Lock()
	for _, tp := range tps {
		delete(s.assignment, tp)
	}
	s.amu.Unlock()
	for _, tp := range tps {
		delete(s.current, tp)
		delete(s.committed, tp)
		delete(s.logEnd, tp)
	}
	if len(tps) > 0 {
		s.forgetConsumedWhere(func(r *kgo.Record) bool {
			return slices.Contains(tps, connect.TopicPartition{Topic: r.Topic, Partition: r.Partition})
		})
	}
}

func firstCommitError(resp *kmsg.OffsetCommitResponse, err error) error {
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s[%d]: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}
