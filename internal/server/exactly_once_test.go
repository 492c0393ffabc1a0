package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Three worker processes with exactly.once.source.support=enabled on
// `connectd kafka`: a FileStreamSource streams lines while the worker
// running its task is killed with SIGKILL, twice; a read_committed
// consumer then sees every line exactly once, in order.
func TestExactlyOnceSourceSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const total = 100_000
	workers, kafkaAddr, writer := eosFileSource(t, "enabled", 20_000, map[string]string{"exactly.once.support": "required"})
	w0 := workers[0].rest()

	// Lines keep coming while the worker running the task is killed,
	// twice, so that the kill lands in the middle of a transaction.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for writer.written < total-1_000 && ctx.Err() == nil {
			writer.more(50)
			time.Sleep(10 * time.Millisecond)
		}
	})
	defer func() { stop(); wg.Wait() }()
	for kill := 0; kill < 2; kill++ {
		var owner string
		alive := workers[(kill+1)%3].rest()
		eventually(t, "the source task running", func() bool { owner = taskWorker(alive, "src"); return owner != "" })
		victim := workerAt(t, workers, owner)
		// Some records of the task's producer are in the topic first.
		eventually(t, "records in the topic", func() bool { return endOffsetAt(t, kafkaAddr, "eos-lines") > int64(kill+1)*5_000 })
		workers[victim].signal(syscall.SIGKILL)
		survivor := workers[(victim+1)%3].rest()
		eventually(t, "the task running on another worker", func() bool {
			w := taskWorker(survivor, "src")
			return w != "" && w != owner
		})
		workers[victim].start()
	}
	stop()
	wg.Wait()
	writer.more(total - writer.written)

	// read_committed: what the killed workers had in open transactions
	// was aborted, and the task went on from the offsets committed with
	// the records before.
	expectEachLineOnce(t, kafkaAddr, "eos-lines", total)
	// The task's worker shows the sizes of the transactions it committed.
	owner := workers[workerAt(t, workers, taskWorker(w0, "src"))].rest()
	if _, body := owner.do("GET", "/metrics", ""); !strings.Contains(body, `kafka_connect_source_task_transaction_size_max{connector="src",task="0"}`) {
		t.Errorf("no transaction size in the metrics of the task's worker:\n%s", body)
	}
}

// A zombie: the worker running the task is stopped (SIGSTOP) until the
// task runs elsewhere, then continued. The new task's producer fenced the
// zombie's: nothing the zombie had in flight becomes visible, it writes
// nothing more, and it rejoins the cluster.
func TestExactlyOnceZombieIsFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const total = 40_000
	workers, kafkaAddr, writer := eosFileSource(t, "enabled", 5_000, map[string]string{"exactly.once.support": "required"})
	w0 := workers[0].rest()
	var owner string
	eventually(t, "the source task running", func() bool { owner = taskWorker(w0, "src"); return owner != "" })
	zombie := workerAt(t, workers, owner)
	eventually(t, "records in the topic", func() bool { return endOffsetAt(t, kafkaAddr, "eos-lines") >= 5_000 })

	_ = workers[zombie].cmd.Process.Signal(syscall.SIGSTOP)
	// Lines the zombie cannot read: the task's next incarnation reads
	// them once it runs elsewhere.
	writer.more(15_000)
	survivor := workers[(zombie+1)%3].rest()
	eventually(t, "the task running on another worker", func() bool {
		w := taskWorker(survivor, "src")
		return w != "" && w != owner && survivor.state("src") == "RUNNING/RUNNING"
	})
	_ = workers[zombie].cmd.Process.Signal(syscall.SIGCONT)
	writer.more(total - writer.written)
	eventually(t, "the zombie healthy and in the cluster again", func() bool {
		code, body := workers[zombie].rest().do("GET", "/connectors/src/status", "")
		return code == 200 && strings.Contains(body, `"state":"RUNNING"`)
	})
	expectEachLineOnce(t, kafkaAddr, "eos-lines", total)
	// The zombie's task found itself fenced out; its failure, reported
	// in an older generation, does not replace the new task's status.
	// The task may be between workers a moment more: the zombie's claim
	// on it made it held twice, which is revoked from both holders and
	// then assigned afresh.
	eventually(t, "the zombie's task fenced out", func() bool {
		b, _ := os.ReadFile(workers[zombie].log)
		return strings.Contains(string(b), "INVALID_PRODUCER_EPOCH") || strings.Contains(string(b), "was fenced out by a newer one")
	})
	eventually(t, "the task running after the zombie's failure", func() bool { return survivor.state("src") == "RUNNING/RUNNING" })
}

