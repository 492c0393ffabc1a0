package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ---- eos-file ----

// eosKind is one way figure 11 runs the file source.
type eosKind struct {
	label string            // in the log and the table
	key   string            // in topic and connector names
	eos   bool              // on the worker with exactly.once.source.support=enabled
	extra map[string]string // added to the connector's config
}

var (
	eosAtLeastOnce = eosKind{label: "at least once", key: "alo"}
	eosPoll        = eosKind{label: "transaction.boundary=poll", key: "poll", eos: true,
		extra: map[string]string{"transaction.boundary": "poll"}}
	eosInterval = eosKind{label: "transaction.boundary=interval, 1000 ms", key: "interval", eos: true,
		extra: map[string]string{"transaction.boundary": "interval", "transaction.boundary.interval.ms": "1000"}}
	eosKinds = []eosKind{eosAtLeastOnce, eosPoll, eosInterval}
)

// Figure 11's targets: exactly once against at least once.
const (
	eosPollTarget     = 0.7
	eosIntervalTarget = 0.9
)

// eosWorkerProps are the properties of figure 11's two workers besides
// distProps: a group and internal topics of each's own on the shared
// broker, and exactly-once support on or off.
func eosWorkerProps(eos bool) [][2]string {
	mode, key := "disabled", "alo"
	if eos {
		mode, key = "enabled", "eos"
	}
	return [][2]string{
		{"group.id", "connectd-bench-" + key},
		{"config.storage.topic", "connect-configs-" + key},
		{"offset.storage.topic", "connect-offsets-" + key},
		{"status.storage.topic", "connect-status-" + key},
		{"exactly.once.source.support", mode},
	}
}

// eosRun is one timed pass of the file through the source.
type eosRun struct {
	rate float64 // lines/s, POST /connectors to every line read committed
	// From the POST: the first line a read_committed consumer got, the
	// topic's end offset reaching its last record (polled), every line
	// got.
	first, written, committed time.Duration
	// end is the topic's end offset afterwards: the lines, and for an
	// exactly-once run a marker per transaction.
	end int64
	// txns is the task's transaction sizes (GET /metrics), exactly once
	// only.
	txns txnSizes
	cpu  cpuUse
	// broker is the broker's part of cpu.worker (the rest is the
	// worker's).
	broker time.Duration
}

// txnSizes is what kafka_connect_source_task_transaction_size_* say.
type txnSizes struct{ min, max, avg float64 }

// count is the number of transactions of n records in all.
func (t txnSizes) count(n int) int64 {
	if t.avg <= 0 {
		return 0
	}
	return int64(math.Round(float64(n) / t.avg))
}

// eosFileResult holds figure 11.
type eosFileResult struct {
	lines    int
	runs     map[string][]eosRun // by eosKind.key, in round order
	failover *failoverResult
}

func (e *eosFileResult) rates(k eosKind) []float64 {
	var vs []float64
	for _, r := range e.runs[k.key] {
		vs = append(vs, r.rate)
	}
	return vs
}

// benchEOSFile runs figure 11's throughput part: rounds rounds over a file
// of lines lines, each on a fresh broker with two fresh workers.
func benchEOSFile(bin, work string, lines, lineBytes, rounds int, timeout time.Duration) (*eosFileResult, error) {
	res := &eosFileResult{lines: lines, runs: map[string][]eosRun{}}
	path := filepath.Join(work, "eos-file-lines.txt")
	if err := writeLinesFile(path, lines, lineBytes); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	for r := 1; r <= rounds; r++ {
		if err := eosRound(bin, work, path, r, res, timeout); err != nil {
			return nil, fmt.Errorf("eos-file round %d: %w", r, err)
		}
	}
	return res, nil
}

