package herder

import (
	"slices"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestSinkTopicChecksDeadLetterQueue(t *testing.T) {
	cases := []struct {
		name   string
		config map[string]string
		want   map[string][]string
	}{
		{"not consumed", map[string]string{"topics": "a,b", "errors.deadletterqueue.topic.name": "dlq"}, nil},
		{"listed", map[string]string{"topics": "a, dlq,a,", "errors.deadletterqueue.topic.name": " dlq "}, map[string][]string{
			"topics": {"The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"},
		}},
		{"matched", map[string]string{"topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"}, map[string][]string{
			"topics.regex": {"The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"},
		}},
		// Java's matches() is of the whole name.
		{"matched in part only", map[string]string{"topics.regex": "d", "errors.deadletterqueue.topic.name": "dlq"}, nil},
		{"none", map[string]string{"topics": "dlq"}, nil},
		{"both set and listed", map[string]string{"topics": "dlq", "topics.regex": "dlq", "errors.deadletterqueue.topic.name": "dlq"}, map[string][]string{
			"topics": {"topics and topics.regex are mutually exclusive options, but both are set.",
				"The DLQ topic 'dlq' may not be included in the list of topics ('topics=[dlq]') consumed by the connector"},
			"topics.regex": {"topics and topics.regex are mutually exclusive options, but both are set.",
				"The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=dlq') consumed by the connector"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			values := []connect.ConfigValue{{Name: "topics"}, {Name: "topics.regex"}}
			sinkTopicChecks(c.config, values)
			for _, v := range values {
				if !slices.Equal(v.Errors, c.want[v.Name]) {
					t.Errorf("%s: errors %q, want %q", v.Name, v.Errors, c.want[v.Name])
				}
			}
		})
	}
}

func TestSinkDefDeadLetterQueueKeys(t *testing.T) {
	def := sinkDef(nil)
	for _, k := range []struct {
		name  string
		typ   connect.ConfigType
		def   any
		order int
	}{
		{"errors.deadletterqueue.topic.name", connect.ConfigString, "", 6},
		{"errors.deadletterqueue.topic.replication.factor", connect.ConfigShort, int16(3), 7},
		{"errors.deadletterqueue.context.headers.enable", connect.ConfigBoolean, false, 8},
	} {
		got := def.Key(k.name)
		if got == nil {
			t.Fatalf("%s is not defined", k.name)
		}
		if got.Type != k.typ || got.Default != k.def || got.Group != "Error Handling" || got.OrderInGroup != k.order || got.Importance != connect.Medium {
			t.Errorf("%s: %+v", k.name, got)
		}
	}
	if sourceDef(nil).Key("errors.deadletterqueue.topic.name") != nil {
		t.Error("a source connector has no dead letter queue")
	}
}
