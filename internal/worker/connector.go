package worker

import (
	"fmt"
	"log/slog"
	"maps"
	"strconv"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/secrets"
)

// Connector is a started connector instance.
type Connector struct {
	Name   string
	Plugin connect.Plugin
	conn   connect.Connector
	w      *Worker
	// raw is the config as stored (with its placeholders), resolved what
	// the connector was started with.
	raw, resolved map[string]string
	secrets       secrets.Hider
}

type connectorContext struct {
	reconfigure func()
	fail        func(error)
	log         *slog.Logger
}

func (c connectorContext) RequestTaskReconfiguration() { c.reconfigure() }
func (c connectorContext) RaiseError(err error)        { c.fail(err) }
func (c connectorContext) Logger() *slog.Logger        { return c.log }

// StartConnector instantiates and starts a connector. reconfigure and fail
// are called from the connector's own goroutines when it asks for new task
// configs or raises an error.
// The config's placeholders are resolved here, with the worker's config
// providers: the connector sees the values, what is stored keeps them.
func (w *Worker) StartConnector(name string, config map[string]string, reconfigure func(), fail func(error)) (*Connector, error) {
	w.startups.ConnectorAttempts.Add(1)
	c, err := w.startConnector(name, config, reconfigure, fail)
	if err != nil {
		w.startups.ConnectorFailures.Add(1)
		return nil, err
	}
	w.startups.ConnectorSuccesses.Add(1)
	return c, nil
}

func (w *Worker) startConnector(name string, config map[string]string, reconfigure func(), fail func(error)) (*Connector, error) {
	resolved, fromProviders, err := w.resolveSecrets(config)
	if err != nil {
		return nil, err
	}
	conn, p, err := Instantiate(w.plugins, resolved["connector.class"])
	if err != nil {
		return nil, err
	}
	hidden := secrets.Of(conn.Config(), resolved, fromProviders)
	failHidden := func(err error) { fail(hidden.Err(err)) }
	log := hidden.Logger(w.loggers(p.Class), "connector", name)
	if err := safeCall(func() error {
		return conn.Start(connectorContext{reconfigure, failHidden, log}, maps.Clone(resolved))
	}); err != nil {
		return nil, hidden.Err(err)
	}
	return &Connector{Name: name, Plugin: p, conn: conn, w: w, raw: maps.Clone(config), resolved: resolved, secrets: hidden}, nil
}

// resolve replaces a connector config's config provider placeholders.
func (w *Worker) resolve(config map[string]string) (map[string]string, error) {
	resolved, _, err := w.resolveSecrets(config)
	return resolved, err
}

// resolveSecrets is resolve, and which keys' values came from providers.
func (w *Worker) resolveSecrets(config map[string]string) (map[string]string, map[string]bool, error) {
	resolved, fromProviders, errs := w.cfg.Providers.ResolveAll(config)
	if err := configprovider.Error(errs); err != nil {
		return nil, nil, fmt.Errorf("connector %w", err)
	}
	return resolved, fromProviders, nil
}

// TaskConfigs asks the connector for at most tasks.max task configs and
// adds what the runtime puts in every task config, as Java workers do:
// task.class, and for sinks the topics or topics.regex of the connector.
// A tasks.max above the worker's tasks.max.per.connector fails before the
// connector is asked.
//
// Values the connector copied from its resolved config into a task config
// get their placeholders back (configprovider.Hide), so that no secret is
// stored or shown; StartTask resolves them again.
func (c *Connector) TaskConfigs(connConfig map[string]string) ([]map[string]string, error) {
	connConfig, err := c.w.resolve(connConfig)
	if err != nil {
		return nil, err
	}
	maxTasks := TasksMax(connConfig)
	if maxTasks > c.w.cfg.TasksMaxPerConnector {
		return nil, fmt.Errorf("The connector %s is configured with tasks.max=%d, more than the %d tasks this worker runs per connector (%s)", c.Name, maxTasks, c.w.cfg.TasksMaxPerConnector, TasksMaxPerConnectorConfig)
	}
	var cfgs []map[string]string
	err = safeCall(func() error {
		var err error
		cfgs, err = c.conn.TaskConfigs(maxTasks)
		return err
	})
	if err != nil {
		return nil, c.secrets.Err(err)
	}
	if err := c.w.CheckTaskCount(c.Name, connConfig, len(cfgs)); err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(cfgs))
	for i, cfg := range cfgs {
		cfg = maps.Clone(cfg)
		if cfg == nil {
			cfg = map[string]string{}
		}
		cfg["task.class"] = c.conn.TaskClass()
		if c.Plugin.Type == connect.PluginSink {
			for _, k := range []string{"topics", "topics.regex"} {
				if v, ok := connConfig[k]; ok {
					cfg[k] = v
				}
			}
		}
		out[i] = configprovider.Hide(cfg, c.raw, c.resolved)
	}
	return out, nil
}

// TasksMax is a connector's tasks.max, 1 when unset (validation refuses
// anything else that is not a positive int).
func TasksMax(connConfig map[string]string) int {
	n, err := strconv.Atoi(connConfig["tasks.max"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// CheckTaskCount is Kafka's Worker.checkTasksMax, beside this worker's
// own bound: a connector with more task configs than its tasks.max fails
// unless tasks.max.enforce is false (KIP-1004), when it is only warned
// of; more than tasks.max.per.connector always fails.
func (w *Worker) CheckTaskCount(name string, connConfig map[string]string, numTasks int) error {
	maxTasks := TasksMax(connConfig)
	enforce := true
	if v, ok := connConfig["tasks.max.enforce"]; ok {
		if b, err := connect.ParseValue("tasks.max.enforce", connect.ConfigBoolean, v); err == nil {
			enforce = b.(bool)
		}
	}
	if numTasks > maxTasks && enforce {
		return fmt.Errorf("The connector %s has generated %d tasks, which is greater than %d, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect.", name, numTasks, maxTasks)
	}
	if numTasks > w.cfg.TasksMaxPerConnector {
		return fmt.Errorf("The connector %s has %d tasks, more than the %d tasks this worker runs per connector (%s)", name, numTasks, w.cfg.TasksMaxPerConnector, TasksMaxPerConnectorConfig)
	}
	if numTasks > maxTasks {
		w.log.Warn("the connector generated more tasks than tasks.max; they run because tasks.max.enforce is false, which a future Kafka Connect will not allow", "connector", name, "tasks", numTasks, "tasks.max", maxTasks)
	}
	return nil
}

// Stop stops the connector instance.
func (c *Connector) Stop() error { return safeCall(c.conn.Stop) }

// safeCall runs plugin code, turning a panic into an error: a bug in one
// connector must fail that connector, not the worker.
func safeCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}
