package server

import (
	"context"
	"fmt"
	"github.com/connectd/connectd/internal/servertest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func produceValues(t *testing.T, w *testWorker, topic string, values ...string) {
	t.Helper()
	cl := w.client()
	for i, v := range values {
		r := &kgo.Record{Topic: topic, Key: []byte{byte('a' + i)}, Value: []byte(v),
			Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("test")}}}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// endOffset is a topic's partition 0 log end, now.
func endOffset(t *testing.T, w *testWorker, topic string) int64 {
	t.Helper()
	ends, err := kadm.NewClient(w.client()).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup(topic, 0)
	return o.Offset
}

func dlqHeaders(r *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range r.Headers {
		m[h.Key] = string(h.Value)
	}
	return m
}

// A record the JsonConverter cannot read goes, with errors.tolerance=all,
// to the dead letter queue as it was consumed, with Kafka's context
// headers; the others reach the file; the group's offsets pass the bad
// record only once the queue holds it.
func TestSinkDeadLetterQueueTolerated(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	produceValues(t, w, "json-in", `"one"`, `{"bad`, `"three"`)
	out := filepath.Join(dir, "out.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "tolerant", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": "json-in",
			"key.converter":                                   "org.apache.kafka.connect.storage.StringConverter",
			"value.converter":                                 "org.apache.kafka.connect.json.JsonConverter",
			"value.converter.schemas.enable":                  "false",
			"errors.tolerance":                                "all",
			"errors.log.enable":                               "true",
			"errors.deadletterqueue.topic.name":               "json-dlq",
			"errors.deadletterqueue.topic.replication.factor": "1",
			"errors.deadletterqueue.context.headers.enable":   "true",
		},
	}))
	eventually(t, "the offset past every record", func() bool {
		_, body := w.do("GET", "/connectors/tolerant/offsets", "")
		return strings.Contains(body, `"offset":{"kafka_offset":3}`)
	})
	// Already there: the commit waited for it.
	if end := endOffset(t, w, "json-dlq"); end != 1 {
		t.Fatalf("the dead letter queue's end is %d once the offsets passed the record, want 1", end)
	}
	if got := readLines(out); !slices.Equal(got, []string{"one", "three"}) {
		t.Fatalf("the sink wrote %q", got)
	}
	recs := readRecords(t, w.bootstrap(), "json-dlq", 1)
	if len(recs) != 1 {
		t.Fatalf("%d records in the dead letter queue", len(recs))
	}
	r := recs[0]
	if string(r.Key) != "b" || string(r.Value) != `{"bad` {
		t.Errorf("dead letter record %q=%q, want the consumed bytes", r.Key, r.Value)
	}
	hs := dlqHeaders(r)
	for k, v := range map[string]string{
		"origin":                                "test",
		"__connect.errors.topic":                "json-in",
		"__connect.errors.partition":            "0",
		"__connect.errors.offset":               "1",
		"__connect.errors.connector.name":       "tolerant",
		"__connect.errors.task.id":              "0",
		"__connect.errors.stage":                "VALUE_CONVERTER",
		"__connect.errors.class.name":           "org.apache.kafka.connect.json.JsonConverter",
		"__connect.errors.exception.class.name": "org.apache.kafka.connect.errors.DataException",
	} {
		if hs[k] != v {
			t.Errorf("header %s = %q, want %q", k, hs[k], v)
		}
	}
	if msg := hs["__connect.errors.exception.message"]; !strings.HasPrefix(msg, "Converting byte[] to Kafka Connect data failed due to serialization error: ") {
		t.Errorf("exception message %q", msg)
	}
	if tr := hs["__connect.errors.exception.stacktrace"]; !strings.HasPrefix(tr, "org.apache.kafka.connect.errors.DataException: Converting byte[]") {
		t.Errorf("stack trace %q", tr)
	}
}

// With errors.tolerance=none the record still reaches the dead letter
// queue, and the task fails.
func TestSinkDeadLetterQueueNotTolerated(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	produceValues(t, w, "strict-in", `{"bad`)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "strict", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "strict-in",
			"value.converter":                                 "org.apache.kafka.connect.json.JsonConverter",
			"errors.deadletterqueue.topic.name":               "strict-dlq",
			"errors.deadletterqueue.topic.replication.factor": "1",
		},
	}))
	eventually(t, "the task to fail", func() bool { return w.state("strict") == "RUNNING/FAILED" })
	body := w.must(200, "GET", "/connectors/strict/tasks/0/status", "")
	if !strings.Contains(body, "Tolerance exceeded in error handler") {
		t.Fatalf("failed task status %s", body)
	}
	recs := readRecords(t, w.bootstrap(), "strict-dlq", 1)
	if string(recs[0].Value) != `{"bad` {
		t.Fatalf("dead letter record %q", recs[0].Value)
	}
	if hs := dlqHeaders(recs[0]); hs["__connect.errors.stage"] != "" {
		t.Errorf("context headers without context.headers.enable: %v", hs)
	}
	if body := w.must(200, "GET", "/connectors/strict/offsets", ""); body != `{"offsets":[]}` {
		t.Fatalf("offsets after the failure: %s", body)
	}
}

