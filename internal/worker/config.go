package worker

import (
	"crypto/tls"
	"fmt"
	"github.com/connectd/connectd/internal/configprovider"
	"maps"
	"net/http"
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
	// TopicCreation is topic.creation.enable: source tasks create their
	// topics from their connectors' topic.creation.* settings (KIP-158).
	TopicCreation      bool
	TopicTrackingReset bool
	// AdminOnMain serves /admin/loggers on the regular listeners
	// (admin.listeners unset); else on AdminAddrs, of which AdminHTTPS
	// are https:// with AdminServerTLS (none: admin.listeners empty).
	AdminOnMain    bool
	AdminAddrs     []string
	AdminHTTPS     []bool
	AdminServerTLS *tls.Config

	// ListenAddrs are the host:port addresses of Listeners, and
	// ListenHTTPS which of them are https://.
	ListenAddrs []string
	ListenHTTPS []bool
	// RESTServerTLS is the HTTPS listeners' TLS; nil without one.
	RESTServerTLS *tls.Config
	// AdvertiseHTTPS: other workers reach this one over HTTPS
	// (rest.advertised.listener, else the first listener's scheme).
	AdvertiseHTTPS bool
	// RESTClient makes this worker's requests to the others: over TLS
	// from the HTTPS listener's settings when the worker has one; nil:
	// http.DefaultClient.
	RESTClient *http.Client
	// RESTAuth: the REST API asks for HTTP basic credentials, checked
	// against RESTCredentials (user to password; empty: anyone passes,
	// as Kafka's PropertyFileLoginModule lets everyone in).
	RESTAuth        bool
	RESTCredentials map[string]string
	// CORSOrigins are the other origins the REST API answers
	// (access.control.allow.origin), with the methods CORSMethods;
	// RESTHeaders are set on every response.
	CORSOrigins, CORSMethods []string
	RESTHeaders              []HeaderRule
	// The REST server's limits; 0 means the REST server's default.
	RESTMaxRequestBytes int64
	RESTBodyTimeout     time.Duration
	RESTMaxConnections  int
	// Console serves the web console at /ui (console.enable).
	Console bool
	// MetricsAddrs are where GET /metrics alone is served besides the
	// REST listeners (metrics.listeners).
	MetricsAddrs []string
	// Providers resolve the placeholders of connectors' configs (the
	// worker's config.providers); nil: none are configured.
	Providers *configprovider.Resolver
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

// ParseConfig reads the worker properties through the worker keys' spec
// (config_spec.go); it reads the standalone keys in either mode, a
// distributed worker leaving them at their defaults.
func ParseConfig(props map[string]string) (*Config, error) {
	p := maps.Clone(props)
	if p == nil {
		p = map[string]string{}
	}
	pc, err := parseSpec(standaloneSpec, p)
	if err != nil {
		return nil, err
	}
	c := &Config{Props: p}
	c.BootstrapServers = nonEmpty(pc.List(keyBootstrapServers))
	c.EmbeddedListen = strings.TrimPrefix(pc.String("embedded.kafka.listeners"), "PLAINTEXT://")
	c.EmbeddedDataDir = pc.String("embedded.kafka.data.dir")
	c.Listeners = nonEmpty(pc.List(keyListeners))
	if len(c.Listeners) == 0 {
		return nil, fmt.Errorf("Invalid value for configuration listeners: at least one listener is needed")
	}
	if err := c.parseREST(p, pc); err != nil {
		return nil, err
	}
	c.AdvertisedHost = pc.String("rest.advertised.host.name")
	c.AdvertisedPort = pc.Int("rest.advertised.port")
	c.OffsetFile = pc.String(keyOffsetFile)
	c.ConnectorsFile = pc.String(keyConnectorsFile)
	if _, ok := p[keyConnectorsFile]; !ok {
		c.ConnectorsFile = c.OffsetFile + ".connectors.json"
	}
	c.OffsetFlush = millis(pc, "offset.flush.interval.ms")
	c.OffsetFlushTimeout = millis(pc, "offset.flush.timeout.ms")
	c.ShutdownTimeout = millis(pc, "task.shutdown.graceful.timeout.ms")
	c.TasksMaxPerConnector = pc.Int(TasksMaxPerConnectorConfig)
	c.TopicTracking = pc.Bool("topic.tracking.enable")
	c.TopicCreation = pc.Bool(TopicCreationEnableConfig)
	c.TopicTrackingReset = pc.Bool("topic.tracking.allow.reset")
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if _, ok := p[k]; !ok {
			p[k] = pc.String(k)
		}
	}
	return c, nil
}

// nonEmpty drops the empty items of a list ("a,,b" is a and b).
func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
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

// millis reads a LONG key of milliseconds.
func millis(pc *connect.ParsedConfig, k string) time.Duration {
	return time.Duration(pc.Long(k)) * time.Millisecond
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

// HTTPClient is the client of this worker's requests to the other
// workers.
func (c *Config) HTTPClient() *http.Client {
	if c.RESTClient != nil {
		return c.RESTClient
	}
	return http.DefaultClient
}
