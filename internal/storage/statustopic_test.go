package storage

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

const fixtureTrace = "org.apache.kafka.connect.errors.ConnectException: boom\n\tat org.apache.kafka.connect.file.FileStreamSourceTask.poll(FileStreamSourceTask.java:120)\n\tat org.apache.kafka.connect.runtime.AbstractWorkerSourceTask.poll(AbstractWorkerSourceTask.java:488)\n"

func startStatusTopic(t *testing.T, c *kfake.Cluster, topic string) *StatusTopic {
	t.Helper()
	s, err := NewStatusTopic(logCfg(c, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

func connStatus(c, state, worker string, gen int32) StatusRecord {
	return StatusRecord{Connector: c, State: state, WorkerID: worker, Generation: gen}
}

func taskStatus(c string, task int, state, worker string, gen int32) StatusRecord {
	return StatusRecord{Connector: c, IsTask: true, Task: task, State: state, WorkerID: worker, Generation: gen}
}

// (a) Java's records, read by our store.
func TestStatusTopicReadsJavaRecords(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(5, "connect-status"))
	produceRaw(t, rawClient(t, c), "connect-status", loadFixture(t, "status.records"))
	s := startStatusTopic(t, c, "connect-status")

	if got := s.Connectors(); !slices.Equal(got, []string{"file-src", "my-jdbc-src"}) {
		t.Fatalf("connectors = %v (a tombstone must remove 'gone')", got)
	}
	if got, ok := s.Connector("file-src"); !ok || got != connStatus("file-src", StateRunning, "10.0.0.5:8083", 7) {
		t.Errorf("file-src = %+v", got)
	}
	want0 := taskStatus("file-src", 0, StateFailed, "10.0.0.5:8083", 7)
	want0.Trace = fixtureTrace
	if got := s.Tasks("file-src"); !reflect.DeepEqual(got, []StatusRecord{want0}) {
		t.Errorf("file-src tasks = %+v", got)
	}
	if got, ok := s.Connector("my-jdbc-src"); !ok || got.State != StatePaused || got.Generation != 8 {
		t.Errorf("my-jdbc-src = %+v", got)
	}
	wantTasks := []StatusRecord{
		taskStatus("my-jdbc-src", 0, StateRunning, "10.0.0.6:8083", 8),
		// The late UNASSIGNED (generation 7) must not hide RUNNING (8).
		taskStatus("my-jdbc-src", 1, StateRunning, "10.0.0.5:8083", 8),
	}
	if got := s.Tasks("my-jdbc-src"); !reflect.DeepEqual(got, wantTasks) {
		t.Errorf("my-jdbc-src tasks = %+v\nwant %+v", got, wantTasks)
	}
	if _, ok := s.Task("my-jdbc-src", 2); ok {
		t.Error("deleted task 2 still has a status")
	}
	if got := s.Tasks("gone"); len(got) != 0 {
		t.Errorf("tasks of a deleted connector: %+v", got)
	}
	if got := s.Topics("file-src"); !slices.Equal(got, []string{"lines"}) {
		t.Errorf("file-src topics = %v", got)
	}
	if got := s.Topics("my-jdbc-src"); !slices.Equal(got, []string{"items", "orders"}) {
		t.Errorf("my-jdbc-src topics = %v", got)
	}
	if ts, ok := s.TopicStatus("file-src", "lines"); !ok || ts != (TopicStatus{Topic: "lines", Connector: "file-src", Task: 0, DiscoverTimestamp: 1717171717123}) {
		t.Errorf("lines topic status = %+v", ts)
	}

	// Reset writes tombstones; once read back the topics are gone.
	ctx := testCtx(t)
	if err := s.ResetTopics(ctx, "my-jdbc-src"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Topics("my-jdbc-src"); len(got) != 0 {
		t.Errorf("topics after reset = %v", got)
	}
	if got := s.Topics("file-src"); len(got) != 1 {
		t.Errorf("reset touched another connector: %v", got)
	}
}

// (b) Our writes, compared with Java's bytes partition by partition.
func TestStatusTopicWritesJavaBytes(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(5, "connect-status"))
	s := startStatusTopic(t, c, "connect-status")
	ctx := testCtx(t)
	failed := taskStatus("file-src", 0, StateFailed, "10.0.0.5:8083", 7)
	failed.Trace = fixtureTrace
	steps := []func() error{
		func() error { return s.Put(ctx, connStatus("file-src", StateRunning, "10.0.0.5:8083", 7)) },
		func() error { return s.Put(ctx, failed) },
		func() error {
			return s.PutTopic(ctx, TopicStatus{Topic: "lines", Connector: "file-src", Task: 0, DiscoverTimestamp: 1717171717123})
		},
		func() error { return s.Put(ctx, connStatus("my-jdbc-src", StatePaused, "10.0.0.6:8083", 8)) },
		func() error { return s.Put(ctx, taskStatus("my-jdbc-src", 0, StateRunning, "10.0.0.6:8083", 8)) },
		func() error { return s.Put(ctx, taskStatus("my-jdbc-src", 1, StateRunning, "10.0.0.5:8083", 8)) },
		func() error { return s.Put(ctx, taskStatus("my-jdbc-src", 1, StateUnassigned, "10.0.0.7:8083", 7)) },
		func() error { return s.Put(ctx, taskStatus("my-jdbc-src", 2, StateRunning, "10.0.0.7:8083", 6)) },
		func() error { return s.Put(ctx, taskStatus("my-jdbc-src", 2, StateDestroyed, "10.0.0.7:8083", 6)) },
		func() error {
			return s.PutTopic(ctx, TopicStatus{Topic: "orders", Connector: "my-jdbc-src", Task: 0, DiscoverTimestamp: 1717171800000})
		},
		func() error {
			return s.PutTopic(ctx, TopicStatus{Topic: "items", Connector: "my-jdbc-src", Task: 1, DiscoverTimestamp: 1717171800001})
		},
		func() error { return s.Put(ctx, connStatus("gone", StateRestarting, "10.0.0.5:8083", 5)) },
		func() error { return s.Put(ctx, taskStatus("gone", 0, StateRunning, "10.0.0.5:8083", 5)) },
		func() error { return s.DeleteTask(ctx, "gone", 0) },
		func() error { return s.DeleteConnector(ctx, "gone") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := loadFixture(t, "status.records")
	byPart := readAll(t, c, "connect-status")
	n := 0
	for p := int32(0); p < 5; p++ {
		var wantP []fixtureRecord
		for _, r := range want {
			if PartitionFor(r.Key, 5) == p {
				wantP = append(wantP, r)
			}
		}
		var gotP []fixtureRecord
		for _, r := range byPart[p] {
			gotP = append(gotP, fixtureRecord{Key: r.Key, Value: r.Value})
		}
		n += len(gotP)
		if d := diffRecords(gotP, wantP); d != "" {
			t.Errorf("partition %d differs from a Java worker's records:\n%s", p, d)
		}
	}
	if n != len(want) {
		t.Errorf("wrote %d records, want %d", n, len(want))
	}
}

func TestStatusEncodersMatchFixture(t *testing.T) {
	for _, r := range loadFixture(t, "status.records") {
		ev, err := DecodeStatusRecord(r.Key, r.Value)
		if err != nil {
			t.Errorf("%s: %v", r.Key, err)
			continue
		}
		var key string
		var value []byte
		switch ev.Kind {
		case StatusEventTopic:
			key, value = TopicStatusKey(ev.TopicStatus.Topic, ev.TopicStatus.Connector), EncodeTopicStatus(ev.TopicStatus)
		default:
			key, value = ev.Status.Key(), EncodeStatus(ev.Status)
			if ev.Tombstone {
				key, value = ConnectorStatusKey(ev.Connector), nil
				if ev.Kind == StatusEventTask {
					key = TaskStatusKey(ev.Connector, ev.Task)
				}
			}
		}
		if key != string(r.Key) || !bytes.Equal(value, r.Value) {
			t.Errorf("round trip of %s:\n got  %s %s\n want %s %s", r.Key, key, value, r.Key, r.Value)
		}
	}
	if EncodeStatus(StatusRecord{Connector: "c", State: StateDestroyed}) != nil {
		t.Error("DESTROYED is not a tombstone")
	}
}

func TestDecodeStatusRecordRules(t *testing.T) {
	ok := `{"state":"RUNNING","trace":null,"worker_id":"w:1","generation":3}`
	cases := []struct {
		key, value string
		kind       StatusEventKind
		connector  string
		task       int
		topic      string
		err        bool
	}{
		{key: "status-task-a-b-c-12", value: ok, kind: StatusEventTask, connector: "a-b-c", task: 12},
		{key: "status-task-a--1", value: ok, kind: StatusEventTask, connector: "a-", task: 1},
		{key: "status-task-a", value: ok, err: true},
		{key: "status-task-a-b", value: ok, err: true},
		{key: "status-connector-", value: ok, err: true},
		{key: "status-connector-x-1", value: ok, kind: StatusEventConnector, connector: "x-1"},
		{key: "status-topic-t:connector-c-1", value: `{"topic":{"name":"t","connector":"c-1","task":2,"discoverTimestamp":9}}`, kind: StatusEventTopic, connector: "c-1", topic: "t"},
		{key: "status-topic-:connector-c", value: `{}`, err: true},
		{key: "status-topic-t", value: `{}`, err: true},
		{key: "status-topic-t:connector-", value: `{}`, err: true},
		{key: "status-topic-t:x", value: `{}`, err: true},
		{key: "status-connector-x", value: `{"state":"BOGUS","worker_id":"w","generation":1}`, err: true},
		{key: "status-connector-x", value: `{"state":"RUNNING","worker_id":"w","generation":1.0}`, err: true},
		{key: "status-connector-x", value: `{"state":"RUNNING","worker_id":"w"}`, err: true},
		{key: "status-connector-x", value: `{"state":"RUNNING","trace":5,"worker_id":"w","generation":1}`, err: true},
		{key: "status-connector-x", value: `"RUNNING"`, err: true},
		{key: "status-connector-x", value: `{`, err: true},
		{key: "other-x", value: ok, err: true},
	}
	for _, tc := range cases {
		ev, err := DecodeStatusRecord([]byte(tc.key), []byte(tc.value))
		if (err != nil) != tc.err {
			t.Errorf("%s %s: err = %v, want error %t", tc.key, tc.value, err, tc.err)
		}
		if tc.err && tc.kind == StatusEventInvalid {
			continue
		}
		if ev.Kind != tc.kind || ev.Connector != tc.connector || ev.Task != tc.task || ev.Topic != tc.topic {
			t.Errorf("%s: got kind=%d connector=%q task=%d topic=%q", tc.key, ev.Kind, ev.Connector, ev.Task, ev.Topic)
		}
	}
	// Generation is an int32 in Java: a long is truncated.
	ev, err := DecodeStatusRecord([]byte("status-connector-x"), []byte(`{"state":"FAILED","trace":"t","worker_id":null,"generation":4294967297}`))
	if err != nil || ev.Status.Generation != 1 || ev.Status.Trace != "t" || ev.Status.WorkerID != "" {
		t.Errorf("decoded %+v, %v", ev.Status, err)
	}
}

func TestStatusTopicPutSafeAndReadRule(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(5, "connect-status"))
	s := startStatusTopic(t, c, "connect-status")
	ctx := testCtx(t)
	put := func(r StatusRecord) {
		t.Helper()
		if err := s.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.ReadToEnd(ctx); err != nil {
			t.Fatal(err)
		}
	}
	putSafe := func(r StatusRecord, want bool) {
		t.Helper()
		wrote, err := s.PutSafe(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if wrote != want {
			t.Fatalf("PutSafe(%+v) wrote=%t, want %t", r, wrote, want)
		}
		if err := s.ReadToEnd(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// No cached value: written.
	putSafe(connStatus("c", StateRunning, "A", 8), true)
	// Another worker, older generation: refused.
	putSafe(connStatus("c", StateUnassigned, "B", 7), false)
	// Same worker, any generation: written.
	putSafe(connStatus("c", StatePaused, "A", 1), true)
	// Another worker, generation not older (cached is now 1): written.
	putSafe(connStatus("c", StateFailed, "B", 1), true)
	if got, _ := s.Connector("c"); got.State != StateFailed || got.WorkerID != "B" {
		t.Fatalf("connector status = %+v", got)
	}
	// Tasks follow the same rule.
	put(taskStatus("c", 0, StateRunning, "A", 9))
	putSafe(taskStatus("c", 0, StateFailed, "B", 8), false)
	putSafe(taskStatus("c", 0, StateFailed, "B", 9), true)

	// Read rule: UNASSIGNED from another worker never overrides a RUNNING
	// of the same or a newer generation, but does override an older one;
	// from the worker that wrote the RUNNING it always does.
	put(taskStatus("c", 1, StateRunning, "A", 5))
	put(taskStatus("c", 1, StateUnassigned, "B", 5))
	if got, _ := s.Task("c", 1); got.State != StateRunning {
		t.Fatalf("UNASSIGNED of the same generation won: %+v", got)
	}
	put(taskStatus("c", 1, StateUnassigned, "B", 6))
	if got, _ := s.Task("c", 1); got.State != StateUnassigned {
		t.Fatalf("UNASSIGNED of a newer generation lost: %+v", got)
	}
	put(taskStatus("c", 2, StateRunning, "A", 5))
	put(taskStatus("c", 2, StateUnassigned, "A", 5))
	if got, _ := s.Task("c", 2); got.State != StateUnassigned {
		t.Fatalf("UNASSIGNED from the worker that ran the task lost: %+v", got)
	}

	// Deleting a task, then the connector (which drops all its tasks).
	if err := s.DeleteTask(ctx, "c", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Tasks("c"); len(got) != 2 || got[0].Task != 0 || got[1].Task != 2 {
		t.Fatalf("tasks after deleting task 1: %+v", got)
	}
	if err := s.DeleteConnector(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Connector("c"); ok || len(s.Tasks("c")) != 0 {
		t.Fatal("connector tombstone did not remove the connector and its tasks")
	}
	if err := s.Put(ctx, connStatus("c", "BOGUS", "A", 1)); err == nil {
		t.Fatal("invalid state accepted")
	}
	if err := s.Put(ctx, StatusRecord{State: StateRunning}); err == nil {
		t.Fatal("status without connector accepted")
	}
}
