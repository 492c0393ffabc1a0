package server

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/connectd/connectd/internal/servertest"
)

// procWorker is a distributed worker running as its own process.
type procWorker struct {
	t     *testing.T
	bin   string
	props string
	port  int
	cmd   *exec.Cmd
	log   string
}

func (p *procWorker) start() {
	p.t.Helper()
	cmd := exec.Command(p.bin, "distributed", p.props)
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd = cmd
	p.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	eventually(p.t, fmt.Sprintf("worker on port %d healthy", p.port), func() bool {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", p.port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func (p *procWorker) rest() *testWorker {
	return &testWorker{t: p.t, s: &Standalone{RESTAddr: fmt.Sprintf("127.0.0.1:%d", p.port)}}
}

func (p *procWorker) signal(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	_ = p.cmd.Wait()
}

// startProcBroker runs `connectd kafka` on addr with its data in dataDir,
// as a process of its own, and waits until it listens.
func startProcBroker(t *testing.T, bin, addr, dataDir string) *exec.Cmd {
	t.Helper()
	broker := exec.Command(bin, "kafka", "--listen", addr, "--data-dir", dataDir)
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = broker.Process.Kill(); _ = broker.Wait() })
	eventually(t, "the broker listening", func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	return broker
}

// newProcWorkers writes the properties of n distributed workers of one
// cluster on the broker at kafkaAddr, with extra lines added; their logs
// are shown if the test fails.
func newProcWorkers(t *testing.T, bin, dir, kafkaAddr string, n int, extra ...string) []*procWorker {
	workers := make([]*procWorker, n)
	for i := range workers {
		port := servertest.FreePort(t)
		props := filepath.Join(dir, fmt.Sprintf("worker%d.properties", i))
		writeFile(t, props, fmt.Sprintf(`
bootstrap.servers=%s
listeners=http://127.0.0.1:%d
group.id=connect-cluster
config.storage.topic=connect-configs
offset.storage.topic=connect-offsets
status.storage.topic=connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.flush.interval.ms=200
scheduled.rebalance.max.delay.ms=1000
heartbeat.interval.ms=500
session.timeout.ms=6000
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
%s
`, kafkaAddr, port, strings.Join(extra, "\n")))
		workers[i] = &procWorker{t: t, bin: bin, props: props, port: port, log: filepath.Join(dir, fmt.Sprintf("worker%d.log", i))}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, w := range workers {
				b, _ := os.ReadFile(w.log)
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("%s:\n%s", w.log, b)
			}
		}
	})
	return workers
}

// startProcCluster builds the binary, runs `connectd kafka` and n
// distributed workers (with extra properties) as processes, and returns
// their directory and the workers, healthy.
func startProcCluster(t *testing.T, n int, extra ...string) (string, []*procWorker) {
	bin := buildBinary(t)
	dir := t.TempDir()
	kafkaAddr := fmt.Sprintf("127.0.0.1:%d", servertest.FreePort(t))
	startProcBroker(t, bin, kafkaAddr, filepath.Join(dir, "kafka"))
	workers := newProcWorkers(t, bin, dir, kafkaAddr, n, extra...)
	for _, w := range workers {
		w.start()
	}
	return dir, workers
}

// Three workers as separate processes on one broker (connectd kafka):
// kill -9 the worker running the source task and watch the task run
// elsewhere, then restart every worker in turn; every line reaches the
// sink at least once.
func TestDistributedProcessesSurviveKillAndRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir, workers := startProcCluster(t, 3)

	w0 := workers[0].rest()
	lines := startLinePipeline(t, w0, dir)
	// Status read through worker 3; offsets altered through followers
	// (requests that only the leader serves are forwarded to it).
	w2 := workers[2].rest()
	eventually(t, "the status on worker 3", func() bool { return w2.state("src") == "RUNNING/RUNNING" })
	eventually(t, "the source offsets committed", func() bool {
		_, body := w2.do("GET", "/connectors/src/offsets", "")
		return strings.Contains(body, fmt.Sprintf(`"position":%d`, 1000*12))
	})
	w2.must(204, "PUT", "/connectors/src/stop", "")
	for _, w := range []*testWorker{workers[1].rest(), workers[2].rest()} {
		w.must(200, "PATCH", "/connectors/src/offsets", fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":%d}}]}`, lines.in, 500*12))
	}
	if body := w0.must(200, "GET", "/connectors/src/offsets", ""); !strings.Contains(body, fmt.Sprintf(`"position":%d`, 500*12)) {
		t.Fatalf("offsets after PATCH through followers: %s", body)
	}
	w0.must(202, "PUT", "/connectors/src/resume", "")
	eventually(t, "lines 500 to 999 sent again", func() bool {
		total, _ := countLines(lines.out)
		return total >= 1500
	})

	// kill -9 the worker running the source task.
	var owner string
	eventually(t, "the source task running", func() bool { owner = taskWorker(workers[1].rest(), "src"); return owner != "" })
	victim := -1
	for i, w := range workers {
		if strings.HasSuffix(owner, fmt.Sprintf(":%d", w.port)) {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("no worker listens on %s", owner)
	}
	workers[victim].signal(syscall.SIGKILL)
	lines.more(1000)
	survivor := workers[(victim+1)%3].rest()
	eventually(t, "the source task running on a survivor", func() bool {
		w := taskWorker(survivor, "src")
		return w != "" && w != owner
	})
	eventually(t, "every line in the sink after the kill", lines.allThere)
	workers[victim].start()

	// Rolling restart, writing all along.
	for _, w := range workers {
		lines.more(500)
		w.signal(syscall.SIGTERM)
		lines.more(500)
		w.start()
	}
	lines.more(500)
	eventually(t, "every line in the sink after the rolling restart", lines.allThere)
}

// startLinePipeline creates, through w, a FileStreamSource "src" of
// numbered lines in dir into the topic "lines" and a FileStreamSink
// "sink" of it, and waits for a first thousand lines to arrive.
func startLinePipeline(t *testing.T, w *testWorker, dir string) *numberedLines {
	t.Helper()
	lines := &numberedLines{t: t, in: filepath.Join(dir, "in.txt"), out: filepath.Join(dir, "out.txt")}
	lines.more(1000)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "file": lines.in, "topic": "lines"},
	}))
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{"connector.class": "FileStreamSink", "file": lines.out, "topics": "lines"},
	}))
	eventually(t, "the first lines in the sink", lines.allThere)
	return lines
}

// numberedLines grows a FileStreamSource's input by numbered lines and
// tells whether a sink's output holds each of them at least once.
type numberedLines struct {
	t       *testing.T
	in, out string
	written int
}

// more appends n lines. It may run on a goroutine of its own: a failure
// fails the test without stopping it.
func (l *numberedLines) more(n int) {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "line-%06d\n", l.written)
		l.written++
	}
	f, err := os.OpenFile(l.in, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		l.t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		l.t.Error(err)
	}
}

func (l *numberedLines) allThere() bool {
	_, unique := countLines(l.out)
	return len(unique) == l.written
}
