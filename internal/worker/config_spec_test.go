package worker

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every key ParseConfig and ParseDistributedConfig read is declared in the
// spec, with the defaults the hand-written parsers had; and every declared
// key is read (or refused, which TestParseConfigRefusesUnprovidedProtections
// covers).
func TestWorkerSpec(t *testing.T) {
	common := []struct {
		key, set string
		def      any
		get      func(*Config) any // nil: only refused when set otherwise
	}{
		{"bootstrap.servers", "a:9092, b:9092", []string(nil), func(c *Config) any { return c.BootstrapServers }},
		{"embedded.kafka.listeners", "PLAINTEXT://127.0.0.1:0", "127.0.0.1:9092", func(c *Config) any { return c.EmbeddedListen }},
		{"embedded.kafka.data.dir", "/d", "connectd-data/kafka", func(c *Config) any { return c.EmbeddedDataDir }},
		{"listeners", "http://127.0.0.1:0", []string{"http://:8083"}, func(c *Config) any { return c.Listeners }},
		{"rest.request.max.bytes", "10", int64(0), func(c *Config) any { return c.RESTMaxRequestBytes }},
		{"rest.request.body.timeout.ms", "10", time.Duration(0), func(c *Config) any { return c.RESTBodyTimeout }},
		{"rest.max.connections", "10", 0, func(c *Config) any { return c.RESTMaxConnections }},
		{"admin.listeners", "", true, func(c *Config) any { return c.AdminOnMain }},
		{"console.enable", "false", true, func(c *Config) any { return c.Console }}, // on by default with the embedded broker
		{"config.providers", "", nil, nil}, // read by configprovider before the worker's config is parsed
		{"metrics.listeners", "http://127.0.0.1:0", []string(nil), func(c *Config) any { return c.MetricsAddrs }},
		{"rest.extension.classes", "", nil, nil},
		{"access.control.allow.origin", "", nil, nil},
		{"access.control.allow.methods", "", nil, nil},
		{"response.http.headers.config", "", nil, nil},
		{"ssl.client.auth", "", nil, nil},
		{"rest.advertised.listener", "", nil, nil},
		{"connector.client.config.override.policy", "", nil, nil},
		{"rest.advertised.host.name", "h", "", func(c *Config) any { return c.AdvertisedHost }},
		{"rest.advertised.port", "1", 0, func(c *Config) any { return c.AdvertisedPort }},
		{"offset.flush.interval.ms", "1", 60 * time.Second, func(c *Config) any { return c.OffsetFlush }},
		{"offset.flush.timeout.ms", "1", 5 * time.Second, func(c *Config) any { return c.OffsetFlushTimeout }},
		{"task.shutdown.graceful.timeout.ms", "1", 5 * time.Second, func(c *Config) any { return c.ShutdownTimeout }},
		{"tasks.max.per.connector", "1", 256, func(c *Config) any { return c.TasksMaxPerConnector }},
		{"topic.tracking.enable", "false", true, func(c *Config) any { return c.TopicTracking }},
		{"topic.creation.enable", "false", true, func(c *Config) any { return c.TopicCreation }},
		{"topic.tracking.allow.reset", "false", true, func(c *Config) any { return c.TopicTrackingReset }},
		{"key.converter", "x", jsonConverter, func(c *Config) any { return c.Props["key.converter"] }},
		{"value.converter", "x", jsonConverter, func(c *Config) any { return c.Props["value.converter"] }},
		{"header.converter", "x", "org.apache.kafka.connect.storage.SimpleHeaderConverter", func(c *Config) any { return c.Props["header.converter"] }},
		{"offset.storage.file.filename", "/o", "connectd-data/connect.offsets", func(c *Config) any { return c.OffsetFile }},
		{"connectors.storage.file.filename", "/c", "connectd-data/connect.offsets.connectors.json", func(c *Config) any { return c.ConnectorsFile }},
	}
	def, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range common {
		seen[c.key] = true
		if standaloneSpec.Key(c.key) == nil {
			t.Errorf("%s is not declared", c.key)
		}
		if c.get == nil {
			continue
		}
		if got := c.get(def); !reflect.DeepEqual(got, c.def) {
			t.Errorf("%s defaults to %#v, want %#v", c.key, got, c.def)
		}
		cfg, err := ParseConfig(map[string]string{c.key: c.set})
		if err != nil {
			t.Errorf("%s=%s: %v", c.key, c.set, err)
		} else if reflect.DeepEqual(c.get(cfg), c.def) {
			t.Errorf("%s=%s is not read", c.key, c.set)
		}
	}
	if got := def.ListenAddrs; !reflect.DeepEqual(got, []string{":8083"}) {
		t.Errorf("default listen addresses %q", got)
	}
	if cfg, _ := ParseConfig(map[string]string{"offset.storage.file.filename": "/o"}); cfg.ConnectorsFile != "/o.connectors.json" {
		t.Errorf("connectors file beside /o: %s", cfg.ConnectorsFile)
	}
	if cfg, _ := ParseConfig(map[string]string{"bootstrap.servers": "k:9092"}); cfg.Console {
		t.Error("the console is on by default with bootstrap.servers")
	}
	if cfg, _ := ParseConfig(map[string]string{"bootstrap.servers": "k:9092", "console.enable": "true"}); !cfg.Console {
		t.Error("console.enable=true does not turn the console on")
	}
	if cfg, _ := ParseConfig(map[string]string{"admin.listeners": "http://127.0.0.1:0, https://:8445", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/nonexistent"}); cfg != nil {
		t.Error("an HTTPS admin listener without a readable certificate was taken")
	}
	if cfg, _ := ParseConfig(map[string]string{"admin.listeners": "http://127.0.0.1:0,http://:8084"}); cfg == nil || !reflect.DeepEqual(cfg.AdminAddrs, []string{"127.0.0.1:0", ":8084"}) || cfg.AdminOnMain {
		t.Errorf("admin.listeners=http://127.0.0.1:0,http://:8084 gave %+v", cfg)
	}
	for _, k := range standaloneSpec.Keys() {
		if !seen[k.Name] {
			t.Errorf("%s is declared but not in this test", k.Name)
		}
	}

	base := map[string]string{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}
	distributed := []struct {
		key, set string
		def      any
		get      func(*DistributedConfig) any
	}{
		{"group.id", "g2", "g", func(c *DistributedConfig) any { return c.GroupID }},
		{"config.storage.topic", "c2", "c", func(c *DistributedConfig) any { return c.ConfigTopic }},
		{"offset.storage.topic", "o2", "o", func(c *DistributedConfig) any { return c.OffsetTopic }},
		{"status.storage.topic", "s2", "s", func(c *DistributedConfig) any { return c.StatusTopic }},
		{"config.storage.replication.factor", "1", int16(3), func(c *DistributedConfig) any { return c.ConfigReplication }},
		{"offset.storage.replication.factor", "1", int16(3), func(c *DistributedConfig) any { return c.OffsetReplication }},
		{"status.storage.replication.factor", "-1", int16(3), func(c *DistributedConfig) any { return c.StatusReplication }},
		{"offset.storage.partitions", "1", int32(25), func(c *DistributedConfig) any { return c.OffsetPartitions }},
		{"status.storage.partitions", "1", int32(5), func(c *DistributedConfig) any { return c.StatusPartitions }},
		{"connect.protocol", "EAGER", "sessioned", func(c *DistributedConfig) any { return c.Protocol }},
		{"session.timeout.ms", "1", 10 * time.Second, func(c *DistributedConfig) any { return c.SessionTimeout }},
		{"heartbeat.interval.ms", "1", 3 * time.Second, func(c *DistributedConfig) any { return c.HeartbeatInterval }},
		{"rebalance.timeout.ms", "1", time.Minute, func(c *DistributedConfig) any { return c.RebalanceTimeout }},
		{"scheduled.rebalance.max.delay.ms", "1", 5 * time.Minute, func(c *DistributedConfig) any { return c.ScheduledRebalanceMaxDelay }},
		{"worker.sync.timeout.ms", "1", 3 * time.Second, func(c *DistributedConfig) any { return c.WorkerSyncTimeout }},
		{"inter.worker.key.ttl.ms", "1", time.Hour, func(c *DistributedConfig) any { return c.KeyTTL }},
		{"inter.worker.key.generation.algorithm", "", nil, nil},
		{"inter.worker.signature.algorithm", "", nil, nil},
		{"inter.worker.verification.algorithms", "", nil, nil},
		{"inter.worker.key.size", "", nil, nil},
		{"exactly.once.source.support", "", nil, nil},
	}
	ddef, err := ParseDistributedConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	seen = map[string]bool{}
	for _, c := range distributed {
		seen[c.key] = true
		if distributedDef.Key(c.key) == nil {
			t.Errorf("%s is not declared", c.key)
		}
		if c.get == nil {
			continue
		}
		if got := c.get(ddef); !reflect.DeepEqual(got, c.def) {
			t.Errorf("%s defaults to %#v, want %#v", c.key, got, c.def)
		}
		props := map[string]string{c.key: c.set}
		for k, v := range base {
			if k != c.key {
				props[k] = v
			}
		}
		cfg, err := ParseDistributedConfig(props)
		if err != nil {
			t.Errorf("%s=%s: %v", c.key, c.set, err)
		} else if reflect.DeepEqual(c.get(cfg), c.def) {
			t.Errorf("%s=%s is not read", c.key, c.set)
		}
	}
	for _, k := range distributedDef.Keys() {
		if !seen[k.Name] {
			t.Errorf("%s is declared but not in this test", k.Name)
		}
	}
}

// Blank INT keys and a blank connect.protocol take their defaults, as
// they always did; exactly.once.source.support takes Kafka's three values,
// in any case, and nothing else.
func TestWorkerSpecBlanksAndExactlyOnce(t *testing.T) {
	c, err := ParseConfig(map[string]string{"rest.advertised.port": " ", "tasks.max.per.connector": ""})
	if err != nil || c.AdvertisedPort != 0 || c.TasksMaxPerConnector != defaultTasksMaxPerConnector {
		t.Errorf("blank INT keys: %v, %v", c, err)
	}
	base := map[string]string{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"connect.protocol": "", "offset.storage.partitions": "", "inter.worker.key.size": ""}
	d, err := ParseDistributedConfig(base)
	if err != nil || d.Protocol != "sessioned" || d.OffsetPartitions != 25 {
		t.Errorf("blank distributed keys: %+v, %v", d, err)
	}
	for v, want := range map[string]string{"enabled": "enabled", "PREPARING": "preparing", "Disabled": "disabled"} {
		base["exactly.once.source.support"] = v
		if d, err := ParseDistributedConfig(base); err != nil || d.ExactlyOnceSource != want {
			t.Errorf("exactly.once.source.support=%s: %+v, %v", v, d, err)
		}
	}
	base["exactly.once.source.support"] = "sometimes"
	if _, err := ParseDistributedConfig(base); err == nil || !strings.Contains(err.Error(), "String must be one of (case insensitive): disabled, preparing, enabled") {
		t.Errorf("exactly.once.source.support=sometimes: %v", err)
	}
}
