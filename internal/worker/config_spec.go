package worker

// The worker's keys, declared once: ParseConfig and ParseDistributedConfig
// parse through these definitions, LogUnknownKeys names what a worker file
// holds beyond them, and `connectd config` lists them.

import (
	"fmt"
	"maps"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkasec"
)

// Mode is the kind of worker a key is for.
type Mode string

// The worker modes.
const (
	Standalone  Mode = "standalone"
	Distributed Mode = "distributed"
	// Both is the mode of a key every worker reads.
	Both Mode = "standalone, distributed"
)

const (
	keyBootstrapServers = "bootstrap.servers"
	keyListeners        = "listeners"
	keyOffsetFile       = "offset.storage.file.filename"
	keyConnectorsFile   = "connectors.storage.file.filename"
	keyConnectProtocol  = "connect.protocol"
	keyInterWorkerSize  = "inter.worker.key.size"
)

func nonNegativeLong(v any) error {
	if n, ok := v.(int64); ok && n < 0 {
		return fmt.Errorf("Not a number of type LONG")
	}
	return nil
}

// atLeastOneOrUnset is AtLeast(1) for a key whose null default leaves the
// choice to the component that reads it.
func atLeastOneOrUnset(v any) error {
	if v == nil {
		return nil
	}
	return connect.AtLeast(1)(v)
}

// positiveOrBrokerDefault is the check of the internal topics' sizes.
func positiveOrBrokerDefault(v any) error {
	if n, ok := v.(int32); ok && (n == 0 || n < -1) {
		return fmt.Errorf("must be positive, or -1 for the broker's default")
	}
	return nil
}

func connectProtocol(v any) error {
	s, _ := v.(string)
	switch strings.ToLower(s) {
	case "eager", "compatible", "sessioned":
		return nil
	}
	return fmt.Errorf("String must be one of: eager, compatible, sessioned")
}

// exactlyOnceSource is Kafka's check of exactly.once.source.support.
func exactlyOnceSource(v any) error {
	switch s, _ := v.(string); strings.ToLower(strings.TrimSpace(s)) {
	case ExactlyOnceDisabled, ExactlyOncePreparing, ExactlyOnceEnabled:
		return nil
	}
	return fmt.Errorf("String must be one of (case insensitive): disabled, preparing, enabled")
}