func eosRound(bin, work, path string, r int, res *eosFileResult, timeout time.Duration) error {
	c, err := startBroker(bin, filepath.Join(work, fmt.Sprintf("eos-file-%d", r)))
	if err != nil {
		return err
	}
	defer c.close()
	alo, err := c.addWorker(eosWorkerProps(false)...)
	if err != nil {
		return err
	}
	eos, err := c.addWorker(eosWorkerProps(true)...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, w := range c.workers {
		if err := w.waitHealthy(ctx); err != nil {
			return err
		}
	}
	if cpuProfiles != "" {
		logf("eos-file round %d: CPU profiles: broker %s, at-least-once worker %s, exactly-once worker %s", r, c.broker.profile, alo.profile, eos.profile)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.kafka))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topic := func(k eosKind, suffix string) string { return fmt.Sprintf("eos-file-%s-%d%s", k.key, r, suffix) }
	for _, k := range eosKinds {
		for _, suffix := range []string{"", "-warm"} {
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic(k, suffix)); err != nil {
				return fmt.Errorf("creating topic %s: %w", topic(k, suffix), err)
			}
		}
	}
	run := func(k eosKind, suffix string) error {
		w := alo
		if k.eos {
			w = eos
		}
		rctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		run, err := eosPass(rctx, c, w, adm, k, topic(k, suffix), path, res.lines)
		if err != nil {
			return fmt.Errorf("%s: %w", k.label, err)
		}
		if err := c.alive(); err != nil {
			return err
		}
		if suffix != "" {
			return nil
		}
		res.runs[k.key] = append(res.runs[k.key], run)
		txns := ""
		if k.eos {
			txns = fmt.Sprintf("; %d transactions (size %.0f to %.0f, mean %.0f), end offset %s",
				run.txns.count(res.lines), run.txns.min, run.txns.max, run.txns.avg, grouped(float64(run.end)))
		}
		logf("eos-file round %d: %s %s lines/s (first line read committed after %s, last line written after %s, all read after %s%s; %v, of which the broker %.2f s)",
			r, k.label, grouped(run.rate), ms(run.first), secs(run.written), secs(run.committed), txns, run.cpu, run.broker.Seconds())
		return nil
	}
	// Each kind runs once untimed first: a fresh worker's first pass
	// grows its heap (see the smt-file figure).
	for _, k := range eosKinds {
		if err := run(k, "-warm"); err != nil {
			return err
		}
	}
	order := eosKinds
	if r%2 == 0 {
		order = []eosKind{eosInterval, eosPoll, eosAtLeastOnce}
	}
	for _, k := range order {
		if err := run(k, ""); err != nil {
			return err
		}
	}
	return nil
}

