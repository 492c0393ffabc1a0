package worker

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Config is the worker configuration, from Kafka Connect's worker keys.
type Config struct {
	// Props holds every worker property as given.
	Props map[string]string

	// BootstrapServers is empty when the embedded broker is to be used.
	BootstrapServers []string
	EmbeddedListen   string
	EmbeddedDataDir  string
	// BrokerStorageError is the embedded broker's StorageError when the
	// worker runs one, else nil: a record that broker could not write
	// fails with UNKNOWN_SERVER_ERROR alone.
	BrokerStorageError func() error

	Listeners          []string
	AdvertisedHost     string
	AdvertisedPort     int
	OffsetFile         string
	ConnectorsFile     string
	OffsetFlush        time.Duration
	OffsetFlushTimeout time.Duration
	ShutdownTimeout    time.Duration
	TopicTracking      bool
	TopicTrackingReset bool
	AdminListeners     *string

	// ListenAddrs are the host:port addresses of Listeners.
	ListenAddrs []string
	// The REST server's limits; 0 means the REST server's default.
	RESTMaxRequestBytes int64
	RESTBodyTimeout     time.Duration
	RESTMaxConnections  int
	// TasksMaxPerConnector (tasks.max.per.connector) bounds the tasks one
	// connector may run, which Kafka Connect does not: each task holds a
	// Kafka client (about ten goroutines) and whatever its plugin opens (a
	// FileStreamSink task, a file), and tasks start under the herder's
	// lock, so one config could otherwise take the host and the REST API.
	TasksMaxPerConnector int
}

// Converter class defaults: Kafka requires key.converter and
// value.converter; we default them to what its shipped
// connect-standalone.properties sets, so that connectd runs without a file.
const (
	jsonConverter    = "org.apache.kafka.connect.json.JsonConverter"
	defaultDataDir   = "connectd-data"
	defaultListen    = "127.0.0.1:9092"
	defaultListeners = "http://:8083"
)

// TasksMaxPerConnectorConfig is the worker key of
// Config.TasksMaxPerConnector.
const TasksMaxPerConnectorConfig = "tasks.max.per.connector"

// On a 2-core worker with the embedded broker, 256 FileStreamSink tasks
// start in about 0.2 s (the herder's lock held as long) and take about
// 65 MB; 1,000 take 0.8 s and 180 MB, 4,000 take 5 s and 800 MB, growing
// faster than the count because every task is a member of the
// connector's consumer group. 256 is well above the parallelism one
// connector can use on such a host.
const defaultTasksMaxPerConnector = 256

// ParseConfig reads the worker properties.
func ParseConfig(props map[string]string) (*Config, error) {
	p := maps.Clone(props)
	if p == nil {
		p = map[string]string{}
	}
	get := func(k, def string) string {
		if v, ok := p[k]; ok {
			return strings.TrimSpace(v)
		}
		return def
	}
	c := &Config{Props: p}
	if bs := get("bootstrap.servers", ""); bs != "" {
		c.BootstrapServers = splitList(bs)
	}
	c.EmbeddedListen = get("embedded.kafka.listeners", defaultListen)
	c.EmbeddedListen = strings.TrimPrefix(c.EmbeddedListen, "PLAINTEXT://")
	c.EmbeddedDataDir = get("embedded.kafka.data.dir", defaultDataDir+"/kafka")
	c.Listeners = splitList(get("listeners", defaultListeners))
	if len(c.Listeners) == 0 {
		return nil, fmt.Errorf("Invalid value for configuration listeners: at least one listener is needed")
	}
	if err := c.parseREST(p); err != nil {
		return nil, err
	}
	c.AdvertisedHost = get("rest.advertised.host.name", "")
	var err error
	if c.AdvertisedPort, err = intProp(p, "rest.advertised.port", 0); err != nil {
		return nil, err
	}
	c.OffsetFile = get("offset.storage.file.filename", defaultDataDir+"/connect.offsets")
	c.ConnectorsFile = get("connectors.storage.file.filename", c.OffsetFile+".connectors.json")
	if c.OffsetFlush, err = msProp(p, "offset.flush.interval.ms", 60000); err != nil {
		return nil, err
	}
	if c.OffsetFlushTimeout, err = msProp(p, "offset.flush.timeout.ms", 5000); err != nil {
		return nil, err
	}
	if c.ShutdownTimeout, err = msProp(p, "task.shutdown.graceful.timeout.ms", 5000); err != nil {
		return nil, err
	}
	if c.TasksMaxPerConnector, err = intProp(p, TasksMaxPerConnectorConfig, defaultTasksMaxPerConnector); err != nil {
		return nil, err
	}
	if c.TasksMaxPerConnector < 1 {
		return nil, fmt.Errorf("Invalid value %s for configuration %s: Value must be at least 1", p[TasksMaxPerConnectorConfig], TasksMaxPerConnectorConfig)
	}
	if c.TopicTracking, err = boolProp(p, "topic.tracking.enable", true); err != nil {
		return nil, err
	}
	if c.TopicTrackingReset, err = boolProp(p, "topic.tracking.allow.reset", true); err != nil {
		return nil, err
	}
	if v, ok := p["admin.listeners"]; ok {
		c.AdminListeners = &v
	}
	for _, k := range []string{"key.converter", "value.converter"} {
		if _, ok := p[k]; !ok {
			p[k] = jsonConverter
		}
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func intProp(p map[string]string, k string, def int) (int, error) {
	v, ok := p[k]
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type INT", v, k)
	}
	return n, nil
}

func msProp(p map[string]string, k string, def int64) (time.Duration, error) {
	v, ok := p[k]
	if !ok {
		return time.Duration(def) * time.Millisecond, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type LONG", v, k)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func boolProp(p map[string]string, k string, def bool) (bool, error) {
	v, ok := p[k]
	if !ok {
		return def, nil
	}
	b, err := connect.ParseValue(k, connect.ConfigBoolean, v)
	if err != nil {
		return false, err
	}
	return b.(bool), nil
}

// WithPrefix returns the properties under prefix, with it removed.
func WithPrefix(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}