// commonDef holds the keys every worker reads, in the order ParseConfig
// checks them.
var commonDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: keyBootstrapServers, Type: connect.ConfigList, Importance: connect.High,
		Doc: "host:port pairs of the Kafka cluster's brokers. Unset, the worker runs an embedded Kafka broker on embedded.kafka.listeners (Kafka's default is localhost:9092)."}).
	Define(connect.ConfigKey{Name: "embedded.kafka.listeners", Type: connect.ConfigString, Default: defaultListen, Importance: connect.Medium,
		Doc: "connectd's own: host:port (an optional PLAINTEXT:// is dropped) the embedded broker listens on when bootstrap.servers is unset."}).
	Define(connect.ConfigKey{Name: "embedded.kafka.data.dir", Type: connect.ConfigString, Default: defaultDataDir + "/kafka", Importance: connect.Medium,
		Doc: "connectd's own: the directory of the embedded broker's data."}).
	Define(connect.ConfigKey{Name: keyListeners, Type: connect.ConfigList, Default: defaultListeners, Importance: connect.Low,
		Doc: "The REST API's listeners, http://host:port or https://host:port (an empty host: every interface); an HTTPS listener's TLS comes from listeners.https.* if any is set, else ssl.*."}).
	Define(connect.ConfigKey{Name: keyRESTMaxRequestBytes, Type: connect.ConfigLong, Validator: atLeastOneOrUnset, Importance: connect.Low,
		Doc: "connectd's own: the largest request body the REST API reads; a larger one is a 413. Unset: 4194304 (4 MiB)."}).
	Define(connect.ConfigKey{Name: keyRESTBodyTimeout, Type: connect.ConfigLong, Validator: atLeastOneOrUnset, Importance: connect.Low,
		Doc: "connectd's own: how long after its headers a request's body must have arrived; later is a 408. Unset: 30000."}).
	Define(connect.ConfigKey{Name: keyRESTMaxConnections, Type: connect.ConfigLong, Validator: atLeastOneOrUnset, Importance: connect.Low,
		Doc: "connectd's own: the connections each REST listener holds at most. Unset: 64."}).
	Define(connect.ConfigKey{Name: "config.providers", Type: connect.ConfigList, Default: "", Importance: connect.Low,
		Doc: "Names of the config providers whose ${name:[path:]key} placeholders the worker's and connectors' configs may hold; each needs config.providers.<name>.class."}).
	Define(connect.ConfigKey{Name: keyMetricsListeners, Type: connect.ConfigList, Default: "", Importance: connect.Low,
		Doc: "connectd's own: listeners, http://host:port, that serve only GET /metrics (it is on the REST listeners too), for a scraper kept apart from the API."}).
	Define(connect.ConfigKey{Name: keyConsoleEnable, Type: connect.ConfigBoolean, Importance: connect.Low,
		Doc: "connectd's own: serve the web console at /ui on the REST listeners. Unset: on when the worker runs the embedded broker, off with bootstrap.servers."}).
	Define(connect.ConfigKey{Name: "admin.listeners", Type: connect.ConfigList, Importance: connect.Low,
		Doc: "Listeners (http:// or https://, TLS from admin.listeners.https.* or else ssl.*) that serve /admin/loggers, and nothing else, instead of the regular listeners. Unset: on the regular listeners; empty: not served."}).
	Define(connect.ConfigKey{Name: "rest.extension.classes", Type: connect.ConfigList, Default: "", Importance: connect.Low,
		Doc: "REST extensions: org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension (basic authentication, from the JAAS file KAFKA_OPTS names with -Djava.security.auth.login.config) is the one connectd runs; others are refused."}).
	Define(connect.ConfigKey{Name: "access.control.allow.origin", Type: connect.ConfigString, Default: "", Importance: connect.Low,
		Doc: "Origins (with * as a wildcard, or * for any) whose cross-origin requests the REST API answers with CORS's headers; empty: same origin only, every other refused."}).
	Define(connect.ConfigKey{Name: "access.control.allow.methods", Type: connect.ConfigString, Default: "", Importance: connect.Low,
		Doc: "The methods allowed to the origins of access.control.allow.origin (empty: GET, POST, HEAD)."}).
	Define(connect.ConfigKey{Name: "response.http.headers.config", Type: connect.ConfigString, Default: "", Importance: connect.Low,
		Doc: "Header rules applied to every REST response: comma-separated '[set|add|setDate|addDate] [header name]:[header value]', a rule with a comma in double quotes."}).
	Define(connect.ConfigKey{Name: "ssl.client.auth", Type: connect.ConfigString, Default: "none", Importance: connect.Low,
		Doc: "Whether HTTPS clients must show a certificate signed by a CA of the trust store: none, requested or required."}).
	Define(connect.ConfigKey{Name: "rest.advertised.listener", Type: connect.ConfigString, Importance: connect.Low,
		Doc: "The protocol of the URL given out to other workers, http or https (unset: the first listener's)."}).
	Define(connect.ConfigKey{Name: "connector.client.config.override.policy", Type: connect.ConfigString, Default: "All", Importance: connect.Medium,
		Doc: "Only All (every connector may override its clients' settings) is enforced; None and Principal are refused."}).
	Define(connect.ConfigKey{Name: "rest.advertised.host.name", Type: connect.ConfigString, Importance: connect.Low,
		Doc: "The host name in the URL given out to other workers; unset: the listener's host."}).
	Define(connect.ConfigKey{Name: "rest.advertised.port", Type: connect.ConfigInt, Importance: connect.Low,
		Doc: "The port in the URL given out to other workers; unset: the listener's port."}).
	Define(connect.ConfigKey{Name: "offset.flush.interval.ms", Type: connect.ConfigLong, Default: int64(60000), Validator: nonNegativeLong, Importance: connect.Low,
		Doc: "Interval at which to try committing offsets for tasks."}).
	Define(connect.ConfigKey{Name: "offset.flush.timeout.ms", Type: connect.ConfigLong, Default: int64(5000), Validator: nonNegativeLong, Importance: connect.Low,
		Doc: "How long to wait for records to be flushed and offsets committed before cancelling and trying again at the next commit."}).
	Define(connect.ConfigKey{Name: "task.shutdown.graceful.timeout.ms", Type: connect.ConfigLong, Default: int64(5000), Validator: nonNegativeLong, Importance: connect.Low,
		Doc: "How long to wait for tasks to stop gracefully, in all, not per task."}).
	Define(connect.ConfigKey{Name: TasksMaxPerConnectorConfig, Type: connect.ConfigInt, Default: int32(defaultTasksMaxPerConnector), Validator: connect.AtLeast(1), Importance: connect.Medium,
		Doc: "connectd's own: the most tasks one connector may run, whatever its tasks.max (each task holds a Kafka client and starts under the herder's lock)."}).
	Define(connect.ConfigKey{Name: TopicCreationEnableConfig, Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
		Doc: "Whether to allow automatic creation of topics used by source connectors, when source connectors are configured with `topic.creation.` properties. " +
			"Each task will use an admin client to create its topics and will not depend on the Kafka brokers to create topics automatically."}).
	Define(connect.ConfigKey{Name: "topic.tracking.enable", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
		Doc: "Enable tracking the set of active topics per connector during runtime."}).
	Define(connect.ConfigKey{Name: "topic.tracking.allow.reset", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
		Doc: "Allow user requests to reset the set of active topics per connector."}).
	Define(connect.ConfigKey{Name: "key.converter", Type: connect.ConfigClass, Default: jsonConverter, Importance: connect.High,
		Doc: "The converter of record keys, for connectors that set none; its settings are the key.converter.* keys. Kafka requires it; connectd defaults it as Kafka's shipped connect-standalone.properties does."}).
	Define(connect.ConfigKey{Name: "value.converter", Type: connect.ConfigClass, Default: jsonConverter, Importance: connect.High,
		Doc: "The converter of record values, for connectors that set none; its settings are the value.converter.* keys. Kafka requires it; connectd defaults it as Kafka's shipped connect-standalone.properties does."}).
	Define(connect.ConfigKey{Name: "header.converter", Type: connect.ConfigClass, Default: "org.apache.kafka.connect.storage.SimpleHeaderConverter", Importance: connect.Low,
		Doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas."})

// standaloneDef holds the keys only a standalone worker reads.
var standaloneDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: keyOffsetFile, Type: connect.ConfigString, Default: defaultDataDir + "/connect.offsets", Importance: connect.High,
		Doc: "The file of source connectors' offsets, in Kafka's format (Kafka requires it; connectd defaults it)."}).
	Define(connect.ConfigKey{Name: keyConnectorsFile, Type: connect.ConfigString, Importance: connect.Medium,
		Doc: "connectd's own: the file connectors, their configs and target states are kept in across restarts. Unset: offset.storage.file.filename with .connectors.json appended."})

