package file

import (
	"errors"
	"log/slog"
	"maps"
	"strings"

	"github.com/connectd/connectd/connect"
)

// SourceConnectorConfig returns the config definition of the source
// connector, as Kafka's FileStreamSourceConnector.CONFIG_DEF.
func SourceConnectorConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{
			Name:       FileConfig,
			Type:       connect.ConfigString,
			Default:    nil,
			Importance: connect.High,
			Doc:        "Source filename. If not specified, the standard input will be used",
		}).
		Define(connect.ConfigKey{
			Name:       TopicConfig,
			Type:       connect.ConfigString,
			Required:   true,
			Validator:  connect.NonEmptyString(),
			Importance: connect.High,
			Doc:        "The topic to publish data to",
		}).
		Define(connect.ConfigKey{
			Name:       BatchSizeConfig,
			Type:       connect.ConfigInt,
			Default:    int32(DefaultBatchSize),
			Importance: connect.Low,
			Doc:        "The maximum number of records the source task can read from the file each time it is polled",
		})
}

// SourceConnector is FileStreamSourceConnector: one task reading one file
// (or stdin) into one topic.
type SourceConnector struct {
	props map[string]string
	log   *slog.Logger
}

var (
	_ connect.SourceConnector     = (*SourceConnector)(nil)
	_ connect.SourceOffsetAlterer = (*SourceConnector)(nil)
)

// Version implements connect.Connector.
func (c *SourceConnector) Version() string { return Version }

// Config implements connect.Connector.
func (c *SourceConnector) Config() *connect.ConfigDef { return SourceConnectorConfig() }

// Start checks the config and keeps it for the task.
func (c *SourceConnector) Start(ctx connect.ConnectorContext, config map[string]string) error {
	c.log = loggerOf(ctx)
	pc, err := SourceConnectorConfig().Parse(config)
	if err != nil {
		return err
	}
	c.props = maps.Clone(config)
	name := pc.String(FileConfig)
	if name == "" {
		name = "standard input"
	}
	c.log.Info("Starting file source connector", "file", name)
	return nil
}

// TaskConfigs returns exactly one task config, a copy of the connector's,
// whatever maxTasks is: only one reader of a stream makes sense.
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

// Stop implements connect.Connector; there is nothing to stop.
func (c *SourceConnector) Stop() error { return nil }

// TaskClass implements connect.Connector.
func (c *SourceConnector) TaskClass() string { return SourceTaskClass }

// NewTask implements connect.SourceConnector.
func (c *SourceConnector) NewTask() connect.SourceTask { return NewSourceTask() }

// AlterOffsets checks offsets written through the REST API with Kafka's
// checks and messages: the connector must read a file, and every non-null
// offset must hold a non-negative int64 "position" for a partition with a
// "filename". Whether the position fits the file is left to the task.
func (c *SourceConnector) AlterOffsets(config map[string]string, offsets []connect.SourceOffset) (bool, error) {
	pc, err := SourceConnectorConfig().Parse(config)
	if err != nil {
		return false, err
	}
	if pc.String(FileConfig) == "" {
		return false, errors.New("Offsets cannot be modified if the '" + FileConfig + "' configuration is unspecified. " +
			"This is because stdin is used for input and offsets are not tracked.")
	}
	for _, o := range offsets {
		if o.Offset == nil {
			// Tombstones are fine for any partition, so that garbage can
			// always be cleaned up.
			continue
		}
		pos, ok := o.Offset[PositionField]
		if !ok {
			return false, errors.New("Offset objects should either be null or contain the key '" + PositionField + "'")
		}
		n, ok := pos.(int64)
		if !ok {
			return false, errors.New("The value for the '" + PositionField + "' key in the offset is expected to be a Long value")
		}
		if n < 0 {
			return false, errors.New("The value for the '" + PositionField + "' key in the offset should be a non-negative value")
		}
		if o.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		if _, ok := o.Partition[FilenameField]; !ok {
			return false, errors.New("Partition objects should contain the key '" + FilenameField + "'")
		}
	}
	return true, nil
}

// ExactlyOnceSupport implements connect.ExactlyOnceSource, as Java's
// FileStreamSourceConnector answers: a file (appended to only) is read
// from the position its offset holds, standard input is not.
func (c *SourceConnector) ExactlyOnceSupport(config map[string]string) connect.ExactlyOnceSupport {
	if strings.TrimSpace(config[FileConfig]) == "" {
		return connect.ExactlyOnceUnsupported
	}
	return connect.ExactlyOnceSupported
}

// CanDefineTransactionBoundaries implements connect.ExactlyOnceSource: a
// line is all the file source knows, with no boundary of its own.
func (c *SourceConnector) CanDefineTransactionBoundaries(map[string]string) bool { return false }
