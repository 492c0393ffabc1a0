package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const failoverConnector = "failover-source"

// failoverResult holds every run of the failover figure.
type failoverResult struct {
	runs []failoverRun
}

// failoverRun is one kill -9 of the worker running the task.
type failoverRun struct {
	took     time.Duration // SIGKILL to the survivor showing the task RUNNING elsewhere
	noticed  time.Duration // SIGKILL to the survivor first showing anything else than RUNNING on the victim
	from, to string        // "worker <n> (<worker_id>)" before and after
	polls    int
	setup    time.Duration // first worker exec to the task RUNNING (untimed part)
	jitter   time.Duration // random extra wait before the kill
}

func (r failoverRun) String() string {
	between := "no other state in between"
	if r.took-r.noticed > 15*time.Millisecond {
		between = "first other state after " + secs(r.noticed)
	}
	return fmt.Sprintf("%s from %s to %s (%s; extra wait before the kill %s; %d polls)",
		secs(r.took), r.from, r.to, between, secs(r.jitter), r.polls)
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
func benchFailover(bin, work string, runs int) (*failoverResult, error) {
	res := &failoverResult{}
	for i := 1; i <= runs; i++ {
		run, err := failoverOnce(bin, filepath.Join(work, fmt.Sprintf("failover-%d", i)))
		if err != nil {
			return nil, fmt.Errorf("failover run %d: %w", i, err)
		}
		res.runs = append(res.runs, run)
		logf("failover run %d: task RUNNING elsewhere %s after SIGKILL (cluster up and task first RUNNING in %s)", i, run, secs(run.setup))
	}
	return res, nil
}

func failoverOnce(bin, dir string) (run failoverRun, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := startBroker(bin, dir)
	if err != nil {
		return run, err
	}
	defer c.close()
	in := filepath.Join(dir, "in.txt")
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, "line-%03d\n", i)
	}
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		return run, err
	}

	t0 := time.Now()
	for range 3 {
		if _, err := c.addWorker(); err != nil {
			return run, err
		}
	}
	for _, w := range c.workers {
		if err := w.waitHealthy(ctx); err != nil {
			return run, err
		}
	}
	if _, err := createSource(ctx, c.workers[0], failoverConnector, in, "failover-lines"); err != nil {
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
	return run, c.alive()
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
