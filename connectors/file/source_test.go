package file

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// memOffsets is an in-memory connect.SourceTaskContext.
type memOffsets map[string]map[string]any

func (m memOffsets) Offset(partition map[string]any) (map[string]any, error) {
	return m[fmt.Sprint(partition)], nil
}

func (memOffsets) Logger() *slog.Logger { return slog.Default() }

func (memOffsets) TransactionContext() connect.TransactionContext { return nil }

func (m memOffsets) set(partition, offset map[string]any) { m[fmt.Sprint(partition)] = offset }

// fastTask returns a task that waits only briefly when no data is ready,
// so tests that poll until a deadline run quickly.
func fastTask() *SourceTask {
	t := NewSourceTask()
	t.idleWait, t.recheck = 20*time.Millisecond, 2*time.Millisecond
	return t
}

func startSource(t *testing.T, task *SourceTask, offsets memOffsets, config map[string]string) {
	t.Helper()
	if offsets == nil {
		offsets = memOffsets{}
	}
	if err := task.Start(offsets, config); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
}

// pollUntil polls until it has n records, failing after a deadline.
func pollUntil(t *testing.T, task *SourceTask, n int) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records before the deadline, want %d", len(out), n)
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		out = append(out, recs...)
	}
	if len(out) != n {
		t.Fatalf("got %d records, want %d", len(out), n)
	}
	return out
}

// expectNothing polls once (the task waits its idle time) and fails on
// any record.
func expectNothing(t *testing.T, task *SourceTask) {
	t.Helper()
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) != 0 {
		t.Fatalf("Poll = %d records, %v; want none", len(recs), err)
	}
}

type line struct {
	value string
	pos   int64
}

func checkLines(t *testing.T, recs []*connect.SourceRecord, want []line) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("got %d records, want %d", len(recs), len(want))
	}
	for i, r := range recs {
		if r.Value != want[i].value {
			t.Errorf("record %d: value %q, want %q", i, r.Value, want[i].value)
		}
		// Only the last record of each poll carries the position; any
		// record that carries one must carry the right one.
		if r.SourceOffset == nil && i < len(recs)-1 {
			continue
		}
		if got := r.SourceOffset[PositionField]; got != want[i].pos {
			t.Errorf("record %d (%q): position %v (%T), want %d", i, want[i].value, got, got, want[i].pos)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestSourceLineTerminatorsAndPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "a\nbb\r\ncc\rdd\n\n\r\neee\r")
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "topic1"})

	recs := pollUntil(t, task, 6)
	checkLines(t, recs, []line{{"a", 2}, {"bb", 6}, {"cc", 9}, {"dd", 12}, {"", 13}, {"", 15}})
	for i, r := range recs {
		if r.Topic != "topic1" || r.ValueSchema != connect.StringSchema || r.Key != nil || r.KeySchema != nil || r.Partition != nil {
			t.Errorf("record %d: unexpected shape %+v", i, r)
		}
		if r.SourcePartition[FilenameField] != path || len(r.SourcePartition) != 1 || len(r.SourceOffset) > 1 {
			t.Errorf("record %d: partition %v offset %v", i, r.SourcePartition, r.SourceOffset)
		}
		if r.Timestamp.IsZero() || time.Since(r.Timestamp) > time.Minute {
			t.Errorf("record %d: timestamp %v", i, r.Timestamp)
		}
	}

	// "eee\r" ends the data read so far: it may still become "eee\r\n".
	expectNothing(t, task)
	appendFile(t, path, "\nf\rg")
	checkLines(t, pollUntil(t, task, 2), []line{{"eee", 20}, {"f", 22}})
	// "g" has no terminator yet.
	expectNothing(t, task)
	appendFile(t, path, "\r")
	expectNothing(t, task)
	appendFile(t, path, "h\n")
	checkLines(t, pollUntil(t, task, 2), []line{{"g", 24}, {"h", 26}})
}

