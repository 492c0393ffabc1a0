package worker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/twmb/franz-go/pkg/kgo"
)

func headerMap(t *testing.T, hs []kgo.RecordHeader) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, h := range hs {
		if _, dup := m[h.Key]; dup {
			t.Errorf("header %s twice", h.Key)
		}
		m[h.Key] = string(h.Value)
	}
	return m
}

// A failed record goes to the queue as it was consumed; with context
// headers, Kafka's __connect.errors.* headers follow its own.
func TestDeadLetterQueueRecord(t *testing.T) {
	ts := time.UnixMilli(1700000000123)
	consumed := &kgo.Record{
		Topic: "orders", Partition: 2, Offset: 41, Key: []byte("k"), Value: []byte("{bad"),
		Timestamp: ts, Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}},
	}
	jc := new(converters.JSONConverter)
	if err := jc.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	_, _, convErr := jc.ToConnectData("orders", consumed.Value)
	if convErr == nil {
		t.Fatal("the JsonConverter read bad JSON")
	}
	valueErr := &recordError{stage: stageValueConverter, class: "org.apache.kafka.connect.json.JsonConverter",
		err: fmt.Errorf("converting the value of orders[2]@41: %w", convErr)}
	transformErr := &recordError{stage: stageTransformation, class: "org.apache.kafka.connect.transforms.Cast$Value",
		err: errors.New("Unexpected type in Cast transformation: STRUCT")}
	putErr := &recordError{stage: stageTaskPut, class: javaSinkTask, err: &connect.RetriableError{Err: errors.New("database away")}}

	for _, c := range []struct {
		name       string
		headers    bool
		err        error
		stage      errorStage
		class      string
		wantClass  string
		wantMsg    string
		wantTraces []string
	}{
		{name: "without context headers", err: valueErr},
		{name: "value converter", headers: true, err: valueErr, stage: stageValueConverter, class: "org.apache.kafka.connect.json.JsonConverter",
			wantClass: javaDataException, wantMsg: convErr.Error(),
			wantTraces: []string{javaDataException + ": " + convErr.Error() + "\n", "\nCaused by: "}},
		{name: "transform", headers: true, err: transformErr, stage: stageTransformation, class: "org.apache.kafka.connect.transforms.Cast$Value",
			wantClass: javaDataException, wantMsg: "Unexpected type in Cast transformation: STRUCT",
			wantTraces: []string{javaDataException + ": Unexpected type in Cast transformation: STRUCT\n"}},
		{name: "retriable put", headers: true, err: putErr, stage: stageTaskPut, class: javaSinkTask,
			wantClass: javaRetriableException, wantMsg: "database away",
			wantTraces: []string{javaRetriableException + ": database away\nCaused by: *errors.errorString: database away\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &deadLetterQueue{topic: "dlq", headers: c.headers, connector: "sink", task: 3}
			stage, class := stageOf(c.err)
			rec := q.record(consumed, stage, class, c.err)
			if rec.Topic != "dlq" || string(rec.Key) != "k" || string(rec.Value) != "{bad" || !rec.Timestamp.Equal(ts) {
				t.Errorf("record %s %q %q %v", rec.Topic, rec.Key, rec.Value, rec.Timestamp)
			}
			if rec.Partition != 0 {
				t.Errorf("partition %d: the producer chooses it", rec.Partition)
			}
			if len(rec.Headers) == 0 || rec.Headers[0].Key != "trace" || string(rec.Headers[0].Value) != "abc" {
				t.Fatalf("the record's own header is not first: %v", rec.Headers)
			}
			if len(consumed.Headers) != 1 {
				t.Fatalf("the consumed record's headers changed: %v", consumed.Headers)
			}
			hs := headerMap(t, rec.Headers)
			if !c.headers {
				if len(hs) != 1 {
					t.Errorf("headers %v, want only the record's", hs)
				}
				return
			}
			want := map[string]string{
				"trace":                                 "abc",
				"__connect.errors.topic":                "orders",
				"__connect.errors.partition":            "2",
				"__connect.errors.offset":               "41",
				"__connect.errors.connector.name":       "sink",
				"__connect.errors.task.id":              "3",
				"__connect.errors.stage":                string(c.stage),
				"__connect.errors.class.name":           c.class,
				"__connect.errors.exception.class.name": c.wantClass,
				"__connect.errors.exception.message":    c.wantMsg,
			}
			for k, v := range want {
				if hs[k] != v {
					t.Errorf("%s = %q, want %q", k, hs[k], v)
				}
			}
			trace := hs["__connect.errors.exception.stacktrace"]
			for _, part := range c.wantTraces {
				if !strings.Contains(trace, part) {
					t.Errorf("stack trace %q lacks %q", trace, part)
				}
			}
			if len(hs) != len(want)+1 {
				t.Errorf("%d headers, want %d: %v", len(hs), len(want)+1, hs)
			}
		})
	}
}

// A record read without a timestamp is written without one.
func TestDeadLetterQueueRecordWithoutTimestamp(t *testing.T) {
	q := &deadLetterQueue{topic: "dlq"}
	rec := q.record(&kgo.Record{Topic: "t", Timestamp: time.UnixMilli(-1)}, stageValueConverter, "c", errors.New("x"))
	if !rec.Timestamp.IsZero() {
		t.Errorf("timestamp %v, want none", rec.Timestamp)
	}
}
