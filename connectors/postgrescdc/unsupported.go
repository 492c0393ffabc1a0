package postgrescdc

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
)

// unsupportedKeys are the keys Debezium 2.7's PostgresConnector defines
// (PostgresConnectorConfig, RelationalDatabaseConnectorConfig,
// CommonConnectorConfig) that connectd does not implement, each with
// Debezium's default. A config that sets one to anything else is refused,
// naming it, rather than run with the setting ignored; set to the default
// (or left out), it asks for nothing connectd does not do.
var unsupportedKeys = []struct {
	name string
	def  any // nil: Debezium has no default, any value is refused
}{
	{"replica.identity.autoset.values", nil},
	{"slot.stream.params", nil},
	{"database.initial.statements", nil},
	{"database.sslfactory", nil},
	{"database.tcpKeepAlive", "true"},
	{"database.query.timeout.ms", "600000"},
	{"read.only", "false"},
	{"snapshot.locking.mode", "none"},
	{"snapshot.locking.mode.custom.name", nil},
	{"snapshot.query.mode", "select_all"},
	{"snapshot.query.mode.custom.name", nil},
	{"snapshot.mode.custom.name", nil},
	{"snapshot.mode.configuration.based.snapshot.data", "false"},
	{"snapshot.mode.configuration.based.snapshot.schema", "false"},
	{"snapshot.mode.configuration.based.start.stream", "false"},
	{"snapshot.mode.configuration.based.snapshot.on.schema.error", "false"},
	{"snapshot.mode.configuration.based.snapshot.on.data.error", "false"},
	{"snapshot.select.statement.overrides", nil},
	{"snapshot.include.collection.list", nil},
	{"snapshot.lock.timeout.ms", "10000"},
	{"snapshot.tables.order.by.row.count", "disabled"},
	{"snapshot.delay.ms", "0"},
	{"snapshot.fetch.size", "10240"},
	{"snapshot.max.threads", "1"},
	{"streaming.delay.ms", "0"},
	{"message.prefix.include.list", nil},
	{"message.prefix.exclude.list", nil},
	// hstore columns are not mapped at all (they are a type connectd
	// leaves out), so neither of Debezium's modes is what happens.
	{"hstore.handling.mode", nil},
	{"binary.handling.mode", "bytes"},
	{"schema.refresh.mode", "columns_diff"},
	{"xmin.fetch.interval.ms", "0"},
	{"table.ignore.builtin", "true"},
	{"include.schema.comments", "false"},
	{"column.propagate.source.type", nil},
	{"datatype.propagate.source.type", nil},
	{"retriable.restart.connector.wait.ms", "10000"},
	{"max.queue.size.in.bytes", "0"},
	{"query.fetch.size", "0"},
	{"incremental.snapshot.chunk.size", "1024"},
	{"incremental.snapshot.allow.schema.changes", "false"},
	{"incremental.snapshot.watermarking.strategy", "insert_insert"},
	{"provide.transaction.metadata", "false"},
	{"transaction.metadata.factory", "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory"},
	{"event.processing.failure.handling.mode", "fail"},
	{"event.converting.failure.handling.mode", "warn"},
	{"converters", nil},
	{"post.processors", nil},
	{"skip.messages.without.change", "false"},
	{"schema.name.adjustment.mode", "none"},
	{"field.name.adjustment.mode", "none"},
	{"signal.data.collection", nil},
	{"signal.enabled.channels", "source"},
	{"signal.poll.interval.ms", "5000"},
	{"topic.naming.strategy", "io.debezium.schema.SchemaTopicNamingStrategy"},
	{"notification.enabled.channels", nil},
	{"sourceinfo.struct.maker", "io.debezium.connector.postgresql.PostgresSourceInfoStructMaker"},
	{"errors.max.retries", "-1"},
	{"custom.metric.tags", nil},
	{"heartbeat.action.query", nil},
}

// unsupportedPatterns are Debezium's keys with a part the user names
// (column.mask.hash.<algorithm>.with.salt.<salt>, ...): any of them is
// refused.
var unsupportedPatterns = []*regexp.Regexp{
	regexp.MustCompile(`^column\.mask\.hash\.[^.]+\.with\.salt\..+$`),
	regexp.MustCompile(`^column\.mask\.with\.\d+\.chars$`),
	regexp.MustCompile(`^column\.truncate\.to\.\d+\.chars$`),
	regexp.MustCompile(`^snapshot\.select\.statement\.overrides\..+$`),
}

func defineUnsupported(d *connect.ConfigDef) *connect.ConfigDef {
	for _, k := range unsupportedKeys {
		def := k.def
		doc := "A Debezium setting connectd does not implement: a config that sets it is refused"
		if def != nil {
			doc = fmt.Sprintf("A Debezium setting connectd does not implement: a config that sets it to anything but Debezium's default (%s) is refused", def)
		}
		d.Define(connect.ConfigKey{Name: k.name, Type: connect.ConfigString, Default: def, Importance: connect.Low, Doc: doc,
			Validator: func(v any) error {
				s, _ := v.(string)
				if v == nil || def != nil && strings.EqualFold(strings.TrimSpace(s), def.(string)) {
					return nil
				}
				if def == nil {
					return fmt.Errorf("connectd does not implement this Debezium setting; leave it out")
				}
				return fmt.Errorf("connectd does not implement this Debezium setting; only Debezium's default (%s) is accepted", def)
			}})
	}
	return d
}

// unsupportedPatternErrors names each key of config that matches
// unsupportedPatterns, in key order.
func unsupportedPatternErrors(config map[string]string) map[string][]string {
	var out map[string][]string
	for k := range config {
		for _, re := range unsupportedPatterns {
			if re.MatchString(k) {
				if out == nil {
					out = map[string][]string{}
				}
				out[k] = append(out[k], fmt.Sprintf("Invalid value %s for configuration %s: connectd does not implement this Debezium setting; leave it out", config[k], k))
			}
		}
	}
	return out
}

// refuseUnsupported is the error of the first (by name) key
// unsupportedPatternErrors names.
func refuseUnsupported(config map[string]string) error {
	errs := unsupportedPatternErrors(config)
	if len(errs) == 0 {
		return nil
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &connect.ConfigError{Name: keys[0], Message: errs[keys[0]][0]}
}
