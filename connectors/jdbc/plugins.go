package jdbc

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/sink"
	"github.com/connectd/connectd/connectors/jdbc/source"
)

// Plugins returns the JDBC source and sink, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   source.ConnectorClass,
		Type:    connect.PluginSource,
		Version: source.Version,
		New:     func() any { return &source.Connector{} },
	}, {
		Class:   sink.ConnectorClass,
		Type:    connect.PluginSink,
		Version: sink.Version,
		New:     func() any { return &sink.Connector{} },
	}}
}
