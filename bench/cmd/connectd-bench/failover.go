package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const failoverConnector = "failover-source"

// failoverResult holds every run of the failover figure.
type failoverResult struct {
	runs []failoverRun
}

// failoverSetup is what differs between the failover figures: figure 4,
// and figure 11's with exactly-once support.
type failoverSetup struct {
	name  string      // in the logs and the clusters' directory names
	extra [][2]string // worker properties besides distProps
	// stream: rather than a file of 100 lines, the source reads a file
	// that the bench appends lines to from before the connector is
	// created until a second after the failover, so that the kill finds
	// the task writing; a read_committed consumer must then see every
	// line once, in order, in transactions.
	stream bool
}

// plainFailover is figure 4.
var plainFailover = failoverSetup{name: "failover"}

// eosFailover is figure 11's failover: figure 4 on workers with
// exactly-once support, the task streaming lines.
var eosFailover = failoverSetup{
	name:   "eos-failover",
	extra:  [][2]string{{"exactly.once.source.support", "enabled"}},
	stream: true,
}

// Figure 11's failover appends streamLines lines every streamEvery:
// 10,000 lines (1 MB) a second, a small part of what the task can take.
const (
	streamLines = 100
	streamEvery = 10 * time.Millisecond
)

// failoverRun is one kill -9 of the worker running the task.
type failoverRun struct {
	took     time.Duration // SIGKILL to the survivor showing the task RUNNING elsewhere
	noticed  time.Duration // SIGKILL to the survivor first showing anything else than RUNNING on the victim
	from, to string        // "worker <n> (<worker_id>)" before and after
	polls    int
	setup    time.Duration // first worker exec to the task RUNNING (untimed part)
	jitter   time.Duration // random extra wait before the kill
	// A streaming run's lines, all seen once and in order by a
	// read_committed consumer after the failover, and of them those in
	// the topic when the worker was killed.
	lines, beforeKill int64
}

func (r failoverRun) String() string {
	between := "no other state in between"
	if r.took-r.noticed > 15*time.Millisecond {
		between = "first other state after " + secs(r.noticed)
	}
	checked := ""
	if r.lines > 0 {
		checked = fmt.Sprintf("; %s lines, about %s in the topic at the kill, each read once by a read_committed consumer",
			grouped(float64(r.lines)), grouped(float64(r.beforeKill)))
	}
	return fmt.Sprintf("%s from %s to %s (%s; extra wait before the kill %s; %d polls%s)",
		secs(r.took), r.from, r.to, between, secs(r.jitter), r.polls, checked)
}

func (r *failoverResult) took() []time.Duration {
	var ds []time.Duration
	for _, run := range r.runs {
		ds = append(ds, run.took)
	}
	return ds
}

// benchFailover runs the failover figure: runs times, a fresh cluster
// (broker and 3 workers) with one FileStreamSource; SIGKILL the worker
// running its task and time until a survivor reports the task RUNNING on
// another worker.
func benchFailover(bin, work string, runs int, setup failoverSetup) (*failoverResult, error) {
	res := &failoverResult{}
	for i := 1; i <= runs; i++ {
		run, err := failoverOnce(bin, filepath.Join(work, fmt.Sprintf("%s-%d", setup.name, i)), setup)
		if err != nil {
			return nil, fmt.Errorf("%s run %d: %w", setup.name, i, err)
		}
		res.runs = append(res.runs, run)
		logf("%s run %d: task RUNNING elsewhere %s after SIGKILL (cluster up and task first RUNNING in %s)", setup.name, i, run, secs(run.setup))
	}
	return res, nil
}

