package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Every error case of the offsets endpoints answers with the status and
// message a client can act on.
func TestOffsetsEndpointErrors(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "a")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "t"},
	}))
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "t"},
	}))
	notStopped := func(c string) string {
		return "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/" + c + "/stop' endpoint"
	}
	ok := `{"offsets":[{"partition":{"filename":"x"},"offset":{"position":1}}]}`
	cases := []struct {
		name, method, path, body string
		code                     int
		message                  string
	}{
		{"unknown GET", "GET", "/connectors/nope/offsets", "", 404, "Connector nope not found"},
		{"unknown PATCH", "PATCH", "/connectors/nope/offsets", ok, 404, "Connector nope not found"},
		{"unknown DELETE", "DELETE", "/connectors/nope/offsets", "", 404, "Connector nope not found"},
		{"PATCH running source", "PATCH", "/connectors/src/offsets", ok, 400, notStopped("src")},
		{"DELETE running source", "DELETE", "/connectors/src/offsets", "", 400, notStopped("src")},
		{"PATCH running sink", "PATCH", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":1}}]}`, 400, notStopped("sink")},
		{"empty offsets", "PATCH", "/connectors/src/offsets", `{"offsets":[]}`, 400, "Partitions / offsets need to be provided for an alter offsets request"},
		{"missing offsets", "PATCH", "/connectors/src/offsets", `{}`, 400, "Partitions / offsets need to be provided for an alter offsets request"},
		{"malformed JSON", "PATCH", "/connectors/src/offsets", `{"offsets":[`, 400, ""},
		{"array body", "PATCH", "/connectors/src/offsets", `[]`, 400, ""},
		{"unknown field", "PATCH", "/connectors/src/offsets", `{"key":[]}`, 400, "key"},
		{"offsets not a list", "PATCH", "/connectors/src/offsets", `{"offsets":{}}`, 400, ""},
		{"nested value", "PATCH", "/connectors/src/offsets", `{"offsets":[{"partition":{"filename":"x"},"offset":{"position":{"a":1}}}]}`, 400, "Offsets may only contain primitive types as values, but field position contains MAP"},
	}
	for _, c := range cases {
		code, body := w.do(c.method, c.path, c.body)
		if code != c.code || !strings.Contains(body, `"error_code":`+fmt.Sprint(c.code)) || !strings.Contains(body, c.message) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, code, body, c.code, c.message)
		}
	}

	w.must(204, "PUT", "/connectors/src/stop", "")
	w.must(204, "PUT", "/connectors/sink/stop", "")
	stopped := []struct {
		name, path, body, message string
	}{
		// FileStreamSource's own checks (Kafka answers these with 500).
		{"source without filename", "/connectors/src/offsets", `{"offsets":[{"partition":{"file":"x"},"offset":{"position":1}}]}`, "Partition objects should contain the key 'filename'"},
		{"source without position", "/connectors/src/offsets", `{"offsets":[{"partition":{"filename":"x"},"offset":{"pos":1}}]}`, "Offset objects should either be null or contain the key 'position'"},
		{"source string position", "/connectors/src/offsets", `{"offsets":[{"partition":{"filename":"x"},"offset":{"position":"1"}}]}`, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"source negative position", "/connectors/src/offsets", `{"offsets":[{"partition":{"filename":"x"},"offset":{"position":-1}}]}`, "The value for the 'position' key in the offset should be a non-negative value"},
		{"source null partition", "/connectors/src/offsets", `{"offsets":[{"partition":null,"offset":{"position":1}}]}`, "cannot be null"},
		// Sink partitions, validated as Kafka Connect validates them.
		{"sink null partition", "/connectors/sink/offsets", `{"offsets":[{"offset":{"kafka_offset":1}}]}`, "The partition for a sink connector offset cannot be null or missing"},
		{"sink missing key", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t"},"offset":{"kafka_offset":1}}]}`, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{"sink null topic", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":null,"kafka_partition":0},"offset":{"kafka_offset":1}}]}`, "Kafka topic names must be valid strings and may not be null"},
		{"sink null partition number", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":null},"offset":{"kafka_offset":1}}]}`, "Kafka partitions must be valid numbers and may not be null"},
		{"sink bad partition", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"a"},"offset":{"kafka_offset":1}}]}`, "Failed to parse the following Kafka partition value in the provided offsets: 'a'. Partition values for sink connectors need to be integers."},
		{"sink offset without key", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"x":1}}]}`, "The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{"sink unknown topic", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"nope","kafka_partition":0},"offset":{"kafka_offset":1}}]}`, "Failed to alter consumer group offsets for connector sink: topic 'nope' does not exist"},
		{"sink unknown partition", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":7},"offset":{"kafka_offset":1}}]}`, "Failed to alter consumer group offsets for connector sink: partition 7 of topic 't' does not exist"},
		{"sink bad offset", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":"1.5"}}]}`, "Failed to parse the following Kafka offset value in the provided offsets: '1.5'. Offset values for sink connectors need to be integers."},
	}
	for _, c := range stopped {
		code, body := w.do("PATCH", c.path, c.body)
		if code != 400 || !strings.Contains(body, c.message) {
			t.Errorf("%s: %d %s; want 400 with %q", c.name, code, body, c.message)
		}
	}
	// Numeric strings are accepted for sink partitions and offsets.
	w.must(200, "PATCH", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"0"},"offset":{"kafka_offset":"1"}}]}`)
	if body := w.must(200, "GET", "/connectors/sink/offsets", ""); !strings.Contains(body, `{"partition":{"kafka_partition":0,"kafka_topic":"t"},"offset":{"kafka_offset":1}}`) {
		t.Fatalf("sink offsets after PATCH with strings: %s", body)
	}
	// A null offset removes that partition.
	w.must(200, "PATCH", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":null}]}`)
	if body := w.must(200, "GET", "/connectors/sink/offsets", ""); body != `{"offsets":[]}` {
		t.Fatalf("sink offsets after null offset: %s", body)
	}
}