// The two-step rolling upgrade of Kafka's docs: a cluster restarted worker
// by worker from disabled to preparing, then to enabled, while a source
// streams, loses and duplicates nothing.
func TestExactlyOnceUpgradePath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const total = 30_000
	workers, kafkaAddr, writer := eosFileSource(t, "disabled", 5_000, nil)
	for _, mode := range []string{"preparing", "enabled"} {
		for i, w := range workers {
			writer.more(1_000)
			w.signal(syscall.SIGTERM)
			setProp(t, w.props, "exactly.once.source.support", mode)
			w.start()
			other := workers[(i+1)%3].rest()
			eventually(t, "the source running after a restart into "+mode, func() bool { return other.state("src") == "RUNNING/RUNNING" })
		}
	}
	writer.more(total - writer.written)
	expectEachLineOnce(t, kafkaAddr, "eos-lines", total)
	// Enabled everywhere: the connector may now require exactly-once.
	w0 := workers[0].rest()
	w0.must(200, "PUT", "/connectors/src/config", jsonString(map[string]string{
		"connector.class": "FileStreamSource", "file": writer.in, "topic": "eos-lines", "exactly.once.support": "required",
	}))
	writer.more(1_000)
	expectEachLineOnce(t, kafkaAddr, "eos-lines", total+1_000)
}

// setProp sets key=value in a properties file, replacing the key's line.
func setProp(t *testing.T, path, key, value string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, key+"=") {
			out = append(out, line)
		}
	}
	out = append(out, key+"="+value)
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectEachLineOnce reads topic with a read_committed consumer and checks
// that it holds line-000000 to the line before total, each once, in
// order, and nothing after.
func expectEachLineOnce(t *testing.T, kafkaAddr, topic string, total int) {
	t.Helper()
	got := readCommitted(t, kafkaAddr, topic, total)
	if len(got) != total {
		t.Errorf("a read_committed consumer read %d lines, want %d", len(got), total)
	}
	for i, line := range got {
		if want := fmt.Sprintf("line-%06d", i); line != want {
			t.Fatalf("line %d is %q, want %q (a duplicate or a gap)", i, line, want)
		}
	}
}

// readCommitted reads the values of a topic of one partition with a
// read_committed consumer: once total are there (or 90 s passed), and
// then a second more, for anything after them, which would be extra.
func readCommitted(t *testing.T, kafkaAddr, topic string, total int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	poll := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for deadline := time.Now().Add(90 * time.Second); len(got) < total && time.Now().Before(deadline); {
		poll(2 * time.Second)
	}
	poll(time.Second)
	return got
}

