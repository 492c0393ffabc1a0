package converters

import "github.com/connectd/connectd/connect"

// Plugins returns Kafka's three converters and its four header
// converters, for a worker's plugin set.
func Plugins() []connect.Plugin {
	return append([]connect.Plugin{{
		Class:   JSONConverterClass,
		Type:    connect.PluginConverter,
		Version: kafkaVersion,
		New:     func() any { return new(JSONConverter) },
	}, {
		Class:   StringConverterClass,
		Type:    connect.PluginConverter,
		Version: kafkaVersion,
		New:     func() any { return new(StringConverter) },
	}, {
		Class:   ByteArrayConverterClass,
		Type:    connect.PluginConverter,
		Version: kafkaVersion,
		New:     func() any { return new(ByteArrayConverter) },
	}}, headerConverterPlugins()...)
}
