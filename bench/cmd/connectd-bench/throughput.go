package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// throughputResult holds every round of figure 1.
type throughputResult struct {
	lines, lineBytes int
	plain, connectd  []float64 // lines/s per round
	plainFirst       []time.Duration
	connectdFirst    []time.Duration
	// CPU time used during each run: by the worker process (the broker,
	// and in the connectd runs the file source too) and by this process
	// (the plain producer; only polling in the connectd runs).
	plainCPU, connectdCPU []cpuUse
}

// cpuUse is the CPU time two processes used during one run, and what the
// whole machine and PostgreSQL's processes used meanwhile.
type cpuUse struct {
	worker, bench time.Duration
	// The worker's share of worker spent in the kernel, and the page
	// faults it took: on a virtual machine whose free memory the host
	// has reclaimed, a page touched for the first time costs several
	// times what it does otherwise, which moves the worker's CPU from
	// run to run.
	workerSystem time.Duration
	workerFaults int64
	wall         time.Duration
	machine      time.Duration // every core's busy time
	postgres     time.Duration
}

func (c cpuUse) String() string {
	return fmt.Sprintf("%.2f cores (worker %.2f s (system %.2f s, %d page faults) + bench %.2f s CPU in %.2f s; machine %.2f of %d cores busy)",
		(c.worker+c.bench).Seconds()/c.wall.Seconds(), c.worker.Seconds(), c.workerSystem.Seconds(), c.workerFaults,
		c.bench.Seconds(), c.wall.Seconds(), c.machine.Seconds()/c.wall.Seconds(), runtime.NumCPU())
}

// cpuClock samples the CPU time used so far by the processes (summed)
// and by this process.
func cpuClock(ps []*proc) (worker procStat, self time.Duration, err error) {
	for _, p := range ps {
		st, err := p.stat()
		if err != nil {
			return procStat{}, 0, err
		}
		worker.user, worker.system, worker.faults = worker.user+st.user, worker.system+st.system, worker.faults+st.faults
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return procStat{}, 0, err
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return worker, self, nil
}

// measureCPU runs f and returns the CPU both processes used meanwhile.
func measureCPU(p *proc, f func() error) (cpuUse, error) { return measureCPUOf([]*proc{p}, f) }

// measureCPUOf runs f and returns the CPU the processes (together, as the
// worker) and this one used meanwhile.
func measureCPUOf(ps []*proc, f func() error) (cpuUse, error) {
	// The machine's first and last, so that the bench's CPU does not
	// count the reading of /proc.
	h0 := readHost()
	w0, s0, err := cpuClock(ps)
	if err != nil {
		return cpuUse{}, err
	}
	t0 := time.Now()
	if err := f(); err != nil {
		return cpuUse{}, err
	}
	wall := time.Since(t0)
	w1, s1, err := cpuClock(ps)
	if err != nil {
		return cpuUse{}, err
	}
	h1 := readHost()
	return cpuUse{
		worker: w1.user + w1.system - w0.user - w0.system, workerSystem: w1.system - w0.system, workerFaults: w1.faults - w0.faults,
		bench: s1 - s0, wall: wall, machine: h1.busy - h0.busy, postgres: h1.postgres - h0.postgres,
	}, nil
}

// writeLinesFile writes n lines of exactly size bytes each, newline
// included: a zero-padded line number and filler text.
func writeLinesFile(path string, n, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := make([]byte, 0, size)
	for i := range n {
		line = appendLine(line[:0], i, size)
		if _, err := w.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendLine appends line i of writeLinesFile's files to b: size bytes,
// newline included, starting with the line number in 9 digits and a
// space (lineNumber reads it back).
func appendLine(b []byte, i, size int) []byte {
	const filler = "the quick brown fox jumps over the lazy dog; a typical log line of text, "
	start := len(b)
	b = fmt.Appendf(b, "%09d ", i)
	for len(b)-start < size-1 {
		b = append(b, filler[:min(len(filler), size-1-(len(b)-start))]...)
	}
	return append(b[:start+size-1], '\n')
}

// endOffset sums the end offsets of a topic's partitions; a topic that
// does not exist yet counts as empty.
func endOffset(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	return sumOffsets(adm.ListEndOffsets(ctx, topic))
}

// sumOffsets adds up the offsets of a listing's partitions; a partition
// not known yet counts as 0.
func sumOffsets(offs kadm.ListedOffsets, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	var sum int64
	var firstErr error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if !errors.Is(o.Err, kerr.UnknownTopicOrPartition) && firstErr == nil {
				firstErr = o.Err
			}
			return
		}
		sum += o.Offset
	})
	return sum, firstErr
}

