package storage

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// javaOffsets are the offsets of offsets.records as a Go connector would
// hand them over: plain Go maps, no order. Integers are int64 and the
// values are what a Java reader reads back.
var javaOffsets = []struct {
	connector string
	partition map[string]any
	offset    map[string]any
}{
	{"local-file-source", map[string]any{"filename": "test.txt"}, map[string]any{"position": int64(1234)}},
	{"jdbc-orders", map[string]any{"table": "public.orders", "protocol": "1"},
		map[string]any{"incrementing": int64(1007), "timestamp": int64(1717171717123), "timestamp_nanos": int64(123000000)}},
	{"jdbc-orders", map[string]any{"table": "orders"}, map[string]any{"incrementing": int64(1000)}},
	{"jdbc-q", map[string]any{"query": "query"}, map[string]any{"incrementing": int64(55)}},
	{"pg-cdc", map[string]any{"server": "dbserver1"}, map[string]any{
		"lsn": int64(24023128), "lsn_commit": int64(24023128), "lsn_proc": int64(24023128),
		"messageType": "COMMIT", "txId": int64(555), "ts_usec": int64(1559033904863123)}},
	{"file-src", map[string]any{"filename": "/var/log/app.log"}, map[string]any{"position": int64(40960)}},
	{"MirrorSourceConnector", map[string]any{"topic": "orders", "partition": int64(3), "cluster": "us-east"}, map[string]any{"offset": int64(918273)}},
	{"http-src", map[string]any{}, map[string]any{"id": "123", "key": "123", "timestamp": "2020-06-01T10:00:00Z"}},
}

func startOffsetStore(t *testing.T, c *kfake.Cluster, topic string, logger *logBuffer) *KafkaOffsetStore {
	t.Helper()
	cfg := logCfg(c, topic)
	if logger != nil {
		cfg.Logger = logger.logger()
	}
	s, err := NewKafkaOffsetStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

// (a) Java's offsets, read by our store.
func TestKafkaOffsetStoreReadsJavaRecords(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(25, "connect-offsets"))
	raw := rawClient(t, c)
	produceRaw(t, raw, "connect-offsets", loadFixture(t, "offsets.records"))
	produceRaw(t, raw, "connect-offsets", loadFixture(t, "offsets-connector-order.records"))
	produceRaw(t, raw, "connect-offsets", []fixtureRecord{
		// Kafka skips these when tracking partitions: not JSON, not a
		// pair, not [string, object]; the null partition silently.
		{Key: []byte(`not json`), Value: []byte(`{"position":1}`)},
		{Key: []byte(`["only-one"]`), Value: []byte(`{"position":1}`)},
		{Key: []byte(`[7,{"a":1}]`), Value: []byte(`{"position":1}`)},
		{Key: []byte(`["null-part",null]`), Value: []byte(`{"position":1}`)},
		// Deleted (reset) partition.
		{Key: []byte(`["file-src",{"filename":"/var/log/old.log"}]`), Value: []byte(`{"position":1}`)},
		{Key: []byte(`["file-src",{"filename":"/var/log/old.log"}]`)},
		// Value that is not an offset map.
		{Key: []byte(`["file-src",{"filename":"/var/log/bad.log"}]`), Value: []byte(`[1,2]`)},
	})

	logs := &logBuffer{}
	s := startOffsetStore(t, c, "connect-offsets", logs)

	for _, o := range javaOffsets {
		got, ok := s.Get(o.connector, o.partition)
		if !ok || !reflect.DeepEqual(got, o.offset) {
			t.Errorf("Get(%s, %v) = %v, %t; want %v", o.connector, o.partition, got, ok, o.offset)
		}
	}
	// Written by a connector in insertion order, looked up from a Go map.
	if got, ok := s.Get("jdbc-items", map[string]any{"protocol": "1", "table": "public.items"}); !ok || got["incrementing"] != int64(77) {
		t.Errorf("non-Java-order key not found: %v %t", got, ok)
	}
	// Integer kinds do not matter, doubles do.
	if _, ok := s.Get("MirrorSourceConnector", map[string]any{"topic": "orders", "partition": 3, "cluster": "us-east"}); !ok {
		t.Error("int partition value did not match the stored long")
	}
	if _, ok := s.Get("MirrorSourceConnector", map[string]any{"topic": "orders", "partition": 3.0, "cluster": "us-east"}); ok {
		t.Error("double partition value matched the stored long")
	}
	for _, p := range []string{"/var/log/old.log", "/var/log/bad.log"} {
		if got, ok := s.Get("file-src", map[string]any{"filename": p}); ok {
			t.Errorf("%s has offset %v", p, got)
		}
	}

	got := s.Offsets("jdbc-orders")
	want := []PartitionOffset{
		{Partition: map[string]any{"protocol": "1", "table": "public.orders"}, Offset: javaOffsets[1].offset},
		{Partition: map[string]any{"table": "orders"}, Offset: javaOffsets[2].offset},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Offsets(jdbc-orders) = %v\nwant %v", got, want)
	}
	if got := s.Offsets("file-src"); len(got) != 1 {
		t.Errorf("Offsets(file-src) = %v, want only app.log", got)
	}
	if got := s.Offsets("nothing"); got == nil || len(got) != 0 {
		t.Errorf("Offsets(nothing) = %#v, want empty", got)
	}

	// Malformed keys are kept byte for byte but warned about; the null
	// partition is skipped silently.
	if v, ok := s.Raw([]byte(`not json`)); !ok || string(v) != `{"position":1}` {
		t.Errorf("Raw(malformed) = %s, %t", v, ok)
	}
	if _, ok := s.Raw([]byte(`["file-src",{"filename":"/var/log/old.log"}]`)); ok {
		t.Error("Raw kept a tombstoned key")
	}
	out := logs.String()
	for _, k := range []string{"not json", "only-one", `[7,`} {
		if !strings.Contains(out, "malformed key") || !strings.Contains(out, k) {
			t.Errorf("no warning for malformed key %s; log:\n%s", k, out)
		}
	}
	if strings.Contains(out, "null-part") {
		t.Errorf("warned about a null partition, which Kafka skips silently:\n%s", out)
	}
	if strings.Count(out, "level=WARN") != 4 { // three keys and the [1,2] value
		t.Errorf("want exactly 4 warnings, log:\n%s", out)
	}
}

