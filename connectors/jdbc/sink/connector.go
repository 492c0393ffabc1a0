package sink

import (
	"context"
	"maps"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// Connector is Confluent's JdbcSinkConnector: tasks that write the
// records of Kafka topics into database tables. Every task gets the same
// config; the consumer group spreads the partitions among them. Its
// position is the consumer group's offsets only.
//
// Records must have a Struct value with a schema (JsonConverter with
// schemas.enable=true, Avro, ...): schemaless values (a map from
// schemas.enable=false) fail the task with Confluent's message, as do
// tombstones unless delete.enabled. Fields must be primitive or one of the
// Decimal, Date, Time and Timestamp logical types; PostgreSQL also takes
// arrays of primitives, as Confluent's dialect does. Structs, maps and
// (elsewhere) arrays fail the task with a message naming the field.
//
// Differences from Confluent's connector (10.8):
//
//   - data is committed in PreCommit/Flush, not at the end of every Put
//     (see Task; the runtime calls PreCommit once the task has caught
//     up, so rows show up about as soon), and max.retries is applied by the task itself, which
//     rewrites every uncommitted record after retry.backoff.ms;
//   - insert.mode=upsert on SQLite is INSERT ... ON CONFLICT DO UPDATE
//     (Confluent writes INSERT OR REPLACE, which drops columns the record
//     lacks); PostgreSQL loads insert batches, and upsert batches of new
//     keys, with COPY (copy.go);
//   - insert.mode=upsert or update with pk.mode=none is refused up front
//     (Confluent fails the first upsert, and runs such an update as an
//     UPDATE of every row); deletes are one multi-row DELETE per batch;
//   - auto.create on SQLite declares DATE, TIME and DATETIME columns
//     (Confluent: NUMERIC) and writes them as text in db.timezone
//     (Confluent's driver: epoch milliseconds); PostgreSQL bytes defaults
//     are written as bytea literals;
//   - quote.sql.identifiers and table.types are checked when the config is
//     (Confluent fails at start); dialect.name must match the URL's
//     database; the keys replace.null.with.default (nulls always become
//     the schema default, Confluent's default), mssql.use.merge.holdlock,
//     jdbc.credentials.provider.class and the String-value keys of 10.9
//     are not offered.
type Connector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector     = (*Connector)(nil)
	_ connect.SinkOffsetAlterer = (*Connector)(nil)
	_ connect.Validator         = (*Connector)(nil)
)

// Version implements connect.Connector.
func (c *Connector) Version() string { return Version }

// Config implements connect.Connector.
func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

// Start checks the config, as Confluent's JdbcSinkConfig does, and keeps
// it for the tasks. It does not connect to the database.
func (c *Connector) Start(_ connect.ConnectorContext, config map[string]string) error {
	if _, err := parseSinkConfig(config); err != nil {
		return err
	}
	c.props = maps.Clone(config)
	return nil
}

// TaskConfigs returns maxTasks identical copies of the connector config.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, 0, max(maxTasks, 0))
	for range maxTasks {
		out = append(out, maps.Clone(c.props))
	}
	return out, nil
}

// Stop implements connect.Connector; there is nothing to stop.
func (c *Connector) Stop() error { return nil }

// TaskClass implements connect.Connector.
func (c *Connector) TaskClass() string { return TaskClass }

// NewTask implements connect.SinkConnector.
func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// AlterOffsets accepts any change: the sink's position is the consumer
// group's offsets, which the runtime alters; the connector keeps none.
func (c *Connector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// Validate reports the problems that involve several keys (pk.mode with
// delete.enabled, insert.mode with pk.mode, pk.fields with pk.mode) and,
// when the config is otherwise valid, whether the database answers: an
// unreachable database is reported on connection.url, with the URL's
// password hidden and connection.password never shown.
func (c *Connector) Validate(config map[string]string) map[string][]string {
	def := ConfigDef()
	values := def.Validate(config)
	bad := map[string]bool{}
	for _, v := range values {
		if len(v.Errors) > 0 {
			bad[v.Name] = true
		}
	}
	parsed := map[string]string{}
	for k, v := range config {
		if !bad[k] {
			parsed[k] = v
		}
	}
	// Keys that failed on their own are left at their defaults, so
	// that the cross checks only judge keys that parse.
	pc, err := def.Parse(parsed)
	if err != nil {
		return nil // a required key is missing: reported per key already
	}
	out := sinkCrossChecks(pc)
	for k := range out {
		if bad[k] {
			delete(out, k)
		}
	}
	if len(out) > 0 || len(bad) > 0 {
		return out
	}
	url, user, password := pc.String(sinkConnectionURL), pc.String(sinkConnectionUser), pc.String(sinkConnectionPassword)
	db, _, err := sinkOpen(context.Background(), url, user, password)
	if err != nil {
		out[sinkConnectionURL] = append(out[sinkConnectionURL], jdbcdb.HideSecrets(err.Error(), url, password))
		return out
	}
	// The task, started a moment later, takes this connection (which may
	// be one a stopped task handed on).
	sinkIdle.Put(jdbcdb.ConnKey(url, user, password), db)
	return out
}