// distributedDef holds the keys only a distributed worker reads, in the
// order ParseDistributedConfig checks them.
var distributedDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "group.id", Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(), Importance: connect.High,
		Doc: "The Connect cluster this worker belongs to; it must not be the name of a consumer group."}).
	Define(connect.ConfigKey{Name: "config.storage.topic", Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(), Importance: connect.High,
		Doc: "The topic of connector configurations."}).
	Define(connect.ConfigKey{Name: "offset.storage.topic", Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(), Importance: connect.High,
		Doc: "The topic of source connector offsets."}).
	Define(connect.ConfigKey{Name: "status.storage.topic", Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(), Importance: connect.High,
		Doc: "The topic of connector and task statuses."}).
	Define(connect.ConfigKey{Name: "config.storage.replication.factor", Type: connect.ConfigInt, Default: int32(3), Validator: positiveOrBrokerDefault, Importance: connect.Low,
		Doc: "Replication factor of the config topic when the worker creates it; -1: the broker's default. Other topic settings: config.storage.<topic config>."}).
	Define(connect.ConfigKey{Name: "offset.storage.replication.factor", Type: connect.ConfigInt, Default: int32(3), Validator: positiveOrBrokerDefault, Importance: connect.Low,
		Doc: "Replication factor of the offsets topic when the worker creates it; -1: the broker's default. Other topic settings: offset.storage.<topic config>."}).
	Define(connect.ConfigKey{Name: "status.storage.replication.factor", Type: connect.ConfigInt, Default: int32(3), Validator: positiveOrBrokerDefault, Importance: connect.Low,
		Doc: "Replication factor of the status topic when the worker creates it; -1: the broker's default. Other topic settings: status.storage.<topic config>."}).
	Define(connect.ConfigKey{Name: "offset.storage.partitions", Type: connect.ConfigInt, Default: int32(25), Validator: positiveOrBrokerDefault, Importance: connect.Low,
		Doc: "Partitions of the offsets topic when the worker creates it; -1: the broker's default."}).
	Define(connect.ConfigKey{Name: "status.storage.partitions", Type: connect.ConfigInt, Default: int32(5), Validator: positiveOrBrokerDefault, Importance: connect.Low,
		Doc: "Partitions of the status topic when the worker creates it; -1: the broker's default."}).
	Define(connect.ConfigKey{Name: keyConnectProtocol, Type: connect.ConfigString, Default: "sessioned", Validator: connectProtocol, Importance: connect.Low,
		Doc: "The worker group protocol: eager, compatible or sessioned (internal requests signed with a session key)."}).
	Define(connect.ConfigKey{Name: "session.timeout.ms", Type: connect.ConfigLong, Default: int64(10000), Validator: nonNegativeLong, Importance: connect.High,
		Doc: "The timeout used to detect worker failures."}).
	Define(connect.ConfigKey{Name: "heartbeat.interval.ms", Type: connect.ConfigLong, Default: int64(3000), Validator: nonNegativeLong, Importance: connect.High,
		Doc: "The expected time between heartbeats to the group coordinator."}).
	Define(connect.ConfigKey{Name: "rebalance.timeout.ms", Type: connect.ConfigLong, Default: int64(60000), Validator: nonNegativeLong, Importance: connect.High,
		Doc: "How long each worker has to join the group once a rebalance began."}).
	Define(connect.ConfigKey{Name: "scheduled.rebalance.max.delay.ms", Type: connect.ConfigLong, Default: int64(300000), Validator: nonNegativeLong, Importance: connect.Low,
		Doc: "How long the work of a worker that left the group waits for it to come back before it is assigned to others."}).
	Define(connect.ConfigKey{Name: "worker.sync.timeout.ms", Type: connect.ConfigLong, Default: int64(3000), Validator: nonNegativeLong, Importance: connect.Medium,
		Doc: "How long a worker behind the config topic waits to catch up before it leaves the group."}).
	Define(connect.ConfigKey{Name: "inter.worker.key.ttl.ms", Type: connect.ConfigLong, Default: int64(3600000), Validator: nonNegativeLong, Importance: connect.Low,
		Doc: "How long a session key signing internal requests lasts before the leader makes another."}).
	Define(connect.ConfigKey{Name: "inter.worker.key.generation.algorithm", Type: connect.ConfigString, Default: "HmacSHA256", Importance: connect.Low,
		Doc: "Only HmacSHA256 is taken: connectd makes its session keys with it."}).
	Define(connect.ConfigKey{Name: "inter.worker.signature.algorithm", Type: connect.ConfigString, Default: "HmacSHA256", Importance: connect.Low,
		Doc: "Only HmacSHA256 is taken: connectd signs internal requests with it."}).
	Define(connect.ConfigKey{Name: "inter.worker.verification.algorithms", Type: connect.ConfigList, Default: "HmacSHA256", Importance: connect.Low,
		Doc: "Only HmacSHA256 is taken: connectd verifies internal requests with it."}).
	Define(connect.ConfigKey{Name: keyInterWorkerSize, Type: connect.ConfigInt, Importance: connect.Low,
		Doc: "Only 256 is taken: connectd makes 256-bit session keys."}).
	Define(connect.ConfigKey{Name: "exactly.once.source.support", Type: connect.ConfigString, Default: "disabled", Validator: exactlyOnceSource, Importance: connect.High,
		Doc: "Whether to enable exactly-once support for source connectors in the cluster by using transactions to write source records and their source offsets, and by proactively fencing out old task generations before bringing up new ones. " +
			"To enable exactly-once source support on a new cluster, set this property to 'enabled'. To enable support on an existing cluster, first set to 'preparing' on every worker in the cluster, then set to 'enabled'. A rolling upgrade may be used for both changes."})

