package herder

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/postgrescdc"
)

func configErrors(infos *client.ConfigInfos) map[string][]string {
	out := map[string][]string{}
	for _, c := range infos.Configs {
		if c.Value != nil && len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

// The validate endpoint lists what a connector's Validate says of keys
// its definition lacks (without a definition, as Kafka's
// AbstractHerder.generateResult), and a source's topic.creation keys
// when the worker creates topics.
func TestValidateUndefinedKeysAndTopicCreation(t *testing.T) {
	plugins, err := connect.NewPluginSet(postgrescdc.Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]string{
		"name": "pg", "connector.class": postgrescdc.ConnectorClass, "topic.prefix": "srv", "database.hostname": "h",
		"database.dbname": "d", "database.user": "u",
		"column.mask.with.5.chars":          "public.t.c",
		"topic.creation.default.partitions": "0",
	}
	infos, err := validate(plugins, nil, config, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	errs := configErrors(infos)
	want := map[string]string{
		"column.mask.with.5.chars":                  "Invalid value public.t.c for configuration column.mask.with.5.chars: connectd does not implement this Debezium setting",
		"topic.creation.default.partitions":         "Invalid value 0 for configuration topic.creation.default.partitions: Number of partitions must be positive, or -1 to use the broker's default",
		"topic.creation.default.replication.factor": `Missing required configuration "topic.creation.default.replication.factor" which has no default value.`,
	}
	for k, w := range want {
		if len(errs[k]) != 1 || !strings.HasPrefix(errs[k][0], w) {
			t.Errorf("%s: %q, want %q", k, errs[k], w)
		}
	}
	if len(errs) != len(want) || infos.ErrorCount != len(want) {
		t.Errorf("errors %v (count %d)", errs, infos.ErrorCount)
	}
	for _, c := range infos.Configs {
		if c.Value.Name == "column.mask.with.5.chars" && (c.Definition != nil || c.Value.Value == nil || *c.Value.Value != "public.t.c") {
			t.Errorf("the undefined key's entry: %+v %+v", c.Definition, c.Value)
		}
	}

	// topic.creation.enable=false: the worker does not read them.
	infos, err = validate(plugins, nil, config, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if errs := configErrors(infos); len(errs) != 1 || errs["column.mask.with.5.chars"] == nil {
		t.Errorf("without topic creation: %v", errs)
	}
}