func TestLineEnd(t *testing.T) {
	cases := []struct {
		data      string
		from      int
		end, next int
	}{
		{"abc", 0, 3, 0},
		{"abc\n", 0, 3, 4},
		{"abc\r\n", 0, 3, 5},
		{"abc\rd", 0, 3, 4},
		{"abc\r", 0, 3, 0},
		{"abc\r", 3, 3, 0},
		{"a\rb\n", 0, 1, 2},
		{"ab\ncd\r", 0, 2, 3},
		{"", 0, 0, 0},
		{"xyz", 3, 3, 0},
		{"xy\rz", 2, 2, 3},
	}
	for _, c := range cases {
		end, next := lineEnd([]byte(c.data), c.from)
		if end != c.end || next != c.next {
			t.Errorf("lineEnd(%q, %d) = %d, %d; want %d, %d", c.data, c.from, end, next, c.end, c.next)
		}
	}
}

func TestSourceBatchSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "line%d\n", i)
	}
	writeFile(t, path, b.String())
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t", BatchSizeConfig: "3"})

	var sizes []int
	total := 0
	deadline := time.Now().Add(10 * time.Second)
	for total < 10 && time.Now().Before(deadline) {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > 3 {
			t.Fatalf("Poll returned %d records with batch.size=3", len(recs))
		}
		if len(recs) > 0 {
			sizes = append(sizes, len(recs))
			for j, r := range recs {
				if want := fmt.Sprintf("line%d", total+j); r.Value != want {
					t.Fatalf("record %d = %q, want %q", total+j, r.Value, want)
				}
			}
		}
		total += len(recs)
	}
	if fmt.Sprint(sizes) != "[3 3 3 1]" {
		t.Errorf("batch sizes %v, want [3 3 3 1]", sizes)
	}
}

func TestSourceBatchSizeAtLeastOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "a\nb\n")
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t", BatchSizeConfig: "0"})
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) != 1 || recs[0].Value != "a" {
		t.Fatalf("Poll = %v, %v; want just a", recs, err)
	}
}

func TestSourceRestartFromStoredPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "one\ntwo\r\nthree\nfour\n")
	offsets := memOffsets{}
	offsets.set(map[string]any{FilenameField: path}, map[string]any{PositionField: int64(9)})
	task := fastTask()
	startSource(t, task, offsets, map[string]string{FileConfig: path, TopicConfig: "t"})
	checkLines(t, pollUntil(t, task, 2), []line{{"three", 15}, {"four", 20}})
	expectNothing(t, task)
}

func TestSourceStoredPositionPastEnd(t *testing.T) {
	// A stored position past the end (a file being rewritten): nothing is
	// emitted until the file grows past it, as Kafka's skip does.
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "ab\n")
	offsets := memOffsets{}
	offsets.set(map[string]any{FilenameField: path}, map[string]any{PositionField: int64(6)})
	task := fastTask()
	startSource(t, task, offsets, map[string]string{FileConfig: path, TopicConfig: "t"})
	expectNothing(t, task)
	appendFile(t, path, "cd\nef\n")
	checkLines(t, pollUntil(t, task, 1), []line{{"ef", 9}})
}

func TestSourceStoredOffsetWithoutPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "ab\n")
	offsets := memOffsets{}
	offsets.set(map[string]any{FilenameField: path}, map[string]any{"other": int64(1)})
	task := fastTask()
	startSource(t, task, offsets, map[string]string{FileConfig: path, TopicConfig: "t"})
	checkLines(t, pollUntil(t, task, 1), []line{{"ab", 3}})
}

func TestSourceBadStoredPositionType(t *testing.T) {
	for _, bad := range []any{"12", float64(12), int32(12), true} {
		offsets := memOffsets{}
		offsets.set(map[string]any{FilenameField: "f.txt"}, map[string]any{PositionField: bad})
		err := NewSourceTask().Start(offsets, map[string]string{FileConfig: "f.txt", TopicConfig: "t"})
		if err == nil || err.Error() != "Offset position is the incorrect type" {
			t.Errorf("position %T: Start error %v", bad, err)
		}
	}
}

// A negative stored position can only come from a corrupt store; the
// task refuses it rather than replay the file from the start.
func TestSourceNegativeStoredPosition(t *testing.T) {
	offsets := memOffsets{}
	offsets.set(map[string]any{FilenameField: "f.txt"}, map[string]any{PositionField: int64(-5)})
	err := NewSourceTask().Start(offsets, map[string]string{FileConfig: "f.txt", TopicConfig: "t"})
	if err == nil || !strings.Contains(err.Error(), "The stored offset position -5 of file f.txt is negative") {
		t.Fatalf("Start error %v", err)
	}
}

