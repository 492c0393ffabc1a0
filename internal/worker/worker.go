package worker

import (
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OffsetStore keeps source offsets. Put must be durable when it returns.
type OffsetStore interface {
	Get(connector string, partition map[string]any) (map[string]any, bool)
	Put(connector string, entries []storage.PartitionOffset) error
}

// Listener hears what tasks report. Calls come from task goroutines.
type Listener interface {
	// TaskState reports a task's new state; t tells which incarnation of
	// the task speaks, so that a late report of a stopped one can be told
	// from its replacement's.
	TaskState(t *Task, state, trace string)
	TopicUsed(connector, topic string, task int)
}

// Worker runs connector and task instances against one Kafka cluster.
type Worker struct {
	cfg       *Config
	plugins   *connect.PluginSet
	bootstrap []string
	dial      kafkasec.DialFunc
	offsets   OffsetStore
	listener  Listener
	log       *slog.Logger
	loggers   func(name string) *slog.Logger
	// offsetsOf, when set, says where a source connector's offsets are
	// instead of offsets (a topic of its own in distributed mode).
	offsetsOf func(connConfig map[string]string) (OffsetStore, error)
	reserved  []string // topics the worker itself writes; see ReserveTopics
	registry  taskRegistry
	startups  StartupMetrics
	producers producerPool // at-least-once source tasks' clients
}

// New returns a worker running the given plugins, producing to and
// consuming from bootstrap, whose clients connect through dial (nil: over
// the network).
//
// log is the worker's own logger; loggers(name) are those of the plugins'
// classes, whose levels /admin/loggers sets (nil: log for all).
func New(cfg *Config, plugins *connect.PluginSet, bootstrap []string, dial kafkasec.DialFunc, offsets OffsetStore, l Listener, log *slog.Logger, loggers func(name string) *slog.Logger) *Worker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if loggers == nil {
		loggers = func(string) *slog.Logger { return log }
	}
	return &Worker{cfg: cfg, plugins: plugins, bootstrap: bootstrap, dial: dial, offsets: offsets, listener: l, log: log, loggers: loggers}
}

// SetOffsetsOf has source tasks keep their offsets where f says for their
// connector's config. Call it before any task starts.
func (w *Worker) SetOffsetsOf(f func(connConfig map[string]string) (OffsetStore, error)) {
	w.offsetsOf = f
}

// ReserveTopics names topics the worker itself writes (a distributed
// worker's config, offsets and status topics): a sink's topics.regex
// never matches them. Call it before any task starts.
func (w *Worker) ReserveTopics(topics ...string) { w.reserved = append(w.reserved, topics...) }

// Config returns the worker's configuration.
func (w *Worker) Config() *Config { return w.cfg }

// Plugins returns the plugins the worker runs.
func (w *Worker) Plugins() *connect.PluginSet { return w.plugins }

// Bootstrap returns the brokers the worker talks to.
func (w *Worker) Bootstrap() []string { return w.bootstrap }

// Instantiate returns a fresh, unstarted instance of a connector class
// (a class name or an alias) of plugins.
func Instantiate(plugins *connect.PluginSet, class string) (connect.Connector, connect.Plugin, error) {
	p, err := plugins.Lookup(class, connect.PluginSource, connect.PluginSink)
	if err != nil || (p.Type != connect.PluginSource && p.Type != connect.PluginSink) {
		return nil, connect.Plugin{}, fmt.Errorf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", class, availableConnectors(plugins))
	}
	c, ok := p.New().(connect.Connector)
	if !ok {
		return nil, connect.Plugin{}, fmt.Errorf("plugin %s is not a connector", p.Class)
	}
	return c, p, nil
}

