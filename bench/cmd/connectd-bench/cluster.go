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
	"strconv"
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
	// statusGets are timed GET /connectors?expand=status, once all run.
	statusGets []time.Duration
	// idleRSS and rss are the workers' VmRSS once healthy and once all
	// connectors run (after a short idle), in bytes, summed.
	idleRSS, rss int64
	rolling      *rollingResult // nil unless asked for
}

// rollingResult is a rolling restart: each worker in turn stopped with
// SIGTERM and started again.
type rollingResult struct {
	back []time.Duration // per worker, SIGTERM to every connector and task RUNNING again
	// healthy is, per worker, its exec to GET /health 200: it has read
	// the config and status topics of the whole cluster and joined.
	healthy []time.Duration
	// needless counts the tasks the other workers started meanwhile.
	needless int
}

// clusterSettle is the idle time before the RSS of running connectors is
// read: the burst's garbage collected.
const clusterSettle = 2 * time.Second

// clusterProps are the cluster figure's worker settings besides
// distProps: Kafka's default delay for a departed worker's work, which a
// rolling restart relies on (the failover figure sets none).
var clusterProps = [][2]string{{"scheduled.rebalance.max.delay.ms", "300000"}}

// benchCluster runs the cluster figure once: a fresh broker (untimed),
// then the clock starts, 3 workers are exec'd, and once all are healthy
// n FileStreamSource connectors are created through worker 1 with at
// most concurrency requests in flight; the clock stops when GET
// /connectors?expand=status shows every connector and its task RUNNING.
func benchCluster(bin, work string, n, concurrency int, rolling bool) (res *clusterResult, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
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
		w, err := c.addWorker(clusterProps...)
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
	if res.idleRSS, err = c.rss(); err != nil {
		return nil, err
	}

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
	for range 20 {
		t := time.Now()
		if _, err := w1.must(ctx, http.StatusOK, "GET", "/connectors?expand=status", ""); err != nil {
			return nil, err
		}
		res.statusGets = append(res.statusGets, time.Since(t))
	}
	time.Sleep(clusterSettle)
	if res.rss, err = c.rss(); err != nil {
		return nil, err
	}
	if rolling {
		if res.rolling, err = rollingRestart(ctx, c, n); err != nil {
			return nil, err
		}
	}
	return res, c.alive()
}

// rss sums the workers' VmRSS.
func (c *cluster) rss() (int64, error) {
	var sum int64
	for _, w := range c.workers {
		b, err := w.rssBytes()
		if err != nil {
			return 0, err
		}
		sum += b
	}
	return sum, nil
}

// rollingRestart restarts each worker in turn, as a deploy does, and
// waits each time until every connector and task runs again; it counts
// the tasks the other workers started meanwhile, from their
// kafka_connect_worker_task_startup_attempts_total.
func rollingRestart(ctx context.Context, c *cluster, n int) (*rollingResult, error) {
	res := &rollingResult{}
	for i := range c.workers {
		before := map[int]int{}
		for j, w := range c.workers {
			if j != i {
				v, err := taskStarts(ctx, w)
				if err != nil {
					return nil, err
				}
				before[j] = v
			}
		}
		t := time.Now()
		if err := c.restart(i); err != nil {
			return nil, err
		}
		if err := c.workers[i].waitHealthy(ctx); err != nil {
			return nil, err
		}
		res.healthy = append(res.healthy, time.Since(c.workers[i].started))
		other := c.workers[(i+1)%len(c.workers)]
		for {
			done, summary, _, _ := clusterRunning(ctx, other, n)
			if done {
				break
			}
			if err := c.alive(); err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("rolling restart of worker %d: not every connector RUNNING again in time (%s)", i+1, summary)
			case <-time.After(50 * time.Millisecond):
			}
		}
		res.back = append(res.back, time.Since(t))
		for j, w := range c.workers {
			if j == i {
				continue
			}
			v, err := taskStarts(ctx, w)
			if err != nil {
				return nil, err
			}
			res.needless += v - before[j]
		}
		logf("cluster: worker %d restarted, every connector RUNNING again after %s; tasks started elsewhere so far %d", i+1, secs(res.back[i]), res.needless)
	}
	return res, nil
}

// taskStarts reads a worker's kafka_connect_worker_task_startup_attempts_total.
func taskStarts(ctx context.Context, w *proc) (int, error) {
	body, err := w.must(ctx, http.StatusOK, "GET", "/metrics", "")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "kafka_connect_worker_task_startup_attempts_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("%s: no kafka_connect_worker_task_startup_attempts_total in GET /metrics", w.workerID())
}

// p99 is the 99th percentile of ds (the largest below 100 values).
func p99(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, len(s)*99/100)]
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

// Targets of the cluster figure (issue: scale to thousands of connectors).
const (
	postMedianTarget   = 20 * time.Millisecond
	postP99Target      = 100 * time.Millisecond
	statusTarget       = 100 * time.Millisecond
	runningTarget1000  = 15 * time.Second
	rssPerConnTarget   = 1 << 20
	perConnRatioTarget = 1.5
)

