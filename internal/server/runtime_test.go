package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The worker's JsonConverter (schemas on, Kafka's default) writes the
// envelope; a connector's own value.converter overrides it.
func TestConvertersPerWorkerAndPerConnector(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "hello")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "json", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "json"},
	}))
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "plain", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "plain",
			"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
	}))
	if got := readTopic(t, w.bootstrap(), "json", 1)[0]; got != `{"schema":{"type":"string","optional":false},"payload":"hello"}` {
		t.Fatalf("JsonConverter wrote %s", got)
	}
	if got := readTopic(t, w.bootstrap(), "plain", 1)[0]; got != "hello" {
		t.Fatalf("StringConverter wrote %s", got)
	}
}

// A sink subscribes with topics.regex, in the group that
// consumer.override.group.id names; its offsets are read from that group.
func TestSinkRegexAndGroupOverride(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	cl := w.client()
	ctx := context.Background()
	for _, topic := range []string{"orders.eu", "orders.us", "other"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(topic)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "regex-sink", "config": map[string]string{"connector.class": "FileStreamSink", "file": out,
			"topics.regex": `orders\..*`, "consumer.override.group.id": "my-group"},
	}))
	eventually(t, "both orders topics in the file", func() bool { return len(readLines(out)) == 2 })
	if got := strings.Join(readLines(out), ","); strings.Contains(got, "other") {
		t.Fatalf("the sink consumed a topic outside its regex: %s", got)
	}
	eventually(t, "offsets of the overridden group", func() bool {
		_, body := w.do("GET", "/connectors/regex-sink/offsets", "")
		return strings.Contains(body, `"kafka_topic":"orders.eu"},"offset":{"kafka_offset":1}`) && strings.Contains(body, `"kafka_topic":"orders.us"},"offset":{"kafka_offset":1}`)
	})
	groups, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := groups["my-group"]; !ok {
		t.Fatalf("group my-group not found among %v", groups.Groups())
	}
	if _, ok := groups["connect-regex-sink"]; ok {
		t.Fatal("the default group was used despite consumer.override.group.id")
	}
	code, body := w.do("POST", "/connectors", jsonString(map[string]any{
		"name": "both", "config": map[string]string{"connector.class": "FileStreamSink", "topics": "a", "topics.regex": "b"},
	}))
	if code != 400 || !strings.Contains(body, "topics and topics.regex are mutually exclusive options, but both are set.") {
		t.Fatalf("topics and topics.regex together: %d %s", code, body)
	}
}

// A task that cannot convert a record fails with the reason in its trace;
// a restart of only the failed instances restarts that task alone.
func TestFailedTaskAndOnlyFailedRestart(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	cl := w.client()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "plain", Value: []byte("not json")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "strict", "config": map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "plain",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter"},
	}))
	eventually(t, "the task to fail", func() bool { return w.state("strict") == "RUNNING/FAILED" })
	body := w.must(200, "GET", "/connectors/strict/tasks/0/status", "")
	if !strings.Contains(body, `"state":"FAILED"`) || !strings.Contains(body, `"trace":"org.apache.kafka.connect.errors.ConnectException: converting the value of plain[0]@0`) {
		t.Fatalf("failed task status %s", body)
	}
	body = w.must(202, "POST", "/connectors/strict/restart?includeTasks=true&onlyFailed=true", "")
	if !strings.Contains(body, `"connector":{"state":"RUNNING"`) || !strings.Contains(body, `"tasks":[{"id":0,"state":"RESTARTING"`) {
		t.Fatalf("restart plan %s", body)
	}
	eventually(t, "the task to fail again", func() bool { return w.state("strict") == "RUNNING/FAILED" })
	// Offsets of the failed sink did not move past the record it could
	// not write.
	if body := w.must(200, "GET", "/connectors/strict/offsets", ""); body != `{"offsets":[]}` {
		t.Fatalf("offsets after failures: %s", body)
	}
}

// A sink that has caught up with its partitions commits its offsets then,
// not only every offset.flush.interval.ms (an hour here): the JDBC sink
// commits its transaction only when the runtime commits.
func TestSinkCommitsWhenCaughtUp(t *testing.T) {
	dir := t.TempDir()
	extra := map[string]string{"offset.flush.interval.ms": "3600000"}
	for k, v := range stringConverters {
		extra[k] = v
	}
	w := startWorker(t, dir, extra)
	cl := w.client()
	produce := func(values ...string) {
		for _, v := range values {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "burst", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("a", "b", "c")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "burst-sink", "config": map[string]string{"connector.class": "FileStreamSink",
			"file": filepath.Join(dir, "out.txt"), "topics": "burst"},
	}))
	for _, want := range []int{3, 5} {
		eventually(t, fmt.Sprintf("offset %d committed", want), func() bool {
			_, body := w.do("GET", "/connectors/burst-sink/offsets", "")
			return strings.Contains(body, fmt.Sprintf(`"offset":{"kafka_offset":%d}`, want))
		})
		produce("d", "e")
	}
}