// A dead letter queue the sink consumes is refused; one the broker cannot
// create fails the task as it starts.
func TestSinkDeadLetterQueueRefused(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	code, body := w.do("POST", "/connectors", jsonString(map[string]any{
		"name": "loop", "config": map[string]string{
			"connector.class": "FileStreamSink", "topics": "a,loop-dlq", "errors.deadletterqueue.topic.name": "loop-dlq",
		},
	}))
	if code != 400 || !strings.Contains(body, "The DLQ topic 'loop-dlq' may not be included in the list of topics ('topics=[a, loop-dlq]') consumed by the connector") {
		t.Fatalf("a DLQ among the topics: %d %s", code, body)
	}
	code, body = w.do("POST", "/connectors", jsonString(map[string]any{
		"name": "loop", "config": map[string]string{
			"connector.class": "FileStreamSink", "topics.regex": "loop.*", "errors.deadletterqueue.topic.name": "loop-dlq",
		},
	}))
	if code != 400 || !strings.Contains(body, "The DLQ topic 'loop-dlq' may not be matched by the regex for the topics ('topics.regex=loop.*') consumed by the connector") {
		t.Fatalf("a DLQ the regex matches: %d %s", code, body)
	}
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "unmade", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "a",
			"errors.deadletterqueue.topic.name":               "unmade-dlq",
			"errors.deadletterqueue.topic.replication.factor": "3",
		},
	}))
	eventually(t, "the task to fail", func() bool { return w.state("unmade") == "RUNNING/FAILED" })
	body = w.must(200, "GET", "/connectors/unmade/tasks/0/status", "")
	if !strings.Contains(body, "Could not initialize dead letter queue with topic=unmade-dlq") {
		t.Fatalf("failed task status %s", body)
	}
}

// A row PostgreSQL refuses (a check constraint) reaches the dead letter
// queue through the JDBC sink's errant record reporter, as it was
// consumed, while the other rows of its batch are written.
func TestJdbcSinkRefusedRowToDeadLetterQueue(t *testing.T) {
	db, schema := servertest.PGSchema(t, "dlq")
	servertest.MustExec(t, db, "CREATE TABLE "+schema+".orders (id BIGINT PRIMARY KEY, qty BIGINT NOT NULL CHECK (qty >= 0))")
	w := startWorker(t, t.TempDir(), map[string]string{"value.converter": "org.apache.kafka.connect.json.JsonConverter"})
	var values []string
	for i, qty := range []int{5, -1, 7} {
		values = append(values, fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"qty"}],"optional":false,"name":"order"},"payload":{"id":%d,"qty":%d}}`, i+1, qty))
	}
	produceValues(t, w, "jdbc-in", values...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "jdbc-dlq", "config": map[string]string{
			"connector.class":                   "io.confluent.connect.jdbc.JdbcSinkConnector",
			"connection.url":                    "jdbc:postgresql://127.0.0.1:5432/test",
			"connection.user":                   "postgres",
			"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
			"topics":                            "jdbc-in",
			"table.name.format":                 schema + ".orders",
			"pk.mode":                           "record_value",
			"pk.fields":                         "id",
			"max.retries":                       "0",
			"errors.tolerance":                  "all",
			"errors.deadletterqueue.topic.name": "jdbc-dlq",
			"errors.deadletterqueue.topic.replication.factor": "1",
			"errors.deadletterqueue.context.headers.enable":   "true",
		},
	}))
	eventually(t, "the offset past every record", func() bool {
		_, body := w.do("GET", "/connectors/jdbc-dlq/offsets", "")
		return strings.Contains(body, `"offset":{"kafka_offset":3}`)
	})
	if end := endOffset(t, w, "jdbc-dlq"); end != 1 {
		t.Fatalf("the dead letter queue's end is %d once the offsets passed the record, want 1", end)
	}
	var rows []string
	rs, err := db.Query("SELECT id, qty FROM " + schema + ".orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var id, qty int64
		if err := rs.Scan(&id, &qty); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("%d:%d", id, qty))
	}
	if !slices.Equal(rows, []string{"1:5", "3:7"}) {
		t.Fatalf("rows %v", rows)
	}
	r := readRecords(t, w.bootstrap(), "jdbc-dlq", 1)[0]
	hs := dlqHeaders(r)
	if string(r.Value) != values[1] || hs["__connect.errors.offset"] != "1" || hs["__connect.errors.stage"] != "TASK_PUT" ||
		hs["__connect.errors.class.name"] != "org.apache.kafka.connect.sink.SinkTask" || !strings.Contains(hs["__connect.errors.exception.message"], "23514") {
		t.Fatalf("dead letter record %s with headers %v", r.Value, hs)
	}
}
