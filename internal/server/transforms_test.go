package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// suffixTopic is a test transform: it appends its suffix to the topic.
type suffixTopic struct{ suffix string }

func (*suffixTopic) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "suffix", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "What to append."})
}

func (t *suffixTopic) Configure(config map[string]string) error {
	pc, err := t.Config().Parse(config)
	if err != nil {
		return err
	}
	if t.suffix = pc.String("suffix"); t.suffix == "" {
		return fmt.Errorf("the suffix may not be empty")
	}
	return nil
}

func (t *suffixTopic) Apply(r *connect.Record) (*connect.Record, error) {
	r.Topic += t.suffix
	return r, nil
}

// dropAll is a test transform that drops every record it is applied to.
type dropAll struct{}

func (dropAll) Config() *connect.ConfigDef                     { return connect.NewConfigDef() }
func (dropAll) Configure(map[string]string) error              { return nil }
func (dropAll) Apply(*connect.Record) (*connect.Record, error) { return nil, nil }

// valueHas is a test predicate: the value is a string holding text.
type valueHas struct{ text string }

func (*valueHas) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "text", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "What to look for."})
}

func (p *valueHas) Configure(config map[string]string) error {
	p.text = config["text"]
	return nil
}

func (p *valueHas) Test(r *connect.Record) bool {
	s, _ := r.Value.(string)
	return strings.Contains(s, p.text)
}

var testTransformPlugins = []connect.Plugin{
	{Class: "test.SuffixTopic", Type: connect.PluginTransformation, Version: "test", New: func() any { return new(suffixTopic) }},
	{Class: "test.DropAll", Type: connect.PluginTransformation, Version: "test", New: func() any { return dropAll{} }},
	{Class: "test.ValueHas", Type: connect.PluginPredicate, Version: "test", New: func() any { return new(valueHas) }},
}

// A source's records go through its transforms after Poll: renamed,
// dropped where a predicate (negated or not) says so; the offsets of
// dropped records are committed all the same.
func TestSourceTransformsRenameAndDrop(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, testTransformPlugins...)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "keep-1", "drop-2", "keep-3", "drop-4")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": "lines",
			"transforms": "rename,drop", "transforms.rename.type": "test.SuffixTopic", "transforms.rename.suffix": "-out",
			"transforms.drop.type": "test.DropAll", "transforms.drop.predicate": "keep", "transforms.drop.negate": "true",
			"predicates": "keep", "predicates.keep.type": "test.ValueHas", "predicates.keep.text": "keep",
		},
	}))
	if got := readTopic(t, w.bootstrap(), "lines-out", 2); !slices.Equal(got, []string{"keep-1", "keep-3"}) {
		t.Fatalf("lines-out holds %q", got)
	}
	size, _ := os.Stat(in)
	// The last line was dropped: its position is committed nonetheless.
	eventually(t, "the offset past the last, dropped, line", func() bool {
		_, body := w.do("GET", "/connectors/src/offsets", "")
		return strings.Contains(body, fmt.Sprintf(`"position":%d`, size.Size()))
	})
}

// A sink's records go through its transforms after the converters; those
// dropped are not put, and the group's offsets move past them.
func TestSinkTransformsDrop(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, testTransformPlugins...)
	cl := w.client()
	for _, v := range []string{"a", "skip-b", "c", "skip-d"} {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "events", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": "events",
			"transforms": "drop", "transforms.drop.type": "test.DropAll", "transforms.drop.predicate": "skip",
			"predicates": "skip", "predicates.skip.type": "test.ValueHas", "predicates.skip.text": "skip",
		},
	}))
	eventually(t, "the offset past every record", func() bool {
		_, body := w.do("GET", "/connectors/sink/offsets", "")
		return strings.Contains(body, `"offset":{"kafka_offset":4}`)
	})
	if got := readLines(out); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("the sink wrote %q", got)
	}
}

