package directoffsets

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/storage"
)

const (
	offsetsTopic = "connect-offsets"
	statusTopic  = "connect-status"
	numParts     = 25
)

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newCluster(t testing.TB) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.SeedTopics(numParts, offsetsTopic),
		kfake.SeedTopics(5, statusTopic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func cfgFor(c *kfake.Cluster) Config {
	return Config{Seeds: c.ListenAddrs(), Topic: offsetsTopic, Logger: slog.New(slog.DiscardHandler)}
}

type rec struct {
	key, value string // value "" with tomb: a tombstone
	tomb       bool
}

// produceJava writes records the way a Java worker does: keyed, with the
// Java default (murmur2) partitioner, one at a time so that timestamps and
// order are as listed.
func produceJava(t testing.TB, c *kfake.Cluster, topic string, recs ...rec) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, r := range recs {
		kr := &kgo.Record{Topic: topic, Key: []byte(r.key)}
		if !r.tomb {
			kr.Value = []byte(r.value)
		}
		if err := cl.ProduceSync(testCtx(t), kr).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct millisecond timestamps
	}
}

// readAll returns every record of the topic, read with a plain client.
func readAll(t testing.TB, c *kfake.Cluster, topic string) []*kgo.Record {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var out []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return out
}

// The multi-key partition {"table":"orders","protocol":"1"}: Java's
// HashMap order and the other one, which a connector may well write.
func multiKeyKeys(t testing.TB) (javaOrder, otherOrder string) {
	t.Helper()
	k, err := storage.EncodeOffsetKey("src", map[string]any{"table": "orders", "protocol": "1"})
	if err != nil {
		t.Fatal(err)
	}
	javaOrder = string(k)
	a := `["src",{"table":"orders","protocol":"1"}]`
	b := `["src",{"protocol":"1","table":"orders"}]`
	switch javaOrder {
	case a:
		return a, b
	case b:
		return b, a
	}
	t.Fatalf("unexpected Java-order key %s", javaOrder)
	return "", ""
}

// seed writes a typical topic: updates, a multi-key partition in non-Java
// field order, a tombstoned partition, other connectors and keys Kafka
// skips.
func seed(t testing.TB, c *kfake.Cluster) (multiKey string) {
	t.Helper()
	_, other := multiKeyKeys(t)
	produceJava(t, c, offsetsTopic,
		rec{key: `["src",{"filename":"a.txt"}]`, value: `{"position":1}`},
		rec{key: other, value: `{"incrementing":7}`},
		rec{key: `["src",{"filename":"b.txt"}]`, value: `{"position":5}`},
		rec{key: `["src",{"filename":"a.txt"}]`, value: `{"position":2}`},
		rec{key: `["src",{"filename":"b.txt"}]`, tomb: true},
		rec{key: `["other",{"filename":"a.txt"}]`, value: `{"position":99}`},
		rec{key: `["src",null]`, value: `{"position":3}`},
		rec{key: `not json`, value: `{"position":4}`},
		rec{key: `["src",{"filename":"bad.txt"}]`, value: `[1,2]`},
		rec{key: `["src-2",{"filename":"a.txt"}]`, value: `{"position":8}`},
	)
	return other
}

func entryKeys(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Key)
	}
	return out
}

func TestRead(t *testing.T) {
	c := newCluster(t)
	multiKey := seed(t, c)
	got, err := Read(testCtx(t), cfgFor(c), "src")
	if err != nil {
		t.Fatal(err)
	}
	// Canonical order: fields sorted, so "filename" < "protocol".
	want := []Entry{
		{Partition: map[string]any{"filename": "a.txt"}, Offset: map[string]any{"position": int64(2)}, Key: []byte(`["src",{"filename":"a.txt"}]`)},
		{Partition: map[string]any{"table": "orders", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(7)}, Key: []byte(multiKey)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read:\n got %v\nwant %v", got, want)
	}

	got, err = Read(testCtx(t), cfgFor(c), "nobody")
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Read(unknown connector) = %v, %v; want an empty slice", got, err)
	}
}

