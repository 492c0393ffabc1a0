package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// topicShape reads a topic's partition count and one of its configs.
func topicShape(t *testing.T, adm *kadm.Client, topic, config string) (int, string) {
	t.Helper()
	details, err := adm.ListTopics(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		t.Fatalf("topic %s: %v", topic, d.Err)
	}
	rcs, err := adm.DescribeTopicConfigs(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	value := ""
	for _, c := range rc.Configs {
		if c.Key == config && c.Value != nil {
			value = *c.Value
		}
	}
	return len(d.Partitions), value
}

// KIP-158: a source task creates each topic the first time it sends to
// it, with the first group whose include (and not exclude) matches, else
// the default group; a topic that exists is left as it is.
func TestSourceTopicCreation(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	adm := kadm.NewClient(w.client())
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "existing"); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a", "b", "c")
	creation := map[string]string{
		"topic.creation.groups":                     "big, compacted",
		"topic.creation.default.partitions":         "3",
		"topic.creation.default.replication.factor": "-1",
		"topic.creation.default.cleanup.policy":     "compact",
		"topic.creation.big.include":                "big-.*, huge",
		"topic.creation.big.exclude":                "big-not",
		"topic.creation.big.partitions":             "5",
		"topic.creation.big.retention.ms":           "1000",
		"topic.creation.compacted.include":          "big-.*",
		"topic.creation.compacted.partitions":       "7",
	}
	for topic, want := range map[string]struct {
		partitions int
		config     string
		value      string
	}{
		"orders":   {3, "cleanup.policy", "compact"},
		"big-one":  {5, "retention.ms", "1000"},
		"big-not":  {7, "cleanup.policy", ""}, // the first group excludes it, the next takes it
		"existing": {1, "cleanup.policy", ""},
	} {
		config := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": topic}
		for k, v := range creation {
			config[k] = v
		}
		name := "src-" + topic
		w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": name, "config": config}))
		if got := readTopic(t, w.bootstrap(), topic, 3); len(got) != 3 {
			t.Fatalf("%s: %v", topic, got)
		}
		parts, value := topicShape(t, adm, topic, want.config)
		if parts != want.partitions || (want.value != "" && value != want.value) {
			t.Errorf("topic %s: %d partitions, %s=%q; want %d and %q", topic, parts, want.config, value, want.partitions, want.value)
		}
	}
}

// Kafka's messages for topic.creation keys, at validation (a create is
// refused) rather than when the task starts.
func TestSourceTopicCreationValidation(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a")
	for _, tc := range []struct {
		extra map[string]string
		want  string
	}{
		{map[string]string{"topic.creation.groups": "g"},
			`Missing required configuration \"topic.creation.default.replication.factor\" which has no default value.`},
		{map[string]string{"topic.creation.default.replication.factor": "1"},
			`Missing required configuration \"topic.creation.default.partitions\" which has no default value.`},
		{map[string]string{"topic.creation.default.replication.factor": "0", "topic.creation.default.partitions": "1"},
			"Invalid value 0 for configuration topic.creation.default.replication.factor: Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default"},
		{map[string]string{"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "-2"},
			"Invalid value -2 for configuration topic.creation.default.partitions: Number of partitions must be positive, or -1 to use the broker's default"},
		{map[string]string{"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1",
			"topic.creation.groups": "g", "topic.creation.g.include": "("}, "topic.creation.g.include: Syntax error in regular expression"},
		{map[string]string{"topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1",
			"topic.creation.groups": "g,g"}, "Invalid value [g, g] for configuration topic.creation.groups: Duplicate alias provided."},
		{map[string]string{"topic.creation.default.replication.factor": "x", "topic.creation.default.partitions": "1"},
			"Invalid value x for configuration topic.creation.default.replication.factor: Not a number of type SHORT"},
	} {
		config := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "v"}
		for k, v := range tc.extra {
			config[k] = v
		}
		body := w.must(400, "POST", "/connectors", jsonString(map[string]any{"name": "v", "config": config}))
		if !strings.Contains(body, tc.want) {
			t.Errorf("%v: %s\nwant it to say %s", tc.extra, body, tc.want)
		}
	}
}

// With topic.creation.enable=false the topic.creation keys are not read:
// the broker makes the topic as it makes any other.
func TestSourceTopicCreationDisabled(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, map[string]string{"topic.creation.enable": "false"})
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "off", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "plain",
		"topic.creation.default.partitions": "4", "topic.creation.default.replication.factor": "1"}}))
	readTopic(t, w.bootstrap(), "plain", 1)
	if parts, _ := topicShape(t, kadm.NewClient(w.client()), "plain", "cleanup.policy"); parts == 4 {
		t.Fatalf("topic.creation.enable=false, yet the topic has the group's %d partitions", parts)
	}
}

// A topic the broker will not create fails the task, saying why, before
// any record is sent.
func TestSourceTopicCreationFailureFailsTask(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "rf", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "three-replicas",
		"topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "3"}}))
	eventually(t, "the task to fail", func() bool { return w.state("rf") == "RUNNING/FAILED" })
	body := w.must(200, "GET", "/connectors/rf/tasks/0/status", "")
	if !strings.Contains(body, "Task failed to create new topic three-replicas") || !strings.Contains(body, "INVALID_REPLICATION_FACTOR") {
		t.Fatalf("status %s", body)
	}
}