// (b) Our writes, compared with Java's bytes, in the partitions Java picks.
func TestKafkaOffsetStoreWritesJavaBytes(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(25, "connect-offsets"))
	s := startOffsetStore(t, c, "connect-offsets", nil)
	for _, o := range javaOffsets {
		if err := s.Put(o.connector, []PartitionOffset{{Partition: o.partition, Offset: o.offset}}); err != nil {
			t.Fatal(err)
		}
		// Visible as soon as Put returns.
		if got, ok := s.Get(o.connector, o.partition); !ok || !reflect.DeepEqual(got, o.offset) {
			t.Fatalf("Get right after Put(%s, %v) = %v, %t", o.connector, o.partition, got, ok)
		}
	}
	want := map[string]string{}
	for _, r := range loadFixture(t, "offsets.records") {
		want[string(r.Key)] = string(r.Value)
	}
	n := 0
	for p, rs := range readAll(t, c, "connect-offsets") {
		for _, r := range rs {
			n++
			w, ok := want[string(r.Key)]
			if !ok {
				t.Errorf("wrote key %s, which no Java worker would", r.Key)
				continue
			}
			if string(r.Value) != w {
				t.Errorf("key %s:\n value %s\n want  %s", r.Key, r.Value, w)
			}
			if java := PartitionFor(r.Key, 25); p != java {
				t.Errorf("key %s is in partition %d, Java puts it in %d", r.Key, p, java)
			}
			if string(r.Key) == `["local-file-source",{"filename":"test.txt"}]` && p != 10 {
				t.Errorf("worked example in partition %d, want 10", p)
			}
		}
	}
	if n != len(want) {
		t.Errorf("wrote %d records, want %d", n, len(want))
	}
}

