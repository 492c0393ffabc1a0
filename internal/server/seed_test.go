package server

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var stringConverters = map[string]string{
	"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
	"value.converter": "org.apache.kafka.connect.storage.StringConverter",
}

func lines(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("line-%03d", i))
	}
	return out
}

// The seed's source flows: list, get offsets, stop, alter (the source
// emits again from the new position), resume, reset with DELETE (reads
// again from the start), and skipping a record by moving past it.
func TestSeedSourceOffsetFlows(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "orders.txt")
	writeLines(t, in, lines(1, 10)...) // 9 bytes a line
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name":   "orders-source",
		"config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "orders"},
	}))
	if got := readTopic(t, w.bootstrap(), "orders", 10); !slices.Equal(got, lines(1, 10)) {
		t.Fatalf("topic holds %v", got)
	}
	if body := w.must(200, "GET", "/connectors", ""); body != `["orders-source"]` {
		t.Fatalf("GET /connectors = %s", body)
	}
	want := fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":90}}]}`, in)
	eventually(t, "offset 90 committed", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return body == want
	})

	// Altering needs a stopped connector.
	patch := fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":45}}]}`, in)
	code, body := w.do("PATCH", "/connectors/orders-source/offsets", patch)
	if code != 400 || !strings.Contains(body, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/orders-source/stop' endpoint") {
		t.Fatalf("PATCH while running: %d %s", code, body)
	}
	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	if st := w.state("orders-source"); st != "STOPPED" {
		t.Fatalf("state after stop = %s", st)
	}
	body = w.must(200, "PATCH", "/connectors/orders-source/offsets", patch)
	if body != `{"message":"The offsets for this connector have been altered successfully"}` {
		t.Fatalf("PATCH answer %s", body)
	}
	if body := w.must(200, "GET", "/connectors/orders-source/offsets", ""); !strings.Contains(body, `"position":45`) {
		t.Fatalf("offsets after PATCH: %s", body)
	}
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	got := readTopic(t, w.bootstrap(), "orders", 15)
	if !slices.Equal(got[10:], lines(6, 10)) {
		t.Fatalf("after altering to 45 the source emitted %v, want lines 6-10", got[10:])
	}

	// Reset: stop, DELETE, resume reads from the start.
	eventually(t, "offset 90 again", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return strings.Contains(body, `"position":90`)
	})
	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	body = w.must(200, "DELETE", "/connectors/orders-source/offsets", "")
	if body != `{"message":"The offsets for this connector have been reset successfully"}` {
		t.Fatalf("DELETE answer %s", body)
	}
	if body := w.must(200, "GET", "/connectors/orders-source/offsets", ""); body != `{"offsets":[]}` {
		t.Fatalf("offsets after reset: %s", body)
	}
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	got = readTopic(t, w.bootstrap(), "orders", 25)
	if !slices.Equal(got[15:], lines(1, 10)) {
		t.Fatalf("after reset the source emitted %v, want lines 1-10", got[15:])
	}

	// Skip a poison record: line 11 is bad, move the offset past it.
	eventually(t, "offset 90 after reset", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return strings.Contains(body, `"position":90`)
	})
	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	writeLines(t, in, "poison!!", "line-012")
	w.must(200, "PATCH", "/connectors/orders-source/offsets",
		fmt.Sprintf(`{"offsets":[{"partition":{"filename":%q},"offset":{"position":99}}]}`, in))
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	got = readTopic(t, w.bootstrap(), "orders", 26)
	if got[25] != "line-012" || slices.Contains(got, "poison!!") {
		t.Fatalf("after skipping, the topic ends with %v", got[20:])
	}
}

// The seed's sink flow: a sink that wrote to the wrong place is stopped,
// fixed, its offsets set to 0 on every partition of a 3-partition topic
// (in the seed's short form) and resumed: it writes every record again.
func TestSeedSinkReprocessFromZero(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	topic := "eip.orders.placed"
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.bootstrap()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: fmt.Appendf(nil, "order-%02d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	wrong := filepath.Join(dir, "wrong.txt")
	right := filepath.Join(dir, "right.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name":   "orders-sink",
		"config": map[string]string{"connector.class": "FileStreamSink", "file": wrong, "topics": topic, "tasks.max": "2"},
	}))
	eventually(t, "30 lines in the wrong file", func() bool { return len(readLines(wrong)) == 30 })
	eventually(t, "sink offsets 10 on each partition", func() bool {
		_, body := w.do("GET", "/connectors/orders-sink/offsets", "")
		return body == `{"offsets":[`+
			`{"partition":{"kafka_partition":0,"kafka_topic":"eip.orders.placed"},"offset":{"kafka_offset":10}},`+
			`{"partition":{"kafka_partition":1,"kafka_topic":"eip.orders.placed"},"offset":{"kafka_offset":10}},`+
			`{"partition":{"kafka_partition":2,"kafka_topic":"eip.orders.placed"},"offset":{"kafka_offset":10}}]}`
	})

	w.must(204, "PUT", "/connectors/orders-sink/stop", "")
	// The seed's PUT sends no Content-Type header; it must work as is.
	w.must(200, "PUT", "/connectors/orders-sink/config", jsonString(map[string]string{
		"connector.class": "FileStreamSink", "file": right, "topics": topic, "tasks.max": "2",
	}))
	body := w.must(200, "PATCH", "/connectors/orders-sink/offsets", `{
    "offsets": [
      {"partition": {"topic": "eip.orders.placed", "partition": 0}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 1}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 2}, "offset": {"offset": 0}}
    ]
  }`)
	if body != `{"message":"The offsets for this connector have been altered successfully"}` {
		t.Fatalf("PATCH answer %s", body)
	}
	if st := w.state("orders-sink"); st != "STOPPED" {
		t.Fatalf("state after PUT config on a stopped connector = %s", st)
	}
	w.must(202, "PUT", "/connectors/orders-sink/resume", "")
	eventually(t, "30 lines in the right file", func() bool { return len(readLines(right)) == 30 })
	got := readLines(right)
	slices.Sort(got)
	for i, l := range got {
		if l != fmt.Sprintf("order-%02d", i) {
			t.Fatalf("right file line %d = %q", i, l)
		}
	}

	// Skip one record on partition 0 by moving past it; DELETE then
	// follows auto.offset.reset (earliest): everything again.
	w.must(204, "PUT", "/connectors/orders-sink/stop", "")
	w.must(200, "DELETE", "/connectors/orders-sink/offsets", "")
	if body := w.must(200, "GET", "/connectors/orders-sink/offsets", ""); body != `{"offsets":[]}` {
		t.Fatalf("sink offsets after reset: %s", body)
	}
	w.must(202, "PUT", "/connectors/orders-sink/resume", "")
	eventually(t, "60 lines in the right file", func() bool { return len(readLines(right)) == 60 })
}