func TestWrite(t *testing.T) {
	c := newCluster(t)
	multiKey := seed(t, c)
	javaMulti, _ := multiKeyKeys(t)
	before := len(readAll(t, c, offsetsTopic))

	entries := []storage.PartitionOffset{
		// Existing, multi-key: must reuse the original non-Java bytes.
		{Partition: map[string]any{"protocol": "1", "table": "orders"}, Offset: map[string]any{"incrementing": 8, "timestamp": int64(1717171717123)}},
		// New, multi-key: Java HashMap order.
		{Partition: map[string]any{"table": "payments", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(1)}},
		// Existing single-key partition, deleted.
		{Partition: map[string]any{"filename": "a.txt"}, Offset: nil},
		// Previously tombstoned: new offset under its old key.
		{Partition: map[string]any{"filename": "b.txt"}, Offset: map[string]any{"position": 50.5}},
	}
	if err := Write(testCtx(t), cfgFor(c), "src", entries); err != nil {
		t.Fatal(err)
	}

	newPayments, err := storage.EncodeOffsetKey("src", map[string]any{"table": "payments", "protocol": "1"})
	if err != nil {
		t.Fatal(err)
	}
	// Java's order depends on the field names only.
	if want := strings.Replace(javaMulti, "orders", "payments", 1); string(newPayments) != want {
		t.Fatalf("new key %s is not in Java order %s", newPayments, want)
	}
	ordersValue, _ := javajson.Marshal(map[string]any{"incrementing": 8, "timestamp": int64(1717171717123)})
	wantNew := []struct{ key, value string }{
		{multiKey, string(ordersValue)},
		{string(newPayments), `{"incrementing":1}`},
		{`["src",{"filename":"a.txt"}]`, ""},
		{`["src",{"filename":"b.txt"}]`, `{"position":50.5}`},
	}

	all := readAll(t, c, offsetsTopic)
	var written []*kgo.Record
	if len(all) != before+len(wantNew) {
		t.Fatalf("topic has %d records, want %d", len(all), before+len(wantNew))
	}
	for _, w := range wantNew {
		var found *kgo.Record
		for _, r := range all {
			if string(r.Key) == w.key && ((w.value == "" && r.Value == nil) || string(r.Value) == w.value) {
				found = r
			}
		}
		if found == nil {
			t.Fatalf("no record %s → %q on the topic", w.key, w.value)
		}
		written = append(written, found)
		if p := storage.PartitionFor(found.Key, numParts); found.Partition != p {
			t.Fatalf("record %s is in partition %d, Java's partitioner picks %d", found.Key, found.Partition, p)
		}
	}
	// The update compacts the original: same Kafka partition.
	for _, r := range all {
		if string(r.Key) == multiKey && r.Partition != written[0].Partition {
			t.Fatalf("update went to partition %d, original is in %d", written[0].Partition, r.Partition)
		}
	}

	got, err := Read(testCtx(t), cfgFor(c), "src")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Partition: map[string]any{"filename": "b.txt"}, Offset: map[string]any{"position": 50.5}, Key: []byte(`["src",{"filename":"b.txt"}]`)},
		{Partition: map[string]any{"table": "orders", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(8), "timestamp": int64(1717171717123)}, Key: []byte(multiKey)},
		{Partition: map[string]any{"table": "payments", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(1)}, Key: newPayments},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read after Write:\n got %v\nwant %v", got, want)
	}

	// Other connectors are untouched.
	other, err := Read(testCtx(t), cfgFor(c), "other")
	if err != nil || len(other) != 1 || other[0].Offset["position"] != int64(99) {
		t.Fatalf("Read(other) = %v, %v", other, err)
	}
}