func TestSourceStartConfigErrors(t *testing.T) {
	err := NewSourceTask().Start(memOffsets{}, map[string]string{FileConfig: "f"})
	if err == nil || err.Error() != "FileStreamSourceTask config missing topic setting" {
		t.Errorf("missing topic: %v", err)
	}
	err = NewSourceTask().Start(memOffsets{}, map[string]string{FileConfig: "f", TopicConfig: "t", BatchSizeConfig: "x"})
	if err == nil || !strings.HasPrefix(err.Error(), "Invalid FileStreamSourceTask configuration") {
		t.Errorf("bad batch.size: %v", err)
	}
}

func TestSourceFollowsAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "first\n")
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t"})
	checkLines(t, pollUntil(t, task, 1), []line{{"first", 6}})
	expectNothing(t, task)

	appendFile(t, path, "second\nthi")
	checkLines(t, pollUntil(t, task, 1), []line{{"second", 13}})
	expectNothing(t, task)
	appendFile(t, path, "rd\n")
	checkLines(t, pollUntil(t, task, 1), []line{{"third", 19}})
	f := task.in.(*fileInput).f

	// Data appended while Poll waits is returned by that Poll, well
	// before its wait is over.
	task.idleWait = time.Minute
	type result struct {
		recs []*connect.SourceRecord
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		recs, err := task.Poll(context.Background())
		done <- result{recs, err}
	}()
	appendFile(t, path, "fourth\n")
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		checkLines(t, r.recs, []line{{"fourth", 26}})
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Poll took %v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Poll did not return the appended line")
	}
	if task.in.(*fileInput).f != f {
		t.Error("the file was reopened")
	}
}

func TestSourceWaitsForMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.txt")
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t"})
	expectNothing(t, task)
	expectNothing(t, task)
	if !task.warned {
		t.Error("missing file not logged")
	}
	writeFile(t, path, "x\n")
	checkLines(t, pollUntil(t, task, 1), []line{{"x", 2}})
	if task.warned {
		t.Error("warning state not reset after the file was opened")
	}
}

func TestSourcePollReturnsPromptlyWhenCtxDone(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "in.txt")
	writeFile(t, existing, "a\n")
	for _, tc := range []struct {
		name string
		file string
	}{{"at end of file", existing}, {"missing file", filepath.Join(dir, "missing.txt")}} {
		t.Run(tc.name, func(t *testing.T) {
			task := NewSourceTask() // the real one-second wait
			startSource(t, task, nil, map[string]string{FileConfig: tc.file, TopicConfig: "t"})
			if tc.file == existing {
				pollUntil(t, task, 1)
			}

			// Already done: no wait at all.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			start := time.Now()
			if recs, err := task.Poll(ctx); err != nil || len(recs) != 0 {
				t.Fatalf("Poll = %v, %v", recs, err)
			}
			if d := time.Since(start); d > 250*time.Millisecond {
				t.Errorf("Poll with a done ctx took %v", d)
			}

			// Done while waiting.
			ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			start = time.Now()
			if recs, err := task.Poll(ctx); err != nil || len(recs) != 0 {
				t.Fatalf("Poll = %v, %v", recs, err)
			}
			// Well before the one-second wait is over (the 100ms promptness
			// target plus slack for a loaded machine under -race).
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("Poll took %v after its ctx ended at 30ms", d)
			}
		})
	}
}

func TestSourcePollWaitsWithoutData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "")
	task := NewSourceTask()
	task.idleWait = 200 * time.Millisecond
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t"})
	start := time.Now()
	expectNothing(t, task)
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("Poll without data returned after %v, want it to wait", d)
	}
}

func TestSourceLongLinesAndInvalidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	long := strings.Repeat("x", 3*readSize+17)
	writeFile(t, path, long+"\n"+"h\xffi\xc3\n"+"ok\n")
	task := fastTask()
	startSource(t, task, nil, map[string]string{FileConfig: path, TopicConfig: "t"})
	n := int64(len(long) + 1)
	checkLines(t, pollUntil(t, task, 3), []line{{long, n}, {"h\uFFFDi\uFFFD", n + 5}, {"ok", n + 8}})
}

