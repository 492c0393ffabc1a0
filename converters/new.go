package converters

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// New returns a configured converter of the given class of plugins, named
// in full (org.apache.kafka.connect.json.JsonConverter) or by an alias
// (JsonConverter, Json), as key.converter and value.converter allow.
func New(plugins *connect.PluginSet, class string, config map[string]string, isKey bool) (connect.Converter, error) {
	p, err := plugins.Lookup(class, connect.PluginConverter)
	if err != nil {
		return nil, fmt.Errorf("Failed to find any class that implements Converter and which name matches %s: %w", class, err)
	}
	conv, ok := p.New().(connect.Converter)
	if !ok {
		return nil, fmt.Errorf("Class %s does not implement Converter", class)
	}
	if config == nil {
		config = map[string]string{}
	}
	if err := conv.Configure(config, isKey); err != nil {
		return nil, err
	}
	return conv, nil
}