func availableConnectors(plugins *connect.PluginSet) string {
	var names []string
	for _, p := range plugins.Plugins() {
		if p.Type == connect.PluginSource || p.Type == connect.PluginSink {
			names = append(names, fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', type=%s}", p.Class, p.Class, p.Version, p.Type))
		}
	}
	return strings.Join(names, ", ")
}

// SinkGroupID is the consumer group of a sink connector: connect-<name>,
// unless the worker's consumer.group.id or the connector's
// consumer.override.group.id says otherwise (applied in that order, as
// Kafka Connect does).
func (w *Worker) SinkGroupID(name string, connConfig map[string]string) string {
	if resolved, err := w.resolve(connConfig); err == nil {
		connConfig = resolved
	}
	id := "connect-" + name
	if v, ok := w.cfg.Props["consumer.group.id"]; ok {
		id = v
	}
	if v, ok := connConfig["consumer.override.group.id"]; ok {
		id = v
	}
	return id
}

// clientProps assembles a connector client's properties: framework
// defaults, then the worker's prefixed settings, then the connector's
// overrides, as Worker.baseProducerConfigs and friends do in Java.
func (w *Worker) clientProps(defaults map[string]string, workerPrefix, overridePrefix string, connConfig map[string]string) map[string]string {
	props := maps.Clone(defaults)
	props["bootstrap.servers"] = strings.Join(w.bootstrap, ",")
	maps.Copy(props, WithPrefix(w.cfg.Props, workerPrefix))
	maps.Copy(props, WithPrefix(connConfig, overridePrefix))
	return props
}

func (w *Worker) newClient(props map[string]string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := clientOptions(props, w.dial)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(opts, extra...)...)
}

// Admin returns an admin client for a connector's offsets operations, and
// the function that closes it.
func (w *Worker) Admin(name string, connConfig map[string]string) (*kadm.Client, func(), error) {
	connConfig, err := w.resolve(connConfig)
	if err != nil {
		return nil, nil, err
	}
	return w.admin("connector-worker-adminclient-"+name, connConfig)
}

// admin is an admin client with Kafka's adminConfigs: the worker's
// top-level and admin.* keys, then the connector's admin.override.*.
func (w *Worker) admin(clientID string, connConfig map[string]string) (*kadm.Client, func(), error) {
	cl, err := w.adminClient(clientID, connConfig)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// adminClient is the Kafka client of admin.
func (w *Worker) adminClient(clientID string, connConfig map[string]string) (*kgo.Client, error) {
	props := map[string]string{}
	for k, v := range w.cfg.Props {
		if !strings.HasPrefix(k, "producer.") && !strings.HasPrefix(k, "consumer.") && !strings.HasPrefix(k, "admin.") {
			props[k] = v
		}
	}
	props = w.clientProps(props, "admin.", "admin.override.", connConfig)
	props["client.id"] = clientID
	return w.newClient(onlyClientKeys(props))
}

// onlyClientKeys keeps the worker keys an admin client takes: where the
// cluster is and how to reach it securely. Other top-level keys (such as a
// connector's batch.size) must not be read as client settings.
func onlyClientKeys(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		switch {
		case k == "bootstrap.servers", k == "client.id", k == "security.protocol",
			strings.HasPrefix(k, "ssl."), strings.HasPrefix(k, "sasl."):
			out[k] = v
		}
	}
	return out
}

// converter builds a connector's key or value converter: the connector's
// own key.converter with its key.converter.* settings when it sets one,
// otherwise the worker's.
func (w *Worker) converter(connConfig map[string]string, isKey bool) (connect.Converter, string, error) {
	prefix := "value.converter"
	if isKey {
		prefix = "key.converter"
	}
	src := w.cfg.Props
	if _, ok := connConfig[prefix]; ok {
		src = connConfig
	}
	c, err := converters.New(w.plugins, src[prefix], WithPrefix(src, prefix+"."), isKey)
	if err != nil {
		return nil, "", err
	}
	// The class Kafka's error log and dead letter queue headers name.
	class := src[prefix]
	if p, err := w.plugins.Lookup(class, connect.PluginConverter); err == nil {
		class = p.Class
	}
	return c, class, nil
}

// headerConverter is the connector's header converter, or the worker's,
// configured, and its class.
func (w *Worker) headerConverter(connConfig map[string]string) (connect.HeaderConverter, string, error) {
	const prefix = "header.converter"
	src := w.cfg.Props
	if _, ok := connConfig[prefix]; ok {
		src = connConfig
	}
	class := src[prefix]
	if class == "" {
		class = converters.SimpleHeaderConverterClass
	}
	c, err := converters.NewHeaderConverter(w.plugins, class, WithPrefix(src, prefix+"."))
	if err != nil {
		return nil, "", err
	}
	if p, err := w.plugins.Lookup(class, connect.PluginHeaderConverter); err == nil {
		class = p.Class
	}
	return c, class, nil
}

func taskTrace(err error) string {
	return "org.apache.kafka.connect.errors.ConnectException: " + err.Error()
}

func itoa(i int) string { return strconv.Itoa(i) }