// A JDBC source of two tables (two tasks) streams rows while the worker
// running its first task is killed with SIGKILL, and is then reconfigured,
// so that the leader fences out both tasks' producers before the new
// generation writes: a read_committed consumer sees every row of each
// table exactly once, in order.
func TestExactlyOnceJdbcSourceSurvivesKillAndReconfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db, schema := servertest.PGSchema(t, "eos")
	for _, table := range []string{"a", "b"} {
		servertest.MustExec(t, db, "CREATE TABLE "+schema+"."+table+" (id SERIAL PRIMARY KEY, note TEXT NOT NULL)")
	}
	_, workers := startProcCluster(t, 3, "exactly.once.source.support=enabled")
	kafkaAddr := brokerOf(t, workers[0])
	const perTable = 50_000
	insert := func(n int) {
		for _, table := range []string{"a", "b"} {
			servertest.MustExec(t, db, fmt.Sprintf("INSERT INTO %s.%s (note) SELECT 'n' || g FROM generate_series(1, %d) g", schema, table, n))
		}
	}
	insert(5_000)
	config := map[string]string{
		"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector", "tasks.max": "2",
		"connection.url": "jdbc:postgresql://127.0.0.1:5432/test", "connection.user": "postgres",
		"mode": "incrementing", "incrementing.column.name": "id", "table.whitelist": schema + ".a," + schema + ".b",
		"topic.prefix": "eos-", "poll.interval.ms": "50", "batch.max.rows": "1000", "exactly.once.support": "required",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
	w0 := workers[0].rest()
	w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "jdbc", "config": config}))
	eventually(t, "both tasks running", func() bool { return w0.state("jdbc") == "RUNNING/RUNNING/RUNNING" })

	inserted := 5_000
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for inserted < perTable-5_000 && ctx.Err() == nil {
			insert(250)
			inserted += 250
			time.Sleep(10 * time.Millisecond)
		}
	})
	defer func() { stop(); wg.Wait() }()
	var owner string
	eventually(t, "task 0 running", func() bool { owner = taskWorker(w0, "jdbc"); return owner != "" })
	victim := workerAt(t, workers, owner)
	eventually(t, "rows in the topic", func() bool { return endOffsetAt(t, kafkaAddr, "eos-a") > 8_000 })
	workers[victim].signal(syscall.SIGKILL)
	survivor := workers[(victim+1)%3].rest()
	eventually(t, "task 0 running on another worker", func() bool {
		w := taskWorker(survivor, "jdbc")
		return w != "" && w != owner && survivor.state("jdbc") == "RUNNING/RUNNING/RUNNING"
	})
	workers[victim].start()
	// New task configs: the leader fences both tasks' producers first.
	config["batch.max.rows"] = "700"
	survivor.must(200, "PUT", "/connectors/jdbc/config", jsonString(config))
	stop()
	wg.Wait()
	insert(perTable - inserted)
	for _, table := range []string{"a", "b"} {
		expectEachIDOnce(t, kafkaAddr, "eos-"+table, perTable)
	}
	// Two rounds: the first generation's (nothing to fence, a record),
	// and the second's, written once both producers were fenced out.
	eventually(t, "two task count records", func() bool {
		return countRecords(t, kafkaAddr, "connect-configs", "tasks-fencing-jdbc", `{"task-count":2}`) == 2
	})
}

// countRecords counts the records of a topic (read_committed) with this
// key and value.
func countRecords(t *testing.T, kafkaAddr, topic, key, value string) int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end := endOffsetAt(t, kafkaAddr, topic)
	n := 0
	for last := int64(-1); last < end-2; {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		if fs.Empty() {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			last = r.Offset
			if string(r.Key) == key && string(r.Value) == value {
				n++
			}
		})
	}
	return n
}

// expectEachIDOnce reads topic with a read_committed consumer and checks
// that its records' ids are 1 to total, each once, in order.
func expectEachIDOnce(t *testing.T, kafkaAddr, topic string, total int) {
	t.Helper()
	var ids []int64
	for _, v := range readCommitted(t, kafkaAddr, topic, total) {
		var rec struct{ ID int64 }
		if err := json.Unmarshal([]byte(v), &rec); err != nil {
			t.Fatalf("%s: record %s: %v", topic, v, err)
		}
		ids = append(ids, rec.ID)
	}
	if len(ids) != total {
		t.Errorf("%s: a read_committed consumer read %d rows, want %d", topic, len(ids), total)
	}
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("%s: row %d has id %d, want %d (a duplicate or a gap)", topic, i, id, i+1)
		}
	}
}

