package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "connectd")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/connectd/connectd/cmd/connectd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func countLines(path string) (total int, unique map[string]int) {
	unique = map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return 0, unique
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		total++
		unique[sc.Text()]++
	}
	return total, unique
}

// kill -9 the worker while a file source streams 100k lines and a sink
// writes them out; after a restart every line is in the topic and in the
// sink's file at least once, and the duplicates are bounded by what came
// after the last flushed offsets.
func TestCrashLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const n = 100000
	bin := buildBinary(t)
	dir := t.TempDir()
	kafkaAddr := fmt.Sprintf("127.0.0.1:%d", servertest.FreePort(t))
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	written := 0
	appendLines := func(k int) {
		var b strings.Builder
		for ; k > 0 && written < n; k-- {
			fmt.Fprintf(&b, "line-%06d\n", written) // 12 bytes a line
			written++
		}
		f, err := os.OpenFile(in, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(b.String()); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	appendLines(1000)
	restPort := servertest.FreePort(t)
	offsetsFile := filepath.Join(dir, "connect.offsets")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(dir, "worker.log"))
			var keep []string
			for _, l := range strings.Split(string(logs), "\n") {
				if !strings.Contains(l, "level=INFO") {
					keep = append(keep, l)
				}
			}
			t.Logf("worker log, INFO left out:\n%s", strings.Join(keep, "\n"))
		}
	})
	writeFile(t, filepath.Join(dir, "worker.properties"), fmt.Sprintf(`
listeners=http://127.0.0.1:%d
embedded.kafka.listeners=%s
embedded.kafka.data.dir=%s
offset.storage.file.filename=%s
offset.flush.interval.ms=200
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
`, restPort, kafkaAddr, filepath.Join(dir, "kafka"), offsetsFile))
	writeFile(t, filepath.Join(dir, "source.properties"), "name=src\nconnector.class=FileStreamSource\nbatch.size=500\ntopic=lines\nfile="+in+"\n")
	writeFile(t, filepath.Join(dir, "sink.properties"), "name=sink\nconnector.class=FileStreamSink\ntopics=lines\nfile="+out+"\n")
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "standalone", filepath.Join(dir, "worker.properties"),
			filepath.Join(dir, "source.properties"), filepath.Join(dir, "sink.properties"))
		cmd.Dir = dir
		logf, err := os.OpenFile(filepath.Join(dir, "worker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}

	cmd := start()
	// Keep the file growing while both connectors commit, and kill the
	// worker in the middle of the stream.
	offsetsOf := func(name string) string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connectors/%s/offsets", restPort, name))
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	eventually(t, "both connectors to commit offsets mid-stream", func() bool {
		appendLines(500)
		return strings.Contains(offsetsOf("src"), `"position"`) && strings.Contains(offsetsOf("sink"), `"kafka_offset"`) && written >= n/5
	})
	appendLines(500)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	linesAtKill, _ := countLines(out)
	store, err := storage.OpenFileOffsetStore(offsetsFile)
	if err != nil {
		t.Fatalf("offsets file after kill -9: %v", err)
	}
	committedLines := 0
	if pos, ok := store.Get("src", map[string]any{"filename": in}); ok {
		committedLines = int(pos["position"].(int64)) / 12
	}

	// Read what the broker kept, with the broker alone on the same data.
	broker := exec.Command(bin, "kafka", "--listen", kafkaAddr, "--data-dir", filepath.Join(dir, "kafka"))
	broker.Stderr = os.Stderr
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	topicAtKill, sinkCommitted := inspectBroker(t, kafkaAddr)
	_ = broker.Process.Signal(syscall.SIGTERM)
	_ = broker.Wait()
	t.Logf("at kill: source committed %d lines, topic held %d, sink wrote %d lines and committed %d", committedLines, topicAtKill, linesAtKill, sinkCommitted)
	if int64(topicAtKill) < int64(committedLines) {
		t.Fatalf("the source committed %d lines but the topic holds only %d: records were lost", committedLines, topicAtKill)
	}
	if sinkCommitted > int64(linesAtKill) {
		t.Fatalf("the sink committed offset %d but its file holds only %d lines", sinkCommitted, linesAtKill)
	}

	appendLines(n)
	start()
	var topicTotal int
	eventually(t, "every line in the sink's file", func() bool {
		_, unique := countLines(out)
		return len(unique) == n
	})
	topic := readTopicToEnd(t, kafkaAddr, "lines")
	topicTotal = len(topic)
	seen := map[string]bool{}
	for _, l := range topic {
		seen[l] = true
	}
	if len(seen) != n {
		t.Fatalf("topic holds %d distinct lines, want %d", len(seen), n)
	}
	if dups, bound := topicTotal-n, topicAtKill-committedLines; dups > bound {
		t.Fatalf("topic has %d duplicates, more than the %d records sent after the last flushed offset", dups, bound)
	}
	eventually(t, "the sink to catch up with the topic", func() bool {
		total, _ := countLines(out)
		return total >= linesAtKill+topicTotal-int(sinkCommitted)
	})
	total, _ := countLines(out)
	if dups, bound := total-n, (linesAtKill-int(sinkCommitted))+(topicTotal-n); dups > bound {
		t.Fatalf("sink file has %d duplicates, more than the %d bound", dups, bound)
	}
}

func inspectBroker(t *testing.T, addr string) (records int, committed int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ends kadm.ListedOffsets
	eventually(t, "the broker to answer", func() bool {
		ends, err = adm.ListEndOffsets(ctx, "lines")
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			t.Log(err)
		}
		return err == nil
	})
	ends.Each(func(o kadm.ListedOffset) { records += int(o.Offset) })
	resp, err := adm.FetchOffsets(ctx, "connect-sink")
	if err != nil {
		t.Fatal(err)
	}
	resp.Each(func(o kadm.OffsetResponse) { committed += o.At })
	return records, committed
}

// readTopicToEnd reads every record of a one-partition topic up to its
// current end.
func readTopicToEnd(t *testing.T, addr, topic string) []string {
	t.Helper()
	end, _ := inspectBroker(t, addr)
	return readTopic(t, addr, topic, end)
}