// waitEnd polls the topic's end offset until it reaches n and returns
// when it did, and when the first record showed up. It gives up at the
// deadline or when fail delivers an error.
//
// The polls share the machine with the run they time, so there are few
// of them: every 5 ms until the first record and again near the end, and
// in between half the time the rate so far says is left (pollGap).
func waitEnd(ctx context.Context, adm *kadm.Client, topic string, n int64, fail <-chan error) (done, first time.Time, err error) {
	tm := time.NewTimer(0)
	defer tm.Stop()
	<-tm.C
	for {
		end, err := endOffset(ctx, adm, topic)
		now := time.Now()
		if err != nil && ctx.Err() == nil {
			// Transient errors (the topic being created) are retried.
			end = 0
		}
		if end > 0 && first.IsZero() {
			first = now
		}
		if end >= n {
			if end > n {
				return now, first, fmt.Errorf("topic %s holds %d records, want %d (duplicates)", topic, end, n)
			}
			return now, first, nil
		}
		tm.Reset(pollGap(end, n, now.Sub(first)))
		select {
		case <-ctx.Done():
			return time.Time{}, time.Time{}, fmt.Errorf("topic %s reached %d of %d records before the timeout", topic, end, n)
		case err := <-fail:
			return time.Time{}, time.Time{}, err
		case <-tm.C:
		}
	}
}

// pollGap is the wait before the next poll of a topic that holds end of
// n records, end of them in the time since the first: half of what is
// left at that rate, between 5 and 100 ms. The end is then seen at most
// 5 ms late, after about ten polls rather than one every 5 ms.
func pollGap(end, n int64, since time.Duration) time.Duration {
	const least, most = 5 * time.Millisecond, 100 * time.Millisecond
	if end <= 0 || since <= 0 {
		return least
	}
	left := time.Duration(float64(since) * float64(n-end) / float64(end) / 2)
	return min(max(left, least), most)
}

// sourceProducerOpts set up a franz-go client as connectd's source
// producers are (source.go): acks=all, idempotent, Kafka's uncompressed
// records, a 5 ms linger, 1 MB batches.
func sourceProducerOpts(bootstrap string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(5 * time.Millisecond)}
}

// runPlain produces every line of path to topic with a plain franz-go
// client set up as connectd's source producers are (sourceProducerOpts) and returns
// lines/s from the first Produce to the end offset reaching n.
func runPlain(ctx context.Context, adm *kadm.Client, bootstrap, path, topic string, n int) (float64, time.Duration, error) {
	fail := make(chan error, 2)
	start := time.Now()
	cl, err := kgo.NewClient(sourceProducerOpts(bootstrap)...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.Open(path)
		if err != nil {
			fail <- err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var once sync.Once
		for sc.Scan() {
			// The scanner reuses its buffer: each record gets its own
			// copy, as the file source's records do.
			r := &kgo.Record{Topic: topic, Value: slices.Clone(sc.Bytes())}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					once.Do(func() { fail <- fmt.Errorf("plain producer: %w", err) })
				}
			})
		}
		if err := sc.Err(); err != nil {
			fail <- err
			return
		}
		if err := cl.Flush(ctx); err != nil {
			fail <- err
		}
	}()
	done, first, err := waitEnd(ctx, adm, topic, int64(n), fail)
	wg.Wait()
	if err != nil {
		return 0, 0, err
	}
	return float64(n) / done.Sub(start).Seconds(), first.Sub(start), nil
}

