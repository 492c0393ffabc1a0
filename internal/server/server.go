// Package server wires a connectd worker together: the broker (embedded
// or external), the stores, the herder and the REST listeners. The mains
// in cmd/ only parse flags and handle signals.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/console"
	"github.com/connectd/connectd/internal/metrics"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/rest"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Commit is what GET / reports as the commit; the build sets it.
var Commit = "connectd-dev"

// Standalone is a running standalone worker.
type Standalone struct {
	Herder   *herder.Standalone
	Broker   *embedded.Broker // nil when bootstrap.servers is set
	RESTAddr string           // host:port of the first REST listener
	// MetricsAddr and AdminAddr are the host:port of the first of
	// metrics.listeners and admin.listeners, if any.
	MetricsAddr, AdminAddr string

	log      *slog.Logger
	servers  []*http.Server
	closeAdm func() // closes the client of the cluster id and health checks
}

// StartStandalone starts a standalone worker running plugins from its
// worker properties and the connectors given on the command line. The
// REST API answers from the moment its listeners are bound (GET /health
// says "starting" until the connectors are created).
func StartStandalone(ctx context.Context, props map[string]string, connectors []herder.StoredConnector, plugins []connect.Plugin, loggers *logging.Registry) (*Standalone, error) {
	// Before parsing, so that a typo that makes the config fail is named.
	worker.LogUnknownKeys(loggers.Logger(worker.ConfigLogger), props, worker.Standalone)
	// The worker runs with what its placeholders resolve to (KIP-421).
	props, providers, err := configprovider.ResolveWorker(props)
	if err != nil {
		return nil, err
	}
	cfg, err := worker.ParseConfig(props)
	if err != nil {
		return nil, err
	}
	// A distributed worker's key, which a standalone one would only
	// warn of: running at least once what was asked to run exactly once
	// would lose the guarantee silently.
	if v := strings.TrimSpace(props["exactly.once.source.support"]); v != "" && !strings.EqualFold(v, worker.ExactlyOnceDisabled) {
		return nil, fmt.Errorf("Invalid value %s for configuration exactly.once.source.support: %s", v, herder.MsgStandaloneExactlyOnce)
	}
	cfg.Providers = providers
	set, err := connect.NewPluginSet(plugins...)
	if err != nil {
		return nil, err
	}
	log := loggers.Logger("org.apache.kafka.connect.runtime")
	s := &Standalone{log: log}
	bootstrap := cfg.BootstrapServers
	if len(bootstrap) == 0 {
		s.Broker, err = embedded.Start(embedded.Config{Listen: cfg.EmbeddedListen, DataDir: cfg.EmbeddedDataDir})
		if err != nil {
			return nil, err
		}
		bootstrap = []string{s.Broker.Addr()}
		cfg.BrokerStorageError = s.Broker.StorageError
		log.Info("embedded Kafka broker listening; any Kafka client can connect", "bootstrap.servers", s.Broker.Addr(), "data.dir", cfg.EmbeddedDataDir)
	}
	fail := func(err error) (*Standalone, error) {
		s.Close()
		return nil, err
	}
	for _, f := range []string{cfg.OffsetFile, cfg.ConnectorsFile} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return fail(fmt.Errorf("creating the directory of %s: %w", f, err))
		}
	}
	offsets, err := storage.OpenFileOffsetStore(cfg.OffsetFile)
	if err != nil {
		return fail(err)
	}
	// Beside the offsets: what they were when (connectctl's time travel).
	history, err := storage.OpenOffsetHistory(cfg.OffsetFile+".history", storage.DefaultHistoryRecords)
	if err != nil {
		return fail(err)
	}
	offsets.KeepHistory(history)
	configs, err := storage.OpenConfigFileStore(cfg.ConnectorsFile)
	if err != nil {
		return fail(err)
	}
	cl, err := kafkaClient(bootstrap, props, brokerDial(s.Broker))
	if err != nil {
		return fail(err)
	}
	s.closeAdm = cl.Close
	clusterID, err := clusterIDOf(ctx, kadm.NewClient(cl), bootstrap)
	if err != nil {
		return fail(err)
	}
	lns, err := bindListeners(cfg)
	if err != nil {
		return fail(err)
	}
	s.RESTAddr = lns[0].Addr().String()
	s.Herder = herder.NewStandalone(cfg, bootstrap, offsets, configs, herder.Options{
		WorkerID: workerID(cfg, s.RESTAddr), ClusterID: clusterID, Commit: Commit, Log: log,
		Dial: brokerDial(s.Broker), Plugins: set, Loggers: loggers.Logger, KafkaPing: cl.Ping,
	})
	opts := restOptions(cfg, loggers)
	opts.Console = consoleHandler(cfg, bootstrap, brokerDial(s.Broker))
	opts.Metrics = metrics.Handler(metrics.Source{Herder: s.Herder, Worker: s.Herder.Worker(), Broker: brokerStats(s.Broker)})
	handler := rest.New(s.Herder, loggers, opts)
	s.servers = serveREST(lns, cfg.ListenHTTPS, handler, log, "REST API listening")
	apart, metricsAddr, adminAddr, err := serveApart(cfg, opts.Metrics, loggers, opts, log)
	if err != nil {
		return fail(err)
	}
	s.servers, s.MetricsAddr, s.AdminAddr = append(s.servers, apart...), metricsAddr, adminAddr
	if err := s.Herder.Start(ctx, connectors); err != nil {
		return fail(err)
	}
	return s, nil
}

