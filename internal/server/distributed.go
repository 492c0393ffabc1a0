package server

import (
	"context"
	"fmt"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/metrics"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/rest"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Distributed is a running member of a connectd cluster.
type Distributed struct {
	Herder   *herder.Distributed
	Broker   *embedded.Broker // nil unless bootstrap.servers was unset
	RESTAddr string
	// MetricsAddr and AdminAddr are the host:port of the first of
	// metrics.listeners and admin.listeners, if any.
	MetricsAddr, AdminAddr string

	cancel  context.CancelFunc
	done    chan struct{}
	err     error // the herder's, once done is closed
	servers []*http.Server
	closers []func()
}

// offsetsReadPace is how long an offsets topic's reader waits between
// fetches that bring records: at an exactly-once task's hundreds of
// transactions a second, one fetch for several of them rather than one
// each, which took an eighth of the task's time (docs/performance.md).
var offsetsReadPace = 20 * time.Millisecond

// storesReadPace is the same for the config and status topics. Every
// connector and task a worker starts writes a status, and every create a
// config, which each worker's readers fetched at once: at 3,000
// connectors a third of the fetches the broker served, hundreds a second,
// and a fetch each for one record. The leader reads its own config
// writes back, and a member the config offset of its assignment, as
// waiters, which end the pace.
const storesReadPace = 20 * time.Millisecond

// StartDistributed starts a distributed worker running plugins: it checks
// or creates the three internal topics, reads them, serves the REST API
// and joins the group. It returns once the REST API answers; joining
// continues in the background (GET /health says "starting" until the
// first assignment).
func StartDistributed(ctx context.Context, props map[string]string, plugins []connect.Plugin, loggers *logging.Registry) (*Distributed, error) {
	// Before parsing, so that a typo that makes the config fail is named.
	worker.LogUnknownKeys(loggers.Logger(worker.ConfigLogger), props, worker.Distributed)
	// The worker runs with what its placeholders resolve to (KIP-421).
	props, providers, err := configprovider.ResolveWorker(props)
	if err != nil {
		return nil, err
	}
	cfg, err := worker.ParseConfig(props)
	if err != nil {
		return nil, err
	}
	cfg.Providers = providers
	dcfg, err := worker.ParseDistributedConfig(props)
	if err != nil {
		return nil, err
	}
	set, err := connect.NewPluginSet(plugins...)
	if err != nil {
		return nil, err
	}
	log := loggers.Logger("org.apache.kafka.connect.runtime.distributed")
	s := &Distributed{done: make(chan struct{})}
	fail := func(err error) (*Distributed, error) {
		s.Close()
		return nil, err
	}
	bootstrap := cfg.BootstrapServers
	if len(bootstrap) == 0 {
		if err := os.MkdirAll(filepath.Dir(cfg.EmbeddedDataDir), 0o755); err != nil {
			return nil, err
		}
		if s.Broker, err = embedded.Start(embedded.Config{Listen: cfg.EmbeddedListen, DataDir: cfg.EmbeddedDataDir}); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, s.Broker.Close)
		bootstrap = []string{s.Broker.Addr()}
		cfg.BrokerStorageError = s.Broker.StorageError
		log.Info("embedded Kafka broker listening; any Kafka client can connect", "bootstrap.servers", s.Broker.Addr())
	}
	security, err := kafkasec.ConnOptions(props, brokerDial(s.Broker))
	if err != nil {
		return fail(err)
	}
	admCl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap...)}, security...)...)
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, admCl.Close)
	adm := kadm.NewClient(admCl)
	clusterID, err := clusterIDOf(ctx, adm, bootstrap)
	if err != nil {
		return fail(err)
	}
	topics := []storage.TopicSpec{
		{Name: dcfg.ConfigTopic, Property: storage.ConfigStorageTopicProperty, Purpose: storage.ConfigsTopicPurpose, Partitions: 1, ReplicationFactor: dcfg.ConfigReplication, Configs: dcfg.ConfigTopicConfigs, RequireSinglePartition: true, Logger: log},
		{Name: dcfg.OffsetTopic, Property: storage.OffsetStorageTopicProperty, Purpose: storage.OffsetsTopicPurpose, Partitions: dcfg.OffsetPartitions, ReplicationFactor: dcfg.OffsetReplication, Configs: dcfg.OffsetTopicConfigs, Logger: log},
		{Name: dcfg.StatusTopic, Property: storage.StatusStorageTopicProperty, Purpose: storage.StatusTopicPurpose, Partitions: dcfg.StatusPartitions, ReplicationFactor: dcfg.StatusReplication, Configs: dcfg.StatusTopicConfigs, Logger: log},
	}
	for _, spec := range topics {
		if err := storage.EnsureTopic(ctx, adm, spec); err != nil {
			return fail(err)
		}
	}

	lns, err := bindListeners(cfg)
	if err != nil {
		return fail(err)
	}
	s.RESTAddr = lns[0].Addr().String()
	advertised := s.RESTAddr // the first listener of the advertised scheme
	for i, https := range cfg.ListenHTTPS {
		if https == cfg.AdvertiseHTTPS {
			advertised = lns[i].Addr().String()
			break
		}
	}
	url := herder.AdvertisedURL(cfg, advertised)

	logCfg := func(topic string) storage.KafkaLogConfig {
		return storage.KafkaLogConfig{Topic: topic, Seeds: bootstrap, ClientOpts: security, Logger: log}
	}
	// With exactly-once source support, what the config and offsets
	// topics hold is what committed transactions wrote, as Kafka's
	// stores read them: a zombie task's or leader's aborted writes never
	// count.
	committedCfg := func(topic string) storage.KafkaLogConfig {
		c := logCfg(topic)
		c.ReadCommitted = dcfg.ExactlyOnceSourceEnabled()
		return c
	}
	listener := &configListener{loggers: loggers}
	configCfg := committedCfg(dcfg.ConfigTopic)
	if dcfg.TransactionalLeader() {
		configCfg.TransactionalID = dcfg.TransactionalID()
	}
	configCfg.Pace = storesReadPace
	configs, err := storage.NewConfigTopic(configCfg, listener)
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, configs.Close)
	statusCfg := logCfg(dcfg.StatusTopic)
	statusCfg.Pace = storesReadPace
	status, err := storage.NewStatusTopic(statusCfg)
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, status.Close)
	// The offsets topics are read paced: under exactly-once each of a
	// task's transactions writes a record to them, hundreds a second,
	// and their readers (a source task's start, the offsets API and its
	// changes) read them to the end first.
	offsetsCfg := func(topic string) storage.KafkaLogConfig {
		c := committedCfg(topic)
		c.Pace = offsetsReadPace
		return c
	}
	offsets, err := storage.NewKafkaOffsetStore(offsetsCfg(dcfg.OffsetTopic))
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, offsets.Close)
	for _, start := range []func(context.Context) error{configs.Start, status.Start, offsets.Start} {
		if err := start(ctx); err != nil {
			return fail(err)
		}
	}

	ownTopics := &offsetTopics{adm: adm, open: func(topic string) (*storage.KafkaOffsetStore, error) {
		return storage.NewKafkaOffsetStore(offsetsCfg(topic))
	}, spec: func(topic string) storage.TopicSpec {
		return storage.TopicSpec{Name: topic, Property: "offsets.storage.topic", Purpose: storage.OffsetsTopicPurpose, Partitions: dcfg.OffsetPartitions, ReplicationFactor: dcfg.OffsetReplication, Configs: dcfg.OffsetTopicConfigs, Logger: log}
	}}
	s.closers = append(s.closers, ownTopics.close)
	h := herder.NewDistributed(cfg, dcfg, bootstrap, configs, status, offsets, herder.DistributedOptions{
		URL: url, ClusterID: clusterID, Commit: Commit, Log: log, Dial: brokerDial(s.Broker), Plugins: set, Loggers: loggers.Logger,
		KafkaPing: admCl.Ping, OpenOffsetTopic: ownTopics.get,
	})
	listener.h = h
	s.Herder = h
	memberCl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap...)}, security...)...)
	if err != nil {
		return fail(err)
	}
	s.closers = append(s.closers, memberCl.Close)
	member := group.NewMember(group.Config{
		Client: memberCl, GroupID: dcfg.GroupID, URL: url,
		SessionTimeout: dcfg.SessionTimeout, RebalanceTimeout: dcfg.RebalanceTimeout, HeartbeatInterval: dcfg.HeartbeatInterval,
		Protocol: dcfg.Protocol, MaxDelay: dcfg.ScheduledRebalanceMaxDelay, Log: log,
	}, groupHandler{h})
	h.SetMember(member)

	opts := restOptions(cfg, loggers)
	opts.Console = consoleHandler(cfg, bootstrap, brokerDial(s.Broker))
	opts.Metrics = metrics.Handler(metrics.Source{Herder: h, Worker: h.Worker(), WorkerID: h.WorkerID(), Rebalancing: member.Rebalancing, Rebalances: member.RebalanceStats, Broker: brokerStats(s.Broker)})
	handler := rest.New(h, loggers, opts)
	s.servers = serveREST(lns, cfg.ListenHTTPS, handler, log, "REST API listening")
	apart, metricsAddr, adminAddr, err := serveApart(cfg, opts.Metrics, loggers, opts, log)
	if err != nil {
		return fail(err)
	}
	s.servers, s.MetricsAddr, s.AdminAddr = append(s.servers, apart...), metricsAddr, adminAddr
	log.Info("advertised REST URL", "url", url)
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		s.err = h.Run(runCtx)
		if s.err != nil {
			log.Error("the worker left the cluster", "error", s.err)
		}
		close(s.done)
	}()
	return s, nil
}