// securityKeys are the connection-security keys of the worker's Kafka
// clients, read as Kafka's clients read them by ConnOptions (where their
// parsing and checks live), top-level and under producer., consumer. and
// admin.
var securityKeys = kafkasec.Keys()

// unusedKey is a key Kafka's worker knows that connectd takes without
// using it, and why: the worker logs that reason when the key is set.
type unusedKey struct {
	name  string
	modes Mode
	why   string
}

const (
	whyGoTLS      = "connectd's Kafka clients use Go's TLS: its provider, key and trust managers and random source"
	whySASL       = "connectd's Kafka clients take the credentials of sasl.jaas.config for PLAIN and SCRAM only"
	whyGroupCl    = "connectd's group member and internal clients keep franz-go's settings for it"
	whyMetrics    = "connectd has no JMX or other metrics reporters"
	whyPluginPath = "connectd's plugins are built into its binary; it loads none from directories"
)

var unusedKeys = []unusedKey{
	{"plugin.path", Both, whyPluginPath},
	{"plugin.discovery", Both, whyPluginPath},
	{"client.id", Both, "connectd names its internal clients itself"},
	{"client.dns.lookup", Both, "franz-go tries every address of a broker's name, as Kafka's default use_all_dns_ips does"},
	{"metrics.sample.window.ms", Both, whyMetrics},
	{"metrics.num.samples", Both, whyMetrics},
	{"metrics.recording.level", Both, whyMetrics},
	{"metric.reporters", Both, whyMetrics},
	{"auto.include.jmx.reporter", Both, whyMetrics},
	{"ssl.provider", Both, whyGoTLS},
	{"ssl.keymanager.algorithm", Both, whyGoTLS},
	{"ssl.trustmanager.algorithm", Both, whyGoTLS},
	{"ssl.secure.random.implementation", Both, whyGoTLS},
	{"ssl.engine.factory.class", Both, whyGoTLS},
	{"sasl.client.callback.handler.class", Both, whySASL},
	{"sasl.login.callback.handler.class", Both, whySASL},
	{"sasl.login.class", Both, whySASL},
	{"sasl.kerberos.service.name", Both, whySASL},
	{"sasl.kerberos.kinit.cmd", Both, whySASL},
	{"sasl.kerberos.ticket.renew.window.factor", Both, whySASL},
	{"sasl.kerberos.ticket.renew.jitter", Both, whySASL},
	{"sasl.kerberos.min.time.before.relogin", Both, whySASL},
	{"sasl.login.refresh.window.factor", Both, whySASL},
	{"sasl.login.refresh.window.jitter", Both, whySASL},
	{"sasl.login.refresh.min.period.seconds", Both, whySASL},
	{"sasl.login.refresh.buffer.seconds", Both, whySASL},
	{"sasl.login.connect.timeout.ms", Both, whySASL},
	{"sasl.login.read.timeout.ms", Both, whySASL},
	{"sasl.login.retry.backoff.ms", Both, whySASL},
	{"sasl.login.retry.backoff.max.ms", Both, whySASL},
	{"sasl.oauthbearer.scope.claim.name", Both, whySASL},
	{"sasl.oauthbearer.sub.claim.name", Both, whySASL},
	{"sasl.oauthbearer.token.endpoint.url", Both, whySASL},
	{"sasl.oauthbearer.jwks.endpoint.url", Both, whySASL},
	{"sasl.oauthbearer.jwks.endpoint.refresh.ms", Both, whySASL},
	{"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Both, whySASL},
	{"sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Both, whySASL},
	{"sasl.oauthbearer.clock.skew.seconds", Both, whySASL},
	{"sasl.oauthbearer.expected.audience", Both, whySASL},
	{"sasl.oauthbearer.expected.issuer", Both, whySASL},
	{"sasl.oauthbearer.header.urlencode", Both, whySASL},
	{"worker.unsync.backoff.ms", Distributed, "a connectd worker behind the config topic rejoins at once rather than backing off"},
	{"metadata.max.age.ms", Distributed, whyGroupCl},
	{"request.timeout.ms", Distributed, whyGroupCl},
	{"retry.backoff.ms", Distributed, whyGroupCl},
	{"retry.backoff.max.ms", Distributed, whyGroupCl},
	{"reconnect.backoff.ms", Distributed, whyGroupCl},
	{"reconnect.backoff.max.ms", Distributed, whyGroupCl},
	{"connections.max.idle.ms", Distributed, whyGroupCl},
	{"send.buffer.bytes", Distributed, whyGroupCl},
	{"receive.buffer.bytes", Distributed, whyGroupCl},
	{"socket.connection.setup.timeout.ms", Distributed, whyGroupCl},
	{"socket.connection.setup.timeout.max.ms", Distributed, whyGroupCl},
	{"metadata.recovery.strategy", Distributed, whyGroupCl},
}

// keyFamily is a prefix under which every key is known: settings handed on
// to a client, a converter or topic creation, or refused or unused as a
// whole (why says which, "" when they are used).
type keyFamily struct {
	prefix   string
	modes    Mode
	doc, why string
}

var keyFamilies = []keyFamily{
	{"producer.", Both, "Settings of source tasks' producers (a connector's producer.override.* wins).", ""},
	{"consumer.", Both, "Settings of sink tasks' consumers (a connector's consumer.override.* wins).", ""},
	{"admin.", Both, "Settings of the admin clients of connectors' offsets operations (a connector's admin.override.* wins).", ""},
	{"key.converter.", Both, "Settings of the worker's key.converter.", ""},
	{"value.converter.", Both, "Settings of the worker's value.converter.", ""},
	{"listeners.https.", Both, "The HTTPS listeners' TLS settings (ssl.* without the prefix); when any is set, the worker's own ssl.* are not used for them.", ""},
	{"header.converter.", Both, "Settings of the worker's header.converter.", ""},
	{"config.providers.", Both, "Config providers' classes (FileConfigProvider, DirectoryConfigProvider, EnvVarConfigProvider) and parameters (.param.allowed.paths, .param.allowlist.pattern).", ""},
	{"metrics.context.", Both, "Metrics context labels.", whyMetrics},
	{"config.storage.", Distributed, "Settings of the config topic when the worker creates it.", ""},
	{"offset.storage.", Distributed, "Settings of the offsets topic when the worker creates it.", ""},
	{"status.storage.", Distributed, "Settings of the status topic when the worker creates it.", ""},
}

// parseSpec parses props through def. An INT key, or connect.protocol,
// left blank takes its default, as connectd's worker always read them
// (Kafka's ConfigDef would refuse the empty text).
func parseSpec(def *connect.ConfigDef, props map[string]string) (*connect.ParsedConfig, error) {
	in, cloned := props, false
	for _, k := range def.Keys() {
		v, ok := props[k.Name]
		if !ok || strings.TrimSpace(v) != "" || (k.Type != connect.ConfigInt && k.Name != keyConnectProtocol) {
			continue
		}
		if !cloned {
			in, cloned = maps.Clone(props), true
		}
		delete(in, k.Name)
	}
	return def.Parse(in)
}

// standaloneSpec is what ParseConfig reads.
var standaloneSpec = commonDef.Merge(standaloneDef)