// A transforms config is checked when the connector is created, with
// Kafka's messages, and what the transform's own Configure refuses is
// refused then rather than failing a task later.
func TestTransformConfigsAreValidated(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, testTransformPlugins...)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "x")
	base := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "t"}
	for _, c := range []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{"negate without predicate", map[string]string{"transforms": "a", "transforms.a.type": "test.DropAll", "transforms.a.negate": "true"},
			"Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."},
		{"duplicate alias", map[string]string{"transforms": "a,a", "transforms.a.type": "test.DropAll"},
			"Invalid value [a, a] for configuration transforms: Duplicate alias provided."},
		{"unknown class", map[string]string{"transforms": "a", "transforms.a.type": "com.example.Nope"},
			"Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found."},
		{"missing type", map[string]string{"transforms": "a"},
			`Missing required configuration \"transforms.a.type\" which has no default value.`},
		{"missing own key", map[string]string{"transforms": "a", "transforms.a.type": "test.SuffixTopic"},
			`Missing required configuration \"transforms.a.suffix\" which has no default value.`},
		{"refused by Configure", map[string]string{"transforms": "a", "transforms.a.type": "test.SuffixTopic", "transforms.a.suffix": " "},
			"Invalid value test.SuffixTopic for configuration transforms.a.type: the suffix may not be empty"},
		{"unknown predicate", map[string]string{"transforms": "a", "transforms.a.type": "test.DropAll", "transforms.a.predicate": "p"},
			"There is no predicate with alias 'p' in 'predicates'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			config := map[string]string{}
			for k, v := range base {
				config[k] = v
			}
			for k, v := range c.extra {
				config[k] = v
			}
			code, body := w.do("PUT", "/connectors/bad/config", jsonString(config))
			if code != 400 || !strings.Contains(body, c.want) {
				t.Fatalf("got %d %s, want 400 with %s", code, body, c.want)
			}
		})
	}
}