// Close leaves the group, stops what runs here (committing offsets), the
// REST API, the stores and the embedded broker.
func (s *Distributed) Close() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		_ = srv.Shutdown(ctx)
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// Done is closed when the worker stopped, by Close or by itself (a fatal
// group error); Err then tells why.
func (s *Distributed) Done() <-chan struct{} { return s.done }

// Err is the error the worker stopped with, once Done is closed.
func (s *Distributed) Err() error { return s.err }

func clusterIDOf(ctx context.Context, adm *kadm.Client, bootstrap []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("looking up the Kafka cluster id at %v: %w", bootstrap, err)
	}
	return md.Cluster, nil
}

// configListener passes config topic changes to the herder, and sets
// the cluster's logger levels in this process's loggers, which the herder
// does not hold. It is not the herder itself because it exists before the
// herder does: the store needs it first, and the herder needs the store.
type configListener struct {
	h       *herder.Distributed
	loggers *logging.Registry
}

func (l *configListener) ConnectorConfigUpdated(string) { l.changed(true) }
func (l *configListener) TaskConfigsUpdated(string)     { l.changed(true) }
func (l *configListener) TargetStateUpdated(string)     { l.changed(false) }
func (l *configListener) SessionKeyUpdated()            {}

func (l *configListener) RestartRequested(name string, onlyFailed, includeTasks bool) {
	if l.h != nil {
		l.h.RestartRequested(name, onlyFailed, includeTasks)
	}
}

