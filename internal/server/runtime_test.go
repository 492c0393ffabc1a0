package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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
	if !strings.Contains(body, `"state":"FAILED"`) || !strings.Contains(body, `"trace":"org.apache.kafka.connect.errors.ConnectException: Tolerance exceeded in error handler: converting the value of plain[0]@0`) {
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

// A source task that asks for each record's acknowledgement (Java's
// commitRecord) gets it once per record, with the offset Kafka gave that
// record, across batches whose Kafka records and converted bytes reuse
// the same memory; every record reaches Kafka with its own key and value.
func TestCommitRecordGetsEachRecordsOwnMetadata(t *testing.T) {
	const batches, perBatch = 4, 700
	acks := &recordAcks{offsets: map[string][]int64{}}
	const class = "test.RecordAcksSource"
	plugin := connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test",
		New: func() any { return &recordAcksConnector{acks: acks, batches: batches, perBatch: perBatch} }}
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, plugin)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "acks", "config": map[string]string{"connector.class": class, "topic": "acks"},
	}))
	eventually(t, "every record acknowledged", func() bool { return acks.count() == batches*perBatch })
	acks.mu.Lock()
	defer acks.mu.Unlock()
	for i := range batches * perBatch {
		got := acks.offsets[strconv.Itoa(i)]
		if len(got) != 1 || got[0] != int64(i) {
			t.Fatalf("record %d: acknowledged at offsets %v, want once at %d", i, got, i)
		}
	}
	if acks.topics != 0 {
		t.Fatalf("%d acknowledgements named another topic than acks", acks.topics)
	}

	for i, r := range readRecords(t, w.bootstrap(), "acks", batches*perBatch) {
		if r.Offset != int64(i) || string(r.Key) != recordAcksKey(i) || string(r.Value) != strconv.Itoa(i) {
			t.Fatalf("record %d: offset %d, key %q, value %q; want key %q, value %q",
				i, r.Offset, r.Key, r.Value, recordAcksKey(i), strconv.Itoa(i))
		}
	}
}

// recordAcksKey is record i's key: its length varies, so that a batch's
// bytes outgrow the buffer they are written into.
func recordAcksKey(i int) string { return "k" + strings.Repeat("-", i%97) + strconv.Itoa(i) }

type recordAcks struct {
	mu      sync.Mutex
	offsets map[string][]int64 // by record value
	n       int
	topics  int // acknowledgements for a topic other than "acks"
}

func (a *recordAcks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

type recordAcksConnector struct {
	acks              *recordAcks
	batches, perBatch int
	topic             string
	newTask           func() connect.SourceTask // when set, the tasks
}

func (*recordAcksConnector) Version() string            { return "test" }
func (*recordAcksConnector) Config() *connect.ConfigDef { return connect.NewConfigDef() }
func (c *recordAcksConnector) Start(_ connect.ConnectorContext, config map[string]string) error {
	c.topic = config["topic"]
	return nil
}
func (c *recordAcksConnector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{{"topic": c.topic}}, nil
}
func (*recordAcksConnector) Stop() error       { return nil }
func (*recordAcksConnector) TaskClass() string { return "test.RecordAcksSourceTask" }
func (c *recordAcksConnector) NewTask() connect.SourceTask {
	if c.newTask != nil {
		return c.newTask()
	}
	return &recordAcksTask{numberedTask: numberedTask{batches: c.batches, perBatch: c.perBatch}, acks: c.acks}
}

// numberedTask sends batches of perBatch records, record i with key
// recordAcksKey(i) and value i, then nothing more.
type numberedTask struct {
	batches, perBatch int
	topic             string
	sent              int
}

func (*numberedTask) Version() string { return "test" }
func (t *numberedTask) Start(_ connect.SourceTaskContext, config map[string]string) error {
	t.topic = config["topic"]
	return nil
}
func (t *numberedTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.sent == t.batches*t.perBatch {
		<-ctx.Done()
		return nil, nil
	}
	recs := make([]*connect.SourceRecord, t.perBatch)
	for i := range recs {
		recs[i] = &connect.SourceRecord{Topic: t.topic, KeySchema: connect.StringSchema, Key: recordAcksKey(t.sent),
			ValueSchema: connect.StringSchema, Value: strconv.Itoa(t.sent)}
		t.sent++
	}
	return recs, nil
}
func (*numberedTask) Stop() error { return nil }

type recordAcksTask struct {
	numberedTask
	acks *recordAcks
}

func (t *recordAcksTask) CommitRecord(rec *connect.SourceRecord, meta connect.RecordMetadata) error {
	t.acks.mu.Lock()
	defer t.acks.mu.Unlock()
	v := rec.Value.(string)
	t.acks.offsets[v] = append(t.acks.offsets[v], meta.Offset)
	if meta.Topic != "acks" {
		t.acks.topics++
	}
	t.acks.n++
	return nil
}

// A source task that reuses its records' memory gets each batch back once,
// when the runtime reads it no more: after converting it, or for a task
// that also asks for acknowledgements, after CommitRecord saw each of its
// records. The task overwrites what it gets back at once, so a record
// read after its release would reach Kafka, or CommitRecord, overwritten.
// It gets back the very slice Poll returned, every record in it: nothing
// but the worker holds them after their conversion.
func TestReleasedRecordsAreReadNoMore(t *testing.T) {
	const batches, perBatch = 5, 600
	for _, withAcks := range []bool{false, true} {
		t.Run(fmt.Sprintf("acks=%v", withAcks), func(t *testing.T) {
			rel := &releases{batches: map[*connect.SourceRecord]int{}, polled: map[**connect.SourceRecord][]*connect.SourceRecord{}}
			const class = "test.ReleasingSource"
			plugin := connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test",
				New: func() any {
					return &recordAcksConnector{newTask: func() connect.SourceTask {
						task := &releasingTask{numberedTask: numberedTask{batches: batches, perBatch: perBatch}, rel: rel}
						if withAcks {
							return &releasingAcksTask{task}
						}
						return task
					}}
				}}
			dir := t.TempDir()
			w := startWorker(t, dir, stringConverters, plugin)
			w.must(201, "POST", "/connectors", jsonString(map[string]any{
				"name": "releasing", "config": map[string]string{"connector.class": class, "topic": "releasing"},
			}))
			eventually(t, "every batch released", func() bool { return rel.count() == batches })
			for i, r := range readRecords(t, w.bootstrap(), "releasing", batches*perBatch) {
				if string(r.Key) != recordAcksKey(i) || string(r.Value) != strconv.Itoa(i) {
					t.Fatalf("record %d reached Kafka as %q=%q: read after its release", i, r.Key, r.Value)
				}
			}
			rel.mu.Lock()
			defer rel.mu.Unlock()
			for first, n := range rel.batches {
				if n != 1 {
					t.Fatalf("the batch of record %v was released %d times", first.Value, n)
				}
			}
			if rel.notHandedBack != 0 {
				t.Fatalf("%d released batches were not the slice Poll returned, each record in it: nothing but the worker "+
					"holds a record after its conversion, so every one is handed back", rel.notHandedBack)
			}
			if withAcks && (rel.acked != batches*perBatch || rel.ackedLate != 0) {
				t.Fatalf("CommitRecord ran for %d records, %d of them already released; want %d, none",
					rel.acked, rel.ackedLate, batches*perBatch)
			}
		})
	}
}

