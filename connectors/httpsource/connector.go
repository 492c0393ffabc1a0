package httpsource

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/connectd/connectd/connect"
)

// Plugins returns the HTTP source, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   ConnectorClass,
		Type:    connect.PluginSource,
		Version: Version,
		New:     func() any { return &Connector{} },
	}}
}

// loggerOf is the logger a context gives, or slog.Default() without one
// (unit tests start connectors and tasks with a nil context).
func loggerOf(ctx interface{ Logger() *slog.Logger }) *slog.Logger {
	if ctx == nil {
		return slog.Default()
	}
	return ctx.Logger()
}

// Connector polls one HTTP endpoint with one task.
type Connector struct {
	props map[string]string
	log   *slog.Logger
}

var (
	_ connect.SourceConnector     = (*Connector)(nil)
	_ connect.SourceOffsetAlterer = (*Connector)(nil)
	_ connect.Validator           = (*Connector)(nil)
)

// Version implements connect.Connector.
func (c *Connector) Version() string { return Version }

// Config implements connect.Connector.
func (c *Connector) Config() *connect.ConfigDef { return ConnectorConfig() }

// TaskClass implements connect.Connector.
func (c *Connector) TaskClass() string { return TaskClass }

// NewTask implements connect.SourceConnector.
func (c *Connector) NewTask() connect.SourceTask { return NewTask() }

// Start checks the config and keeps it for the task.
func (c *Connector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	c.log = loggerOf(ctx)
	cfg, err := parseConfig(props)
	if err != nil {
		return err
	}
	c.props = maps.Clone(props)
	c.log.Info("Starting HTTP source connector", "url", connect.RedactURL(cfg.url.String()), "endpoint", cfg.endpoint, "topic", cfg.topic)
	return nil
}

// TaskConfigs returns one task config whatever maxTasks is: one endpoint
// has one cursor, which only one poller can advance.
func (c *Connector) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements connect.Connector; there is nothing to stop.
func (c *Connector) Stop() error { return nil }

// Validate reports the problems that span several keys.
func (c *Connector) Validate(props map[string]string) map[string][]string {
	for _, v := range ConnectorConfig().Validate(props) {
		if len(v.Errors) > 0 {
			return nil // reported per key by the runtime
		}
	}
	cfg, err := buildConfig(props)
	if err != nil {
		return nil
	}
	return cfg.check()
}

// AlterOffsets checks offsets written through the REST API. A non-null
// offset must be for this connector's endpoint ({"endpoint": <path of
// http.url>}) and hold a last_id that is an integer or a string, and a
// timestamp, when present, that is a string. Null offsets (resets) are
// accepted for any partition. The task reads the stored offset when it
// starts, so the runtime's write is all there is to do.
func (c *Connector) AlterOffsets(props map[string]string, offsets []connect.SourceOffset) (bool, error) {
	cfg, err := parseConfig(props)
	if err != nil {
		return false, err
	}
	for _, o := range offsets {
		if o.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		ep, ok := o.Partition[EndpointField]
		if !ok {
			return false, errors.New("Partition objects should contain the key '" + EndpointField + "'")
		}
		if o.Offset == nil {
			continue
		}
		if s, ok := ep.(string); !ok || s != cfg.endpoint {
			return false, fmt.Errorf("The partition's '%s' is %s but this connector polls the endpoint %q (the path of %s); "+
				"only null offsets may be written for other endpoints", EndpointField, describe(ep), cfg.endpoint, URLConfig)
		}
		if _, err := offsetCursor(o.Offset); err != nil {
			return false, err
		}
	}
	return true, nil
}

// offsetCursor reads a stored offset map.
func offsetCursor(off map[string]any) (cursor, error) {
	id, ok := off[LastIDField]
	if !ok || id == nil {
		return cursor{}, errors.New("Offset objects should either be null or contain the key '" + LastIDField + "'")
	}
	switch id.(type) {
	case int64, string:
	default:
		return cursor{}, fmt.Errorf("The value for the '%s' key in the offset is expected to be an integer or a string, not %s", LastIDField, describe(id))
	}
	cur := cursor{id: id}
	switch ts := off[TimestampField].(type) {
	case nil:
	case string:
		cur.ts = ts
	default:
		return cursor{}, fmt.Errorf("The value for the '%s' key in the offset is expected to be a string, not %s", TimestampField, describe(ts))
	}
	return cur, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	}
	return fmt.Sprintf("%v", v)
}

// ExactlyOnceSupport implements connect.ExactlyOnceSource: each page is
// asked for from the position its endpoint's offset holds.
func (c *Connector) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}

// CanDefineTransactionBoundaries implements connect.ExactlyOnceSource.
func (c *Connector) CanDefineTransactionBoundaries(map[string]string) bool { return false }