// Close stops the REST API, every connector (committing offsets) and the
// embedded broker, in that order.
func (s *Standalone) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		_ = srv.Shutdown(ctx)
	}
	if s.Herder != nil {
		s.Herder.Close()
	}
	if s.closeAdm != nil {
		s.closeAdm()
	}
	if s.Broker != nil {
		s.Broker.Close()
	}
}

// brokerDial is how the worker's clients reach Kafka: in process to the
// embedded broker, over the network (nil) otherwise.
func brokerDial(b *embedded.Broker) kafkasec.DialFunc {
	if b == nil {
		return nil
	}
	return b.Dial
}

// kafkaClient is a client of the worker's Kafka cluster, reached with
// the worker's security settings.
func kafkaClient(bootstrap []string, props map[string]string, dial kafkasec.DialFunc) (*kgo.Client, error) {
	security, err := kafkasec.ConnOptions(props, dial)
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap...)}, security...)...)
}

// consoleHandler is the web console when the worker serves it, else nil.
func consoleHandler(cfg *worker.Config, bootstrap []string, dial kafkasec.DialFunc) http.Handler {
	if !cfg.Console {
		return nil
	}
	return console.New(console.Options{Admin: func() (*kadm.Client, func(), error) {
		cl, err := kafkaClient(bootstrap, cfg.Props, dial)
		if err != nil {
			return nil, nil, err
		}
		return kadm.NewClient(cl), cl.Close, nil
	}})
}

// brokerStats gives the embedded broker's counters to the metrics; nil
// with an outside Kafka.
func brokerStats(b *embedded.Broker) func() embedded.Stats {
	if b == nil {
		return nil
	}
	return b.Stats
}

// bindListeners binds the REST listeners the worker config names, each
// serving at most rest.max.connections connections at a time.
func bindListeners(cfg *worker.Config) ([]net.Listener, error) {
	limit := cfg.RESTMaxConnections
	if limit == 0 {
		limit = defaultMaxConnections
	}
	lns := make([]net.Listener, 0, len(cfg.ListenAddrs))
	for i, addr := range cfg.ListenAddrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("REST listener %s: %w", addr, err)
		}
		ln = limitListener(ln, limit)
		if cfg.ListenHTTPS[i] {
			ln = tls.NewListener(ln, cfg.RESTServerTLS)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// serveREST serves the REST API on the bound listeners. No write timeout:
// some answers legitimately take long (a stop waits for its tasks, up to
// the 90 s request timeout); the REST handler bounds reading the body.
func serveREST(lns []net.Listener, https []bool, handler http.Handler, log *slog.Logger, what string) []*http.Server {
	var servers []*http.Server
	for i, ln := range lns {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("REST server stopped", "error", err)
			}
		}()
		scheme := "http://"
		if https[i] {
			scheme = "https://"
		}
		log.Info(what, "address", scheme+ln.Addr().String())
	}
	return servers
}

// workerID is the host:port shown as worker_id: the advertised host and
// port when set, else this machine's name and the REST port.
func workerID(cfg *worker.Config, restAddr string) string {
	host, port, _ := net.SplitHostPort(restAddr)
	if cfg.AdvertisedHost != "" {
		host = cfg.AdvertisedHost
	} else if name, err := os.Hostname(); err == nil {
		host = name
	}
	if cfg.AdvertisedPort != 0 {
		port = strconv.Itoa(cfg.AdvertisedPort)
	}
	return net.JoinHostPort(host, port)
}

// serveApart serves the listeners of metrics.listeners (GET /metrics
// alone) and admin.listeners (the admin endpoints alone), and returns
// their servers and the first address of each.
func serveApart(cfg *worker.Config, metricsHandler http.Handler, loggers *logging.Registry, opts rest.Options, log *slog.Logger) (servers []*http.Server, metricsAddr, adminAddr string, err error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler)
	if servers, metricsAddr, err = serveOn(cfg.MetricsAddrs, nil, nil, mux, log, "metrics listening (GET /metrics)"); err != nil {
		return nil, "", "", fmt.Errorf("metrics listener %w", err)
	}
	admin, adminAddr, err := serveOn(cfg.AdminAddrs, cfg.AdminHTTPS, cfg.AdminServerTLS, rest.NewAdmin(loggers, opts), log, "admin listening (/admin/loggers)")
	if err != nil {
		for _, srv := range servers {
			srv.Close()
		}
		return nil, "", "", fmt.Errorf("admin listener %w", err)
	}
	return append(servers, admin...), metricsAddr, adminAddr, nil
}

// serveOn serves h on addrs, those https[i] over TLS with serverTLS.
func serveOn(addrs []string, https []bool, serverTLS *tls.Config, h http.Handler, log *slog.Logger, what string) ([]*http.Server, string, error) {
	var servers []*http.Server
	first := ""
	for i, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, srv := range servers {
				srv.Close()
			}
			return nil, "", fmt.Errorf("%s: %w", addr, err)
		}
		if first == "" {
			first = ln.Addr().String()
		}
		secure := i < len(https) && https[i]
		ln = limitListener(ln, defaultMaxConnections)
		if secure {
			ln = tls.NewListener(ln, serverTLS)
		}
		servers = append(servers, serveREST([]net.Listener{ln}, []bool{secure}, h, log, what)...)
	}
	return servers, first, nil
}
