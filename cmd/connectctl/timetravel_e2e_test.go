package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/embedded"
)

// Offsets time travel on a distributed worker: the offsets topic's
// records list a source connector's commits over time, --to-datetime
// between two commits lands on the earlier one, a time before the first
// commit removes the offset, and after compaction a time whose commit is
// gone is refused with the earliest point known.
func TestSourceTimeTravel(t *testing.T) {
	t.Parallel()
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(t.TempDir(), "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	bootstrap := b.Addr()
	d := distributed(t, bootstrap)
	url := "http://" + d.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	k := []string{"--bootstrap-server", bootstrap}
	in := filepath.Join(t.TempDir(), "in.txt")
	part := fmt.Sprintf(`{"filename":%q}`, in)

	before := time.Now()
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n"))
	topic := newConsumer(t, bootstrap, "lines")
	topic.until(10)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })
	between := time.Now() // after the commit of 90, before that of 108
	writeLines(t, in, lineRange(11, 12)...)
	topic.until(12)
	eventually(t, "offset 108", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":108`) })

	r := c.ok(append([]string{"offsets", "history", "src", "--from-topic"}, k...)...)
	mustContain(t, "history", r.stdout, "COMMITTED", part, `{"position":90}`, `{"position":108}`)
	if strings.Index(r.stdout, `{"position":90}`) > strings.Index(r.stdout, `{"position":108}`) {
		t.Errorf("history not oldest first:\n%s", r.stdout)
	}

	// Between the two commits: back to 90, and lines 11 and 12 again.
	at := between.UTC().Format(time.RFC3339Nano)
	r = c.ok(append([]string{"offsets", "set", "src", "--to-datetime", at, "--yes"}, k...)...)
	mustContain(t, "to-datetime", r.stdout, "offsets of src as committed at or before",
		"- "+part+` {"position":108}`, "+ "+part+` {"position":90}`, "changed (1 partition) and verified", "connector src resumed")
	if got := topic.until(14); !slices.Equal(got[12:], lineRange(11, 12)) {
		t.Fatalf("after going back to 90 the source emitted %v", got[12:])
	}
	eventually(t, "offset 108 again", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":108`) })

	// Before the first commit the connector had no offset.
	first := append([]string{"offsets", "set", "src", "--to-datetime", before.UTC().Format(time.RFC3339Nano), "--dry-run"}, k...)
	r = c.ok(first...)
	mustContain(t, "before the first commit", r.stdout, "- "+part+` {"position":108}`, "dry run: nothing changed")
	if strings.Contains(r.stdout, "+ "+part) {
		t.Errorf("before the first commit the partition should lose its offset:\n%s", r.stdout)
	}

	// Compaction keeps the latest commit only: before it is unknown.
	b.Compact()
	r = c.fail(first...)
	mustContain(t, "compacted", r.stderr, "connect-offsets has been compacted, and where connector src was at",
		part+": the earliest commit kept is of", "hint: pick a time after those")
	r = c.ok(append([]string{"offsets", "history", "src", "--from-topic"}, k...)...)
	mustContain(t, "history after compaction", r.stdout, part, `{"position":108}`, "connect-offsets has been compacted")
	// A sink has no source offsets there.
	r = c.fail(append([]string{"offsets", "history", "nope", "--from-topic"}, k...)...)
	mustContain(t, "unknown", r.stderr, "connect-offsets holds no offsets of connector nope")
}

// On a standalone worker the same commands read the history the worker
// keeps beside its offsets file, with no Kafka address given.
func TestSourceTimeTravelStandalone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "in.txt")
	part := fmt.Sprintf(`{"filename":%q}`, in)
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n"))
	topic := newConsumer(t, w.Broker.Addr(), "lines")
	topic.until(10)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })
	between := time.Now()
	writeLines(t, in, lineRange(11, 12)...)
	topic.until(12)
	eventually(t, "offset 108", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":108`) })

	r := c.ok("offsets", "history", "src", "--from-topic", "-o", "json")
	mustContain(t, "history", r.stdout, `"source": "the worker's offsets history"`, `"position": 90`, `"position": 108`)
	r = c.ok("offsets", "set", "src", "--to-datetime", between.UTC().Format(time.RFC3339Nano), "--yes")
	mustContain(t, "to-datetime", r.stdout, "(from the worker's offsets history)", "+ "+part+` {"position":90}`, "connector src resumed")
	if got := topic.until(14); !slices.Equal(got[12:], lineRange(11, 12)) {
		t.Fatalf("after going back to 90 the source emitted %v", got[12:])
	}
	// The history is a file beside the offsets file.
	if _, err := os.Stat(filepath.Join(dir, "connect.offsets.history")); err != nil {
		t.Fatal(err)
	}
}