// The conformance check of resuming: read half the records, restart a new
// task at the last offset, expect exactly the rest, with positions that
// are byte positions for any UTF-8 text.
func TestSourceResumeAtPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	terms := []string{"\n", "\r\n", "\r"}
	var all []line
	var b strings.Builder
	for i := range 40 {
		text := fmt.Sprintf("line %d héllo 日本語 🎉", i)
		b.WriteString(text + terms[i%3])
		all = append(all, line{text, int64(b.Len())})
	}
	b.WriteString("unterminated")
	writeFile(t, path, b.String())
	config := map[string]string{FileConfig: path, TopicConfig: "t", BatchSizeConfig: "7"}

	first := fastTask()
	startSource(t, first, nil, config)
	var got []*connect.SourceRecord
	for range 3 {
		got = append(got, pollUntil(t, first, 7)...)
	}
	checkLines(t, got, all[:21])
	first.Stop()

	offsets := memOffsets{}
	last := got[len(got)-1]
	if last.SourceOffset == nil {
		t.Fatal("the last record of a poll carries no offset")
	}
	offsets.set(last.SourcePartition, last.SourceOffset)
	second := fastTask()
	startSource(t, second, offsets, config)
	var rest []*connect.SourceRecord
	for len(rest) < 19 {
		rest = append(rest, pollUntil(t, second, min(7, 19-len(rest)))...)
	}
	checkLines(t, rest, all[21:])
	expectNothing(t, second)
}

func TestSourceStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := startPump(func() (io.ReadCloser, error) { return r, nil }, true)
	saved := openStdin
	openStdin = func() input { return &pumpInput{p: p, stop: true} }
	defer func() { openStdin = saved }()

	// No offsets are read for stdin, whether "file" is empty or absent.
	if err := NewSourceTask().Start(panicOffsets{}, map[string]string{TopicConfig: "t"}); err != nil {
		t.Fatal(err)
	}
	task := fastTask()
	if err := task.Start(panicOffsets{}, map[string]string{FileConfig: "", TopicConfig: "t"}); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	if _, err := io.WriteString(w, "a\r\nb\nc"); err != nil {
		t.Fatal(err)
	}
	recs := pollUntil(t, task, 2)
	for i, want := range []string{"a", "b"} {
		if recs[i].Value != want || recs[i].SourcePartition != nil || recs[i].SourceOffset != nil {
			t.Errorf("record %d: %+v", i, recs[i])
		}
	}

	// A blocked stdin does not block Poll past its ctx.
	task.idleWait = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	if recs, err := task.Poll(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("Poll = %v, %v", recs, err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Poll took %v after its ctx ended at 30ms", d)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		t.Fatal(err)
	}
	task.idleWait = 20 * time.Millisecond
	if recs := pollUntil(t, task, 1); recs[0].Value != "c" {
		t.Errorf("got %q, want c", recs[0].Value)
	}
}

type panicOffsets struct{}

func (panicOffsets) Offset(map[string]any) (map[string]any, error) {
	panic("stdin tasks read no offsets")
}

func (panicOffsets) Logger() *slog.Logger { return slog.Default() }

func (panicOffsets) TransactionContext() connect.TransactionContext { return nil }

func TestSourceNamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(path); err != nil {
		t.Skip(err)
	}
	offsets := memOffsets{}
	offsets.set(map[string]any{FilenameField: path}, map[string]any{PositionField: int64(2)})
	task := fastTask()
	startSource(t, task, offsets, map[string]string{FileConfig: path, TopicConfig: "t"})
	expectNothing(t, task) // opening waits for a writer on the pump's goroutine
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := io.WriteString(w, "a\nbc\n"); err != nil {
		t.Fatal(err)
	}
	checkLines(t, pollUntil(t, task, 1), []line{{"bc", 5}})
}

// A file at its end is read again after recheck, then less and less often
// while it does not grow, up to a second; data makes the next wait short
// again.
func TestFileInputBacksOffWhileIdle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := &fileInput{f: f, recheck: 100 * time.Millisecond}
	done, cancel := context.WithCancel(context.Background())
	cancel() // the waits return at once; what they would wait is kept
	var got []time.Duration
	for range 6 {
		in.Wait(done, time.Hour)
		got = append(got, in.idle)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if err := os.WriteFile(path, []byte("more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, _ := in.Read(make([]byte, 64)); n == 0 {
		t.Fatal("nothing read after the file grew")
	}
	if in.Wait(done, time.Hour); in.idle != 100*time.Millisecond {
		t.Fatalf("after data, the next wait is %v", in.idle)
	}
}