func (l *configListener) LoggerLevelSet(namespace, level string) {
	if _, err := l.loggers.SetLevel(namespace, level); err != nil {
		slog.Warn("ignoring a cluster logger level", "namespace", namespace, "level", level, "error", err)
	}
}

func (l *configListener) changed(rebalance bool) {
	if l.h != nil {
		l.h.ConfigChanged(rebalance)
	}
}

// groupHandler presents the herder to the group member. It is not the
// herder itself because it translates: the herder knows nothing of the
// group's codec (an assignment's connectors and tasks are split here),
// and the session key a new leader needs is written on a goroutine of its
// own, so that the member's Run goroutine, which called Assigned, does
// not wait for a config topic write.
type groupHandler struct{ h *herder.Distributed }

func (g groupHandler) ConfigOffset() int64 { return g.h.ConfigOffset() }
func (g groupHandler) CatchUp(ctx context.Context, offset int64) bool {
	return g.h.CatchUp(ctx, offset)
}
func (g groupHandler) Work() map[string]int { return g.h.Work() }
func (g groupHandler) LastWorker(connector string, task int32) string {
	if task == group.ConnectorTask {
		return g.h.LastWorker(connector, -1)
	}
	return g.h.LastWorker(connector, int(task))
}

func (g groupHandler) Revoked(revoked []group.ConnectorTasks) {
	conns, tasks := split(revoked)
	g.h.Revoked(conns, tasks)
}

func (g groupHandler) Assigned(a group.Assignment, owned []group.ConnectorTasks, generation int32, leader bool, members []string) {
	conns, tasks := split(owned)
	g.h.Assigned(conns, tasks, a.LeaderURL, a.ConfigOffset, generation, leader, members)
	if leader {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := g.h.ClaimWritePrivileges(ctx); err != nil {
				slog.Warn("claiming the config topic's transactional id failed; the next write claims it again", "error", err)
			}
			if err := g.h.EnsureSessionKey(ctx); err != nil {
				slog.Warn("writing a session key failed", "error", err)
			}
		}()
	}
}

func split(items []group.ConnectorTasks) (conns []string, tasks []client.TaskID) {
	for _, ct := range items {
		for _, t := range ct.Tasks {
			if t == group.ConnectorTask {
				conns = append(conns, ct.Connector)
			} else {
				tasks = append(tasks, client.TaskID{Connector: ct.Connector, Task: int(t)})
			}
		}
	}
	return conns, tasks
}

// offsetTopics are the offsets topics source connectors name for
// themselves (offsets.storage.topic), each created as the worker's own
// offsets topic is (compacted, its partitions and replication factor) and
// read by one store for every task of every connector that names it.
type offsetTopics struct {
	adm  *kadm.Client
	open func(topic string) (*storage.KafkaOffsetStore, error)
	spec func(topic string) storage.TopicSpec

	mu     sync.Mutex
	stores map[string]*storage.KafkaOffsetStore
}

func (o *offsetTopics) get(ctx context.Context, topic string) (herder.OffsetTopic, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s, ok := o.stores[topic]; ok {
		return s, nil
	}
	if err := storage.EnsureTopic(ctx, o.adm, o.spec(topic)); err != nil {
		return nil, err
	}
	s, err := o.open(topic)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if o.stores == nil {
		o.stores = map[string]*storage.KafkaOffsetStore{}
	}
	o.stores[topic] = s
	return s, nil
}

func (o *offsetTopics) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.stores {
		s.Close()
	}
}