// eosFileSource starts three worker processes with the given
// exactly.once.source.support on `connectd kafka`, writes first lines of
// numbered lines and creates the FileStreamSource "src" of them into
// eos-lines, with extra config, once a worker with exactly-once support
// says its preflight checks take it. It returns the workers, the broker's
// address and the lines.
func eosFileSource(t *testing.T, support string, first int, extra map[string]string) ([]*procWorker, string, *numberedLines) {
	t.Helper()
	dir, workers := startProcCluster(t, 3, "exactly.once.source.support="+support)
	lines := &numberedLines{t: t, in: filepath.Join(dir, "eos-in.txt")}
	lines.more(first)
	config := map[string]string{"connector.class": "FileStreamSource", "name": "src", "file": lines.in, "topic": "eos-lines"}
	maps.Copy(config, extra)
	w0 := workers[0].rest()
	if body := w0.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(config)); !strings.Contains(body, `"error_count":0`) {
		t.Fatalf("validate %v: %s", config, body)
	}
	w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "src", "config": config}))
	eventually(t, "the source running", func() bool { return w0.state("src") == "RUNNING/RUNNING" })
	return workers, brokerOf(t, workers[0]), lines
}

// brokerOf is the bootstrap.servers of a worker's properties.
func brokerOf(t *testing.T, w *procWorker) string {
	b, err := os.ReadFile(w.props)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "bootstrap.servers="); ok {
			return v
		}
	}
	t.Fatal("no bootstrap.servers in " + w.props)
	return ""
}

// workerAt is the index of the worker whose REST URL is owner.
func workerAt(t *testing.T, workers []*procWorker, owner string) int {
	t.Helper()
	for i, w := range workers {
		if strings.HasSuffix(owner, fmt.Sprintf(":%d", w.port)) {
			return i
		}
	}
	t.Fatalf("no worker listens on %s", owner)
	return -1
}

// endOffsetAt is a topic's high watermark summed over its partitions.
func endOffsetAt(t *testing.T, addr, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

// The internal PUT /connectors/{name}/fence of a cluster with exactly-once
// source support: signed with the session key, sent to a follower, it is
// forwarded to the leader, which fences and records the round; Kafka's
// refusals otherwise. The preflight checks of such a worker take
// exactly.once.support=required for a connector that supports it.
func TestExactlyOnceFenceEndpoint(t *testing.T) {
	c := startCluster(t, 2, map[string]string{"exactly.once.source.support": "enabled"})
	w0, w1 := c.healthy(0), c.healthy(1)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, "a", "b")
	w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "eos", "exactly.once.support": "required",
	}}))
	w0.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": in + ".out", "topics": "eos",
	}}))
	eventually(t, "the source running", func() bool { return w0.state("src") == "RUNNING/RUNNING" })
	key := sessionKey(t, c.broker.Addr())
	fence := func(w *Distributed, name string, signed bool) (int, string) {
		k := key
		if !signed {
			k = nil
		}
		return internalRequest(t, "PUT", "http://"+w.RESTAddr+"/connectors/"+name+"/fence", k, nil)
	}
	for _, w := range c.workers {
		if code, body := fence(w, "src", true); code != 204 {
			t.Errorf("signed fence through %s: %d %s", w.RESTAddr, code, body)
		}
	}
	for _, f := range []struct {
		name   string
		signed bool
		code   int
		msg    string
	}{
		{"src", false, 400, "Internal request missing required signature"},
		{"nope", true, 404, "Connector nope not found"},
		{"sink", true, 400, "Connector sink is not a source connector"},
	} {
		code, body := fence(c.workers[1], f.name, f.signed)
		if code != f.code || !strings.Contains(body, f.msg) {
			t.Errorf("fence %s (signed %v): %d %s, want %d %q", f.name, f.signed, code, body, f.code, f.msg)
		}
	}
	body := w1.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(map[string]string{
		"connector.class": "FileStreamSource", "name": "x", "file": in, "topic": "t", "exactly.once.support": "required", "transaction.boundary": "interval",
	}))
	if !strings.Contains(body, `"error_count":0`) {
		t.Errorf("an exactly-once worker's preflight checks: %s", body)
	}
}