// The validate endpoint shows each transform's and predicate's keys in
// Kafka's groups.
func TestValidateShowsTransformGroups(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, testTransformPlugins...)
	body := w.must(200, "PUT", "/connector-plugins/FileStreamSource/config/validate", jsonString(map[string]string{
		"connector.class": "FileStreamSource", "name": "v", "topic": "t", "file": "/dev/null",
		"transforms": "rename", "transforms.rename.type": "test.SuffixTopic", "transforms.rename.suffix": "-x", "transforms.rename.predicate": "p",
		"predicates": "p", "predicates.p.type": "test.ValueHas", "predicates.p.text": "y",
	}))
	var infos struct {
		ErrorCount int      `json:"error_count"`
		Groups     []string `json:"groups"`
		Configs    []struct {
			Definition struct {
				Name  string `json:"name"`
				Group string `json:"group"`
				Order int    `json:"order"`
			} `json:"definition"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(body), &infos); err != nil {
		t.Fatal(err)
	}
	if infos.ErrorCount != 0 {
		t.Fatalf("errors: %s", body)
	}
	if !slices.Contains(infos.Groups, "Transforms: rename") || !slices.Contains(infos.Groups, "Predicates: p") {
		t.Fatalf("groups %v", infos.Groups)
	}
	var keys []string
	for _, c := range infos.Configs {
		if strings.HasPrefix(c.Definition.Group, "Transforms: ") || strings.HasPrefix(c.Definition.Group, "Predicates: ") {
			keys = append(keys, fmt.Sprintf("%s@%s#%d", c.Definition.Name, c.Definition.Group, c.Definition.Order))
		}
	}
	want := []string{
		"transforms.rename.type@Transforms: rename#0", "transforms.rename.suffix@Transforms: rename#1",
		"transforms.rename.negate@Transforms: rename#2", "transforms.rename.predicate@Transforms: rename#3",
		"predicates.p.type@Predicates: p#0", "predicates.p.text@Predicates: p#1",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
}

// countSource polls the records "0".."n-1" once, and records what the
// worker tells it: CommitRecord for each record (offset -1 for one a
// transform dropped) and the batches handed back.
type countSource struct {
	n        int
	polled   bool
	mu       sync.Mutex
	commits  []int64
	released [][]*connect.SourceRecord
}

func (*countSource) Version() string                                          { return "test" }
func (*countSource) Start(connect.SourceTaskContext, map[string]string) error { return nil }
func (*countSource) Stop() error                                              { return nil }
func (s *countSource) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if s.polled {
		<-ctx.Done()
		return nil, nil
	}
	s.polled = true
	var out []*connect.SourceRecord
	for i := range s.n {
		out = append(out, &connect.SourceRecord{SourcePartition: map[string]any{"p": "x"}, SourceOffset: map[string]any{"i": int64(i)},
			Topic: "counted", ValueSchema: connect.StringSchema, Value: strconv.Itoa(i)})
	}
	return out, nil
}
func (s *countSource) CommitRecord(_ *connect.SourceRecord, meta connect.RecordMetadata) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits = append(s.commits, meta.Offset)
	return nil
}
func (s *countSource) ReleaseRecords(recs []*connect.SourceRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.released = append(s.released, slices.Clone(recs))
}

// A RecordCommitter hears of every record, those a transform dropped with
// offset -1; a RecordReleaser of a connector with transforms gets nothing
// of its batch back to reuse, since a transform may keep it.
func TestTransformsAndTheRecordHooks(t *testing.T) {
	// Enough records for the worker to transform them on several
	// goroutines, in parts.
	task := &countSource{n: 3000}
	plugin := connect.Plugin{Class: "test.CountSource", Type: connect.PluginSource, Version: "test", New: func() any { return &oneTaskSource{task: task} }}
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, append(testTransformPlugins, plugin)...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "count", "config": map[string]string{
			"connector.class": "test.CountSource",
			"transforms":      "drop", "transforms.drop.type": "test.DropAll", "transforms.drop.predicate": "odd",
			"predicates": "odd", "predicates.odd.type": "test.ValueHas", "predicates.odd.text": "1",
		},
	}))
	var want []string
	dropped := 0
	for i := range task.n {
		if v := strconv.Itoa(i); strings.Contains(v, "1") {
			dropped++
		} else {
			want = append(want, v)
		}
	}
	if got := readTopic(t, w.bootstrap(), "counted", len(want)); !slices.Equal(got, want) {
		t.Fatalf("counted holds %d records, want %d in order", len(got), len(want))
	}
	eventually(t, "a CommitRecord for each record and the batch handed back", func() bool {
		task.mu.Lock()
		defer task.mu.Unlock()
		return len(task.commits) == task.n && len(task.released) == 1
	})
	task.mu.Lock()
	defer task.mu.Unlock()
	var sentOffsets []int64
	droppedSeen := 0
	for _, o := range task.commits {
		if o == -1 {
			droppedSeen++
		} else {
			sentOffsets = append(sentOffsets, o)
		}
	}
	if droppedSeen != dropped || !slices.IsSorted(sentOffsets) {
		t.Errorf("CommitRecord heard of %d dropped records (want %d), and of the sent ones out of order: %t", droppedSeen, dropped, !slices.IsSorted(sentOffsets))
	}
	for i, r := range task.released[0] {
		if r != nil {
			t.Errorf("released entry %d is a record to reuse, despite the transforms", i)
		}
	}
}

// oneTaskSource is a source connector whose one task is task.
type oneTaskSource struct{ task connect.SourceTask }

func (*oneTaskSource) Version() string                                         { return "test" }
func (*oneTaskSource) Config() *connect.ConfigDef                              { return connect.NewConfigDef() }
func (*oneTaskSource) Start(connect.ConnectorContext, map[string]string) error { return nil }
func (*oneTaskSource) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{{}}, nil
}
func (*oneTaskSource) Stop() error                   { return nil }
func (*oneTaskSource) TaskClass() string             { return "test.CountSourceTask" }
func (s *oneTaskSource) NewTask() connect.SourceTask { return s.task }

// Kafka's own transforms and predicates, as a copied config names them:
// RegexRouter renames, InsertHeader's headers reach Kafka as the
// SimpleHeaderConverter writes them, and on the way back a sink drops, with
// Filter and HasHeaderKey, what carries a header.
func TestKafkaTransformsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "one", "two")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": "shop.public.orders",
			"transforms":                   "route,app,count",
			"transforms.route.type":        "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.route.regex":       `([^.]+)\.public\.(.*)`,
			"transforms.route.replacement": "eip.$2.placed",
			"transforms.app.type":          "InsertHeader", "transforms.app.header": "app", "transforms.app.value.literal": "connectd",
			"transforms.count.type": "org.apache.kafka.connect.transforms.InsertHeader", "transforms.count.header": "n", "transforms.count.value.literal": "42",
		},
	}))
	recs := readRecords(t, w.bootstrap(), "eip.orders.placed", 2)
	for _, r := range recs {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		if !slices.Equal(hs, []string{"app=connectd", "n=42"}) {
			t.Fatalf("record %s has headers %v", r.Value, hs)
		}
	}
	cl := w.client()
	for _, r := range []*kgo.Record{
		{Topic: "eip.orders.placed", Value: []byte("three"), Headers: []kgo.RecordHeader{{Key: "skip", Value: []byte("true")}}},
		{Topic: "eip.orders.placed", Value: []byte("four")},
	} {
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": "eip.orders.placed",
			"transforms": "skip", "transforms.skip.type": "Filter", "transforms.skip.predicate": "marked",
			"predicates": "marked", "predicates.marked.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "predicates.marked.name": "skip",
		},
	}))
	eventually(t, "the sink past every record", func() bool {
		_, body := w.do("GET", "/connectors/sink/offsets", "")
		return strings.Contains(body, `"offset":{"kafka_offset":4}`)
	})
	if got := readLines(out); !slices.Equal(got, []string{"one", "two", "four"}) {
		t.Fatalf("the sink wrote %q", got)
	}
}

// A chain of Kafka's transforms builds each record's struct in the one
// the stage before made, and in the last record's once it was converted
// (internal/owned): over batches converted on several goroutines, every
// record still reaches Kafka as its own line made it.
func TestSourceChainBuildsInPlace(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	const n = 5000 // batches of 2,000, converted in chunks on each core
	writeLines(t, in, lines(1, n)...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{
			"connector.class": "FileStreamSource", "file": in, "topic": "lines-in",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
			"transforms":                     "hoist,insert,rename,route",
			"transforms.hoist.type":          "org.apache.kafka.connect.transforms.HoistField$Value",
			"transforms.hoist.field":         "line",
			"transforms.insert.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
			"transforms.insert.static.field": "source",
			"transforms.insert.static.value": "file",
			"transforms.rename.type":         "org.apache.kafka.connect.transforms.ReplaceField$Value",
			"transforms.rename.renames":      "line:text",
			"transforms.route.type":          "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.route.regex":         "(.*)-in",
			"transforms.route.replacement":   "$1",
		},
	}))
	got := readTopic(t, w.bootstrap(), "lines", n)
	want := lines(1, n)
	for i := range want {
		want[i] = `{"text":"` + want[i] + `","source":"file"}`
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("record %d of %d is %s, want %s", i, len(got), got[i], want[i])
			}
		}
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
}

// With errors.tolerance=all a source record Kafka refuses (here one larger
// than the producer's batch.size) is skipped and its offset committed
// (KIP-779); with none the task fails.
func TestSourceToleratesRecordsKafkaRefuses(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, "small-1", strings.Repeat("x", 5000), "small-2")
	for _, c := range []struct{ name, tolerance string }{{"tolerant", "all"}, {"strict", "none"}} {
		w.must(201, "POST", "/connectors", jsonString(map[string]any{
			"name": c.name, "config": map[string]string{
				"connector.class": "FileStreamSource", "file": in, "topic": c.name,
				"producer.override.batch.size": "2000", "errors.tolerance": c.tolerance,
			},
		}))
	}
	if got := readTopic(t, w.bootstrap(), "tolerant", 2); !slices.Equal(got, []string{"small-1", "small-2"}) {
		t.Fatalf("tolerant holds %q", got)
	}
	size, _ := os.Stat(in)
	eventually(t, "the tolerant source's offset past the refused line", func() bool {
		_, body := w.do("GET", "/connectors/tolerant/offsets", "")
		return strings.Contains(body, fmt.Sprintf(`"position":%d`, size.Size()))
	})
	eventually(t, "the strict source's task to fail", func() bool { return w.state("strict") == "RUNNING/FAILED" })
}

// The connector-plugins API lists transforms, predicates, converters and
// header converters beside the connectors with Kafka's type names, and
// gives a transform's keys.
func TestPluginsListTransformsAndConverters(t *testing.T) {
	w := startWorker(t, t.TempDir(), nil)
	var all []struct {
		Class   string `json:"class"`
		Type    string `json:"type"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(w.must(200, "GET", "/connector-plugins?connectorsOnly=false", "")), &all); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range all {
		got[p.Type+" "+p.Class] = true
	}
	for _, want := range []string{
		"transformation org.apache.kafka.connect.transforms.RegexRouter",
		"transformation org.apache.kafka.connect.transforms.Cast$Value",
		"transformation io.debezium.transforms.ExtractNewRecordState",
		"predicate org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"converter org.apache.kafka.connect.json.JsonConverter",
		"header_converter org.apache.kafka.connect.json.JsonConverter",
		"header_converter org.apache.kafka.connect.storage.SimpleHeaderConverter",
	} {
		if !got[want] {
			t.Errorf("GET /connector-plugins?connectorsOnly=false lacks %s", want)
		}
	}
	var keys []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(w.must(200, "GET", "/connector-plugins/RegexRouter/config", "")), &keys); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if !slices.Equal(names, []string{"regex", "replacement"}) {
		t.Fatalf("RegexRouter's keys: %v", names)
	}
}