type releases struct {
	mu        sync.Mutex
	batches   map[*connect.SourceRecord]int // releases, by the batch's first record
	acked     int
	ackedLate int // CommitRecord calls for records already released
	// polled holds a copy of each batch Poll returned, by its slice's
	// first element; notHandedBack counts the batches released as
	// another slice or with records missing (nil) or changed.
	polled        map[**connect.SourceRecord][]*connect.SourceRecord
	notHandedBack int
}

func (r *releases) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

type releasingTask struct {
	numberedTask
	rel *releases
}

func (t *releasingTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	recs, err := t.numberedTask.Poll(ctx)
	if len(recs) > 0 {
		t.rel.mu.Lock()
		defer t.rel.mu.Unlock()
		t.rel.polled[&recs[0]] = slices.Clone(recs)
	}
	return recs, err
}

func (t *releasingTask) ReleaseRecords(recs []*connect.SourceRecord) {
	t.rel.mu.Lock()
	defer t.rel.mu.Unlock()
	if polled, ok := t.rel.polled[&recs[0]]; !ok || !slices.Equal(polled, recs) {
		t.rel.notHandedBack++
	}
	t.rel.batches[recs[0]]++
	for _, r := range recs {
		r.Key, r.Value = "released", "released"
	}
}

type releasingAcksTask struct{ *releasingTask }

func (t *releasingAcksTask) CommitRecord(rec *connect.SourceRecord, _ connect.RecordMetadata) error {
	t.rel.mu.Lock()
	defer t.rel.mu.Unlock()
	t.rel.acked++
	if rec.Value == "released" {
		t.rel.ackedLate++
	}
	return nil
}

// A source record that cannot be converted fails its task with the
// reason, and nothing of its batch reaches Kafka: the batches before it
// are sent and their offsets committed, so a restart reads the failed
// batch again rather than sending part of it twice.
func TestUnconvertibleRecordSendsNothingOfItsBatch(t *testing.T) {
	const perBatch = 50
	const class = "test.BadRecordSource"
	plugin := connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test",
		New: func() any {
			return &recordAcksConnector{newTask: func() connect.SourceTask {
				return &badRecordTask{numberedTask: numberedTask{batches: 2, perBatch: perBatch}}
			}}
		}}
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, plugin)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "bad", "config": map[string]string{"connector.class": class, "topic": "bad"},
	}))
	eventually(t, "the task to fail", func() bool { return w.state("bad") == "RUNNING/FAILED" })
	body := w.must(200, "GET", "/connectors/bad/tasks/0/status", "")
	if !strings.Contains(body, "source record has no topic") {
		t.Fatalf("failed task status %s", body)
	}
	// The task flushed its producer before it failed: the end is final.
	ends, err := kadm.NewClient(w.client()).ListEndOffsets(context.Background(), "bad")
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("bad", 0)
	got := readTopic(t, w.bootstrap(), "bad", int(end.Offset))
	if len(got) != perBatch || got[0] != "0" || got[perBatch-1] != strconv.Itoa(perBatch-1) {
		t.Fatalf("topic holds %d records %v, want the first batch's %d", len(got), got, perBatch)
	}
	want := fmt.Sprintf(`{"offsets":[{"partition":{"task":"bad"},"offset":{"next":%d}}]}`, perBatch)
	if body := w.must(200, "GET", "/connectors/bad/offsets", ""); body != want {
		t.Fatalf("offsets %s, want %s", body, want)
	}
}