// runConnectd creates a FileStreamSource for path and returns lines/s from
// the POST /connectors to the topic's end offset reaching n.
func runConnectd(ctx context.Context, p *proc, adm *kadm.Client, name, path, topic string, n int) (float64, time.Duration, error) {
	body, _ := json.Marshal(map[string]any{
		"name": name,
		"config": map[string]string{
			"connector.class": "FileStreamSource",
			"file":            path,
			"topic":           topic,
			"tasks.max":       "1",
		},
	})
	start := time.Now()
	if _, err := p.must(ctx, 201, "POST", "/connectors", string(body)); err != nil {
		return 0, 0, err
	}
	done, first, err := waitEnd(ctx, adm, topic, int64(n), nil)
	if err != nil {
		return 0, 0, fmt.Errorf("%w; worker log:\n%s", err, p.logTail())
	}
	// The idle task would keep polling the file; delete the connector so
	// that a plain run after this one has the worker to itself.
	if _, err := p.must(ctx, 204, "DELETE", "/connectors/"+name, ""); err != nil {
		return 0, 0, err
	}
	return float64(n) / done.Sub(start).Seconds(), first.Sub(start), nil
}

// benchThroughput runs figure 1: rounds rounds, each on a fresh worker
// (fresh broker), measuring the plain producer and the file source on the
// same broker, alternating which goes first.
func benchThroughput(bin, work string, lines, lineBytes, rounds int, timeout time.Duration) (*throughputResult, error) {
	res := &throughputResult{lines: lines, lineBytes: lineBytes}
	path := filepath.Join(work, "lines.txt")
	t0 := time.Now()
	if err := writeLinesFile(path, lines, lineBytes); err != nil {
		return nil, err
	}
	logf("throughput: wrote %d lines of %d bytes (%.0f MB) in %v", lines, lineBytes, float64(lines*lineBytes)/1e6, time.Since(t0).Round(time.Millisecond))
	for r := 1; r <= rounds; r++ {
		if err := throughputRound(bin, work, path, r, res, timeout); err != nil {
			return nil, fmt.Errorf("throughput round %d: %w", r, err)
		}
	}
	return res, nil
}

func throughputRound(bin, work, path string, r int, res *throughputResult, timeout time.Duration) (err error) {
	dir := filepath.Join(work, fmt.Sprintf("throughput-%d", r))
	p, cl, stop, err := readyWorker(bin, dir, map[string]string{
		"key.converter":            "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":          "org.apache.kafka.connect.storage.StringConverter",
		"offset.flush.interval.ms": "1000",
	})
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	adm := kadm.NewClient(cl)
	plainTopic, connTopic := fmt.Sprintf("plain-%d", r), fmt.Sprintf("connectd-%d", r)
	// Both topics exist before either clock starts, with the partition
	// count the broker gives auto-created topics (1), so neither run
	// pays for topic creation.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, t := range []string{plainTopic, connTopic} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, t); err != nil {
			return fmt.Errorf("creating topic %s: %w", t, err)
		}
	}
	plain := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var v float64
		var first time.Duration
		cpu, err := measureCPU(p, func() (err error) {
			v, first, err = runPlain(ctx, adm, p.kafka, path, plainTopic, res.lines)
			return err
		})
		if err != nil {
			return err
		}
		res.plain = append(res.plain, v)
		res.plainFirst = append(res.plainFirst, first)
		res.plainCPU = append(res.plainCPU, cpu)
		logf("throughput round %d: plain producer %s lines/s (first record after %v; %v)", r, grouped(v), first.Round(time.Millisecond), cpu)
		return nil
	}
	connectd := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var v float64
		var first time.Duration
		cpu, err := measureCPU(p, func() (err error) {
			v, first, err = runConnectd(ctx, p, adm, fmt.Sprintf("file-source-%d", r), path, connTopic, res.lines)
			return err
		})
		if err != nil {
			return err
		}
		res.connectd = append(res.connectd, v)
		res.connectdFirst = append(res.connectdFirst, first)
		res.connectdCPU = append(res.connectdCPU, cpu)
		logf("throughput round %d: connectd FileStreamSource %s lines/s (first record after %v; %v)", r, grouped(v), first.Round(time.Millisecond), cpu)
		return nil
	}
	order := []func() error{plain, connectd}
	if r%2 == 0 {
		order = []func() error{connectd, plain}
	}
	for _, f := range order {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}
