package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// distProps are the worker properties shared by the failover and cluster
// figures (besides bootstrap.servers and listeners).
var distProps = [][2]string{
	{"group.id", "connectd-bench"},
	{"config.storage.topic", "connect-configs"},
	{"offset.storage.topic", "connect-offsets"},
	{"status.storage.topic", "connect-status"},
	{"config.storage.replication.factor", "1"},
	{"offset.storage.replication.factor", "1"},
	{"status.storage.replication.factor", "1"},
	{"session.timeout.ms", "6000"}, // the broker's group.min.session.timeout.ms
	{"heartbeat.interval.ms", "1000"},
	{"scheduled.rebalance.max.delay.ms", "0"},
	{"offset.flush.interval.ms", "1000"},
	{"key.converter", "org.apache.kafka.connect.storage.StringConverter"},
	{"value.converter", "org.apache.kafka.connect.storage.StringConverter"},
}

// sessionTimeout and heartbeatInterval are session.timeout.ms and
// heartbeat.interval.ms in distProps.
const (
	sessionTimeout    = 6 * time.Second
	heartbeatInterval = time.Second
)

// cluster is one `connectd kafka` broker and distributed workers, each a
// process of the built binary, in a directory of their own.
type cluster struct {
	bin     string
	dir     string
	broker  *proc
	workers []*proc
}

