package file

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestRegistered(t *testing.T) {
	plugins, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		class string
		typ   connect.PluginType
	}{
		{SourceConnectorClass, SourceConnectorClass, connect.PluginSource},
		{"FileStreamSource", SourceConnectorClass, connect.PluginSource},
		{"FileStreamSourceConnector", SourceConnectorClass, connect.PluginSource},
		{SinkConnectorClass, SinkConnectorClass, connect.PluginSink},
		{"FileStreamSink", SinkConnectorClass, connect.PluginSink},
	} {
		p, err := plugins.Lookup(c.name)
		if err != nil {
			t.Fatalf("LookupPlugin(%s): %v", c.name, err)
		}
		if p.Class != c.class || p.Type != c.typ || p.Version != "3.9.0" {
			t.Errorf("LookupPlugin(%s) = %+v", c.name, p)
		}
		switch x := p.New().(type) {
		case connect.SourceConnector:
			if c.typ != connect.PluginSource || x.TaskClass() != SourceTaskClass || x.Version() != "3.9.0" {
				t.Errorf("%s: wrong instance", c.name)
			}
			if _, ok := x.(connect.SourceOffsetAlterer); !ok {
				t.Errorf("%s: no SourceOffsetAlterer", c.name)
			}
			if x.NewTask().Version() != "3.9.0" {
				t.Errorf("%s: task version", c.name)
			}
		case connect.SinkConnector:
			if c.typ != connect.PluginSink || x.TaskClass() != SinkTaskClass || x.Version() != "3.9.0" {
				t.Errorf("%s: wrong instance", c.name)
			}
			if _, ok := x.(connect.SinkOffsetAlterer); !ok {
				t.Errorf("%s: no SinkOffsetAlterer", c.name)
			}
		default:
			t.Errorf("%s: New() returned %T", c.name, x)
		}
	}
}

func TestSourceConfigDef(t *testing.T) {
	def := (&SourceConnector{}).Config()
	var names []string
	for _, k := range def.Keys() {
		names = append(names, k.Name)
	}
	if strings.Join(names, ",") != "file,topic,batch.size" {
		t.Fatalf("keys %v", names)
	}
	file, topic, batch := def.Key("file"), def.Key("topic"), def.Key("batch.size")
	if file.Type != connect.ConfigString || file.Default != nil || file.Required || file.Importance != connect.High ||
		file.Doc != "Source filename. If not specified, the standard input will be used" {
		t.Errorf("file: %+v", file)
	}
	if topic.Type != connect.ConfigString || !topic.Required || topic.Doc != "The topic to publish data to" {
		t.Errorf("topic: %+v", topic)
	}
	if batch.Type != connect.ConfigInt || batch.Default != int32(2000) || batch.Importance != connect.Low {
		t.Errorf("batch.size: %+v", batch)
	}

	pc, err := def.Parse(map[string]string{"topic": "t"})
	if err != nil || pc.Int("batch.size") != 2000 || pc.Get("file") != nil {
		t.Errorf("defaults: %v %v", pc, err)
	}
	if _, err := def.Parse(map[string]string{}); err == nil ||
		err.Error() != `Missing required configuration "topic" which has no default value.` {
		t.Errorf("missing topic: %v", err)
	}
	if _, err := def.Parse(map[string]string{"topic": ""}); err == nil ||
		err.Error() != "Invalid value  for configuration topic: String must be non-empty" {
		t.Errorf("empty topic: %v", err)
	}
	if err := (&SourceConnector{}).Start(nil, map[string]string{"file": "x"}); err == nil {
		t.Error("Start without topic succeeded")
	}
}

func TestSinkConfigDef(t *testing.T) {
	keys := (&SinkConnector{}).Config().Keys()
	if len(keys) != 1 || keys[0].Name != "file" || keys[0].Type != connect.ConfigString || keys[0].Default != nil ||
		keys[0].Doc != "Destination filename. If not specified, the standard output will be used" {
		t.Errorf("sink keys %+v", keys)
	}
}

func TestSourceTaskConfigs(t *testing.T) {
	config := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "in.txt", "topic": "t", "tasks.max": "5"}
	c := &SourceConnector{}
	if err := c.Start(nil, config); err != nil {
		t.Fatal(err)
	}
	for _, maxTasks := range []int{1, 5, 0} {
		cfgs, err := c.TaskConfigs(maxTasks)
		if err != nil || len(cfgs) != 1 {
			t.Fatalf("TaskConfigs(%d) = %d configs, %v; want 1", maxTasks, len(cfgs), err)
		}
		if len(cfgs[0]) != len(config) || cfgs[0]["file"] != "in.txt" || cfgs[0]["topic"] != "t" || cfgs[0]["name"] != "src" {
			t.Errorf("task config %v, want the connector config", cfgs[0])
		}
	}
	// The task config is a copy.
	cfgs, _ := c.TaskConfigs(1)
	cfgs[0]["file"] = "changed"
	if config["file"] != "in.txt" {
		t.Error("task config aliases the connector config")
	}
}