// eosPass runs the file once through a FileStreamSource on w into topic
// (which exists, empty) and times it from POST /connectors to a
// read_committed consumer having every line; it then checks that no more
// records follow, and deletes the connector.
func eosPass(ctx context.Context, c *cluster, w *proc, adm *kadm.Client, k eosKind, topic, path string, n int) (run eosRun, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	name := topic
	fetching := &firstFetch{ch: make(chan struct{})}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.broker.kafka),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.WithHooks(fetching))
	if err != nil {
		return run, err
	}
	defer cons.Close()
	chk := &lineChecker{topic: topic, transactional: k.eos}
	type consumed struct {
		first, done time.Time
		err         error
	}
	got := make(chan consumed, 1)
	go func() {
		first, done, err := consumeLines(ctx, cons, chk, int64(n))
		got <- consumed{first, done, err}
	}()
	// The consumer waits on its first fetch before the clock starts.
	select {
	case <-fetching.ch:
	case res := <-got:
		return run, fmt.Errorf("the consumer stopped before its first fetch: %w", res.err)
	case <-ctx.Done():
		return run, errors.New("the consumer sent no fetch in time")
	}
	config := map[string]string{"connector.class": "FileStreamSource", "file": path, "topic": topic, "tasks.max": "1"}
	for key, v := range k.extra {
		config[key] = v
	}
	var (
		start   time.Time
		res     consumed
		samples []endSample
	)
	b0, err := c.broker.stat()
	if err != nil {
		return run, err
	}
	run.cpu, err = measureCPUOf([]*proc{w, c.broker}, func() error {
		pctx, stopPolls := context.WithCancel(ctx)
		polled := make(chan []endSample, 1)
		go func() { polled <- pollEnd(pctx, adm, topic, 20*time.Millisecond) }()
		defer func() { stopPolls(); samples = <-polled }()
		start = time.Now()
		if _, err := createConnector(ctx, w, name, config); err != nil {
			return err
		}
		select {
		case res = <-got:
			if res.err != nil {
				return fmt.Errorf("%w; worker log:\n%s", res.err, w.logTail())
			}
			return nil
		case err := <-watchConnector(ctx, w, name):
			return err
		}
	})
	if err != nil {
		return run, err
	}
	b1, err := c.broker.stat()
	if err != nil {
		return run, err
	}
	run.broker = b1.user + b1.system - b0.user - b0.system
	run.committed, run.first = res.done.Sub(start), res.first.Sub(start)
	run.rate = float64(n) / run.committed.Seconds()
	if k.eos {
		if run.txns, err = transactionSizes(ctx, w, name); err != nil {
			return run, err
		}
	}
	if err := deleteConnector(ctx, w, name); err != nil {
		return run, err
	}
	// Whatever the task still had would be in the topic by now, and
	// fetched at once.
	if err := expectNoMore(ctx, cons, chk, 500*time.Millisecond); err != nil {
		return run, err
	}
	if run.end, err = endOffset(ctx, adm, topic); err != nil {
		return run, err
	}
	if !k.eos && run.end != int64(n) {
		return run, fmt.Errorf("topic %s holds %d records, want %d (duplicates)", topic, run.end, n)
	}
	// The last line was written when the end offset reached the last
	// record: the end, less the last transaction's marker.
	last := run.end
	if k.eos {
		last--
	}
	run.written = run.committed
	for _, s := range samples {
		if s.end >= last {
			run.written = min(run.written, s.at.Sub(start))
			break
		}
	}
	return run, nil
}

// firstFetch is a kgo hook that closes ch once the client has sent a
// fetch request.
type firstFetch struct {
	once sync.Once
	ch   chan struct{}
}

func (f *firstFetch) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.Fetch) && err == nil {
		f.once.Do(func() { close(f.ch) })
	}
}

// endSample is a topic's end offset at a time.
type endSample struct {
	at  time.Time
	end int64
}

// pollEnd reads the topic's end offset every every until ctx ends.
func pollEnd(ctx context.Context, adm *kadm.Client, topic string, every time.Duration) []endSample {
	var samples []endSample
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if end, err := endOffset(ctx, adm, topic); err == nil {
			samples = append(samples, endSample{time.Now(), end})
		}
		select {
		case <-ctx.Done():
			return samples
		case <-tick.C:
		}
	}
}

// transactionSizes reads the sizes of the transactions of the connector's
// task 0 from the worker's GET /metrics.
func transactionSizes(ctx context.Context, w *proc, name string) (txnSizes, error) {
	body, err := w.must(ctx, http.StatusOK, "GET", "/metrics", "")
	if err != nil {
		return txnSizes{}, err
	}
	var t txnSizes
	found := 0
	for _, line := range strings.Split(string(body), "\n") {
		for _, m := range []struct {
			stat string
			v    *float64
		}{{"min", &t.min}, {"max", &t.max}, {"avg", &t.avg}} {
			prefix := fmt.Sprintf(`kafka_connect_source_task_transaction_size_%s{connector=%q,task="0"} `, m.stat, name)
			if v, ok := strings.CutPrefix(line, prefix); ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					return t, fmt.Errorf("GET /metrics: %q: %w", line, err)
				}
				*m.v = f
				found++
			}
		}
	}
	if found != 3 {
		return t, fmt.Errorf("GET /metrics of %s: no kafka_connect_source_task_transaction_size_min/max/avg for %s", w.workerID(), name)
	}
	return t, nil
}