// clusterReport is the cluster figure's rows, one group per size, then the
// growth of the per-connector cost from the smallest size to the largest
// and the rolling restart of the largest.
func clusterReport(cl []*clusterResult) (rows []row, notes []string) {
	for _, c := range cl {
		what := fmt.Sprintf("cluster: 3 workers, %d connectors", c.connectors)
		running := row{figure: what + ", first POST to all RUNNING", value: secs(c.running), limit: "-", ratio: "-", target: "none", result: "n/a"}
		if c.connectors == 1000 {
			running.target, running.result = "<= 15 s", passMiss(c.running <= runningTarget1000)
		}
		postMed, postP99 := medianD(c.posts), p99(c.posts)
		getMed, getP99 := medianD(c.statusGets), p99(c.statusGets)
		perConn := float64(c.rss-c.idleRSS) / float64(c.connectors)
		rows = append(rows,
			row{figure: what + ", exec to all RUNNING", value: secs(c.total), limit: "-", ratio: "-", target: "none", result: "n/a"},
			running,
			row{figure: what + ", POST /connectors median / p99", value: ms(postMed) + " / " + ms(postP99), limit: "-", ratio: "-",
				target: "< 20 ms / < 100 ms", result: passMiss(postMed < postMedianTarget && postP99 < postP99Target)},
			row{figure: what + ", GET /connectors?expand=status median / p99", value: ms(getMed) + " / " + ms(getP99), limit: "-", ratio: "-",
				target: "< 100 ms", result: passMiss(getP99 < statusTarget)},
			row{figure: what + ", RSS per running connector beyond the idle workers", value: fmt.Sprintf("%.2f MiB", perConn/(1<<20)), limit: "-", ratio: "-",
				target: "< 1 MiB", result: passMiss(perConn < rssPerConnTarget)},
		)
		balance := "balanced"
		if !c.balanced(c.tasks) {
			balance = "NOT balanced"
		}
		notes = append(notes,
			fmt.Sprintf("cluster %d: POSTs through worker 1, %d in flight at most, all answered after %s (each: median %s, p99 %s, max %s, %d over 0.5 s; %d retried after 409); polled GET /connectors?expand=status every 50 ms (%d polls), then 20 timed GETs; RSS of the 3 workers %s idle, %s running",
				c.connectors, c.concurrency, secs(c.posted), ms(postMed), ms(postP99), ms(slices.Max(c.posts)), c.slowPosts(), c.retries, c.polls, mb(c.idleRSS), mb(c.rss)),
			fmt.Sprintf("cluster %d: tasks per worker %s (%s); connectors per worker %s",
				c.connectors, c.spread(c.tasks), balance, c.spread(c.conns)))
	}
	if len(cl) > 1 {
		small, large := cl[0], cl[len(cl)-1]
		cost := func(c *clusterResult) float64 { return c.running.Seconds() / float64(c.connectors) }
		r := cost(large) / cost(small)
		rows = append(rows, row{
			figure: fmt.Sprintf("cluster: per-connector cost (first POST to all RUNNING / connectors), %d vs %d", large.connectors, small.connectors),
			value:  fmt.Sprintf("%.2f ms", cost(large)*1000), limit: fmt.Sprintf("%.2f ms", cost(small)*1000),
			ratio: fmt.Sprintf("%.2f", r), target: "ratio <= 1.5", result: passMiss(r <= perConnRatioTarget),
		})
	}
	if len(cl) > 0 && cl[len(cl)-1].rolling != nil {
		c := cl[len(cl)-1]
		what := fmt.Sprintf("cluster: rolling restart of 3 workers, %d connectors", c.connectors)
		rows = append(rows,
			row{figure: what + ", SIGTERM to all RUNNING again (max of 3)", value: secs(slices.Max(c.rolling.back)), limit: "-", ratio: "-", target: "none", result: "n/a"},
			row{figure: what + ", restarted worker's exec to healthy (max of 3)", value: secs(slices.Max(c.rolling.healthy)), limit: "session.timeout.ms " + secs(sessionTimeout), ratio: fmt.Sprintf("%.2f", slices.Max(c.rolling.healthy).Seconds()/sessionTimeout.Seconds()),
				target: "well under 1", result: passMiss(slices.Max(c.rolling.healthy) < sessionTimeout/2)},
			row{figure: what + ", tasks started on the workers that did not restart", value: strconv.Itoa(c.rolling.needless), limit: "-", ratio: "-",
				target: "0", result: passMiss(c.rolling.needless == 0)},
		)
		var back []string
		for _, d := range c.rolling.back {
			back = append(back, secs(d))
		}
		notes = append(notes, fmt.Sprintf("cluster %d rolling restart (scheduled.rebalance.max.delay.ms=300000): each worker SIGTERM to every connector RUNNING again %s", c.connectors, strings.Join(back, ", ")))
	}
	return rows, notes
}
