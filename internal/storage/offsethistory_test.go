package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var historyT0 = time.Date(2026, 7, 10, 14, 30, 0, 0, time.UTC)

// The offsets store records each change in its history once the offsets
// file has it, in the pinned format: a reset as a null offset, numbers
// typed as Java reads them.
func TestOffsetHistoryGolden(t *testing.T) {
	dir := t.TempDir()
	s := openOffsets(t, filepath.Join(dir, "connect.offsets"))
	h, err := OpenOffsetHistory(filepath.Join(dir, "connect.offsets.history"), 100)
	if err != nil {
		t.Fatal(err)
	}
	s.KeepHistory(h)
	tick := historyT0
	s.now = func() time.Time { tick = tick.Add(time.Minute); return tick }
	part := map[string]any{"filename": "in.txt"}
	mustPut(t, s, "src", PartitionOffset{Partition: part, Offset: map[string]any{"position": int64(90)}})
	mustPut(t, s, "src", PartitionOffset{Partition: part, Offset: map[string]any{"position": int64(108), "ratio": 0.5, "whole": 1.0}})
	mustPut(t, s, "other", PartitionOffset{Partition: map[string]any{"table": "a"}, Offset: map[string]any{"id": int64(7)}})
	mustPut(t, s, "src", PartitionOffset{Partition: part})                            // a reset
	mustPut(t, s, "src", PartitionOffset{Partition: map[string]any{"filename": "x"}}) // nothing to remove: not recorded
	checkGolden(t, "golden_offsets_history.jsonl", mustReadFile(t, h.Path()))

	again, err := OpenOffsetHistory(h.Path(), 100)
	if err != nil {
		t.Fatal(err)
	}
	got, truncated, err := again.Read("src")
	if err != nil || truncated {
		t.Fatalf("Read: %v, truncated %v", err, truncated)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, fmt.Sprintf("%s %v %v", c.Time.UTC().Format("15:04"), c.Partition, c.Offset))
	}
	want := "[14:31 map[filename:in.txt] map[position:90] 14:32 map[filename:in.txt] map[position:108 ratio:0.5 whole:1] 14:34 map[filename:in.txt] map[]]"
	if fmt.Sprint(lines) != want {
		t.Errorf("Read:\n%v\nwant\n%s", lines, want)
	}
	if _, ok := got[1].Offset["whole"].(float64); !ok {
		t.Errorf("1.0 read back as %T, want a double", got[1].Offset["whole"])
	}
	if got[2].Offset != nil {
		t.Errorf("the reset read back as %v", got[2].Offset)
	}
}

// Past its bound the history drops its oldest half, says so, and stays
// bounded.
func TestOffsetHistoryBounded(t *testing.T) {
	h, err := OpenOffsetHistory(filepath.Join(t.TempDir(), "h"), 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		c := OffsetCommit{Connector: "src", Partition: map[string]any{"p": int64(0)}, Offset: map[string]any{"n": int64(i)}}
		if err := h.Append(historyT0.Add(time.Duration(i)*time.Second), []OffsetCommit{c}); err != nil {
			t.Fatal(err)
		}
	}
	got, truncated, err := h.Read("src")
	if err != nil || !truncated {
		t.Fatalf("Read: %v, truncated %v", err, truncated)
	}
	if len(got) > 10 || got[len(got)-1].Offset["n"] != int64(24) {
		t.Fatalf("kept %d commits, the last %v", len(got), got[len(got)-1].Offset)
	}
	data := mustReadFile(t, h.Path())
	if !strings.HasPrefix(string(data), `{"format":"connectd.offsets.history","version":1,"truncated":true}`) {
		t.Errorf("header after truncation: %.80s", data)
	}
}

// A last line cut short by a crash is dropped; any other damage stops the
// worker, naming the file.
func TestOffsetHistoryDamage(t *testing.T) {
	dir := t.TempDir()
	header := `{"format":"connectd.offsets.history","version":1,"truncated":false}` + "\n"
	line := `{"time":1720621800000,"connector":"src","partition":{"f":"a"},"offset":{"p":1}}` + "\n"
	torn := filepath.Join(dir, "torn")
	if err := os.WriteFile(torn, []byte(header+line+line[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := OpenOffsetHistory(torn, 100)
	if err != nil {
		t.Fatalf("a torn last line: %v", err)
	}
	if got, _, err := h.Read("src"); err != nil || len(got) != 1 {
		t.Fatalf("after a torn line: %v, %v", got, err)
	}
	if data := string(mustReadFile(t, torn)); data != header+line {
		t.Errorf("the torn line was not dropped: %q", data)
	}
	for name, content := range map[string]string{
		"empty":          "",
		"not json":       header + "{nope}\n",
		"wrong format":   `{"format":"connectd.offsets","version":1,"truncated":false}` + "\n",
		"future version": `{"format":"connectd.offsets.history","version":2,"truncated":false}` + "\n",
		"unknown field":  header + `{"time":1,"connector":"c","partition":{},"offset":null,"x":1}` + "\n",
		"bad time":       header + `{"time":"noon","connector":"c","partition":{},"offset":null}` + "\n",
		"bad offset":     header + `{"time":1,"connector":"c","partition":{},"offset":[1]}` + "\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenOffsetHistory(path, 100)
		var ce *CorruptFileError
		if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(err.Error(), "offsets history "+path+" is corrupted") {
			t.Errorf("%s: %v, want a CorruptFileError naming %s", name, err, path)
		}
	}
}

// FuzzOffsetHistory: whatever the file holds, opening it either fails
// with an error naming it or reads commits that read back the same once
// written again.
func FuzzOffsetHistory(f *testing.F) {
	header := `{"format":"connectd.offsets.history","version":1,"truncated":false}` + "\n"
	f.Add(header + `{"time":1720621800000,"connector":"src","partition":{"f":"a"},"offset":{"p":1,"d":1.0}}` + "\n")
	f.Add(header + `{"time":1,"connector":"c","partition":{},"offset":null}` + "\n{\"ti")
	f.Add("")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "h")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		commits, truncated, _, err := parseHistory([]byte(content))
		if err != nil {
			if _, oerr := OpenOffsetHistory(path, 1<<20); oerr == nil || !strings.Contains(oerr.Error(), path) {
				t.Fatalf("parse fails (%v) but open says %v", err, oerr)
			}
			return
		}
		h := &OffsetHistory{path: filepath.Join(dir, "again"), max: 1 << 20, truncated: truncated}
		if err := h.rewrite(commits); err != nil {
			t.Fatal(err)
		}
		again, truncated2, _, err := parseHistory(mustReadFile(t, h.path))
		if err != nil || truncated2 != truncated || fmt.Sprint(again) != fmt.Sprint(commits) {
			t.Fatalf("%q read %v; written again it reads %v, %v", content, commits, again, err)
		}
	})
}
