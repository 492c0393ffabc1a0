package herder

import (
	"slices"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/worker"
)

// eosSource is a source connector with no config of its own that answers
// the exactly-once preflight as it is told; with none, it does not
// implement connect.ExactlyOnceSource at all.
type eosSource struct {
	support    connect.ExactlyOnceSupport
	boundaries bool
	panics     string
}

func (*eosSource) Version() string                                         { return "test" }
func (*eosSource) Config() *connect.ConfigDef                              { return connect.NewConfigDef() }
func (*eosSource) Start(connect.ConnectorContext, map[string]string) error { return nil }
func (*eosSource) TaskConfigs(int) ([]map[string]string, error)            { return nil, nil }
func (*eosSource) Stop() error                                             { return nil }
func (*eosSource) TaskClass() string                                       { return "test.EOSSourceTask" }
func (*eosSource) NewTask() connect.SourceTask                             { return nil }

type eosDeclaring struct{ eosSource }

func (s *eosDeclaring) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	if s.panics != "" {
		panic(s.panics)
	}
	return s.support
}

func (s *eosDeclaring) CanDefineTransactionBoundaries(map[string]string) bool { return s.boundaries }

// Every message of Kafka's exactly-once preflight checks, for each kind of
// worker and connector.
func TestExactlyOncePreflightMessages(t *testing.T) {
	plugin := func(class string, c connect.Connector) connect.Plugin {
		return connect.Plugin{Class: class, Type: connect.PluginSource, Version: "test", New: func() any { return c }}
	}
	plugins, err := connect.NewPluginSet(
		plugin("test.NoAPI", &eosSource{}),
		plugin("test.Supported", &eosDeclaring{eosSource{support: connect.ExactlyOnceSupported, boundaries: true}}),
		plugin("test.Unsupported", &eosDeclaring{eosSource{support: connect.ExactlyOnceUnsupported}}),
		plugin("test.Panics", &eosDeclaring{eosSource{panics: "no database reachable"}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	const (
		notEnabled  = "This worker does not have exactly-once source support enabled."
		noAPI       = `The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).`
		unsupported = "The connector does not support exactly-once semantics with the provided configuration."
		noBoundary  = "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."
	)
	for _, c := range []struct {
		class, support, key, value string
		want                       []string
	}{
		{"test.Supported", "", "exactly.once.support", "required", []string{MsgStandaloneExactlyOnce}},
		{"test.Supported", worker.ExactlyOnceEnabled, "exactly.once.support", "required", nil},
		{"test.Supported", worker.ExactlyOncePreparing, "exactly.once.support", "required", []string{notEnabled}},
		{"test.Supported", worker.ExactlyOnceDisabled, "exactly.once.support", "requested", nil},
		{"test.NoAPI", worker.ExactlyOnceEnabled, "exactly.once.support", "required", []string{noAPI}},
		{"test.NoAPI", worker.ExactlyOnceDisabled, "exactly.once.support", "required", []string{notEnabled, noAPI}},
		{"test.Unsupported", worker.ExactlyOnceEnabled, "exactly.once.support", "required", []string{unsupported}},
		{"test.Panics", worker.ExactlyOnceEnabled, "exactly.once.support", "required", []string{"An unexpected error occurred during validation: no database reachable"}},
		{"test.Supported", worker.ExactlyOnceEnabled, "transaction.boundary", "connector", nil},
		{"test.Unsupported", worker.ExactlyOnceEnabled, "transaction.boundary", "connector", []string{noBoundary}},
		{"test.NoAPI", worker.ExactlyOnceDisabled, "transaction.boundary", "connector", []string{noBoundary}},
		{"test.Unsupported", worker.ExactlyOnceEnabled, "transaction.boundary", "interval", nil},
	} {
		config := map[string]string{"name": "x", "connector.class": c.class, c.key: c.value}
		infos, err := validate(plugins, nil, config, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		before := infos.ErrorCount
		checkExactlyOnce(plugins, config, infos, c.support)
		got := configErrors(infos)[c.key]
		if !slices.Equal(got, c.want) || infos.ErrorCount-before != len(c.want) {
			t.Errorf("%s, worker %q, %s=%s: errors %q (count +%d), want %q", c.class, c.support, c.key, c.value, got, infos.ErrorCount-before, c.want)
		}
	}
}