// Exactly-once is a distributed-mode feature: a standalone worker asked
// for it does not start, and refuses a connector that requires it, with
// Kafka's message.
func TestStandaloneRefusesExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{
		"listeners": "http://127.0.0.1:0", "embedded.kafka.listeners": "127.0.0.1:0",
		"embedded.kafka.data.dir": filepath.Join(dir, "kafka"), "offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"exactly.once.source.support": "enabled",
	}
	if s, err := StartStandalone(context.Background(), props, nil, builtin.Plugins(), logging.NewRegistry(io.Discard)); err == nil {
		s.Close()
		t.Fatal("a standalone worker started with exactly.once.source.support=enabled")
	} else if want := "Invalid value enabled for configuration exactly.once.source.support: Kafka Connect in standalone mode does not support exactly-once source connectors."; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	w := startWorker(t, dir, map[string]string{"exactly.once.source.support": "disabled"})
	config := jsonString(map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": filepath.Join(dir, "in.txt"), "topic": "t", "exactly.once.support": "required",
	}})
	if msg := errorMessage(t, w.must(400, "POST", "/connectors", config)); !strings.Contains(msg, "Kafka Connect in standalone mode does not support exactly-once source connectors.") {
		t.Errorf("create with exactly.once.support=required: %q", msg)
	}
	// The validate endpoint puts the error on the key.
	body := w.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(map[string]string{
		"connector.class": "FileStreamSource", "name": "src", "file": filepath.Join(dir, "in.txt"), "topic": "t", "exactly.once.support": "required",
	}))
	if !strings.Contains(body, `"name":"exactly.once.support","value":"required","recommended_values":[],"errors":["Kafka Connect in standalone mode does not support exactly-once source connectors."]`) {
		t.Errorf("validate: %s", body)
	}
}

// txnSource is a source connector whose task sets its own transaction
// boundaries (transaction.boundary=connector): records r-0 to r-39 in
// batches of 5, a commit after each record whose number ends in 9, and an
// abort after r-24. Its offsets are {"n": next record}.
type txnSource struct{ task *txnSourceTask }

func (*txnSource) Version() string                                         { return "test" }
func (*txnSource) Config() *connect.ConfigDef                              { return connect.NewConfigDef() }
func (*txnSource) Start(connect.ConnectorContext, map[string]string) error { return nil }
func (*txnSource) TaskConfigs(int) ([]map[string]string, error)            { return []map[string]string{{}}, nil }
func (*txnSource) Stop() error                                             { return nil }
func (*txnSource) TaskClass() string                                       { return "test.TxnSourceTask" }
func (s *txnSource) NewTask() connect.SourceTask                           { return s.task }
func (*txnSource) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}
func (*txnSource) CanDefineTransactionBoundaries(map[string]string) bool { return true }

type txnSourceTask struct {
	txn  connect.TransactionContext
	next int64

	mu        sync.Mutex
	committed []string // CommitRecord's records, in order
}

// CommitRecord implements connect.RecordCommitter.
func (t *txnSourceTask) CommitRecord(rec *connect.SourceRecord, meta connect.RecordMetadata) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.committed = append(t.committed, rec.Value.(string))
	return nil
}

func (*txnSourceTask) Version() string { return "test" }
func (t *txnSourceTask) Start(ctx connect.SourceTaskContext, _ map[string]string) error {
	t.txn = ctx.TransactionContext()
	if t.txn == nil {
		return errors.New("no transaction context with transaction.boundary=connector")
	}
	off, err := ctx.Offset(map[string]any{"source": "txn"})
	if err != nil {
		return err
	}
	if n, ok := off["n"].(int64); ok {
		t.next = n
	}
	return nil
}