// Every murmur2 partition choice matches storage.PartitionFor, over many
// keys, for new partitions written in Java order.
func TestWritePartitioning(t *testing.T) {
	c := newCluster(t)
	var entries []storage.PartitionOffset
	for i := range 200 {
		entries = append(entries, storage.PartitionOffset{
			Partition: map[string]any{"filename": strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "-" + string(rune('0'+i%10)), "n": int64(i)},
			Offset:    map[string]any{"position": int64(i)},
		})
	}
	if err := Write(testCtx(t), cfgFor(c), "many", entries); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, c, offsetsTopic)
	if len(all) != len(entries) {
		t.Fatalf("%d records, want %d", len(all), len(entries))
	}
	seen := map[int32]bool{}
	for _, r := range all {
		if p := storage.PartitionFor(r.Key, numParts); r.Partition != p {
			t.Fatalf("record %s is in partition %d, Java's partitioner picks %d", r.Key, r.Partition, p)
		}
		seen[r.Partition] = true
	}
	if len(seen) < 10 {
		t.Fatalf("200 keys landed in only %d partitions", len(seen))
	}
	// The spec's worked example (§4.2): partition 10 of 25.
	if p := storage.PartitionFor([]byte(`["local-file-source",{"filename":"test.txt"}]`), numParts); p != 10 {
		t.Fatalf("PartitionFor(spec example) = %d, want 10", p)
	}
	got, err := Read(testCtx(t), cfgFor(c), "many")
	if err != nil || len(got) != len(entries) {
		t.Fatalf("Read = %d entries, %v", len(got), err)
	}
}

// A partition live under two key spellings: Write updates both, Read
// reports the latest, Reset tombstones both.
func TestTwoSpellings(t *testing.T) {
	c := newCluster(t)
	javaKey, otherKey := multiKeyKeys(t)
	produceJava(t, c, offsetsTopic,
		rec{key: otherKey, value: `{"incrementing":1}`},
		rec{key: javaKey, value: `{"incrementing":2}`},
	)
	got, err := Read(testCtx(t), cfgFor(c), "src")
	if err != nil || len(got) != 1 || string(got[0].Key) != javaKey || got[0].Offset["incrementing"] != int64(2) {
		t.Fatalf("Read = %v, %v; want the latest spelling", got, err)
	}
	if err := Write(testCtx(t), cfgFor(c), "src", []storage.PartitionOffset{
		{Partition: map[string]any{"table": "orders", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(3)}},
	}); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, c, offsetsTopic)
	latest := map[string]string{}
	for _, r := range all {
		latest[string(r.Key)] = string(r.Value)
	}
	if latest[javaKey] != `{"incrementing":3}` || latest[otherKey] != `{"incrementing":3}` {
		t.Fatalf("after Write: %v", latest)
	}
	n, err := Reset(testCtx(t), cfgFor(c), "src")
	if err != nil || n != 1 {
		t.Fatalf("Reset = %d, %v; want 1 partition", n, err)
	}
	all = readAll(t, c, offsetsTopic)
	tombs := map[string]bool{}
	for _, r := range all {
		tombs[string(r.Key)] = r.Value == nil
	}
	if !tombs[javaKey] || !tombs[otherKey] {
		t.Fatalf("after Reset, latest record is a tombstone: %v", tombs)
	}
}

