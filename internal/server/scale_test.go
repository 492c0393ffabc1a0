package server

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/connectd/connectd/internal/servertest"
)

// scaleConnectors is the size of the cluster in TestClusterScale: enough
// that a rebalance per connector, or tasks restarted by every rebalance,
// would show many times over.
const scaleConnectors = 300

// A burst of creates and a rolling restart on three worker processes, as
// the bounds that keep a cluster's cost linear in its connectors:
//   - the burst's rebalances are gathered (far fewer than the connectors),
//     and no connector or task starts twice;
//   - a rolling restart starts again only what ran on the worker that
//     restarted: the others' task start counts do not move.
func TestClusterScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// A restarting worker is back well within the delay: its connectors
	// and tasks wait for it rather than move to the others.
	dir, workers := startProcCluster(t, 3, "scheduled.rebalance.max.delay.ms=120000")
	w0 := workers[0].rest()

	// The burst: 8 creates in flight, through one worker.
	names := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				in := filepath.Join(dir, fmt.Sprintf("in-%d.txt", i))
				servertest.WriteLines(t, in, fmt.Sprintf("line of %d", i))
				w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": fmt.Sprintf("src-%d", i), "config": map[string]string{
					"connector.class": "FileStreamSource", "file": in, "topic": "scale", "tasks.max": "1"}}))
			}
		}()
	}
	for i := range scaleConnectors {
		names <- i
	}
	close(names)
	wg.Wait()
	allRunning := func() bool {
		_, body := w0.do("GET", "/connectors?expand=status", "")
		var all map[string]struct {
			Status struct {
				Connector struct{ State string }   `json:"connector"`
				Tasks     []struct{ State string } `json:"tasks"`
			} `json:"status"`
		}
		if json.Unmarshal([]byte(body), &all) != nil || len(all) != scaleConnectors {
			return false
		}
		for _, c := range all {
			if c.Status.Connector.State != "RUNNING" || len(c.Status.Tasks) != 1 || c.Status.Tasks[0].State != "RUNNING" {
				return false
			}
		}
		return true
	}
	eventually(t, fmt.Sprintf("%d connectors and their tasks RUNNING", scaleConnectors), allRunning)

	counts := func(w *procWorker) (rebalances, connStarts, taskStarts int) {
		m := scrape(t, w.rest())
		value := func(series string) int {
			v, err := strconv.ParseFloat(metricValue(m, series), 64)
			if err != nil {
				t.Fatalf("worker on port %d: %s = %q", w.port, series, metricValue(m, series))
			}
			return int(v)
		}
		return value("kafka_connect_worker_rebalance_completed_rebalances_total"),
			value("kafka_connect_worker_connector_startup_attempts_total"),
			value("kafka_connect_worker_task_startup_attempts_total")
	}
	rebalances, connStarts, taskStarts := 0, 0, 0
	for _, w := range workers {
		r, c, ts := counts(w)
		rebalances = max(rebalances, r)
		connStarts += c
		taskStarts += ts
	}
	t.Logf("burst of %d creates: %d rebalances, %d connector starts, %d task starts", scaleConnectors, rebalances, connStarts, taskStarts)
	if rebalances > scaleConnectors/5 {
		t.Errorf("%d rebalances for %d creates: they are not gathered", rebalances, scaleConnectors)
	}
	if connStarts != scaleConnectors || taskStarts != scaleConnectors {
		t.Errorf("%d connector and %d task starts for %d connectors of one task: some started twice", connStarts, taskStarts, scaleConnectors)
	}

	// The rolling restart: only the restarted worker starts anything.
	for i, restarted := range workers {
		before := map[int]int{}
		for j, w := range workers {
			if j != i {
				_, _, before[j] = counts(w)
			}
		}
		restarted.signal(syscall.SIGTERM)
		restarted.start()
		eventually(t, fmt.Sprintf("every connector RUNNING after worker %d restarted", i), allRunning)
		for j, w := range workers {
			if j == i {
				continue
			}
			if _, _, after := counts(w); after != before[j] {
				t.Errorf("worker %d restarted: worker %d started %d tasks that did not need to start", i, j, after-before[j])
			}
		}
	}
}
