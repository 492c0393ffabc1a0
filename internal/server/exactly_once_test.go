package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Three worker processes with exactly.once.source.support=enabled on
// `connectd kafka`: a FileStreamSource streams lines while the worker
// running its task is killed with SIGKILL, twice; a read_committed
// consumer then sees every line exactly once, in order.
func TestExactlyOnceSourceSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir, workers := startProcCluster(t, 3, "exactly.once.source.support=enabled")
	kafkaAddr := brokerOf(t, workers[0])
	in := filepath.Join(dir, "eos-in.txt")
	w0 := workers[0].rest()

	// The preflight checks of a worker with exactly-once support.
	body := w0.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(map[string]string{
		"connector.class": "FileStreamSource", "name": "src", "file": in, "topic": "eos-lines", "exactly.once.support": "required",
	}))
	if !strings.Contains(body, `"error_count":0`) {
		t.Fatalf("validate with exactly.once.support=required: %s", body)
	}

	const total = 100_000
	writer := &lineWriter{path: in}
	writer.write(t, 20_000)
	w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "eos-lines", "exactly.once.support": "required",
	}}))
	eventually(t, "the source running", func() bool { return w0.state("src") == "RUNNING/RUNNING" })

	// Lines keep coming while the worker running the task is killed,
	// twice, so that the kill lands in the middle of a transaction.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for writer.n < total-1_000 && ctx.Err() == nil {
			writer.write(t, 50)
			time.Sleep(10 * time.Millisecond)
		}
	})
	defer func() { stop(); wg.Wait() }()
	for kill := 0; kill < 2; kill++ {
		var owner string
		alive := workers[(kill+1)%3].rest()
		eventually(t, "the source task running", func() bool { owner = taskWorker(alive, "src"); return owner != "" })
		victim := workerAt(t, workers, owner)
		// Some records of the task's producer are in the topic first.
		eventually(t, "records in the topic", func() bool { return endOffsetAt(t, kafkaAddr, "eos-lines") > int64(kill+1)*5_000 })
		workers[victim].signal(syscall.SIGKILL)
		survivor := workers[(victim+1)%3].rest()
		eventually(t, "the task running on another worker", func() bool {
			w := taskWorker(survivor, "src")
			return w != "" && w != owner
		})
		workers[victim].start()
	}
	stop()
	wg.Wait()
	writer.write(t, total-writer.n)

	// read_committed: what the killed workers had in open transactions
	// was aborted, and the task went on from the offsets committed with
	// the records before.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics("eos-lines"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	deadline := time.Now().Add(90 * time.Second)
	for len(got) < total && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		cancel()
	}
	// Anything after the last line would be a duplicate.
	pctx, cancel := context.WithTimeout(context.Background(), time.Second)
	cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	cancel()
	if len(got) != total {
		t.Errorf("a read_committed consumer read %d lines, want %d", len(got), total)
	}
	for i, line := range got {
		if want := fmt.Sprintf("line-%06d", i); line != want {
			t.Fatalf("line %d is %q, want %q (a duplicate or a gap)", i, line, want)
		}
	}
}

// lineWriter appends numbered lines to a file.
type lineWriter struct {
	path string
	n    int
}

func (l *lineWriter) write(t *testing.T, n int) {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "line-%06d\n", l.n)
		l.n++
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Error(err)
	}
}

// brokerOf is the bootstrap.servers of a worker's properties.
func brokerOf(t *testing.T, w *procWorker) string {
	b, err := os.ReadFile(w.props)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "bootstrap.servers="); ok {
			return v
		}
	}
	t.Fatal("no bootstrap.servers in " + w.props)
	return ""
}

// workerAt is the index of the worker whose REST URL is owner.
func workerAt(t *testing.T, workers []*procWorker, owner string) int {
	t.Helper()
	for i, w := range workers {
		if strings.HasSuffix(owner, fmt.Sprintf(":%d", w.port)) {
			return i
		}
	}
	t.Fatalf("no worker listens on %s", owner)
	return -1
}

// endOffsetAt is a topic's high watermark summed over its partitions.
func endOffsetAt(t *testing.T, addr, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}
