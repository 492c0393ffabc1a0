package embedded

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionFiles lists the files of a partition's directory with their
// sizes; nil when the directory does not exist.
func partitionFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// The files the broker makes for a new topic must be the ones kfake
// writes its first batch to: same directory, same names. If an upgrade of
// kfake changed its layout, the first produce would make other files
// beside them, and this fails.
func TestLogFilesAreKfakes(t *testing.T) {
	b, dir := onDisk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	// A name that url.PathEscape leaves as it is, as Kafka's rules make
	// every legal name, but with each of its punctuation characters.
	const topic = "orders.v1_eu-2"
	if _, err := adm.CreateTopic(ctx, 3, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	empty := map[string]int64{"0.dat": 0, "0.idx": 0}
	for p := range int32(3) {
		if got := partitionFiles(t, partitionDir(dir, topic, p)); !maps.Equal(got, empty) {
			t.Fatalf("partition %d before any produce: files %v, want %v", p, got, empty)
		}
	}
	if got := partitionFiles(t, partitionDir(dir, topic, 3)); got != nil {
		t.Fatalf("a partition the topic does not have got files: %v", got)
	}
	for p := range int32(3) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		got := partitionFiles(t, partitionDir(dir, topic, p))
		names := slices.Sorted(maps.Keys(got))
		if !slices.Equal(names, []string{"0.dat", "0.idx"}) || got["0.dat"] == 0 {
			t.Fatalf("partition %d after a produce: files %v, want the batch in 0.dat and nothing else", p, got)
		}
	}
	// Asked again for a topic that exists, the broker leaves its files
	// as they are.
	before := partitionFiles(t, partitionDir(dir, topic, 0))
	if _, err := adm.CreateTopic(ctx, 3, -1, nil, topic); err == nil {
		t.Fatal("creating the topic again succeeded")
	}
	if got := partitionFiles(t, partitionDir(dir, topic, 0)); !maps.Equal(got, before) {
		t.Fatalf("creating the topic again changed its files: %v, was %v", got, before)
	}
	cl.Close()
	b = restarted(t, b, dir)
	if got := firstValue(ctx, t, b.Addr(), topic); got != "v" {
		t.Fatalf("after a restart: got %q, want v", got)
	}
}

// A topic created and never written to has empty files of the broker's
// making; kfake must load them as an empty log, and write after them.
func TestEmptyLogFilesSurviveRestart(t *testing.T) {
	b, dir := onDisk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "quiet"); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	b = restarted(t, b, dir)
	cl, err = kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res := cl.ProduceSync(ctx, &kgo.Record{Topic: "quiet", Value: []byte("first")})
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	if off := res[0].Record.Offset; off != 0 {
		t.Fatalf("the first record after the restart went to offset %d, want 0", off)
	}
	if got := firstValue(ctx, t, b.Addr(), "quiet"); got != "first" {
		t.Fatalf("got %q, want first", got)
	}
	if got := partitionFiles(t, filepath.Join(dir, "partitions", "quiet-0")); got["0.dat"] == 0 {
		t.Fatalf("the record is not in the broker's first segment: %v", got)
	}
}
