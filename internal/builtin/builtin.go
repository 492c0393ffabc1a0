// Package builtin is the set of plugins connectd ships: its connectors,
// Kafka's converters, transforms and predicates, and Debezium's transforms. The public connectd package offers it as
// Builtin; it lives here too because the tests of the packages connectd
// imports (internal/server) cannot import connectd, and share this list.
package builtin

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/file"
	"github.com/connectd/connectd/connectors/httpsource"
	"github.com/connectd/connectd/connectors/jdbc"
	"github.com/connectd/connectd/connectors/postgrescdc"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/transforms"
	"github.com/connectd/connectd/transforms/debezium"
)

// Plugins returns a fresh slice of the built-in plugins, which the caller
// may extend.
func Plugins() []connect.Plugin {
	var out []connect.Plugin
	for _, ps := range [][]connect.Plugin{file.Plugins(), jdbc.Plugins(), postgrescdc.Plugins(), httpsource.Plugins(), converters.Plugins(), transforms.Plugins(), debezium.Plugins()} {
		out = append(out, ps...)
	}
	return out
}