// badRecordTask numbers its records with source offsets; the second
// batch's fourth record has no topic.
type badRecordTask struct{ numberedTask }

func (t *badRecordTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	recs, err := t.numberedTask.Poll(ctx)
	for i, r := range recs {
		r.SourcePartition = map[string]any{"task": "bad"}
		r.SourceOffset = map[string]any{"next": t.sent - len(recs) + i + 1}
		if t.sent > t.perBatch && i == 3 {
			r.Topic = ""
		}
	}
	return recs, err
}

// A source task's producer asks for its producer id while the task
// starts, so that the first batch waits only for its own produce request.
// The task's Start waits for the broker to see the request; had the
// producer waited for a record, it would see none.
func TestSourceProducerReadyBeforeFirstRecord(t *testing.T) {
	kc, inits := initCountingBroker(t)
	started := make(chan bool, 1)
	const class = "test.WarmProducerSource"
	plugin := connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test",
		New: func() any {
			return &recordAcksConnector{newTask: func() connect.SourceTask {
				return &startHookTask{numberedTask: numberedTask{batches: 1, perBatch: 1}, start: func() {
					deadline := time.Now().Add(10 * time.Second)
					for inits.Load() == 0 && time.Now().Before(deadline) {
						time.Sleep(5 * time.Millisecond)
					}
					started <- inits.Load() > 0
				}}
			}}
		}}
	props := map[string]string{"bootstrap.servers": kc.ListenAddrs()[0]}
	for k, v := range stringConverters {
		props[k] = v
	}
	w := startWorker(t, t.TempDir(), props, plugin)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "warm", "config": map[string]string{"connector.class": class, "topic": "warm"},
	}))
	select {
	case ready := <-started:
		if !ready {
			t.Fatal("the broker saw no InitProducerID while the task started")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task did not start")
	}
	if got := readTopic(t, kc.ListenAddrs()[0], "warm", 1); len(got) != 1 || got[0] != "0" {
		t.Fatalf("topic holds %q, want the task's record", got)
	}
}

// startHookTask runs start at the end of its Start.
type startHookTask struct {
	numberedTask
	start func()
}

func (t *startHookTask) Start(ctx connect.SourceTaskContext, config map[string]string) error {
	if err := t.numberedTask.Start(ctx, config); err != nil {
		return err
	}
	t.start()
	return nil
}

// At-least-once source tasks whose producer settings are the same share
// one producer (one InitProducerID), one with settings of its own gets
// another; the shared one outlives the deletion of a connector that used
// it, and a producer is made again once every task that used it stopped.
func TestSourceTasksShareAProducer(t *testing.T) {
	kc, inits := initCountingBroker(t)
	addr := kc.ListenAddrs()[0]
	props := map[string]string{"bootstrap.servers": addr}
	for k, v := range stringConverters {
		props[k] = v
	}
	dir := t.TempDir()
	w := startWorker(t, dir, props)
	source := func(name string, extra ...string) string {
		in := filepath.Join(dir, name+".txt")
		writeLines(t, in, name+"-1")
		config := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": name}
		for i := 0; i < len(extra); i += 2 {
			config[extra[i]] = extra[i+1]
		}
		w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": name, "config": config}))
		if got := readTopic(t, addr, name, 1); got[0] != name+"-1" {
			t.Fatalf("topic %s holds %q", name, got)
		}
		return in
	}
	source("a")
	inB := source("b")
	source("c", "producer.override.linger.ms", "1")
	if n := inits.Load(); n != 2 {
		t.Fatalf("%d producers for a, b and c (a and b the same settings), want 2", n)
	}

	w.must(204, "DELETE", "/connectors/a", "")
	f, err := os.OpenFile(inB, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("b-2\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Partitioned without keys, the two lines may be in either order.
	if got := readTopic(t, addr, "b", 2); !slices.Contains(got, "b-2") {
		t.Fatalf("b after a was deleted: %q", got)
	}
	w.must(204, "DELETE", "/connectors/b", "")
	w.must(204, "DELETE", "/connectors/c", "")
	source("d")
	if n := inits.Load(); n != 3 {
		t.Fatalf("%d producers after a, b and c stopped and d started, want 3", n)
	}
}

// initCountingBroker is a broker that counts the InitProducerID requests
// it answers: one per producer made.
func initCountingBroker(t *testing.T) (*kfake.Cluster, *atomic.Int32) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	inits := new(atomic.Int32)
	kc.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		inits.Add(1)
		return nil, nil, false
	})
	return kc, inits
}
