package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// clusterResult is the cluster figure: from exec of 3 fresh workers to
// n connectors and their tasks RUNNING.
type clusterResult struct {
	connectors, concurrency int
	healthy                 time.Duration   // first exec to GET /health 200 on all 3
	posted                  time.Duration   // first POST to the last POST answered 201
	running                 time.Duration   // first POST to every connector and task RUNNING
	total                   time.Duration   // first exec to every connector and task RUNNING
	retries                 int             // POSTs answered 409 (rebalancing) and sent again
	posts                   []time.Duration // each POST /connectors, retries included
	polls                   int
	workers                 []string       // worker_ids, in start order
	tasks, conns            map[string]int // worker_id -> tasks / connectors running there
}

// benchCluster runs the cluster figure once: a fresh broker (untimed),
// then the clock starts, 3 workers are exec'd, and once all are healthy
// n FileStreamSource connectors are created through worker 1 with at
// most concurrency requests in flight; the clock stops when GET
// /connectors?expand=status shows every connector and its task RUNNING.
func benchCluster(bin, work string, n, concurrency int) (res *clusterResult, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := filepath.Join(work, "cluster")
	c, err := startBroker(bin, dir)
	if err != nil {
		return nil, err
	}
	defer c.close()
	res = &clusterResult{connectors: n, concurrency: concurrency}
	files := make([]string, n)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("in-%03d.txt", i))
		if err := os.WriteFile(files[i], fmt.Appendf(nil, "connector %d line 1\nconnector %d line 2\n", i, i), 0o644); err != nil {
			return nil, err
		}
	}

	t0 := time.Now()
	for range 3 {
		w, err := c.addWorker()
		if err != nil {
			return nil, err
		}
		res.workers = append(res.workers, w.workerID())
	}
	for _, w := range c.workers {
		if err := w.waitHealthy(ctx); err != nil {
			return nil, err
		}
	}
	res.healthy = time.Since(t0)
	logf("cluster: 3 workers healthy after %s", secs(res.healthy))

	w1 := c.workers[0]
	tPost := time.Now()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan int)
	)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := time.Now()
				retries, err := createSource(ctx, w1, fmt.Sprintf("source-%03d", i), files[i], fmt.Sprintf("cluster-%03d", i))
				d := time.Since(t)
				mu.Lock()
				res.retries += retries
				res.posts = append(res.posts, d)
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("%w; logs:\n%s", firstErr, c.logTails())
	}
	res.posted = time.Since(tPost)
	logf("cluster: %d connectors created in %s (%d requests retried after 409; each POST median %s, max %s, %d over 0.5 s)",
		n, secs(res.posted), res.retries, ms(medianD(res.posts)), ms(slices.Max(res.posts)), res.slowPosts())

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		done, summary, tasks, conns := clusterRunning(ctx, w1, n)
		res.polls++
		if done {
			res.running = time.Since(tPost)
			res.total = time.Since(t0)
			res.tasks, res.conns = tasks, conns
			break
		}
		if err := c.alive(); err != nil {
			return nil, err
		}
		if summary != last {
			logf("cluster: %s after %s", summary, secs(time.Since(tPost)))
			last = summary
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("not every connector RUNNING in time (%s); logs:\n%s", summary, c.logTails())
		case <-tick.C:
		}
	}
	logf("cluster: every connector and task RUNNING %s after the first POST, %s after the first exec; tasks per worker %s",
		secs(res.running), secs(res.total), res.spread(res.tasks))
	return res, c.alive()
}

// clusterRunning asks w for GET /connectors?expand=status and says
// whether n connectors are listed, each RUNNING with one task RUNNING; if
// so it counts the tasks and connectors on each worker.
func clusterRunning(ctx context.Context, w *proc, n int) (done bool, summary string, tasks, conns map[string]int) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	code, body, err := w.do(ctx, "GET", "/connectors?expand=status", "")
	if err != nil {
		return false, err.Error(), nil, nil
	}
	if code != http.StatusOK {
		return false, fmt.Sprintf("GET /connectors?expand=status: status %d", code), nil, nil
	}
	var all map[string]struct {
		Status connectorStatus `json:"status"`
	}
	if err := json.Unmarshal(body, &all); err != nil {
		return false, fmt.Sprintf("GET /connectors?expand=status: %v", err), nil, nil
	}
	tasks, conns = map[string]int{}, map[string]int{}
	connsRunning, tasksRunning := 0, 0
	for _, c := range all {
		if c.Status.Connector.State == "RUNNING" {
			connsRunning++
			conns[c.Status.Connector.WorkerID]++
		}
		for _, t := range c.Status.Tasks {
			if t.State == "RUNNING" {
				tasksRunning++
				tasks[t.WorkerID]++
			}
		}
	}
	done = len(all) == n && connsRunning == n && tasksRunning == n
	for _, c := range all {
		done = done && len(c.Status.Tasks) == 1
	}
	summary = fmt.Sprintf("%d connectors listed, %d RUNNING, %d tasks RUNNING", len(all), connsRunning, tasksRunning)
	return done, summary, tasks, conns
}

// slowPosts counts the POSTs that took over half a second.
func (r *clusterResult) slowPosts() int {
	n := 0
	for _, d := range r.posts {
		if d > 500*time.Millisecond {
			n++
		}
	}
	return n
}

// spread formats per-worker counts in worker start order.
func (r *clusterResult) spread(counts map[string]int) string {
	var out []string
	ids := slices.Clone(r.workers)
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id) // should not happen
		}
	}
	for i, id := range ids {
		name := fmt.Sprintf("worker %d", i+1)
		if i >= len(r.workers) {
			name = id
		}
		out = append(out, fmt.Sprintf("%s %d", name, counts[id]))
	}
	return strings.Join(out, ", ")
}

// balanced says whether the counts differ by at most one across the
// workers.
func (r *clusterResult) balanced(counts map[string]int) bool {
	lo, hi := -1, 0
	for _, id := range r.workers {
		c := counts[id]
		if lo < 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	return hi-lo <= 1 && len(counts) <= len(r.workers)
}