// While something still consumes in a stopped sink's group (a zombie
// task), the broker refuses offset changes and the answer says why and
// that the request can be retried.
func TestSinkOffsetsWithZombieMember(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "zsink", "config": map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "zt"},
		"initial_state": "STOPPED",
	}))
	zombie, err := kgo.NewClient(kgo.SeedBrokers(w.bootstrap()), kgo.ConsumerGroup("connect-zsink"), kgo.ConsumeTopics("zt"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer zombie.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go zombie.PollFetches(ctx) // joins the group
	adm := kadm.NewClient(zombie)
	eventually(t, "the zombie to join", func() bool {
		groups, err := adm.DescribeGroups(ctx, "connect-zsink")
		return err == nil && len(groups["connect-zsink"].Members) == 1
	})
	code, body := w.do("PATCH", "/connectors/zsink/offsets", `{"offsets":[{"partition":{"kafka_topic":"zt","kafka_partition":0},"offset":{"kafka_offset":0}}]}`)
	if code != 500 || !strings.Contains(body, "Failed to alter consumer group offsets for connector zsink either because its tasks haven't stopped completely yet") {
		t.Errorf("PATCH with a zombie member: %d %s", code, body)
	}
	code, body = w.do("DELETE", "/connectors/zsink/offsets", "")
	if code != 500 || !strings.Contains(body, "Failed to reset consumer group offsets for connector zsink either because its tasks haven't stopped completely yet") {
		t.Errorf("DELETE with a zombie member: %d %s", code, body)
	}
}

// A distributed worker, too, answers a sink offsets change naming a topic
// the broker does not have with a 400 naming it.
func TestDistributedSinkOffsetsUnknownTopic(t *testing.T) {
	c := startCluster(t, 1, nil)
	w := c.healthy(0)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{"connector.class": "FileStreamSink", "file": filepath.Join(t.TempDir(), "out.txt"), "topics": "t"},
	}))
	w.must(204, "PUT", "/connectors/sink/stop", "")
	code, body := w.do("PATCH", "/connectors/sink/offsets", `{"offsets":[{"partition":{"kafka_topic":"nope","kafka_partition":0},"offset":{"kafka_offset":1}}]}`)
	if want := "Failed to alter consumer group offsets for connector sink: topic 'nope' does not exist"; code != 400 || !strings.Contains(body, `"error_code":400`) || !strings.Contains(body, want) {
		t.Fatalf("PATCH naming an unknown topic: %d %s; want 400 with %q", code, body, want)
	}
}