func TestSinkTaskConfigs(t *testing.T) {
	config := map[string]string{"name": "sink", "file": "out.txt", "topics": "a"}
	c := &SinkConnector{}
	if err := c.Start(nil, config); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 0} {
		cfgs, err := c.TaskConfigs(n)
		if err != nil || len(cfgs) != n {
			t.Fatalf("TaskConfigs(%d) = %d configs, %v", n, len(cfgs), err)
		}
		for _, cfg := range cfgs {
			if len(cfg) != 3 || cfg["file"] != "out.txt" || cfg["topics"] != "a" {
				t.Errorf("task config %v", cfg)
			}
		}
	}
	off := int64(5)
	ok, err := c.AlterOffsets(config, map[connect.TopicPartition]*int64{{Topic: "a"}: &off, {Topic: "b"}: nil})
	if !ok || err != nil {
		t.Errorf("sink AlterOffsets = %v, %v; want true, nil", ok, err)
	}
}

func TestSourceAlterOffsets(t *testing.T) {
	const (
		noFile     = "Offsets cannot be modified if the 'file' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."
		nilPart    = "Partition objects cannot be null"
		noFilename = "Partition objects should contain the key 'filename'"
		noPosition = "Offset objects should either be null or contain the key 'position'"
		notLong    = "The value for the 'position' key in the offset is expected to be a Long value"
		negative   = "The value for the 'position' key in the offset should be a non-negative value"
	)
	withFile := map[string]string{"file": "in.txt", "topic": "t"}
	part := map[string]any{"filename": "in.txt"}
	pos := func(v any) map[string]any { return map[string]any{"position": v} }
	cases := []struct {
		name    string
		config  map[string]string
		offsets []connect.SourceOffset
		want    string // "" means accepted
	}{
		{"valid", withFile, []connect.SourceOffset{{Partition: part, Offset: pos(int64(10))}}, ""},
		{"zero", withFile, []connect.SourceOffset{{Partition: part, Offset: pos(int64(0))}}, ""},
		{"empty request", withFile, nil, ""},
		{"other file", withFile, []connect.SourceOffset{{Partition: map[string]any{"filename": "old.txt"}, Offset: pos(int64(3))}}, ""},
		{"tombstone for anything", withFile, []connect.SourceOffset{
			{Partition: map[string]any{"garbage": true}}, {Partition: nil}, {Partition: part}}, ""},
		{"stdin", map[string]string{"topic": "t"}, []connect.SourceOffset{{Partition: part, Offset: pos(int64(1))}}, noFile},
		{"stdin empty file", map[string]string{"file": "", "topic": "t"}, nil, noFile},
		{"stdin tombstone", map[string]string{"topic": "t"}, []connect.SourceOffset{{Partition: part}}, noFile},
		{"null partition", withFile, []connect.SourceOffset{{Partition: nil, Offset: pos(int64(1))}}, nilPart},
		{"partition without filename", withFile, []connect.SourceOffset{{Partition: map[string]any{"file": "in.txt"}, Offset: pos(int64(1))}}, noFilename},
		{"offset without position", withFile, []connect.SourceOffset{{Partition: part, Offset: map[string]any{"offset": int64(1)}}}, noPosition},
		{"empty offset", withFile, []connect.SourceOffset{{Partition: part, Offset: map[string]any{}}}, noPosition},
		{"string position", withFile, []connect.SourceOffset{{Partition: part, Offset: pos("10")}}, notLong},
		{"double position", withFile, []connect.SourceOffset{{Partition: part, Offset: pos(10.5)}}, notLong},
		{"null position", withFile, []connect.SourceOffset{{Partition: part, Offset: pos(nil)}}, notLong},
		{"negative position", withFile, []connect.SourceOffset{{Partition: part, Offset: pos(int64(-1))}}, negative},
		// Offset checks come before partition checks, as in Kafka.
		{"bad offset and partition", withFile, []connect.SourceOffset{{Partition: nil, Offset: pos(int64(-1))}}, negative},
		{"one bad among good", withFile, []connect.SourceOffset{
			{Partition: part, Offset: pos(int64(1))}, {Partition: map[string]any{}, Offset: pos(int64(1))}}, noFilename},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, err := (&SourceConnector{}).AlterOffsets(c.config, c.offsets)
			if c.want == "" {
				if !ok || err != nil {
					t.Errorf("AlterOffsets = %v, %v; want true, nil", ok, err)
				}
				return
			}
			if err == nil || err.Error() != c.want {
				t.Errorf("AlterOffsets error %v, want %q", err, c.want)
			}
		})
	}
}
