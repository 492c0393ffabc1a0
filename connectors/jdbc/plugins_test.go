package jdbc

import (
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/sink"
	"github.com/connectd/connectd/connectors/jdbc/source"
)

func TestSinkPluginRegistered(t *testing.T) {
	plugins, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sink.ConnectorClass, "JdbcSinkConnector", "JdbcSink"} {
		p, err := plugins.Lookup(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Class != sink.ConnectorClass || p.Type != connect.PluginSink || p.Version != sink.Version {
			t.Errorf("%s: %+v", name, p)
		}
		if _, ok := p.New().(connect.SinkConnector); !ok {
			t.Errorf("%s: New gives %T", name, p.New())
		}
	}
}

func TestSourceRegistered(t *testing.T) {
	plugins, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{source.ConnectorClass, "JdbcSourceConnector", "JdbcSource"} {
		p, err := plugins.Lookup(name)
		if err != nil || p.Class != source.ConnectorClass || p.Type != connect.PluginSource || p.Version != source.Version {
			t.Fatalf("%s: %+v %v", name, p, err)
		}
		if _, ok := p.New().(connect.SourceConnector); !ok {
			t.Fatalf("%s: New gives %T", name, p.New())
		}
	}
}
