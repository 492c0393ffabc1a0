package file

import (
	"log/slog"

	"github.com/connectd/connectd/connect"
)

// Class names, as Apache Kafka names the FileStream connectors and tasks.
const (
	SourceConnectorClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	SourceTaskClass      = "org.apache.kafka.connect.file.FileStreamSourceTask"
	SinkConnectorClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
	SinkTaskClass        = "org.apache.kafka.connect.file.FileStreamSinkTask"
)

// Version is the version reported by both connectors and their tasks, that
// of the Apache Kafka release whose behaviour they follow.
const Version = "3.9.0"

// Config keys.
const (
	// FileConfig is the file to read or append to; unset or empty means
	// stdin (source) or stdout (sink).
	FileConfig = "file"
	// TopicConfig is the topic the source writes to.
	TopicConfig = "topic"
	// BatchSizeConfig is the most records one source Poll returns.
	BatchSizeConfig = "batch.size"
	// DefaultBatchSize is batch.size's default.
	DefaultBatchSize = 2000
)

// Source partition and offset keys.
const (
	FilenameField = "filename"
	PositionField = "position"
)

// Plugins returns the FileStream source and sink, for a worker's plugin
// set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   SourceConnectorClass,
		Type:    connect.PluginSource,
		Version: Version,
		New:     func() any { return &SourceConnector{} },
	}, {
		Class:   SinkConnectorClass,
		Type:    connect.PluginSink,
		Version: Version,
		New:     func() any { return &SinkConnector{} },
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