// deleteConnector deletes a connector through w, retrying while the
// cluster answers 409 (rebalancing) or 503.
func deleteConnector(ctx context.Context, w *proc, name string) error {
	for {
		code, resp, err := w.do(ctx, "DELETE", "/connectors/"+name, "")
		switch {
		case err != nil:
			return fmt.Errorf("DELETE /connectors/%s: %w", name, err)
		case code == http.StatusNoContent:
			return nil
		case code != http.StatusConflict && code != http.StatusServiceUnavailable:
			return fmt.Errorf("DELETE /connectors/%s: status %d: %s", name, code, resp)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("DELETE /connectors/%s: still %d at the deadline: %s", name, code, resp)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ---- checking a topic of lines ----

// lineChecker follows a topic of writeLinesFile's (or lineStream's) lines
// as a consumer gets them: each line once, in order, and in transactions
// or not, as wanted.
type lineChecker struct {
	topic         string
	transactional bool
	n             int64 // lines seen
}

func (c *lineChecker) add(r *kgo.Record) error {
	i, ok := lineNumber(r.Value)
	switch {
	case !ok:
		return fmt.Errorf("topic %s: the record at offset %d is not a numbered line: %.40q", c.topic, r.Offset, r.Value)
	case i < c.n:
		return fmt.Errorf("topic %s: line %d again at offset %d, after %d lines (a duplicate)", c.topic, i, r.Offset, c.n)
	case i > c.n:
		return fmt.Errorf("topic %s: line %d at offset %d where line %d was due (lines lost)", c.topic, i, r.Offset, c.n)
	case r.Attrs.IsTransactional() != c.transactional:
		return fmt.Errorf("topic %s: line %d at offset %d: in a transaction %t, want %t", c.topic, i, r.Offset, r.Attrs.IsTransactional(), c.transactional)
	}
	c.n++
	return nil
}

// lineNumber reads the number appendLine starts a line with.
func lineNumber(v []byte) (int64, bool) {
	if len(v) < 10 || v[9] != ' ' {
		return 0, false
	}
	var n int64
	for _, b := range v[:9] {
		if b < '0' || b > '9' {
			return 0, false
		}
		n = n*10 + int64(b-'0')
	}
	return n, true
}

// consumeLines polls cons until chk has seen n lines, and returns when
// the first and the last came.
func consumeLines(ctx context.Context, cons *kgo.Client, chk *lineChecker, n int64) (first, done time.Time, err error) {
	for chk.n < n {
		fs := cons.PollFetches(ctx)
		now := time.Now()
		if ctx.Err() != nil {
			return first, done, fmt.Errorf("topic %s: %d of %d lines read (read_committed) before the timeout", chk.topic, chk.n, n)
		}
		if err := fs.Err(); err != nil {
			return first, done, fmt.Errorf("consuming %s: %w", chk.topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if err == nil {
				err = chk.add(r)
			}
		})
		if err != nil {
			return first, done, err
		}
		if first.IsZero() && chk.n > 0 {
			first = now
		}
		done = now
	}
	return first, done, nil
}

// expectNoMore fails if cons gets any record within wait: chk has seen
// every line already.
func expectNoMore(ctx context.Context, cons *kgo.Client, chk *lineChecker, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		fs := cons.PollFetches(ctx)
		var err error
		fs.EachRecord(func(r *kgo.Record) {
			if err == nil {
				if err = chk.add(r); err == nil {
					err = fmt.Errorf("topic %s: line %d at offset %d, beyond the lines written", chk.topic, chk.n-1, r.Offset)
				}
			}
		})
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := fs.Err(); err != nil {
			return fmt.Errorf("consuming %s: %w", chk.topic, err)
		}
	}
}

// checkLines reads topic from its start as a read_committed consumer and
// fails unless it holds lines 0 to n-1, each once and in order, all in
// transactions or none, and nothing more.
func checkLines(ctx context.Context, broker, topic string, n int64, transactional bool) error {
	cons, err := kgo.NewClient(kgo.SeedBrokers(broker),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return err
	}
	defer cons.Close()
	chk := &lineChecker{topic: topic, transactional: transactional}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, _, err := consumeLines(cctx, cons, chk, n); err != nil {
		return err
	}
	return expectNoMore(ctx, cons, chk, time.Second)
}

// ---- report ----

func (e *eosFileResult) report() (rows []row, notes []string) {
	if e == nil {
		return nil, nil
	}
	if len(e.runs) > 0 {
		// Throughput is to the last line written (acknowledged by the
		// broker, in an open transaction or not): the pipeline's rate.
		// What a read_committed consumer waits beyond that is the
		// boundary's latency, a row of its own: with interval it is up
		// to the interval, whatever the file's length, and a pass of the
		// file is shorter than one.
		writtenRate := func(k eosKind) float64 {
			var vs []float64
			for _, r := range e.runs[k.key] {
				vs = append(vs, float64(e.lines)/r.written.Seconds())
			}
			return median(vs)
		}
		alo := writtenRate(eosAtLeastOnce)
		for _, t := range []struct {
			k      eosKind
			target float64
		}{{eosPoll, eosPollTarget}, {eosInterval, eosIntervalTarget}} {
			v := writtenRate(t.k)
			rows = append(rows, row{
				figure: fmt.Sprintf("exactly-once file source, %s, POST to the last line written, median of %d", t.k.label, len(e.runs[t.k.key])),
				value:  grouped(v) + " lines/s",
				limit:  "at least once, same broker: " + grouped(alo) + " lines/s",
				ratio:  fmt.Sprintf("%.2f", v/alo),
				target: fmt.Sprintf("ratio >= %.2f", t.target),
				result: passMiss(v/alo >= t.target),
			})
		}
		for _, k := range []eosKind{eosPoll, eosInterval} {
			var waits []float64
			for _, r := range e.runs[k.key] {
				waits = append(waits, (r.committed - r.written).Seconds())
			}
			limit, ratio, target, result := "-", "-", "n/a", "n/a"
			if k.key == eosInterval.key {
				limit, ratio, target, result = "the interval: 1.00 s", fmt.Sprintf("%.2f", median(waits)), "below it", passMiss(median(waits) < 1)
			}
			rows = append(rows, row{
				figure: fmt.Sprintf("exactly-once file source, %s: last line written to all read committed, median of %d", k.label, len(waits)),
				value:  fmt.Sprintf("%.2f s", median(waits)),
				limit:  limit, ratio: ratio, target: target, result: result,
			})
		}
		for _, k := range eosKinds {
			var runs, times, txns []string
			var cpus []cpuUse
			for _, r := range e.runs[k.key] {
				runs = append(runs, grouped(r.rate))
				times = append(times, fmt.Sprintf("%s/%s/%s", ms(r.first), secs(r.written), secs(r.committed)))
				cpus = append(cpus, r.cpu)
				if k.eos {
					txns = append(txns, fmt.Sprintf("%d (mean %.0f lines)", r.txns.count(e.lines), r.txns.avg))
				}
			}
			note := fmt.Sprintf("eos-file, %s: runs %s lines/s; first line read committed / last line written / all read committed after %s; to the last line written, median %s lines/s",
				k.label, strings.Join(runs, ", "), strings.Join(times, ", "), grouped(writtenRate(k)))
			if k.eos {
				note += fmt.Sprintf(" (ratio %.2f); transactions %s", writtenRate(k)/writtenRate(eosAtLeastOnce), strings.Join(txns, ", "))
			}
			notes = append(notes, note+"; CPU (worker + broker + bench) "+cpuSummary(cpus, e.lines))
		}
	}
	if e.failover != nil {
		rows = append(rows, failoverRows("exactly-once failover: kill -9 to task RUNNING elsewhere", e.failover)...)
		notes = append(notes, failoverNote("eos-failover, exactly.once.source.support=enabled, 10,000 lines a second appended throughout", e.failover))
	}
	return rows, notes
}
