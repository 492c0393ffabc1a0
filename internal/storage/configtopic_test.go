package storage

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// eventLog is a ConfigListener that records calls as strings.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, fmt.Sprintf(format, args...))
}

func (e *eventLog) take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.events
	e.events = nil
	return out
}

func (e *eventLog) ConnectorConfigUpdated(name string)  { e.add("connector %s", name) }
func (e *eventLog) TaskConfigsUpdated(connector string) { e.add("tasks %s", connector) }
func (e *eventLog) TargetStateUpdated(name string)      { e.add("target %s", name) }
func (e *eventLog) SessionKeyUpdated()                  { e.add("session-key") }
func (e *eventLog) RestartRequested(name string, onlyFailed, includeTasks bool) {
	e.add("restart %s onlyFailed=%t includeTasks=%t", name, onlyFailed, includeTasks)
}
func (e *eventLog) LoggerLevelSet(namespace, level string) { e.add("logger %s=%s", namespace, level) }

var (
	fileSrcConfig = map[string]string{
		"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "name": "file-src", "tasks.max": "1", "topic": "lines",
	}
	fileSrcTask0 = map[string]string{
		"connector.class": "FileStreamSource", "file": "/tmp/in.txt", "name": "file-src",
		"task.class": "org.apache.kafka.connect.file.FileStreamSourceTask", "tasks.max": "1", "topic": "lines",
	}
	jdbcConfig = map[string]string{
		"connection.url": "jdbc:postgresql://db:5432/shop", "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
		"mode": "incrementing", "name": "my-jdbc-src", "tasks.max": "2",
	}
	oldSrcConfig = map[string]string{
		"connector.class": "FileStreamSink", "file": "/tmp/out.txt", "name": "old-src", "tasks.max": "1", "topics": "lines",
	}
	fixtureSessionKey = SessionKey{Key: func() []byte {
		b := make([]byte, 32)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}(), Algorithm: "HmacSHA256", CreationTimestamp: 1717171717123}
)

func jdbcTask(table string) map[string]string {
	m := map[string]string{"tables": table, "task.class": "io.confluent.connect.jdbc.source.JdbcSourceTask"}
	for k, v := range jdbcConfig {
		m[k] = v
	}
	return m
}

