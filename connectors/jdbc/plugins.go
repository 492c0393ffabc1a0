package jdbc

import "github.com/connectd/connectd/connect"

// Plugins returns the JDBC source and sink, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   SourceConnectorClass,
		Type:    connect.PluginSource,
		Version: SourceVersion,
		New:     func() any { return &SourceConnector{} },
	}, {
		Class:   SinkConnectorClass,
		Type:    connect.PluginSink,
		Version: SinkVersion,
		New:     func() any { return &SinkConnector{} },
	}}
}
