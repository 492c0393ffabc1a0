// Package connectd runs a connectd worker inside another program: the
// whole connectd command line (RunCLI), or a standalone or distributed
// worker started from its config (Start), each with exactly the plugins
// it is given. Builtin is connectd's own set; append a program's own
// connectors to it, or pass only those.
//
// The package is the module's root so that it reads as what it runs
// (connectd.Start, connectd.RunCLI) and does not collide with the
// runtime's internal/worker or the standard library's runtime.
package connectd

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/properties"
	"github.com/connectd/connectd/internal/server"
)

// Builtin returns connectd's plugins: the FileStream, JDBC, PostgreSQL CDC
// and HTTP connectors and Kafka's JSON, String and ByteArray converters.
// The slice is the caller's to extend.
func Builtin() []connect.Plugin { return builtin.Plugins() }

// Config is what a worker starts from.
type Config struct {
	// Worker holds the worker's properties, as worker.properties does.
	Worker map[string]string
	// Distributed starts a member of the cluster the properties name
	// (group.id, the three internal topics) rather than a standalone
	// worker.
	Distributed bool
	// ConnectorFiles are, for a standalone worker, the connector config
	// files (.properties or .json) to run, as the command line takes them.
	ConnectorFiles []string
	// Plugins are the only plugins the worker knows: its connector
	// classes, converters and GET /connector-plugins come from them.
	Plugins []connect.Plugin
	// Log is where the worker logs; nil means os.Stderr.
	Log io.Writer
}

// Worker is a running worker.
type Worker struct {
	standalone  *server.Standalone
	distributed *server.Distributed
}

// Start starts a worker and returns once its REST API answers (a
// distributed worker goes on joining its group in the background).
func Start(ctx context.Context, cfg Config) (*Worker, error) {
	out := cfg.Log
	if out == nil {
		out = os.Stderr
	}
	return start(ctx, cfg, logging.NewRegistry(out))
}

func start(ctx context.Context, cfg Config, loggers *logging.Registry) (*Worker, error) {
	if len(cfg.Plugins) == 0 {
		return nil, fmt.Errorf("no plugins: pass connectd.Builtin(), extended or not")
	}
	w, err := startMode(ctx, cfg, loggers)
	if err != nil {
		return nil, err
	}
	// What an operator looks for first in a worker's log: what runs, how,
	// where, with which connectors.
	mode := "standalone"
	if cfg.Distributed {
		mode = "distributed"
	}
	var classes []string
	for _, p := range cfg.Plugins {
		if p.Type == connect.PluginSource || p.Type == connect.PluginSink {
			classes = append(classes, p.Class)
		}
	}
	slices.Sort(classes)
	loggers.Logger("org.apache.kafka.connect.runtime").Info("Kafka Connect started", "version", version(), "mode", mode,
		"listeners", cfg.Worker["listeners"], "rest", w.RESTAddr(), "broker", w.BrokerAddr(), "connector_plugins", strings.Join(classes, ","))
	return w, nil
}

func startMode(ctx context.Context, cfg Config, loggers *logging.Registry) (*Worker, error) {
	if cfg.Distributed {
		if len(cfg.ConnectorFiles) > 0 {
			return nil, fmt.Errorf("a distributed worker takes no connector files (%s): create connectors through its REST API", cfg.ConnectorFiles[0])
		}
		d, err := server.StartDistributed(ctx, cfg.Worker, cfg.Plugins, loggers)
		if err != nil {
			return nil, err
		}
		return &Worker{distributed: d}, nil
	}
	conns, err := loadConnectors(cfg.ConnectorFiles)
	if err != nil {
		return nil, err
	}
	s, err := server.StartStandalone(ctx, cfg.Worker, conns, cfg.Plugins, loggers)
	if err != nil {
		return nil, err
	}
	return &Worker{standalone: s}, nil
}

// loadConnectors reads the connector files of a standalone worker.
func loadConnectors(files []string) ([]herder.StoredConnector, error) {
	var conns []herder.StoredConnector
	for _, f := range files {
		name, cfg, state, err := properties.LoadConnectorConfig(f)
		if err != nil {
			return nil, err
		}
		ts := herder.TargetState("")
		if state != "" {
			if ts, err = herder.ParseInitialState(state); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
		}
		conns = append(conns, herder.StoredConnector{Name: name, Config: cfg, TargetState: string(ts)})
	}
	return conns, nil
}

// RESTAddr is the host:port of the worker's first REST listener.
func (w *Worker) RESTAddr() string {
	if w.distributed != nil {
		return w.distributed.RESTAddr
	}
	return w.standalone.RESTAddr
}

// BrokerAddr is the host:port of the embedded Kafka broker, which any
// Kafka client can reach; empty when bootstrap.servers names another.
func (w *Worker) BrokerAddr() string {
	if w.distributed != nil && w.distributed.Broker != nil {
		return w.distributed.Broker.Addr()
	}
	if w.standalone != nil && w.standalone.Broker != nil {
		return w.standalone.Broker.Addr()
	}
	return ""
}

// Done is closed when a distributed worker stops of itself (Err says
// why); a standalone worker runs until Close, and its Done is nil.
func (w *Worker) Done() <-chan struct{} {
	if w.distributed != nil {
		return w.distributed.Done()
	}
	return nil
}

// Err is the error a distributed worker stopped with, once Done is
// closed.
func (w *Worker) Err() error {
	if w.distributed != nil {
		return w.distributed.Err()
	}
	return nil
}

// Close stops the REST API, the connectors (committing their offsets) and
// the embedded broker.
func (w *Worker) Close() {
	if w.distributed != nil {
		w.distributed.Close()
		return
	}
	w.standalone.Close()
}
