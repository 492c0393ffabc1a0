// Command custom-connector is connectd with one more connector: a tiny
// source that counts, run beside the built-in plugins. It is the whole
// connectd command line (standalone, distributed, kafka), so it runs as
// connectd does.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/connectd/connectd"
	"github.com/connectd/connectd/connect"
)

// CounterClass is the connector's class name, which connector.class
// names (or its aliases CounterSourceConnector and CounterSource).
const CounterClass = "com.example.CounterSourceConnector"

func main() {
	plugins := append(connectd.Builtin(), connect.Plugin{
		Class:   CounterClass,
		Type:    connect.PluginSource,
		Version: "1.0",
		New:     func() any { return &counterConnector{} },
	})
	if connectd.RunCLI(plugins) != nil {
		os.Exit(1)
	}
}

// counterConnector writes the records "1" to "<count>" to its topic, once:
// its offset, the last number written, lets a restart go on from there.
type counterConnector struct{ config map[string]string }

func (*counterConnector) Version() string { return "1.0" }

func (*counterConnector) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "The topic to write to."}).
		Define(connect.ConfigKey{Name: "count", Type: connect.ConfigInt, Default: int32(10), Validator: connect.AtLeast(1), Importance: connect.Medium, Doc: "How far to count."})
}

func (c *counterConnector) Start(_ connect.ConnectorContext, config map[string]string) error {
	c.config = config
	return nil
}

// TaskConfigs makes one task whatever tasks.max says: one counter.
func (c *counterConnector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{c.config}, nil
}

func (*counterConnector) Stop() error                 { return nil }
func (*counterConnector) TaskClass() string           { return "com.example.CounterSourceTask" }
func (*counterConnector) NewTask() connect.SourceTask { return &counterTask{} }

type counterTask struct {
	topic     string
	count, at int64
	partition map[string]any
}

func (*counterTask) Version() string { return "1.0" }

func (t *counterTask) Start(ctx connect.SourceTaskContext, config map[string]string) error {
	parsed, err := (&counterConnector{}).Config().Parse(config)
	if err != nil {
		return err
	}
	t.topic, t.count = parsed.String("topic"), int64(parsed.Int("count"))
	t.partition = map[string]any{"counter": config["name"]}
	offset, err := ctx.Offset(t.partition)
	if err != nil {
		return err
	}
	// Offsets come back as JSON numbers: int64, or float64 for one
	// written by hand through the REST API.
	switch n := offset["n"].(type) {
	case int64:
		t.at = n
	case float64:
		t.at = int64(n)
	}
	return nil
}

func (t *counterTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.at >= t.count {
		// Done: wait a little, as Poll should when there is nothing new.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		return nil, nil
	}
	var out []*connect.SourceRecord
	for ; t.at < t.count; t.at++ {
		out = append(out, &connect.SourceRecord{
			SourcePartition: t.partition,
			SourceOffset:    map[string]any{"n": t.at + 1},
			Topic:           t.topic,
			ValueSchema:     connect.StringSchema,
			Value:           fmt.Sprint(t.at + 1),
		})
	}
	return out, nil
}

func (*counterTask) Stop() error { return nil }