func failoverOnce(bin, dir string, setup failoverSetup) (run failoverRun, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := startBroker(bin, dir)
	if err != nil {
		return run, err
	}
	defer c.close()
	in := filepath.Join(dir, "in.txt")
	var lines strings.Builder
	if !setup.stream {
		for i := range 100 {
			fmt.Fprintf(&lines, "line-%03d\n", i)
		}
	}
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		return run, err
	}

	t0 := time.Now()
	for range 3 {
		if _, err := c.addWorker(setup.extra...); err != nil {
			return run, err
		}
	}
	for _, w := range c.workers {
		if err := w.waitHealthy(ctx); err != nil {
			return run, err
		}
	}
	var stream *lineStream
	if setup.stream {
		if stream, err = startLineStream(in, streamLines, streamEvery); err != nil {
			return run, err
		}
		defer stream.stop()
	}
	if _, err := createSource(ctx, c.workers[0], failoverConnector, in, failoverTopic); err != nil {
		return run, err
	}
	// The task RUNNING, and all three workers agreeing on where, twice
	// 2 s (two heartbeats) apart: the group has settled after the
	// rebalance the new connector caused, so the kill hits a stable
	// cluster. The heartbeats tick in step with that rebalance; a random
	// extra wait of up to one heartbeat interval makes the kill land at
	// a random point of their cycle rather than always just after one.
	run.jitter = time.Duration(rand.Int64N(int64(heartbeatInterval)))
	owner := ""
	for {
		if ctx.Err() != nil {
			return run, fmt.Errorf("task of %s not RUNNING on an agreed worker in time; logs:\n%s", failoverConnector, c.logTails())
		}
		if err := c.alive(); err != nil {
			return run, err
		}
		o := agreedOwner(ctx, c.workers)
		if o == "" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if run.setup == 0 {
			run.setup = time.Since(t0)
		}
		if o == owner {
			break
		}
		owner = o
		time.Sleep(2*heartbeatInterval + run.jitter)
	}
	victim := -1
	for i, w := range c.workers {
		if w.workerID() == owner {
			victim = i
		}
	}
	if victim < 0 {
		return run, fmt.Errorf("the task runs on %s, which is none of the workers", owner)
	}
	survivor := c.workers[(victim+1)%len(c.workers)]
	if stream != nil {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.kafka))
		if err != nil {
			return run, err
		}
		defer cl.Close()
		if run.beforeKill, err = endOffset(ctx, kadm.NewClient(cl), failoverTopic); err != nil {
			return run, err
		}
	}

	start := time.Now()
	c.workers[victim].kill()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		state, id, ok := taskState(ctx, survivor, failoverConnector)
		now := time.Now()
		run.polls++
		if ok && run.noticed == 0 && (state != "RUNNING" || id != owner) {
			run.noticed = now.Sub(start)
		}
		if ok && state == "RUNNING" && id != owner {
			run.took = now.Sub(start)
			run.from, run.to = owner, id
			break
		}
		select {
		case <-ctx.Done():
			return run, fmt.Errorf("task of %s not RUNNING on a survivor %s after SIGKILL of %s; logs:\n%s",
				failoverConnector, time.Since(start).Round(time.Millisecond), owner, c.logTails())
		case <-tick.C:
		}
	}
	to := -1
	for i, w := range c.workers {
		if i != victim && w.workerID() == run.to {
			to = i
		}
	}
	if to < 0 {
		return run, fmt.Errorf("the task moved from %s to %s, which is no surviving worker", owner, run.to)
	}
	run.from = fmt.Sprintf("worker %d (%s)", victim+1, run.from)
	run.to = fmt.Sprintf("worker %d (%s)", to+1, run.to)
	if stream != nil {
		// The task goes on with new lines on its new worker for a
		// second; then every line written must be in the topic once.
		time.Sleep(time.Second)
		n, err := stream.stop()
		if err != nil {
			return run, err
		}
		if err := c.alive(); err != nil {
			return run, err
		}
		if _, err := checkLines(ctx, c.broker.kafka, failoverTopic, n, true); err != nil {
			return run, fmt.Errorf("after the failover: %w; logs:\n%s", err, c.logTails())
		}
		run.lines = n
	}
	return run, c.alive()
}

// failoverTopic is the failover connector's topic.
const failoverTopic = "failover-lines"

// lineStream appends appendLine's lines to a file, a few at a time, until
// stopped.
type lineStream struct {
	quit chan struct{}
	done chan struct{}
	n    int64 // lines written, once done
	err  error
}

// startLineStream appends lines of 100 bytes to path, batch every every,
// numbered from 0.
func startLineStream(path string, batch int, every time.Duration) (*lineStream, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	s := &lineStream{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer f.Close()
		tick := time.NewTicker(every)
		defer tick.Stop()
		var buf []byte
		for {
			buf = buf[:0]
			for range batch {
				buf = appendLine(buf, int(s.n), 100)
				s.n++
			}
			if _, err := f.Write(buf); err != nil {
				s.err = err
				return
			}
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s, nil
}

// stop stops the writer and returns how many lines it wrote. It may be
// called again.
func (s *lineStream) stop() (int64, error) {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
	return s.n, s.err
}

// agreedOwner returns the worker_id that every worker reports as running
// the failover connector's task, or "" if they do not all say RUNNING on
// the same worker.
func agreedOwner(ctx context.Context, ws []*proc) string {
	owner := ""
	for _, w := range ws {
		o := taskOwner(ctx, w, failoverConnector)
		if o == "" || (owner != "" && o != owner) {
			return ""
		}
		owner = o
	}
	return owner
}

// logTails gives the end of every log of the cluster, for errors.
func (c *cluster) logTails() string {
	var b strings.Builder
	for _, p := range append([]*proc{c.broker}, c.workers...) {
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(p.logPath), p.logTail())
	}
	return b.String()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
