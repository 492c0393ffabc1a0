package storage

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fixtureRecord is one record of a testdata/topics fixture. A nil Value is
// a tombstone.
type fixtureRecord struct {
	Key, Value []byte
}

func (r fixtureRecord) String() string {
	if r.Value == nil {
		return string(r.Key) + " <tombstone>"
	}
	return string(r.Key) + " " + string(r.Value)
}

// loadFixture reads testdata/topics/<name> (format in its README.md).
func loadFixture(t testing.TB, name string) []fixtureRecord {
	t.Helper()
	data := mustReadFile(t, filepath.Join("testdata", "topics", name))
	var out []fixtureRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "\t")
		rec := fixtureRecord{Key: []byte(k)}
		if ok {
			rec.Value = []byte(v)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("fixture %s is empty", name)
	}
	return out
}

// testCtx is a context that ends with the test, bounded so a hang fails
// instead of stalling the suite.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newCluster starts an in-process single-broker Kafka.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// logBuffer collects log output for assertions.
type logBuffer struct{ servertest.SyncBuffer }

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

func logCfg(c *kfake.Cluster, topic string) KafkaLogConfig {
	return KafkaLogConfig{Topic: topic, Seeds: c.ListenAddrs(), Logger: discardLogger()}
}

// rawClient is a plain franz-go producer/admin client playing the Java
// worker: keyed records go where Java's default partitioner puts them.
func rawClient(t testing.TB, c *kfake.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// produceRaw writes records in order and waits for them.
func produceRaw(t testing.TB, cl *kgo.Client, topic string, recs []fixtureRecord) {
	t.Helper()
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value}
	}
	if err := cl.ProduceSync(testCtx(t), krs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readAll returns every record of the topic, per partition in offset
// order, read with an independent client.
func readAll(t testing.TB, c *kfake.Cluster, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx := testCtx(t)
	adm := kadm.NewClient(rawClient(t, c))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("listing end offsets: %v", o.Err)
		}
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	out := map[int32][]*kgo.Record{}
	if len(want) == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v (still waiting for %v)", topic, ctx.Err(), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	return out
}

// recordsOf flattens readAll's result for a single-partition topic.
func recordsOf(t testing.TB, byPartition map[int32][]*kgo.Record) []fixtureRecord {
	t.Helper()
	var parts []int32
	for p := range byPartition {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	var out []fixtureRecord
	for _, p := range parts {
		for _, r := range byPartition[p] {
			out = append(out, fixtureRecord{Key: r.Key, Value: r.Value})
		}
	}
	return out
}

// diffRecords compares two record sequences byte for byte, tombstones
// (nil values) included.
func diffRecords(got, want []fixtureRecord) string {
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			fmt.Fprintf(&b, "record %d missing; want %s\n", i, want[i])
		case i >= len(want):
			fmt.Fprintf(&b, "record %d unexpected: %s\n", i, got[i])
		case !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) ||
			(got[i].Value == nil) != (want[i].Value == nil):
			fmt.Fprintf(&b, "record %d:\n got  %s\n want %s\n", i, got[i], want[i])
		}
	}
	return b.String()
}