func (t *txnSourceTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.next >= 40 {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
		return nil, nil
	}
	var recs []*connect.SourceRecord
	for range 5 {
		n := t.next
		t.next++
		rec := &connect.SourceRecord{
			SourcePartition: map[string]any{"source": "txn"}, SourceOffset: map[string]any{"n": t.next},
			Topic: "txn", ValueSchema: connect.StringSchema, Value: fmt.Sprintf("r-%d", n),
		}
		switch {
		case n == 24:
			t.txn.AbortTransactionAfter(rec)
		case n%10 == 9:
			t.txn.CommitTransactionAfter(rec)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

func (*txnSourceTask) Stop() error { return nil }

// Connector-defined transaction boundaries: what the task commits is
// visible to a read_committed consumer, what it aborts never is, and the
// aborted records' offsets are committed all the same, so that a restart
// does not read them again. The task's CommitRecord hears of each record
// once its transaction (or the commit after an abort) committed.
func TestExactlyOnceConnectorDefinedBoundaries(t *testing.T) {
	task := &txnSourceTask{}
	plugin := connect.Plugin{Class: "test.TxnSource", Type: connect.PluginSource, Version: "test", New: func() any { return &txnSource{task: task} }}
	c := startCluster(t, 1, map[string]string{"exactly.once.source.support": "enabled"}, plugin)
	w := c.healthy(0)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "txn", "config": map[string]string{
		"connector.class": "test.TxnSource", "exactly.once.support": "required", "transaction.boundary": "connector",
	}}))
	var want []string
	for n := range 40 {
		if n < 20 || n >= 25 {
			want = append(want, fmt.Sprintf("r-%d", n))
		}
	}
	if got := readCommitted(t, c.broker.Addr(), "txn", len(want)); !slices.Equal(got, want) {
		t.Fatalf("a read_committed consumer read %v,\nwant %v", got, want)
	}
	eventually(t, "the offset after r-39", func() bool {
		_, body := w.do("GET", "/connectors/txn/offsets", "")
		return strings.Contains(body, `"offset":{"n":40}`)
	})
	// The task hears of every record once its offset committed, the
	// aborted ones too (handled, never to be read again), as in Kafka.
	var all []string
	for n := range 40 {
		all = append(all, fmt.Sprintf("r-%d", n))
	}
	eventually(t, "CommitRecord for each record", func() bool {
		task.mu.Lock()
		defer task.mu.Unlock()
		return slices.Equal(task.committed, all)
	})
	w.must(202, "POST", "/connectors/txn/restart?includeTasks=true", "")
	eventually(t, "the task running again", func() bool { return w.state("txn") == "RUNNING/RUNNING" })
	if got := readCommitted(t, c.broker.Addr(), "txn", len(want)); !slices.Equal(got, want) {
		t.Fatalf("after a restart, a read_committed consumer read %v", got)
	}
}

// transaction.boundary=interval: transactions end every interval, also
// while the source has nothing new, so that what it sent becomes visible
// within an interval.
func TestExactlyOnceIntervalBoundary(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"exactly.once.source.support": "enabled"})
	w := c.healthy(0)
	writer := &numberedLines{t: t, in: filepath.Join(t.TempDir(), "in.txt")}
	writer.more(1_000)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": writer.in, "topic": "eos-lines",
		"transaction.boundary": "interval", "transaction.boundary.interval.ms": "300",
	}}))
	expectEachLineOnce(t, c.broker.Addr(), "eos-lines", 1_000)
	writer.more(500)
	expectEachLineOnce(t, c.broker.Addr(), "eos-lines", 1_500)
	if body := w.must(200, "GET", "/metrics", ""); !strings.Contains(body, `kafka_connect_source_task_transaction_size_max{connector="src",task="0"}`) {
		t.Errorf("no transaction sizes in the metrics")
	}
}

// An exactly-once task that reuses its records' memory gets a batch back
// only once its offsets are taken for their transaction: the task
// overwrites what it gets back at once, offsets included, and yet each
// transaction commits the offset of its own last record, never one
// overwritten or one of the batch polled after it.
func TestExactlyOnceReleasedRecordsKeepTheirOffsets(t *testing.T) {
	const batches, perBatch = 5, 600
	rel := &releases{batches: map[*connect.SourceRecord]int{}, polled: map[**connect.SourceRecord][]*connect.SourceRecord{}}
	const class = "test.ReleasingOffsetsSource"
	plugin := connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test",
		New: func() any {
			return &recordAcksConnector{newTask: func() connect.SourceTask {
				return &offsetReleasingTask{&releasingTask{numberedTask: numberedTask{batches: batches, perBatch: perBatch}, rel: rel}}
			}}
		}}
	c := startCluster(t, 1, map[string]string{"exactly.once.source.support": "enabled"}, plugin)
	w := c.healthy(0)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "releasing", "config": map[string]string{"connector.class": class, "topic": "releasing"},
	}))
	if got := readCommitted(t, c.broker.Addr(), "releasing", batches*perBatch); len(got) != batches*perBatch {
		t.Fatalf("a read_committed consumer read %d records, want %d", len(got), batches*perBatch)
	}
	eventually(t, "every batch released", func() bool { return rel.count() == batches })
	var want []string
	for n := 1; n <= batches; n++ {
		want = append(want, fmt.Sprintf(`{"next":%d}`, n*perBatch))
	}
	if got := readCommitted(t, c.broker.Addr(), "connect-offsets", batches); !slices.Equal(got, want) {
		t.Fatalf("the transactions committed the offsets %v, want %v", got, want)
	}
}