// startBroker execs `connectd kafka` on a free port with a fresh data
// directory and waits until it accepts connections.
func startBroker(bin, dir string) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &proc{dir: dir, kafka: fmt.Sprintf("127.0.0.1:%d", port), logPath: filepath.Join(dir, "kafka.log")}
	if err := b.spawn(bin, "kafka", "--listen", b.kafka, "--data-dir", filepath.Join(dir, "kafka")); err != nil {
		return nil, err
	}
	c := &cluster{bin: bin, dir: dir, broker: b}
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", b.kafka, time.Second)
		if err == nil {
			conn.Close()
			return c, nil
		}
		select {
		case <-b.exited:
			c.close()
			return nil, fmt.Errorf("connectd kafka exited (%v); log:\n%s", b.waitErr, b.logTail())
		default:
		}
		if time.Now().After(deadline) {
			c.close()
			return nil, fmt.Errorf("connectd kafka not listening on %s after 30 s; log:\n%s", b.kafka, b.logTail())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// addWorker writes worker<i>.properties (distProps, the broker, a free
// REST port) and execs `connectd distributed` on it. It does not wait.
func (c *cluster) addWorker(extra ...[2]string) (*proc, error) {
	i := len(c.workers) + 1
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "bootstrap.servers=%s\nlisteners=http://127.0.0.1:%d\n", c.broker.kafka, port)
	for _, kv := range append(slices.Clone(distProps), extra...) {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	props := filepath.Join(c.dir, fmt.Sprintf("worker%d.properties", i))
	if err := os.WriteFile(props, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	w := &proc{
		dir:     c.dir,
		rest:    fmt.Sprintf("http://127.0.0.1:%d", port),
		logPath: filepath.Join(c.dir, fmt.Sprintf("worker%d.log", i)),
		props:   props,
	}
	if err := w.spawn(c.bin, "distributed", props); err != nil {
		return nil, err
	}
	c.workers = append(c.workers, w)
	return w, nil
}

// restart stops worker i with SIGTERM and starts it again on the same
// listener and properties, logging to a file of its own.
func (c *cluster) restart(i int) error {
	old := c.workers[i]
	if err := old.stop(); err != nil {
		return err
	}
	w := &proc{dir: c.dir, rest: old.rest, props: old.props,
		logPath: strings.TrimSuffix(old.logPath, ".log") + ".restarted.log"}
	if err := w.spawn(c.bin, "distributed", old.props); err != nil {
		return err
	}
	c.workers[i] = w
	return nil
}

// workerID is the worker_id the REST API reports for w: its advertised
// host:port.
func (w *proc) workerID() string { return strings.TrimPrefix(w.rest, "http://") }

// waitHealthy polls GET /health every 5 ms until it answers 200 (the
// worker has joined the group and read its first assignment).
func (w *proc) waitHealthy(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", w.rest+"/health", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-w.exited:
			return fmt.Errorf("worker %s exited before GET /health said 200 (%v); log:\n%s", w.workerID(), w.waitErr, w.logTail())
		case <-ctx.Done():
			return fmt.Errorf("worker %s: GET /health not 200 in time (last error %v); log:\n%s", w.workerID(), err, w.logTail())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// alive fails if a worker (or the broker) has exited on its own.
func (c *cluster) alive() error {
	for _, p := range append([]*proc{c.broker}, c.workers...) {
		if p.stopped {
			continue
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited unexpectedly (%v); log:\n%s", p.logPath, p.waitErr, p.logTail())
		default:
		}
	}
	return nil
}

// close kills the workers and then the broker (SIGKILL: the data is
// thrown away, a graceful stop would only cost time) and removes the
// directory.
func (c *cluster) close() {
	for _, w := range c.workers {
		if cpuProfiles != "" {
			// A killed process writes no profile.
			_ = w.stop()
		}
		w.kill()
	}
	if cpuProfiles != "" {
		_ = c.broker.stop()
	}
	c.broker.kill()
	if !keepClusters {
		os.RemoveAll(c.dir)
	}
}

// keepClusters is -keep-clusters: the clusters' directories stay, to read
// their workers' logs.
var keepClusters bool

// createSource creates a FileStreamSource (tasks.max=1) through w,
// retrying while the cluster answers 409 because it is rebalancing. A
// retry that finds the connector already there (the earlier attempt got
// through) counts as created. It returns the number of retries.
func createSource(ctx context.Context, w *proc, name, file, topic string) (int, error) {
	return createConnector(ctx, w, name, map[string]string{
		"connector.class": "FileStreamSource",
		"file":            file,
		"topic":           topic,
		"tasks.max":       "1",
	})
}

// createConnector is createSource for any config.
func createConnector(ctx context.Context, w *proc, name string, config map[string]string) (int, error) {
	body, _ := json.Marshal(map[string]any{"name": name, "config": config})
	for retries := 0; ; retries++ {
		code, resp, err := w.do(ctx, "POST", "/connectors", string(body))
		switch {
		case err != nil && ctx.Err() != nil:
			return retries, fmt.Errorf("POST /connectors %s: %w", name, err)
		case err != nil:
			// The worker may be busy; try again.
		case code == http.StatusCreated:
			return retries, nil
		case code == http.StatusConflict && retries > 0 && strings.Contains(string(resp), "already exists"):
			return retries, nil
		case code == http.StatusConflict || code == http.StatusServiceUnavailable:
			// Rebalance in progress or leader unknown: retry.
		default:
			return retries, fmt.Errorf("POST /connectors %s: status %d: %s", name, code, resp)
		}
		select {
		case <-ctx.Done():
			return retries, fmt.Errorf("POST /connectors %s: still failing at the deadline (status %d, %v): %s", name, code, err, resp)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// connectorStatus is the body of GET /connectors/{name}/status.
type connectorStatus struct {
	Name      string `json:"name"`
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	} `json:"tasks"`
}

// taskState returns the state and worker_id of task 0 of the connector as
// w's GET /connectors/{name}/status gives them; ok is false when w did not
// answer 200 in time (a worker may answer 409 or be slow during a
// rebalance) or lists no task.
func taskState(ctx context.Context, w *proc, name string) (state, workerID string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	code, body, err := w.do(ctx, "GET", "/connectors/"+name+"/status", "")
	if err != nil || code != http.StatusOK {
		return "", "", false
	}
	var st connectorStatus
	if json.Unmarshal(body, &st) != nil || len(st.Tasks) == 0 {
		return "", "", false
	}
	return st.Tasks[0].State, st.Tasks[0].WorkerID, true
}

// taskOwner returns the worker_id running task 0 of the connector
// according to w, or "" unless w says it is RUNNING.
func taskOwner(ctx context.Context, w *proc, name string) string {
	state, id, ok := taskState(ctx, w, name)
	if !ok || state != "RUNNING" {
		return ""
	}
	return id
}
