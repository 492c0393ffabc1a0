package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	rate float64 // lines/s, POST /connectors to every line committed
	// From the POST, as the end offsets sampled say: the first line
	// committed (readable by a read_committed consumer), the last line
	// written (the high watermark past it), every line committed (the
	// last stable offset past the last).
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
	lines int
	runs  map[string][]eosRun // by eosKind.key, in round order
	// bare is the figure's lines written by franz-go alone, a pass each
	// round after the worker's, on the same broker.
	bare     []bareRun
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
	bare := bareLines(lines, lineBytes)
	for r := 1; r <= rounds; r++ {
		if err := eosRound(bin, work, path, bare, r, res, timeout); err != nil {
			return nil, fmt.Errorf("eos-file round %d: %w", r, err)
		}
	}
	return res, nil
}

func eosRound(bin, work, path string, bare [][]byte, r int, res *eosFileResult, timeout time.Duration) error {
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
		logf("eos-file round %d: %s %s lines/s (first line committed after %s, last line written after %s, all committed after %s%s; %v, of which the broker %.2f s)",
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
	bctx, bcancel := context.WithTimeout(context.Background(), timeout)
	defer bcancel()
	b, err := eosBare(bctx, adm, c.broker.kafka, bare, r)
	if err != nil {
		return fmt.Errorf("franz-go alone: %w", err)
	}
	res.bare = append(res.bare, b)
	logf("eos-file round %d: franz-go alone, same broker: at least once %s lines/s, transactions of %d lines %s lines/s",
		r, grouped(b.atLeastOnce), eosTxnLines, grouped(b.txns))
	return nil
}

// eosPass runs the file once through a FileStreamSource on w into topic
// (which exists, empty) and times it from POST /connectors by the topic's
// end offsets, the high watermark and the last stable offset, sampled
// every 10 ms. The connector is then deleted, and a read_committed consumer
// checks that the topic holds every line exactly once.
//
// The consumer starts only once the topic stopped moving (and the
// connector is deleted): it decodes every record, about half a core while
// the lines stream, and on this 2-core machine that was taken from the
// worker and the broker it timed, unevenly: an at-least-once run's records
// are readable at once, an interval run's only after its pass.
func eosPass(ctx context.Context, c *cluster, w *proc, adm *kadm.Client, k eosKind, topic, path string, n int) (run eosRun, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	name := topic
	config := map[string]string{"connector.class": "FileStreamSource", "file": path, "topic": topic, "tasks.max": "1"}
	for key, v := range k.extra {
		config[key] = v
	}
	var (
		start   time.Time
		samples []endSample
	)
	b0, err := c.broker.stat()
	if err != nil {
		return run, err
	}
	run.cpu, err = measureCPUOf([]*proc{w, c.broker}, func() error {
		pctx, stopPolls := context.WithCancel(ctx)
		defer stopPolls()
		settled := make(chan []endSample, 1)
		go func() { settled <- sampleEnds(pctx, adm, topic, 10*time.Millisecond) }()
		start = time.Now()
		if _, err := createConnector(ctx, w, name, config); err != nil {
			return err
		}
		select {
		case samples = <-settled:
			if samples == nil {
				return fmt.Errorf("topic %s did not settle before the timeout; worker log:\n%s", topic, w.logTail())
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
	if k.eos {
		if run.txns, err = transactionSizes(ctx, w, name); err != nil {
			return run, err
		}
	}
	if err := deleteConnector(ctx, w, name); err != nil {
		return run, err
	}
	// Whatever the task still had is in the topic by now: the check
	// finds it beyond the lines.
	lastOffset, err := checkLines(ctx, c.broker.kafka, topic, int64(n), k.eos)
	if err != nil {
		return run, fmt.Errorf("%w; worker log:\n%s", err, w.logTail())
	}
	if run.end, err = endOffset(ctx, adm, topic); err != nil {
		return run, err
	}
	if !k.eos && run.end != int64(n) {
		return run, fmt.Errorf("topic %s holds %d records, want %d (duplicates)", topic, run.end, n)
	}
	// The first line is at offset 0, the last at lastOffset: each
	// was written when the high watermark passed it, and readable
	// committed when the last stable offset did.
	run.first, run.written, run.committed = -1, -1, -1
	for _, s := range samples {
		at := s.at.Sub(start)
		if run.first < 0 && s.stable > 0 {
			run.first = at
		}
		if run.written < 0 && s.end > lastOffset {
			run.written = at
		}
		if run.committed < 0 && s.stable > lastOffset {
			run.committed = at
		}
	}
	if run.first < 0 || run.written < 0 || run.committed < 0 {
		return run, fmt.Errorf("topic %s: the offsets sampled during the pass never reached its last line (offset %d)", topic, lastOffset)
	}
	run.rate = float64(n) / run.committed.Seconds()
	// The pass's wall time, not the wait that found it settled.
	run.cpu.wall = run.committed
	return run, nil
}

// endSample is a topic's end offsets at a time: its high watermark, and
// its last stable offset (what a read_committed consumer can read to).
type endSample struct {
	at          time.Time
	end, stable int64
}

// settleSamples is how many samples in a row must find the topic's end
// offsets unchanged, and nothing open, for sampleEnds to call it settled:
// 300 ms, longer than any pause of a pass.
const settleSamples = 30

// sampleEnds reads the topic's end offsets every every until the topic
// holds records, none in an open transaction, and its end has not moved
// for settleSamples samples; it returns the samples taken. When ctx ends
// first it returns nil.
func sampleEnds(ctx context.Context, adm *kadm.Client, topic string, every time.Duration) []endSample {
	var samples []endSample
	still := 0
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if s, err := sampleEnd(ctx, adm, topic); err == nil {
			if l := len(samples); l > 0 && s.end == samples[l-1].end && s.stable == s.end && s.end > 0 {
				still++
			} else {
				still = 0
			}
			samples = append(samples, s)
			if still >= settleSamples {
				return samples
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sampleEnd reads the topic's end offsets now, each summed over its
// partitions.
func sampleEnd(ctx context.Context, adm *kadm.Client, topic string) (endSample, error) {
	end, err := endOffset(ctx, adm, topic)
	if err != nil {
		return endSample{}, err
	}
	stable, err := sumOffsets(adm.ListCommittedOffsets(ctx, topic))
	return endSample{at: time.Now(), end: end, stable: stable}, err
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
	lastOffset    int64 // the offset of the last line seen
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
	c.lastOffset = r.Offset
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

// consumeLines polls cons until chk has seen n lines.
func consumeLines(ctx context.Context, cons *kgo.Client, chk *lineChecker, n int64) error {
	for chk.n < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("topic %s: %d of %d lines read (read_committed) before the timeout", chk.topic, chk.n, n)
		}
		if err := fs.Err(); err != nil {
			return fmt.Errorf("consuming %s: %w", chk.topic, err)
		}
		var err error
		fs.EachRecord(func(r *kgo.Record) {
			if err == nil {
				err = chk.add(r)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
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
// transactions or none, and nothing more; it returns the last line's
// offset.
func checkLines(ctx context.Context, broker, topic string, n int64, transactional bool) (int64, error) {
	cons, err := kgo.NewClient(kgo.SeedBrokers(broker),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return 0, err
	}
	defer cons.Close()
	chk := &lineChecker{topic: topic, transactional: transactional}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := consumeLines(cctx, cons, chk, n); err != nil {
		return 0, err
	}
	return chk.lastOffset, expectNoMore(ctx, cons, chk, time.Second)
}

// ---- report ----

// ceilingRow is the ratio the poll boundary would reach if the worker's
// transactions cost only what the client and the broker take for them:
// the worker's at-least-once pass against a pass that starts as fast and
// then commits transactions at the pace franz-go alone commits them to
// the same broker. Any worker's transactions wait for the same hand-over,
// flush and EndTxn one after another (Kafka's producers take no records
// while they commit, and since KIP-890 each commit bumps the epoch the
// next transaction's records carry), so that the figure cannot pass this
// ratio by more than the noise between the two passes.
func (e *eosFileResult) ceilingRow() row {
	var ceilings, rates []float64
	for i, b := range e.bare {
		alo := e.runs[eosAtLeastOnce.key][i]
		ceilings = append(ceilings, alo.written.Seconds()/(alo.first.Seconds()+float64(e.lines)/b.txns))
		rates = append(rates, b.txns)
	}
	return row{
		figure: fmt.Sprintf("exactly-once file source, %s: the ratio at franz-go's own pace (transactions of %d lines from the bench alone, same broker), median of %d", eosPoll.label, eosTxnLines, len(ceilings)),
		value:  grouped(median(rates)) + " lines/s",
		limit:  "-",
		ratio:  fmt.Sprintf("%.2f", median(ceilings)),
		target: "n/a",
		result: "n/a",
	}
}

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
		if len(e.bare) == len(e.runs[eosAtLeastOnce.key]) && len(e.bare) > 0 {
			rows = append(rows, e.ceilingRow())
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
				figure: fmt.Sprintf("exactly-once file source, %s: last line written to all committed, median of %d", k.label, len(waits)),
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
			note := fmt.Sprintf("eos-file, %s: runs %s lines/s; first line committed / last line written / all committed after %s; to the last line written, median %s lines/s",
				k.label, strings.Join(runs, ", "), strings.Join(times, ", "), grouped(writtenRate(k)))
			if k.eos {
				note += fmt.Sprintf(" (ratio %.2f); transactions %s", writtenRate(k)/writtenRate(eosAtLeastOnce), strings.Join(txns, ", "))
			}
			notes = append(notes, note+"; CPU (worker + broker + bench) "+cpuSummary(cpus, e.lines))
		}
	}
	if len(e.bare) > 0 {
		var alo, txns []string
		for _, b := range e.bare {
			alo, txns = append(alo, grouped(b.atLeastOnce)), append(txns, grouped(b.txns))
		}
		notes = append(notes, fmt.Sprintf("eos-file, franz-go alone from the bench to the same broker, each round after the worker's passes, the task producer's settings, each batch made ahead: at least once %s lines/s; transactions of %d lines and an offsets record %s lines/s",
			strings.Join(alo, ", "), eosTxnLines, strings.Join(txns, ", ")))
	}
	if e.failover != nil {
		rows = append(rows, failoverRows("exactly-once failover: kill -9 to task RUNNING elsewhere", e.failover)...)
		notes = append(notes, failoverNote("eos-failover, exactly.once.source.support=enabled, 10,000 lines a second appended throughout", e.failover))
	}
	return rows, notes
}