// A sink whose first transform is ExtractNewRecordState gets each change
// event's row; the value converter builds only the envelope fields the
// transform reads, and still refuses an event whose source block it did
// not build (tolerated here, so skipped, as a full conversion's error
// would be).
func TestSinkUnwrapsDebeziumEnvelopes(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters)
	cl := w.client()
	const schema = `{"type":"struct","fields":[` +
		`{"type":"struct","optional":true,"field":"before","fields":[{"type":"int64","field":"id"},{"type":"string","field":"name"}]},` +
		`{"type":"struct","optional":true,"field":"after","fields":[{"type":"int64","field":"id"},{"type":"string","field":"name"}]},` +
		`{"type":"struct","field":"source","fields":[{"type":"string","field":"version"},{"type":"int64","field":"ts_ms"}]},` +
		`{"type":"string","field":"op"}],"name":"shop.public.orders.Envelope"}`
	for _, payload := range []string{
		`{"before":null,"after":{"id":1,"name":"gizmo"},"source":{"version":"2.7.0.Final","ts_ms":1},"op":"c"}`,
		`{"before":null,"after":{"id":2,"name":"widget"},"source":{"version":"2.7.0.Final","ts_ms":"late"},"op":"c"}`,
		`{"before":{"id":1,"name":"gizmo"},"after":{"id":1,"name":"gadget"},"source":{"version":"2.7.0.Final","ts_ms":3},"op":"u"}`,
	} {
		v := []byte(`{"schema":` + schema + `,"payload":` + payload + `}`)
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out.txt")
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "sink", "config": map[string]string{
			"connector.class": "FileStreamSink", "file": out, "topics": "orders",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "errors.tolerance": "all",
			"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		},
	}))
	eventually(t, "the offset past every record", func() bool {
		_, body := w.do("GET", "/connectors/sink/offsets", "")
		return strings.Contains(body, `"offset":{"kafka_offset":3}`)
	})
	if got, want := readLines(out), []string{"Struct{id=1,name=gizmo}", "Struct{id=1,name=gadget}"}; !slices.Equal(got, want) {
		t.Fatalf("the sink wrote %q, want %q", got, want)
	}
}
