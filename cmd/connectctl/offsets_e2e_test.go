package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
)

// The seed's source flows, one command each: get, set (stopping and
// resuming the connector), undo, reset, with the questions and refusals
// around stopping a running connector.
func TestSourceOffsetsFlow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "orders.txt")
	writeLines(t, in, lineRange(1, 10)...) // 9 bytes a line
	conf := filepath.Join(dir, "orders-source.properties")
	os.WriteFile(conf, []byte("name=orders-source\nconnector.class=FileStreamSource\ntopic=orders\nfile="+in+"\n"), 0o644)
	c.ok("apply", "-f", conf)
	topic := newConsumer(t, w.Broker.Addr(), "orders")
	topic.until(10)
	part := fmt.Sprintf(`{"filename":%q}`, in)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":90`) })

	r := c.ok("offsets", "get", "orders-source")
	if want := "PARTITION" + strings.Repeat(" ", len(part)-len("PARTITION")+3) + "OFFSET\n" + part + "   {\"position\":90}\n"; r.stdout != want {
		t.Errorf("offsets get:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = c.ok("offsets", "get", "orders-source", "-o", "yaml")
	if want := "offsets:\n  - partition:\n      filename: " + in + "\n    offset:\n      position: 90\n"; r.stdout != want {
		t.Errorf("offsets get -o yaml:\n%s\nwant:\n%s", r.stdout, want)
	}

	// Not on a terminal, a running connector is not stopped without --yes.
	set := []string{"offsets", "set", "orders-source", "--partition", part, "--offset", `{"position":45}`}
	r = c.fail(set...)
	mustContain(t, "refusal", r.stderr, "Error: connector orders-source is RUNNING; its offsets can only change while it is stopped",
		"hint: pass --yes to let connectctl stop it (and resume it afterwards), or stop it first: connectctl stop orders-source")
	// On a terminal it asks; "n" changes nothing.
	r = c.terminal("n\n", set...)
	if r.code != 1 || !strings.Contains(r.stderr, "Stop it, change its offsets and resume it afterwards? [y/N]") || !strings.Contains(r.stderr, "aborted: nothing changed") {
		t.Errorf("answering no:\n%s", r)
	}
	if st := state(rc, "orders-source"); st != "RUNNING/RUNNING" {
		t.Fatalf("after refusals the connector is %s", st)
	}
	// --dry-run shows the diff and changes nothing.
	r = c.ok(append(set, "--dry-run")...)
	wantDiff := "--- offsets of orders-source (before)\n+++ offsets of orders-source (after)\n" +
		"- " + part + ` {"position":90}` + "\n" + "+ " + part + ` {"position":45}` + "\n"
	mustContain(t, "dry run", r.stdout, wantDiff, "connector orders-source is RUNNING: it would be stopped first, and resumed afterwards", "dry run: nothing changed")
	if !strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":90`) {
		t.Fatal("dry run changed the offsets")
	}

	// "y" on a terminal: stop, change, verify, resume; lines 6-10 again.
	r = c.terminal("y\n", set...)
	if r.code != 0 {
		t.Fatalf("set:\n%s", r)
	}
	mustContain(t, "set", r.stdout, wantDiff, "connector orders-source stopped\n",
		"offsets of orders-source changed (1 partition) and verified\n",
		"previous offsets saved; put them back with: connectctl offsets undo orders-source\n",
		"connector orders-source resumed\n")
	if got := topic.until(15); !slices.Equal(got[10:], lineRange(6, 10)) {
		t.Fatalf("after set to 45 the source emitted %v", got[10:])
	}
	eventually(t, "offset 90 again", func() bool { return strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":90`) })

	// Skip a poison record, from a file, with --yes.
	writeLines(t, in, "poison!!", "line-012")
	file := filepath.Join(dir, "skip.json")
	os.WriteFile(file, []byte(`{"offsets":[{"partition":`+part+`,"offset":{"position":99}}]}`), 0o644)
	topic.until(17) // the source reads both lines at once; skip from here
	eventually(t, "offset 108", func() bool { return strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":108`) })
	r = c.ok("offsets", "set", "orders-source", "-f", file, "--yes")
	mustContain(t, "set -f", r.stdout, "- "+part+` {"position":108}`, "+ "+part+` {"position":99}`)
	if got := topic.until(18); got[17] != "line-012" {
		t.Fatalf("after moving to 99 the source emitted %v", got[17:])
	}

	// History, then undo puts back the offsets before the last change.
	eventually(t, "offset 108 again", func() bool { return strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":108`) })
	r = c.ok("offsets", "history", "orders-source")
	if n := strings.Count(r.stdout, "\n"); n != 3 || !strings.Contains(r.stdout, "set") {
		t.Errorf("history:\n%s", r.stdout)
	}
	// On a stopped connector: no question, and it stays stopped.
	c.ok("stop", "orders-source")
	r = c.ok("offsets", "set", "orders-source", "--partition", part, "--offset", `{"position":9}`)
	if strings.Contains(r.stdout, "resumed") || strings.Contains(r.stdout, "stopped\n") {
		t.Errorf("set on a stopped connector:\n%s", r.stdout)
	}
	r = c.ok("offsets", "undo", "orders-source")
	mustContain(t, "undo", r.stdout, "going back to the offsets of ", "- "+part+` {"position":9}`, "+ "+part+` {"position":108}`, "and verified")
	if strings.Contains(r.stdout, "resumed") {
		t.Errorf("undo resumed a connector that was stopped:\n%s", r.stdout)
	}
	if st := state(rc, "orders-source"); st != "STOPPED" {
		t.Errorf("after undo on a stopped connector: %s", st)
	}
	// Undo again goes one more change back: before the -f set, 108
	// (already there), then before the first set, 90.
	r = c.ok("offsets", "undo", "orders-source", "-o", "json")
	var res changeResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Changed != 0 || res.Operation != "undo" {
		t.Errorf("second undo (to 108, already there): %v\n%s", err, r.stdout)
	}
	r = c.ok("offsets", "undo", "orders-source")
	mustContain(t, "third undo", r.stdout, "- "+part+` {"position":108}`, "+ "+part+` {"position":90}`)
	r = c.fail("offsets", "undo", "orders-source")
	mustContain(t, "fourth undo", r.stderr, "Error: no offsets of connector orders-source on "+url+" to go back to")

	// Reset with --resume: the source reads the file from the start.
	r = c.ok("offsets", "reset", "orders-source", "--resume")
	mustContain(t, "reset", r.stdout, "- "+part+` {"position":90}`, "offsets of orders-source changed (1 partition) and verified", "connector orders-source resumed")
	if got := topic.until(30); !slices.Equal(got[18:], append(lineRange(1, 10), "poison!!", "line-012")) {
		t.Fatalf("after reset the source emitted %v", got[18:])
	}
	// The history holds every state replaced, undone ones marked.
	r = c.ok("offsets", "history", "orders-source", "-o", "json")
	var hist []struct {
		Operation string                   `json:"operation"`
		Offsets   []client.ConnectorOffset `json:"offsets"`
		Undone    bool                     `json:"undone"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 4 ||
		hist[0].Operation != "reset" || hist[0].Undone || !hist[1].Undone || !hist[2].Undone || !hist[3].Undone {
		t.Errorf("history -o json: %v\n%s", err, r.stdout)
	}
	// Nothing to do is said so, and changes nothing.
	eventually(t, "offset 108 after reset", func() bool { return strings.Contains(offsetsJSON(t, rc, "orders-source"), `"position":108`) })
	r = c.ok("offsets", "set", "orders-source", "--partition", part, "--offset", `{"position":108}`)
	if r.stdout != "the offsets of orders-source are already as asked: nothing to change\n" {
		t.Errorf("no-op set:\n%s", r)
	}
}

// A sink moved to a time: the offsets come from Kafka's ListOffsets by
// timestamp, per partition, with the end offset where nothing is that
// recent; then the flag forms (--partition all, latest, null) and reset.
func TestSinkOffsetsToDatetime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	bootstrap := w.Broker.Addr()
	c := newCLI(t, url)
	rc := restClient(t, url)
	const topic = "orders.placed"
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 4, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	// Partition p holds 10 records, one every p+1 minutes from base;
	// partition 3 stays empty.
	base := time.Date(2026, 7, 10, 14, 0, 0, 0, time.UTC)
	for p := range 3 {
		for i := range 10 {
			r := &kgo.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "p%d-%d", p, i),
				Timestamp: base.Add(time.Duration(i*(p+1)) * time.Minute)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(dir, "out.txt")
	sink, _ := json.Marshal(map[string]any{"name": "orders-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": topic}})
	conf := filepath.Join(dir, "orders-sink.json")
	os.WriteFile(conf, sink, 0o644)
	c.ok("apply", "-f", conf)
	sinkOffsets := func(offsets ...int) string {
		var b strings.Builder
		b.WriteString(`{"offsets":[`)
		for p, o := range offsets {
			if o < 0 {
				continue
			}
			if b.Len() > len(`{"offsets":[`) {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"partition":{"kafka_partition":%d,"kafka_topic":%q},"offset":{"kafka_offset":%d}}`, p, topic, o)
		}
		return b.String() + "]}"
	}
	eventually(t, "the sink at the end", func() bool { return offsetsJSON(t, rc, "orders-sink") == sinkOffsets(10, 10, 10) })
	eventually(t, "30 lines written", func() bool { return len(readLines(out)) == 30 })

	// 14:12 is after all of partition 0 (records at 14:00-14:09: its end,
	// 10), the time of record 6 of partition 1 (every 2 minutes) and of
	// record 4 of partition 2 (every 3 minutes); partition 3 is empty (its
	// end, 0). 16:12+02:00 is the same instant.
	r := c.fail("offsets", "set", "orders-sink", "--to-datetime", "2026-07-10T14:12:00Z", "--yes")
	mustContain(t, "no bootstrap", r.stderr, "Error: this needs Kafka's address: --bootstrap-server host:port", "hint: pass --bootstrap-server")
	r = c.ok("offsets", "set", "orders-sink", "--to-datetime", "2026-07-10T16:12:00+02:00", "--bootstrap-server", bootstrap, "--yes")
	mustContain(t, "to-datetime", r.stdout,
		"- {\"kafka_partition\":1,\"kafka_topic\":\"orders.placed\"} {\"kafka_offset\":10}\n+ {\"kafka_partition\":1,\"kafka_topic\":\"orders.placed\"} {\"kafka_offset\":6}\n",
		"- {\"kafka_partition\":2,\"kafka_topic\":\"orders.placed\"} {\"kafka_offset\":10}\n+ {\"kafka_partition\":2,\"kafka_topic\":\"orders.placed\"} {\"kafka_offset\":4}\n",
		"+ {\"kafka_partition\":3,\"kafka_topic\":\"orders.placed\"} {\"kafka_offset\":0}\n",
		"  (1 partition unchanged)\n", "changed (3 partitions) and verified", "connector orders-sink resumed")
	// Resumed, the sink writes again exactly what came at or after 14:12.
	eventually(t, "10 more lines", func() bool { return len(readLines(out)) == 40 })
	got := readLines(out)[30:]
	slices.Sort(got)
	want := []string{"p1-6", "p1-7", "p1-8", "p1-9", "p2-4", "p2-5", "p2-6", "p2-7", "p2-8", "p2-9"}
	if !slices.Equal(got, want) {
		t.Fatalf("after --to-datetime the sink wrote %v, want %v", got, want)
	}
	eventually(t, "the sink at the end again", func() bool { return offsetsJSON(t, rc, "orders-sink") == sinkOffsets(10, 10, 10, 0) })

	// A time before everything: 0 everywhere.
	c.ok("stop", "orders-sink")
	r = c.ok("offsets", "set", "orders-sink", "--to-datetime", "2026-07-10T13:00:00Z", "--bootstrap-server", bootstrap, "--topic", topic, "--partition", "1")
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(10, 0, 10, 0) {
		t.Errorf("after --to-datetime on partition 1: %s\n%s", st, r)
	}
	// The flag forms: every partition known from the offsets; latest
	// from Kafka; null removes one partition's offset.
	c.ok("offsets", "set", "orders-sink", "--topic", topic, "--partition", "all", "--offset", "5")
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(5, 5, 5, 5) {
		t.Errorf("after --partition all --offset 5: %s", st)
	}
	c.ok("offsets", "set", "orders-sink", "--topic", topic, "--partition", "all", "--offset", "latest", "--bootstrap-server", bootstrap)
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(10, 10, 10, 0) {
		t.Errorf("after --offset latest: %s", st)
	}
	c.ok("offsets", "set", "orders-sink", "--topic", topic, "--partition", "3", "--offset", "null")
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(10, 10, 10) {
		t.Errorf("after --offset null: %s", st)
	}
	// The seed's short form in a file is Kafka Connect's.
	file := filepath.Join(dir, "zero.json")
	os.WriteFile(file, []byte(`{"offsets":[{"partition":{"topic":"orders.placed","partition":0},"offset":{"offset":0}},{"partition":{"topic":"orders.placed","partition":"2"},"offset":{"offset":"1"}}]}`), 0o644)
	c.ok("offsets", "set", "orders-sink", "-f", file)
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(0, 10, 1) {
		t.Errorf("after the short form: %s", st)
	}
	r = c.fail("offsets", "set", "orders-sink", "--partition", `{"filename":"x"}`, "--offset", `{"position":1}`)
	mustContain(t, "source flags on a sink", r.stderr, "Error: a sink connector's offset needs --topic T and --partition P|all")
	r = c.ok("offsets", "reset", "orders-sink")
	mustContain(t, "reset", r.stdout, "changed (3 partitions) and verified")
	if st := offsetsJSON(t, rc, "orders-sink"); st != `{"offsets":[]}` {
		t.Errorf("after reset: %s", st)
	}
	if st := state(rc, "orders-sink"); st != "STOPPED" {
		t.Errorf("a stopped sink after changes: %s", st)
	}
	r = c.ok("offsets", "undo", "orders-sink")
	if st := offsetsJSON(t, rc, "orders-sink"); st != sinkOffsets(0, 10, 1) {
		t.Errorf("after undoing the reset: %s\n%s", st, r)
	}
}