// offsetReleasingTask numbers its records' source offsets too, and
// overwrites them when it gets them back.
type offsetReleasingTask struct{ *releasingTask }

func (t *offsetReleasingTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	recs, err := t.releasingTask.Poll(ctx)
	for i, r := range recs {
		r.SourcePartition = map[string]any{"task": "releasing"}
		r.SourceOffset = map[string]any{"next": t.sent - len(recs) + i + 1}
	}
	return recs, err
}

func (t *offsetReleasingTask) ReleaseRecords(recs []*connect.SourceRecord) {
	t.releasingTask.ReleaseRecords(recs)
	for _, r := range recs {
		r.SourceOffset = map[string]any{"next": "released"}
	}
}

// A new exactly-once task starts from the offsets committed when its
// producer has fenced out the ones before it, not from what its worker had
// read by then: a transaction still open in the offsets topic as the task
// claims its transactional id (another writer's here, as a fenced
// incarnation's would be until the fencing aborts it) holds the task back
// until it ends, and the task then starts from what it committed.
func TestExactlyOnceTaskStartsFromCommittedOffsets(t *testing.T) {
	task := &offsetProbeTask{started: make(chan map[string]any, 1)}
	plugin := connect.Plugin{Class: "test.OffsetProbeSource", Type: connect.PluginSource, Version: "test",
		New: func() any { return &oneTaskSource{task: task} }}
	c := startCluster(t, 1, map[string]string{"exactly.once.source.support": "enabled"}, plugin)
	w := c.healthy(0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key, err := storage.EncodeOffsetKey("probe", map[string]any{"source": "probe"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kgo.NewClient(kgo.SeedBrokers(c.broker.Addr()), kgo.TransactionalID("another-writer"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := other.ProduceSync(ctx, &kgo.Record{Topic: "connect-offsets", Key: key, Value: []byte(`{"n":42}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "probe", "config": map[string]string{"connector.class": "test.OffsetProbeSource"}}))
	// The task's producer holds its transactional id: the task is past
	// its fencing, about to start.
	adm := kadm.NewClient(other)
	eventually(t, "the task's producer holding its transactional id", func() bool {
		txns, err := adm.ListTransactions(ctx, nil, nil)
		return err == nil && slices.Contains(txns.TransactionalIDs(), "connect-cluster-probe-0")
	})
	if err := other.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	task.mustStartFrom(ctx, t, 42)
}

// offsetProbeTask reports the offset it finds at its start, and then sends
// nothing.
type offsetProbeTask struct{ started chan map[string]any }

// mustStartFrom fails the test unless the task starts from offset {n: n}.
func (p *offsetProbeTask) mustStartFrom(ctx context.Context, t *testing.T, n int64) {
	t.Helper()
	select {
	case off := <-p.started:
		if off["n"] != n {
			t.Fatalf("the task started from offset %v, want the committed {n: %d}", off, n)
		}
	case <-ctx.Done():
		t.Fatal("the task did not start")
	}
}

func (*offsetProbeTask) Version() string { return "test" }
func (t *offsetProbeTask) Start(ctx connect.SourceTaskContext, _ map[string]string) error {
	off, err := ctx.Offset(map[string]any{"source": "probe"})
	select {
	case t.started <- off:
	default:
	}
	return err
}
func (*offsetProbeTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	<-ctx.Done()
	return nil, nil
}
func (*offsetProbeTask) Stop() error { return nil }
