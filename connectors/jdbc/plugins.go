package jdbc

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/sink"
)

// Plugins returns the JDBC source and sink, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   SourceConnectorClass,
		Type:    connect.PluginSource,
		Version: SourceVersion,
		New:     func() any { return &SourceConnector{} },
	}, {
		Class:   sink.ConnectorClass,
		Type:    connect.PluginSink,
		Version: sink.Version,
		New:     func() any { return &sink.Connector{} },
	}}
}