func TestReset(t *testing.T) {
	c := newCluster(t)
	multiKey := seed(t, c)
	before := readAll(t, c, offsetsTopic)
	n, err := Reset(testCtx(t), cfgFor(c), "src")
	if err != nil {
		t.Fatal(err)
	}
	// a.txt, the multi-key partition and bad.txt (a value Java cannot
	// use, but a live record all the same); b.txt is already gone.
	if n != 3 {
		t.Fatalf("Reset = %d, want 3", n)
	}
	after := readAll(t, c, offsetsTopic)
	if len(after) != len(before)+3 {
		t.Fatalf("%d records written, want 3", len(after)-len(before))
	}
	origPart := map[string]int32{}
	for _, r := range before {
		origPart[string(r.Key)] = r.Partition
	}
	var tombstoned []string
	for _, r := range after {
		if r.Offset < endOf(before, r.Partition) {
			continue
		}
		if r.Value != nil {
			t.Fatalf("Reset wrote a value: %s → %s", r.Key, r.Value)
		}
		if p, ok := origPart[string(r.Key)]; !ok || p != r.Partition {
			t.Fatalf("tombstone %s in partition %d, original in %d (known %v)", r.Key, r.Partition, p, ok)
		}
		tombstoned = append(tombstoned, string(r.Key))
	}
	for _, k := range []string{`["src",{"filename":"a.txt"}]`, multiKey, `["src",{"filename":"bad.txt"}]`} {
		found := false
		for _, tk := range tombstoned {
			found = found || tk == k
		}
		if !found {
			t.Fatalf("no tombstone for %s (got %q)", k, tombstoned)
		}
	}

	got, err := Read(testCtx(t), cfgFor(c), "src")
	if err != nil || len(got) != 0 {
		t.Fatalf("Read after Reset = %v, %v", got, err)
	}
	if n, err := Reset(testCtx(t), cfgFor(c), "src"); err != nil || n != 0 {
		t.Fatalf("second Reset = %d, %v", n, err)
	}
	// Neighbours with similar names keep their offsets.
	for _, name := range []string{"other", "src-2"} {
		if got, err := Read(testCtx(t), cfgFor(c), name); err != nil || len(got) != 1 {
			t.Fatalf("Read(%s) = %v, %v", name, got, err)
		}
	}
}

func endOf(recs []*kgo.Record, partition int32) int64 {
	var end int64
	for _, r := range recs {
		if r.Partition == partition && r.Offset+1 > end {
			end = r.Offset + 1
		}
	}
	return end
}

func TestRunning(t *testing.T) {
	c := newCluster(t)
	status := func(state string) string {
		return `{"state":"` + state + `","trace":null,"worker_id":"w:8083","generation":1}`
	}
	produceJava(t, c, statusTopic,
		rec{key: "status-connector-src", value: status("RUNNING")},
		rec{key: "status-task-src-0", value: status("RUNNING")},
		rec{key: "status-connector-paused", value: status("PAUSED")},
		rec{key: "status-task-paused-0", value: status("PAUSED")},
		rec{key: "status-connector-tasksonly", value: status("UNASSIGNED")},
		rec{key: "status-task-tasksonly-3", value: status("RUNNING")},
		rec{key: "status-connector-gone", value: status("RUNNING")},
		rec{key: "status-task-gone-0", value: status("RUNNING")},
		// Deleting a connector tombstones it and its tasks (DESTROYED).
		rec{key: "status-task-gone-0", tomb: true},
		rec{key: "status-connector-gone", tomb: true},
		rec{key: "status-connector-failed", value: status("FAILED")},
		rec{key: "status-task-failed-0", value: status("FAILED")},
		rec{key: "status-connector-stopped", value: status("RUNNING")},
		rec{key: "status-connector-stopped", value: status("STOPPED")},
		// Connector "x-1" task 0, not connector "x".
		rec{key: "status-connector-x", value: status("STOPPED")},
		rec{key: "status-task-x-1-0", value: status("RUNNING")},
		rec{key: "status-connector-garbage", value: `{"state":`},
		rec{key: "status-topic-orders:connector-idle", value: `{"topic":{"name":"orders","connector":"idle","task":0,"discoverTimestamp":1}}`},
	)
	for name, want := range map[string]bool{
		"src": true, "paused": false, "tasksonly": true, "gone": false, "failed": false,
		"stopped": false, "x": false, "x-1": true, "garbage": false, "idle": false, "unknown": false,
	} {
		got, err := Running(testCtx(t), cfgFor(c), statusTopic, name)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Running(%q) = %v, want %v", name, got, want)
		}
	}
	if got, err := Running(testCtx(t), cfgFor(c), "", "src"); got || err != nil {
		t.Fatalf("Running without a status topic = %v, %v", got, err)
	}
	if _, err := Running(testCtx(t), cfgFor(c), "no-such-status", "src"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("Running(missing topic) err = %v", err)
	}
}

