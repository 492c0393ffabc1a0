package worker

import (
	"fmt"
	"maps"

	"github.com/connectd/connectd/connect"
)

// Connector is a started connector instance.
type Connector struct {
	Name   string
	Plugin connect.Plugin
	conn   connect.Connector
}

type connectorContext struct {
	reconfigure func()
	fail        func(error)
}

func (c connectorContext) RequestTaskReconfiguration() { c.reconfigure() }
func (c connectorContext) RaiseError(err error)        { c.fail(err) }

// StartConnector instantiates and starts a connector. reconfigure and fail
// are called from the connector's own goroutines when it asks for new task
// configs or raises an error.
func (w *Worker) StartConnector(name string, config map[string]string, reconfigure func(), fail func(error)) (*Connector, error) {
	conn, p, err := Instantiate(config["connector.class"])
	if err != nil {
		return nil, err
	}
	if err := safeCall(func() error {
		return conn.Start(connectorContext{reconfigure, fail}, maps.Clone(config))
	}); err != nil {
		return nil, err
	}
	return &Connector{Name: name, Plugin: p, conn: conn}, nil
}

// TaskConfigs asks the connector for its task configs and adds what the
// runtime puts in every task config, as Java workers do: task.class, and
// for sinks the topics or topics.regex of the connector.
func (c *Connector) TaskConfigs(maxTasks int, connConfig map[string]string) ([]map[string]string, error) {
	var cfgs []map[string]string
	err := safeCall(func() error {
		var err error
		cfgs, err = c.conn.TaskConfigs(maxTasks)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(cfgs) > maxTasks {
		return nil, fmt.Errorf("The connector %s has generated %d tasks, which is greater than %d, the maximum number of tasks it is configured to create", c.Name, len(cfgs), maxTasks)
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
		out[i] = cfg
	}
	return out, nil
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