// A partition first written by a connector with its own field order keeps
// those key bytes: updates compact the original and land in its partition,
// and a reset really removes it.
func TestKafkaOffsetStoreReusesSeenKeyBytes(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(25, "connect-offsets"))
	produceRaw(t, rawClient(t, c), "connect-offsets", loadFixture(t, "offsets-connector-order.records"))
	s := startOffsetStore(t, c, "connect-offsets", nil)
	const seen = `["jdbc-items",{"table":"public.items","protocol":"1"}]`
	partition := map[string]any{"protocol": "1", "table": "public.items"}
	javaKey, _ := EncodeOffsetKey("jdbc-items", partition)
	if string(javaKey) == seen {
		t.Fatal("fixture key is in Java order; the test would prove nothing")
	}

	if err := s.Put("jdbc-items", []PartitionOffset{{Partition: partition, Offset: map[string]any{"incrementing": 78}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get("jdbc-items", partition); got["incrementing"] != int64(78) {
		t.Fatalf("Get after Put = %v", got)
	}
	if err := s.Put("jdbc-items", []PartitionOffset{{Partition: partition}}); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Get("jdbc-items", partition); ok {
		t.Fatalf("offset survived its tombstone: %v", got)
	}
	recs := recordsOf(t, readAll(t, c, "connect-offsets"))
	want := []fixtureRecord{
		{Key: []byte(seen), Value: []byte(`{"incrementing":77}`)},
		{Key: []byte(seen), Value: []byte(`{"incrementing":78}`)},
		{Key: []byte(seen)},
	}
	if d := diffRecords(recs, want); d != "" {
		t.Fatalf("records:\n%s", d)
	}

	// Once gone, the partition is new again: Java order from now on.
	if err := s.Put("jdbc-items", []PartitionOffset{{Partition: partition, Offset: map[string]any{"incrementing": 1}}}); err != nil {
		t.Fatal(err)
	}
	recs = recordsOf(t, readAll(t, c, "connect-offsets"))
	var last fixtureRecord
	for _, r := range recs {
		if string(r.Key) == string(javaKey) {
			last = r
		}
	}
	if string(last.Value) != `{"incrementing":1}` {
		t.Fatalf("new write did not use the Java-order key %s: %v", javaKey, recs)
	}
}

// Two workers that disagreed on field order leave two live keys for one
// partition. Reads see the most recent; a reset tombstones both, so no old
// value can come back on the next start.
func TestKafkaOffsetStoreTwoSpellings(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(3, "connect-offsets"))
	raw := rawClient(t, c)
	a := []byte(`["c",{"b":1,"a":2}]`)
	b := []byte(`["c",{"a":2,"b":1}]`)
	produceRaw(t, raw, "connect-offsets", []fixtureRecord{{Key: a, Value: []byte(`{"o":1}`)}, {Key: b, Value: []byte(`{"o":2}`)}})
	s := startOffsetStore(t, c, "connect-offsets", nil)
	partition := map[string]any{"a": 2, "b": 1}
	if got, ok := s.Get("c", partition); !ok || (got["o"] != int64(1) && got["o"] != int64(2)) {
		t.Fatalf("Get = %v %t", got, ok)
	}
	if got := s.Offsets("c"); len(got) != 1 {
		t.Fatalf("two spellings listed as %d partitions", len(got))
	}
	if err := s.Put("c", []PartitionOffset{{Partition: partition}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("c", partition); ok {
		t.Fatal("offset survived the reset")
	}
	tombs := map[string]bool{}
	for _, r := range recordsOf(t, readAll(t, c, "connect-offsets")) {
		if r.Value == nil {
			tombs[string(r.Key)] = true
		}
	}
	if !tombs[string(a)] || !tombs[string(b)] {
		t.Fatalf("tombstones written for %v, want both spellings", tombs)
	}

	// A second store on the same topic agrees.
	s2 := startOffsetStore(t, c, "connect-offsets", nil)
	if _, ok := s2.Get("c", partition); ok {
		t.Fatal("a fresh reader still sees an offset")
	}
}

func TestKafkaOffsetStorePutValidates(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-offsets"))
	s := startOffsetStore(t, c, "connect-offsets", nil)
	err := s.Put("c", []PartitionOffset{{Partition: map[string]any{"f": "x"}, Offset: map[string]any{"n": map[string]any{}}}})
	var pe *PrimitiveError
	if !errors.As(err, &pe) || err.Error() != "Offsets may only contain primitive types as values, but field n contains MAP" {
		t.Fatalf("got %v", err)
	}
	if err := s.Put("c", []PartitionOffset{{Partition: map[string]any{"f": []any{1}}, Offset: map[string]any{}}}); !errors.As(err, &pe) {
		t.Fatalf("nested partition: %v", err)
	}
	if err := s.Put("bad\xff", nil); err == nil {
		t.Fatal("invalid UTF-8 connector name accepted")
	}
	if err := s.Put("c", nil); err != nil {
		t.Fatalf("empty Put: %v", err)
	}
	if got := recordsOf(t, readAll(t, c, "connect-offsets")); len(got) != 0 {
		t.Fatalf("a refused Put wrote %v", got)
	}
}

// Offsets must stay fast for a connector with 100k partitions, and other
// connectors must not pay for it. This feeds records straight to the
// store's reader; the Kafka path is covered above.
func TestKafkaOffsetStoreManyPartitions(t *testing.T) {
	s := &KafkaOffsetStore{raw: map[string][]byte{}, conns: map[string]*kafkaConnOffsets{}, topicStore: topicStore{logger: discardLogger()}}
	const n = 100_000
	for i := range n {
		s.onRecord(&kgo.Record{Key: fmt.Appendf(nil, `["big",{"file":"f%06d"}]`, i), Value: fmt.Appendf(nil, `{"position":%d}`, i)})
	}
	s.onRecord(&kgo.Record{Key: []byte(`["small",{"file":"x"}]`), Value: []byte(`{"position":1}`)})

	start := time.Now()
	got := s.Offsets("big")
	first := time.Since(start)
	if len(got) != n {
		t.Fatalf("%d offsets, want %d", len(got), n)
	}
	for i := 0; i < n; i += 9973 {
		if want := fmt.Sprintf("f%06d", i); got[i].Partition["file"] != want || got[i].Offset["position"] != int64(i) {
			t.Fatalf("entry %d = %v, want %s", i, got[i], want)
		}
	}
	// An update to one partition must not make the next listing re-sort.
	s.onRecord(&kgo.Record{Key: []byte(`["big",{"file":"f000007"}]`), Value: []byte(`{"position":-1}`)})
	start = time.Now()
	again := s.Offsets("big")
	second := time.Since(start)
	if again[7].Offset["position"] != int64(-1) {
		t.Fatalf("update not visible: %v", again[7])
	}
	start = time.Now()
	small := s.Offsets("small")
	smallTime := time.Since(start)
	if len(small) != 1 {
		t.Fatalf("small = %v", small)
	}
	if !raceEnabled {
		if first > 2*time.Second || second > 2*time.Second {
			t.Errorf("listing 100k partitions took %v then %v", first, second)
		}
		if smallTime > 10*time.Millisecond {
			t.Errorf("listing a 1-partition connector next to a 100k one took %v", smallTime)
		}
	}
	if _, ok := s.Get("big", map[string]any{"file": "f099999"}); !ok {
		t.Fatal("Get missed a partition")
	}
	if !bytes.Equal(mustRaw(t, s, `["big",{"file":"f000007"}]`), []byte(`{"position":-1}`)) {
		t.Fatal("Raw does not hold the latest value")
	}
}

func mustRaw(t *testing.T, s *KafkaOffsetStore, key string) []byte {
	t.Helper()
	v, ok := s.Raw([]byte(key))
	if !ok {
		t.Fatalf("no raw value for %s", key)
	}
	return v
}

func BenchmarkKafkaOffsetStoreOffsets100k(b *testing.B) {
	s := &KafkaOffsetStore{raw: map[string][]byte{}, conns: map[string]*kafkaConnOffsets{}, topicStore: topicStore{logger: discardLogger()}}
	for i := range 100_000 {
		s.onRecord(&kgo.Record{Key: fmt.Appendf(nil, `["big",{"file":"f%06d"}]`, i), Value: fmt.Appendf(nil, `{"position":%d}`, i)})
	}
	b.ResetTimer()
	for range b.N {
		if len(s.Offsets("big")) != 100_000 {
			b.Fatal("wrong count")
		}
	}
}
