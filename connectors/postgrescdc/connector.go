package postgrescdc

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/connectd/connectd/connect"
)

// Plugins returns the connector, for a worker's plugin set, under
// Debezium's class name. Kafka Connect's aliases follow from it
// (PostgresConnector and Postgres); PostgresCdc is an alias rather than a
// second class, which would show in the plugin listing.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   ConnectorClass,
		Type:    connect.PluginSource,
		Version: Version,
		// connectd's own short name, beside Kafka's derived ones.
		Aliases: []string{"PostgresCdc"},
		New:     func() any { return &Connector{} },
	}}
}

// Connector is Debezium's PostgresConnector: one task, which does all the
// work.
type Connector struct {
	props map[string]string
	log   *slog.Logger
}

var (
	_ connect.SourceConnector     = (*Connector)(nil)
	_ connect.SourceOffsetAlterer = (*Connector)(nil)
	_ connect.Validator           = (*Connector)(nil)
)

// Validate names the Debezium keys with a user-named part that connectd
// does not implement (column.mask.*, column.truncate.*, per-table
// snapshot.select.statement.overrides.*): the config definition cannot
// list them.
func (c *Connector) Validate(config map[string]string) map[string][]string {
	return unsupportedPatternErrors(config)
}

// Version implements connect.Connector.
func (c *Connector) Version() string { return Version }

// Config implements connect.Connector.
func (c *Connector) Config() *connect.ConfigDef { return ConnectorConfig() }

// TaskClass implements connect.Connector.
func (c *Connector) TaskClass() string { return TaskClass }

// NewTask implements connect.SourceConnector.
func (c *Connector) NewTask() connect.SourceTask { return NewTask() }

// Start checks the config.
func (c *Connector) Start(ctx connect.ConnectorContext, config map[string]string) error {
	c.log = ctx.Logger()
	cfg, err := parseConfig(config)
	if err != nil {
		return fmt.Errorf("Couldn't start PostgresConnector due to configuration error: %w", err)
	}
	c.props = maps.Clone(config)
	c.log.Info("Starting PostgresConnector", "server", cfg.prefix, "database", cfg.redacted(), "slot", cfg.slot, "publication", cfg.publication)
	return nil
}

// TaskConfigs returns one task config whatever maxTasks is: a replication
// slot has one reader.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if c.props == nil {
		return nil, errors.New("PostgresConnector is not started")
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements connect.Connector.
func (c *Connector) Stop() error { return nil }

// AlterOffsets checks offsets written through the REST API: the partition
// must be {"server": <topic.prefix>}, and an offset must hold "lsn" as a
// non-negative integer, the other LSNs and txId likewise when present,
// ts_usec as an integer and the snapshot flags as booleans. A null offset
// (a reset) is allowed: the task then snapshots as snapshot.mode says.
// The task applies the change when it starts: a later lsn skips changes,
// an earlier one replays them while the slot still has them.
func (c *Connector) AlterOffsets(config map[string]string, offsets []connect.SourceOffset) (bool, error) {
	cfg, err := parseConfig(config)
	if err != nil {
		return false, err
	}
	for _, o := range offsets {
		if o.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		if s, ok := o.Partition[PartitionServerKey].(string); !ok || len(o.Partition) != 1 || s != cfg.prefix {
			return false, fmt.Errorf(`The partition of this connector is {"%s":"%s"} (its topic.prefix); got %v`, PartitionServerKey, cfg.prefix, o.Partition)
		}
		if o.Offset == nil {
			continue
		}
		lsn, ok := o.Offset[OffsetLSN]
		if !ok || lsn == nil {
			return false, fmt.Errorf("Offset objects should either be null or contain the key '%s'", OffsetLSN)
		}
		for _, k := range []string{OffsetLSN, OffsetLSNProc, OffsetLSNCommit, OffsetTxID, OffsetTsUsec} {
			v, ok := o.Offset[k]
			if !ok {
				continue
			}
			n, isInt := v.(int64)
			if !isInt {
				return false, fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value, got %v", k, v)
			}
			if n < 0 && k != OffsetTsUsec {
				return false, fmt.Errorf("The value for the '%s' key in the offset should be a non-negative value, got %d", k, n)
			}
		}
		for _, k := range []string{OffsetLastSnapshotRecord} {
			if v, ok := o.Offset[k]; ok {
				if _, isBool := v.(bool); !isBool {
					return false, fmt.Errorf("The value for the '%s' key in the offset is expected to be a boolean, got %v", k, v)
				}
			}
		}
		if v, ok := o.Offset[OffsetMessageType]; ok {
			s, _ := v.(string)
			switch s {
			case "INSERT", "UPDATE", "DELETE", "TRUNCATE", "MESSAGE", "BEGIN", "COMMIT", "NOOP", "ORIGIN":
			default:
				return false, fmt.Errorf("The value for the '%s' key in the offset must be one of INSERT, UPDATE, DELETE, TRUNCATE, MESSAGE, BEGIN, COMMIT; got %v", OffsetMessageType, v)
			}
		}
		if _, err := parseOffset(o.Offset); err != nil {
			return false, err
		}
	}
	return true, nil
}

// ExactlyOnceSupport implements connect.ExactlyOnceSource, as Debezium's
// PostgresConnector does: the stream resumes at the LSN its offset holds.
func (c *Connector) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}

// CanDefineTransactionBoundaries implements connect.ExactlyOnceSource:
// with transaction.boundary=connector, each database transaction's change
// events (and each snapshot batch, each heartbeat) are one Kafka
// transaction.
func (c *Connector) CanDefineTransactionBoundaries(map[string]string) bool { return true }
