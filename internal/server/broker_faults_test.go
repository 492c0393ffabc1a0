package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/servertest"
)

// kill -9 the broker (connectd kafka) under two distributed workers
// running a file source and a file sink, then start it again on the same
// data dir and port: both tasks ride it out, and every line written
// before, during and after the outage reaches the sink's file.
func TestDistributedPipelineSurvivesBrokerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	kafkaAddr := fmt.Sprintf("127.0.0.1:%d", servertest.FreePort(t))
	dataDir := filepath.Join(dir, "kafka")
	broker := startProcBroker(t, bin, kafkaAddr, dataDir)
	// The sinks' consumers give up their sessions soon, so that an
	// outage outlasts them without making the test slow.
	const session = 6 * time.Second
	workers := newProcWorkers(t, bin, dir, kafkaAddr, 2,
		fmt.Sprintf("consumer.session.timeout.ms=%d", session.Milliseconds()), "consumer.heartbeat.interval.ms=500")
	for _, w := range workers {
		w.start()
	}

	w0 := workers[0].rest()
	lines := startLinePipeline(t, w0, dir)

	if err := broker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = broker.Wait()
	lines.more(1000)
	// An outage longer than the sink's session: its heartbeats fail
	// until franz-go gives up on the session, and the broker it comes
	// back to knows nothing of it. This is the scenario, not a wait for
	// something to happen.
	time.Sleep(session + time.Second)
	startProcBroker(t, bin, kafkaAddr, dataDir)
	// The broker forgot the sink's consumer in the crash: it must join
	// again.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	eventually(t, "the sink's consumer back in its group, or its task failed", func() bool {
		groups, err := adm.DescribeGroups(context.Background(), "connect-sink")
		if err == nil && groups["connect-sink"].State == "Stable" && len(groups["connect-sink"].Members) == 1 {
			return true
		}
		return strings.Contains(taskStates(t, w0, "sink"), "FAILED")
	})
	lines.more(1000)
	eventually(t, "every line in the sink after the broker's restart", lines.allThere)
	// A worker that could not reach the group for a session timeout
	// stopped its work, and gets it back in the rebalance after it
	// rejoins, which may come after the last line is in: the tasks are
	// RUNNING once the cluster settles.
	for _, name := range []string{"src", "sink"} {
		var st string
		eventually(t, name+"'s task RUNNING after the broker's restart", func() bool {
			st = taskStates(t, w0, name)
			return st == "RUNNING" || strings.Contains(st, "FAILED")
		})
		if st != "RUNNING" {
			t.Fatalf("%s's task after the broker's restart: %s", name, st)
		}
	}
	// A task that failed during the outage may have been started again by
	// the rebalance after it, and its FAILED status lost with the broker:
	// the workers' logs tell.
	for _, w := range workers {
		b, err := os.ReadFile(w.log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `msg="task failed"`) {
				t.Errorf("%s: %s", w.log, line)
			}
		}
	}
}

// taskStates is a connector's task states and traces as its status shows
// them.
func taskStates(t *testing.T, w *testWorker, name string) string {
	t.Helper()
	body := w.must(200, "GET", "/connectors/"+name+"/status", "")
	var st struct {
		Tasks []struct {
			State string `json:"state"`
			Trace string `json:"trace"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("status of %s: %v: %s", name, err, body)
	}
	var states []string
	for _, task := range st.Tasks {
		states = append(states, strings.TrimSpace(task.State+" "+task.Trace))
	}
	return strings.Join(states, ", ")
}

// A source whose records the embedded broker cannot write (the topic's
// segment is /dev/full, which answers every write with ENOSPC as a full
// disk does) fails, and its trace says what the broker failed to write
// and why, not only UNKNOWN_SERVER_ERROR.
func TestSourceOnFullDiskSaysWhy(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	seg := filepath.Join(dir, "kafka", "partitions", "full-0", "0.dat")
	if err := os.MkdirAll(filepath.Dir(seg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", seg); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a", "b")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "full"},
	}))
	var st string
	eventually(t, "the source task failed", func() bool {
		st = taskStates(t, w, "src")
		return strings.HasPrefix(st, "FAILED")
	})
	for _, want := range []string{"UNKNOWN_SERVER_ERROR", "write " + seg + ": no space left on device"} {
		if !strings.Contains(st, want) {
			t.Errorf("the task's trace does not say %q: %s", want, st)
		}
	}
}