func TestMissingTopic(t *testing.T) {
	c := newCluster(t)
	cfg := cfgFor(c)
	cfg.Topic = "no-such-topic"
	start := time.Now()
	_, err := Read(testCtx(t), cfg, "src")
	if !errors.Is(err, ErrTopicNotFound) || !strings.Contains(err.Error(), "no-such-topic") {
		t.Fatalf("Read err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %v to notice", time.Since(start))
	}
	if err := Write(testCtx(t), cfg, "src", []storage.PartitionOffset{{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"p": 1}}}); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("Write err = %v", err)
	}
	if _, err := Reset(testCtx(t), cfg, "src"); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("Reset err = %v", err)
	}
	// The lookup must not have created it.
	adm := kadm.NewClient(mustClient(t, c))
	tds, err := adm.ListTopics(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if tds.Has("no-such-topic") {
		t.Fatal("the topic was auto-created")
	}
}

func mustClient(t testing.TB, c *kfake.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestWriteValidation(t *testing.T) {
	c := newCluster(t)
	cfg := cfgFor(c)
	err := Write(testCtx(t), cfg, "src", []storage.PartitionOffset{
		{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"p": 1}},
		{Partition: map[string]any{"f": "b"}, Offset: map[string]any{"nested": map[string]any{"x": 1}}},
	})
	var pe *storage.PrimitiveError
	if !errors.As(err, &pe) || pe.Kind != "offset" ||
		err.Error() != "Offsets may only contain primitive types as values, but field nested contains MAP" {
		t.Fatalf("err = %v", err)
	}
	err = Write(testCtx(t), cfg, "src", []storage.PartitionOffset{
		{Partition: map[string]any{"list": []any{1}}, Offset: map[string]any{"p": 1}},
	})
	if !errors.As(err, &pe) || pe.Kind != "partition" {
		t.Fatalf("err = %v", err)
	}
	if err := Write(testCtx(t), cfg, "bad\xff", []storage.PartitionOffset{{Partition: map[string]any{}, Offset: map[string]any{}}}); err == nil {
		t.Fatal("invalid UTF-8 connector name accepted")
	}
	// Nothing was written.
	if recs := readAll(t, c, offsetsTopic); len(recs) != 0 {
		t.Fatalf("%d records written", len(recs))
	}
	// No entries: no error, nothing to do.
	if err := Write(testCtx(t), cfg, "src", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(testCtx(t), Config{Topic: offsetsTopic}, "src"); err == nil {
		t.Fatal("no seeds accepted")
	}
	if _, err := Read(testCtx(t), Config{Seeds: c.ListenAddrs()}, "src"); err == nil {
		t.Fatal("no topic accepted")
	}
}

// An unreachable cluster fails when ctx ends, not never.
func TestUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := Read(ctx, Config{Seeds: []string{"127.0.0.1:1"}, Topic: offsetsTopic, Logger: slog.New(slog.DiscardHandler)}, "src")
	if err == nil {
		t.Fatal("no error")
	}
	t.Log(err)
}

// A partition whose offset was deleted keeps its key spelling: a new
// offset is written under the bytes last seen, not Java's order.
func TestWriteAfterTombstoneReusesKey(t *testing.T) {
	c := newCluster(t)
	_, otherKey := multiKeyKeys(t)
	produceJava(t, c, offsetsTopic,
		rec{key: otherKey, value: `{"incrementing":1}`},
		rec{key: otherKey, tomb: true},
	)
	if got, err := Read(testCtx(t), cfgFor(c), "src"); err != nil || len(got) != 0 {
		t.Fatalf("Read = %v, %v", got, err)
	}
	if err := Write(testCtx(t), cfgFor(c), "src", []storage.PartitionOffset{
		{Partition: map[string]any{"table": "orders", "protocol": "1"}, Offset: map[string]any{"incrementing": int64(5)}},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := Read(testCtx(t), cfgFor(c), "src")
	if err != nil || len(got) != 1 || string(got[0].Key) != otherKey {
		t.Fatalf("Read = %v, %v; want the key %s", got, err, otherKey)
	}
}
