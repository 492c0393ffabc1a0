package server

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// loadRecords reads a fixture of records as a Java worker writes them
// (internal/storage/testdata/topics/README.md).
func loadRecords(t *testing.T, name string) []*kgo.Record {
	t.Helper()
	f, err := os.Open("../storage/testdata/topics/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*kgo.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, value, found := bytes.Cut(line, []byte("\t"))
		r := &kgo.Record{Key: bytes.Clone(key)}
		if found {
			r.Value = bytes.Clone(value)
		}
		out = append(out, r)
	}
	return out
}

// A worker started on internal topics that a Java cluster wrote serves
// that cluster's connectors and offsets, and its own offsets writes are
// the bytes a Java worker writes, on the partition a Java worker picks.
func TestDistributedServesJavaClusterTopics(t *testing.T) {
	c := startCluster(t, 0, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	compact := map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}
	for topic, parts := range map[string]int32{"connect-configs": 1, "connect-offsets": 25, "connect-status": 5} {
		if _, err := adm.CreateTopic(ctx, parts, 1, compact, topic); err != nil {
			t.Fatal(err)
		}
	}
	for topic, fixture := range map[string]string{"connect-configs": "configs.records", "connect-offsets": "offsets.records", "connect-status": "status.records"} {
		for _, r := range loadRecords(t, fixture) {
			r.Topic = topic
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.add()
	w := c.worker(0)
	eventually(t, "the worker healthy", func() bool { code, _ := w.do("GET", "/health", ""); return code == 200 })
	body := w.must(200, "GET", "/connectors", "")
	if !strings.Contains(body, `"file-src"`) || !strings.Contains(body, `"my-jdbc-src"`) || strings.Contains(body, `"old-src"`) {
		t.Fatalf("connectors of the Java cluster: %s", body)
	}
	if body := w.must(200, "GET", "/connectors/file-src/offsets", ""); body != `{"offsets":[{"partition":{"filename":"/var/log/app.log"},"offset":{"position":40960}}]}` {
		t.Fatalf("offsets the Java cluster wrote: %s", body)
	}
	w.must(204, "PUT", "/connectors/file-src/stop", "")
	w.must(200, "PATCH", "/connectors/file-src/offsets", `{"offsets":[{"partition":{"filename":"/var/log/app.log"},"offset":{"position":7}}]}`)

	// The record we wrote: the Java key bytes, on murmur2's partition.
	key := []byte(`["file-src",{"filename":"/var/log/app.log"}]`)
	want := storage.PartitionFor(key, 25)
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()), kgo.ConsumeTopics("connect-offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("the altered offset never reached the offsets topic")
		}
		found := false
		fs.EachRecord(func(r *kgo.Record) {
			if bytes.Equal(r.Key, key) && string(r.Value) == `{"position":7}` {
				if r.Partition != want {
					t.Errorf("written to partition %d, Java picks %d", r.Partition, want)
				}
				found = true
			}
		})
		if found {
			return
		}
	}
}

// A worker refuses internal topics that would lose data: a config topic
// that is not compacted, or one with more than one partition.
func TestDistributedRefusesUnsafeInternalTopics(t *testing.T) {
	for _, tc := range []struct {
		name    string
		parts   int32
		configs map[string]*string
		want    string
	}{
		{"deleting config topic", 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")},
			"Topic 'connect-configs' supplied via the 'config.storage.topic' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of connector configurations, but found the topic currently has 'cleanup.policy=delete'."},
		{"config topic with 2 partitions", 2, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")},
			"Topic 'connect-configs' supplied via the 'config.storage.topic' property is required to have a single partition in order to guarantee consistency of connector configurations, but found 2 partitions."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, 0, nil)
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), tc.parts, 1, tc.configs, "connect-configs"); err != nil {
				t.Fatal(err)
			}
			d, err := StartDistributed(context.Background(), c.props, builtin.Plugins(), testLoggers(t))
			if err == nil {
				d.Close()
				t.Fatal("the worker started on an unsafe config topic")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}
