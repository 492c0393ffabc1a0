package transforms

import "github.com/connectd/connectd/connect"

// Filter is Kafka's Filter: it drops every record, and is meant to run
// behind a predicate.
type Filter struct{}

var filterConfig = connect.NewConfigDef()

// Config returns Filter's keys: none.
func (*Filter) Config() *connect.ConfigDef { return filterConfig }

// Configure accepts the (keyless) config.
func (*Filter) Configure(map[string]string) error { return nil }

// Apply drops the record.
func (*Filter) Apply(*connect.Record) (*connect.Record, error) { return nil, nil }