func startConfigTopic(t *testing.T, c *kfake.Cluster, topic string, l ConfigListener) *ConfigTopic {
	t.Helper()
	ct, err := NewConfigTopic(logCfg(c, topic), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ct.Close)
	if err := ct.Start(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return ct
}

// (a) A Java worker's records, read by our store.
func TestConfigTopicReadsJavaRecords(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	raw := rawClient(t, c)
	recs := loadFixture(t, "configs.records")
	produceRaw(t, raw, "connect-configs", recs)

	events := &eventLog{}
	ct := startConfigTopic(t, c, "connect-configs", events)
	if got := events.take(); len(got) != 0 {
		t.Fatalf("history was replayed through the listener: %v", got)
	}

	st := ct.Snapshot()
	if st.Offset != int64(len(recs)) {
		t.Errorf("Offset = %d, want %d (last offset + 1)", st.Offset, len(recs))
	}
	if got := st.ConnectorNames(); !slices.Equal(got, []string{"file-src", "my-jdbc-src"}) {
		t.Fatalf("connectors = %v", got)
	}
	fs := st.Connectors["file-src"]
	if !reflect.DeepEqual(fs.Config, fileSrcConfig) {
		t.Errorf("file-src config = %v", fs.Config)
	}
	if fs.TargetState != TargetStateStopped {
		t.Errorf("file-src target state = %s, want STOPPED (state.v2 wins over state)", fs.TargetState)
	}
	if fs.TaskCount != 1 || fs.Inconsistent || !reflect.DeepEqual(fs.Tasks, []map[string]string{fileSrcTask0}) {
		t.Errorf("file-src tasks = %d %v inconsistent=%t", fs.TaskCount, fs.Tasks, fs.Inconsistent)
	}
	if !reflect.DeepEqual(fs.AppliedConfig, fileSrcConfig) {
		t.Errorf("file-src applied config = %v", fs.AppliedConfig)
	}
	if !fs.PendingFencing || fs.TaskCountRecord != nil {
		t.Errorf("file-src fencing: pending=%t count=%v", fs.PendingFencing, fs.TaskCountRecord)
	}
	js := st.Connectors["my-jdbc-src"]
	if js.TargetState != TargetStatePaused || !reflect.DeepEqual(js.Config, jdbcConfig) {
		t.Errorf("my-jdbc-src = %s %v", js.TargetState, js.Config)
	}
	wantTasks := []map[string]string{jdbcTask("public.orders"), jdbcTask("public.items")}
	if js.TaskCount != 2 || !reflect.DeepEqual(js.Tasks, wantTasks) {
		t.Errorf("my-jdbc-src tasks = %d %v", js.TaskCount, js.Tasks)
	}
	if js.PendingFencing || js.TaskCountRecord == nil || *js.TaskCountRecord != 2 {
		t.Errorf("my-jdbc-src fencing: pending=%t count=%v", js.PendingFencing, js.TaskCountRecord)
	}
	if st.SessionKey == nil || !reflect.DeepEqual(*st.SessionKey, fixtureSessionKey) {
		t.Errorf("session key = %+v", st.SessionKey)
	}

	// Snapshots of the same state are one, built once: REST answers
	// take one each.
	if again := ct.Snapshot(); reflect.ValueOf(again.Connectors).UnsafePointer() != reflect.ValueOf(st.Connectors).UnsafePointer() {
		t.Error("a second snapshot of the same state was built again")
	}

	// Records arriving after the start reach the listener.
	produceRaw(t, raw, "connect-configs", []fixtureRecord{
		{Key: []byte("restart-connector-file-src"), Value: []byte(`{"include-tasks":false,"only-failed":true}`)},
		{Key: []byte("logger-cluster-org.apache.kafka"), Value: []byte(`{"level":"TRACE"}`)},
		{Key: []byte("target-state-file-src"), Value: []byte(`{"state":"STARTED","state.v2":"STARTED"}`)},
		{Key: []byte("target-state-file-src"), Value: []byte(`{"state":"STARTED","state.v2":"STARTED"}`)}, // no change: silent
		{Key: []byte("target-state-new-src"), Value: []byte(`{"state":"PAUSED","state.v2":"PAUSED"}`)},    // no connector yet: silent
	})
	if err := ct.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	want := []string{"restart file-src onlyFailed=true includeTasks=false", "logger org.apache.kafka=TRACE", "target file-src"}
	if got := events.take(); !slices.Equal(got, want) {
		t.Fatalf("listener calls = %q\nwant %q", got, want)
	}
}

// (b) Our store's writes, compared with a Java worker's bytes.
func TestConfigTopicWritesJavaBytes(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	ct := startConfigTopic(t, c, "connect-configs", nil)
	ctx := testCtx(t)
	stopped, paused := TargetStateStopped, TargetStatePaused
	steps := []func() error{
		func() error { return ct.PutConnectorConfig(ctx, "file-src", fileSrcConfig, &stopped) },
		func() error { return ct.PutTaskConfigs(ctx, "file-src", []map[string]string{fileSrcTask0}) },
		func() error { return ct.PutConnectorConfig(ctx, "my-jdbc-src", jdbcConfig, nil) },
		func() error {
			return ct.PutTaskConfigs(ctx, "my-jdbc-src", []map[string]string{jdbcTask("public.orders"), jdbcTask("public.items")})
		},
		func() error { return ct.PutTargetState(ctx, "my-jdbc-src", paused) },
		func() error { return ct.PutSessionKey(ctx, fixtureSessionKey) },
		func() error { return ct.PutRestartRequest(ctx, "my-jdbc-src", false, true) },
		func() error { return ct.PutTaskCountRecord(ctx, "my-jdbc-src", 2) },
		func() error { return ct.PutLoggerLevel(ctx, "org.apache.kafka.connect", "DEBUG") },
		func() error { return ct.PutConnectorConfig(ctx, "old-src", oldSrcConfig, nil) },
		func() error { return ct.RemoveConnector(ctx, "old-src") },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	got := recordsOf(t, readAll(t, c, "connect-configs"))
	if d := diffRecords(got, loadFixture(t, "configs.records")); d != "" {
		t.Fatalf("written records differ from a Java worker's:\n%s", d)
	}

	// Our own reader agrees with what a Java reader would build.
	if err := ct.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st := ct.Snapshot()
	if got := st.ConnectorNames(); !slices.Equal(got, []string{"file-src", "my-jdbc-src"}) {
		t.Fatalf("connectors = %v", got)
	}
	if st.Connectors["file-src"].TargetState != TargetStateStopped || st.Connectors["my-jdbc-src"].TargetState != TargetStatePaused {
		t.Fatalf("target states = %s, %s", st.Connectors["file-src"].TargetState, st.Connectors["my-jdbc-src"].TargetState)
	}

	// An empty task set writes just the commit.
	if err := ct.PutTaskConfigs(ctx, "file-src", nil); err != nil {
		t.Fatal(err)
	}
	all := recordsOf(t, readAll(t, c, "connect-configs"))
	last := all[len(all)-1]
	if string(last.Key) != "commit-file-src" || string(last.Value) != `{"tasks":0}` || len(all) != len(got)+1 {
		t.Fatalf("empty task set wrote %d records, last %s", len(all)-len(got), last)
	}
	if fs := ct.Snapshot().Connectors["file-src"]; fs.TaskCount != 0 || len(fs.Tasks) != 0 || fs.Inconsistent {
		t.Fatalf("after an empty task set: %+v", fs)
	}
	if err := ct.PutTargetState(ctx, "file-src", "RUNNING"); err == nil {
		t.Fatal("invalid target state accepted")
	}
}

// The pure encoders produce the fixture's bytes without any Kafka.
func TestConfigEncodersMatchFixture(t *testing.T) {
	stopped, _ := EncodeTargetState(TargetStateStopped)
	paused, _ := EncodeTargetState(TargetStatePaused)
	want := map[string][]byte{
		"target-state-file-src":                   stopped,
		"connector-file-src":                      EncodeConnectorConfig(fileSrcConfig),
		"task-file-src-0":                         EncodeTaskConfig(fileSrcTask0),
		"commit-file-src":                         EncodeTaskCommit(1),
		"connector-my-jdbc-src":                   EncodeConnectorConfig(jdbcConfig),
		"task-my-jdbc-src-0":                      EncodeTaskConfig(jdbcTask("public.orders")),
		"task-my-jdbc-src-1":                      EncodeTaskConfig(jdbcTask("public.items")),
		"commit-my-jdbc-src":                      EncodeTaskCommit(2),
		"target-state-my-jdbc-src":                paused,
		SessionKeyKey:                             EncodeSessionKey(fixtureSessionKey),
		"restart-connector-my-jdbc-src":           EncodeRestartRequest(false, true),
		"tasks-fencing-my-jdbc-src":               EncodeTaskCount(2),
		"logger-cluster-org.apache.kafka.connect": EncodeLoggerLevel("DEBUG"),
		"connector-old-src":                       EncodeConnectorConfig(oldSrcConfig),
	}
	for _, r := range loadFixture(t, "configs.records") {
		if r.Value == nil {
			continue
		}
		w, ok := want[string(r.Key)]
		if !ok {
			t.Errorf("no encoder case for %s", r.Key)
			continue
		}
		if !bytes.Equal(w, r.Value) {
			t.Errorf("%s:\n got  %s\n want %s", r.Key, w, r.Value)
		}
	}
	if k := TaskConfigKey("my-jdbc-src", 1); k != "task-my-jdbc-src-1" {
		t.Errorf("TaskConfigKey = %s", k)
	}
	if v := EncodeSessionKey(SessionKey{Key: []byte{1}, CreationTimestamp: 5}); string(v) != `{"key":"AQ==","algorithm":"HmacSHA256","creation-timestamp":5}` {
		t.Errorf("default algorithm: %s", v)
	}
	if v := EncodeConnectorConfig(map[string]string{"a\"<>": "\u2028\n/"}); string(v) != "{\"properties\":{\"a\\\"<>\":\"\u2028\\n/\"}}" {
		t.Errorf("escaping: %s", v)
	}
}

func TestDecodeConfigRecordRules(t *testing.T) {
	cases := []struct {
		key, value string
		tomb       bool
		want       ConfigRecord
		err        bool
	}{
		{key: "task-my-conn-name-12", value: `{"properties":{"a":"b"}}`,
			want: ConfigRecord{Type: ConfigRecordTask, Name: "my-conn-name", Task: 12, Properties: map[string]string{"a": "b"}}},
		// Java's split drops trailing empty strings, but keeps inner ones.
		{key: "task-foo--3", value: `{"properties":{}}`,
			want: ConfigRecord{Type: ConfigRecordTask, Name: "foo-", Task: 3, Properties: map[string]string{}}},
		{key: "task-foo-x", value: `{"properties":{}}`, err: true},
		{key: "task-foo", value: `{"properties":{}}`, err: true},
		{key: "task-foo-", value: `{"properties":{}}`, err: true},
		{key: "task-foo-99999999999", value: `{"properties":{}}`, err: true},
		// tasks-fencing- is not task-.
		{key: "tasks-fencing-a-b", value: `{"task-count":3}`, want: ConfigRecord{Type: ConfigRecordTaskCount, Name: "a-b", TaskCount: 3}},
		// restart-connector- is not connector-.
		{key: "restart-connector-x", value: `{"include-tasks":true}`, want: ConfigRecord{Type: ConfigRecordRestart, Name: "x", IncludeTasks: true}},
		{key: "restart-connector-x", value: `{"include-tasks":"yes","only-failed":1}`, want: ConfigRecord{Type: ConfigRecordRestart, Name: "x"}},
		// A pre-3.5 target state, and state.v2 preferred.
		{key: "target-state-x", value: `{"state":"PAUSED"}`, want: ConfigRecord{Type: ConfigRecordTargetState, Name: "x", TargetState: "PAUSED"}},
		{key: "target-state-x", value: `{"state":"PAUSED","state.v2":"STOPPED"}`, want: ConfigRecord{Type: ConfigRecordTargetState, Name: "x", TargetState: "STOPPED"}},
		{key: "target-state-x", value: `{"state":"PAUSED","state.v2":7}`, want: ConfigRecord{Type: ConfigRecordTargetState, Name: "x", TargetState: "PAUSED"}},
		{key: "target-state-x", value: `{"state":"RUNNING"}`, err: true},
		{key: "target-state-x", value: `{"state.v2":"BOGUS","state":"PAUSED"}`, err: true},
		{key: "target-state-x", tomb: true, want: ConfigRecord{Type: ConfigRecordTargetState, Name: "x", Tombstone: true}},
		{key: "connector-x", tomb: true, want: ConfigRecord{Type: ConfigRecordConnector, Name: "x", Tombstone: true}},
		{key: "connector-x", value: `{"properties":{"a":null,"n":5,"f":1.5,"b":true,"s":"v"}}`,
			want: ConfigRecord{Type: ConfigRecordConnector, Name: "x", Properties: map[string]string{"n": "5", "f": "1.5", "b": "true", "s": "v"}}},
		{key: "connector-x", value: `{"properties":{"a":{}}}`, err: true},
		{key: "connector-x", value: `{"properties":[]}`, err: true},
		{key: "connector-x", value: `[1]`, err: true},
		{key: "connector-x", value: `{"properties":{}} trailing`, want: ConfigRecord{Type: ConfigRecordConnector, Name: "x", Properties: map[string]string{}}},
		{key: "commit-x", value: `{"tasks":3}`, want: ConfigRecord{Type: ConfigRecordCommit, Name: "x", TaskCount: 3}},
		{key: "commit-x", value: `{"tasks":4294967299}`, want: ConfigRecord{Type: ConfigRecordCommit, Name: "x", TaskCount: 3}},
		{key: "commit-x", value: `{"tasks":3.0}`, err: true},
		{key: "commit-x", value: `{}`, err: true},
		{key: "session-key", value: `{"key":"AQI","algorithm":"HmacSHA256","creation-timestamp":7}`,
			want: ConfigRecord{Type: ConfigRecordSessionKey, SessionKey: SessionKey{Key: []byte{1, 2}, Algorithm: "HmacSHA256", CreationTimestamp: 7}}},
		{key: "session-key", value: `{"key":"!!","algorithm":"HmacSHA256","creation-timestamp":7}`, err: true},
		{key: "session-key", value: `{"key":"AQI=","algorithm":"HmacSHA256","creation-timestamp":7.5}`, err: true},
		{key: "session-keys", value: `{}`, err: true},
		{key: "logger-cluster-a.b", value: `{"level":"WARN"}`, want: ConfigRecord{Type: ConfigRecordLoggerLevel, Name: "a.b", Level: "WARN"}},
		{key: "logger-cluster-a.b", value: `{"level":null}`, err: true},
		{key: "garbage", value: `{}`, err: true},
	}
	for _, tc := range cases {
		var value []byte
		if !tc.tomb {
			value = []byte(tc.value)
		}
		got, err := DecodeConfigRecord([]byte(tc.key), value)
		if tc.err {
			if err == nil {
				t.Errorf("%s %s: decoded %+v, want an error", tc.key, tc.value, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tc.key, tc.value, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s:\n got  %+v\n want %+v", tc.key, tc.value, got, tc.want)
		}
	}
}

func TestConfigTopicTaskCommitRules(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	raw := rawClient(t, c)
	cfg := `{"properties":{"name":"x"}}`
	task := func(n int, v string) fixtureRecord {
		return fixtureRecord{Key: fmt.Appendf(nil, "task-%s", v), Value: fmt.Appendf(nil, `{"properties":{"id":"%d"}}`, n)}
	}
	r := func(k, v string) fixtureRecord { return fixtureRecord{Key: []byte(k), Value: []byte(v)} }
	produceRaw(t, raw, "connect-configs", []fixtureRecord{
		// Incomplete (task 1 compacted away): inconsistent.
		r("connector-incon", cfg), task(0, "incon-0"), r("commit-incon", `{"tasks":2}`),
		// Extra task ids (left behind by compaction) are tolerated.
		r("connector-extra", cfg), task(0, "extra-0"), task(1, "extra-1"), task(2, "extra-2"), r("commit-extra", `{"tasks":2}`),
		// The buffer is cleared at every commit: task 0 before the failed
		// commit does not count for the next one.
		r("connector-clear", cfg), task(0, "clear-0"), r("commit-clear", `{"tasks":2}`), task(1, "clear-1"), r("commit-clear", `{"tasks":2}`),
		// A commit for a connector that no longer exists is ignored and
		// drops its leftovers; a later config has no tasks.
		task(0, "ghost-0"), r("commit-ghost", `{"tasks":1}`), r("connector-ghost", cfg),
		// A complete commit repairs an inconsistent connector.
		r("connector-fixed", cfg), task(0, "fixed-0"), r("commit-fixed", `{"tasks":2}`),
		task(0, "fixed-0"), task(1, "fixed-1"), r("commit-fixed", `{"tasks":2}`),
		// Tasks go away with their connector.
		r("connector-deleted", cfg), task(0, "deleted-0"), r("commit-deleted", `{"tasks":1}`), {Key: []byte("connector-deleted")},
		// Target state rules: written before the config; tombstone with a
		// config left falls back to STARTED; 0.9-era config without any.
		r("target-state-early", `{"state":"PAUSED","state.v2":"PAUSED"}`), r("connector-early", cfg),
		r("connector-fallback", cfg), r("target-state-fallback", `{"state":"PAUSED"}`), {Key: []byte("target-state-fallback")},
		r("connector-legacy", cfg),
		// Ignored records.
		r("bogus-key", `{}`), r("task-incon-x", `{"properties":{}}`), r("connector-bad", `[]`),
	})
	ct := startConfigTopic(t, c, "connect-configs", nil)
	st := ct.Snapshot()

	check := func(name string, count int, tasks int, inconsistent bool) {
		t.Helper()
		cs, ok := st.Connectors[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if cs.TaskCount != count || len(cs.Tasks) != tasks || cs.Inconsistent != inconsistent {
			t.Errorf("%s: count=%d tasks=%d inconsistent=%t; want %d %d %t", name, cs.TaskCount, len(cs.Tasks), cs.Inconsistent, count, tasks, inconsistent)
		}
	}
	check("incon", 2, 0, true)
	check("extra", 2, 2, false)
	check("clear", 2, 0, true)
	check("ghost", 0, 0, false)
	check("fixed", 2, 2, false)
	if got := st.Connectors["fixed"].Tasks[1]["id"]; got != "1" {
		t.Errorf("fixed task 1 = %q", got)
	}
	if _, ok := st.Connectors["deleted"]; ok {
		t.Error("deleted connector still present")
	}
	if _, ok := st.Connectors["bad"]; ok {
		t.Error("malformed connector record applied")
	}
	for name, want := range map[string]string{"early": "PAUSED", "fallback": "STARTED", "legacy": "STARTED"} {
		if got := st.Connectors[name].TargetState; got != want {
			t.Errorf("%s target state = %s, want %s", name, got, want)
		}
	}

	// A value that is not JSON is dropped before it counts as read, as in
	// Java (its converter fails first), so the config offset stays put.
	before := st.Offset
	produceRaw(t, raw, "connect-configs", []fixtureRecord{r("connector-junk", "not json")})
	if err := ct.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if after := ct.Snapshot().Offset; after != before {
		t.Errorf("offset moved from %d to %d over a non-JSON record", before, after)
	}
	produceRaw(t, raw, "connect-configs", []fixtureRecord{r("bogus-key-2", "{}")})
	if err := ct.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if after := ct.Snapshot().Offset; after != before+2 {
		t.Errorf("offset = %d after an ignored JSON record, want %d", after, before+2)
	}
}

func TestConfigTopicListenerSeesOwnWrites(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(1, "connect-configs"))
	events := &eventLog{}
	ct := startConfigTopic(t, c, "connect-configs", events)
	ctx := testCtx(t)
	paused := TargetStatePaused
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ct.PutConnectorConfig(ctx, "a-b", map[string]string{"name": "a-b"}, &paused))
	must(ct.PutTaskConfigs(ctx, "a-b", []map[string]string{{"t": "0"}}))
	must(ct.PutTargetState(ctx, "a-b", TargetStateStarted))
	must(ct.PutSessionKey(ctx, fixtureSessionKey))
	must(ct.PutRestartRequest(ctx, "a-b", true, true))
	must(ct.PutLoggerLevel(ctx, "root", "INFO"))
	must(ct.RemoveConnector(ctx, "a-b"))
	must(ct.Refresh(ctx))
	want := []string{
		"connector a-b", // the initial target state precedes the config: silent
		"tasks a-b",
		"target a-b",
		"session-key",
		"restart a-b onlyFailed=true includeTasks=true",
		"logger root=INFO",
		"connector a-b", // removal; the target-state tombstone is silent
	}
	if got := events.take(); !slices.Equal(got, want) {
		t.Fatalf("listener calls:\n got  %q\n want %q", got, want)
	}
	if st := ct.Snapshot(); len(st.Connectors) != 0 {
		t.Fatalf("connectors left after removal: %v", st.ConnectorNames())
	}
}

func TestConfigTopicConstructorChecks(t *testing.T) {
	cfg := KafkaLogConfig{Topic: "t", Seeds: []string{"127.0.0.1:1"}, OnRecord: func(*kgo.Record) {}}
	if _, err := NewConfigTopic(cfg, nil); err == nil {
		t.Error("NewConfigTopic accepted an OnRecord")
	}
	if _, err := NewConfigTopic(KafkaLogConfig{Seeds: []string{"127.0.0.1:1"}}, nil); err == nil {
		t.Error("NewConfigTopic accepted an empty topic")
	}
}
