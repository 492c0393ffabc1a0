package server

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// assignedTopics is the topics a consumer group's members were assigned.
func assignedTopics(t *testing.T, adm *kadm.Client, group string) []string {
	t.Helper()
	groups, err := adm.DescribeGroups(context.Background(), group)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range groups[group].Members {
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range a.Topics {
				out = append(out, tp.Topic)
			}
		}
	}
	slices.Sort(out)
	return out
}

// topics.regex matches whole topic names, as Java's Pattern.matches does,
// and never the worker's own topics (connect-configs, connect-offsets
// and connect-status here), even when it matches their names; a sink
// that asks for the broker's internal topics is refused.
func TestDistributedSinkRegexMatchesWholeNamesOnly(t *testing.T) {
	c := startCluster(t, 1, nil)
	w := c.healthy(0)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for _, topic := range []string{"tx", "xt", "connect-orders"} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: []byte(topic + "-1")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	sinks := []struct{ name, regex, want string }{
		{"t-sink", "t.*", "tx"},
		{"connect-sink", "connect-.*", "connect-orders"},
	}
	for _, s := range sinks {
		w.must(201, "POST", "/connectors", jsonString(map[string]any{
			"name": s.name, "config": map[string]string{"connector.class": "FileStreamSink",
				"file": filepath.Join(dir, s.name+".txt"), "topics.regex": s.regex},
		}))
	}
	adm := kadm.NewClient(cl)
	for _, s := range sinks {
		out := filepath.Join(dir, s.name+".txt")
		eventually(t, s.name+" writing "+s.want, func() bool { return slices.Contains(readLines(out), s.want+"-1") })
		eventually(t, s.name+"'s assignment", func() bool { return len(assignedTopics(t, adm, "connect-"+s.name)) > 0 })
		if got := assignedTopics(t, adm, "connect-"+s.name); !slices.Equal(got, []string{s.want}) {
			t.Errorf("%s (topics.regex=%s) was assigned %v, want [%s]", s.name, s.regex, got, s.want)
		}
		if got := readLines(out); !slices.Equal(got, []string{s.want + "-1"}) {
			t.Errorf("%s wrote %q", s.name, got)
		}
	}

	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "internal-sink", "config": map[string]string{"connector.class": "FileStreamSink",
			"file": filepath.Join(dir, "internal.txt"), "topics.regex": "__.*",
			"consumer.override.exclude.internal.topics": "false"},
	}))
	eventually(t, "the sink asking for internal topics to fail", func() bool { return w.state("internal-sink") == "RUNNING/FAILED" })
	_, body := w.do("GET", "/connectors/internal-sink/status", "")
	if !strings.Contains(body, "Invalid value false for configuration exclude.internal.topics") {
		t.Fatalf("status of the sink asking for internal topics: %s", body)
	}
}
