package postgrescdc

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javaregex"
)

// Class names and version, as Debezium names them.
const (
	ConnectorClass = "io.debezium.connector.postgresql.PostgresConnector"
	TaskClass      = "io.debezium.connector.postgresql.PostgresConnectorTask"
	// Version is the Debezium release whose configs, events and offsets
	// the connector follows; it is also the source.version of the events.
	Version = "2.7.0.Final"
)

// Source partition and offset keys, as Debezium's PostgresPartition,
// SourceInfo and PostgresOffsetContext name them.
const (
	PartitionServerKey = "server"

	OffsetLSN                = "lsn"
	OffsetLSNProc            = "lsn_proc"
	OffsetLSNCommit          = "lsn_commit"
	OffsetTxID               = "txId"
	OffsetTsUsec             = "ts_usec"
	OffsetMessageType        = "messageType"
	OffsetSnapshot           = "snapshot"
	OffsetLastSnapshotRecord = "last_snapshot_record"
	// OffsetSnapshotCompleted is written by Debezium 3.0.2 and later only;
	// it is read, never written.
	OffsetSnapshotCompleted = "snapshot_completed"
)

// Config keys (Debezium's names).
const (
	TopicPrefixConfig        = "topic.prefix"
	HostnameConfig           = "database.hostname"
	PortConfig               = "database.port"
	UserConfig               = "database.user"
	PasswordConfig           = "database.password"
	DBNameConfig             = "database.dbname"
	SSLModeConfig            = "database.sslmode"
	PluginNameConfig         = "plugin.name"
	SlotNameConfig           = "slot.name"
	SlotDropOnStopConfig     = "slot.drop.on.stop"
	SlotMaxRetriesConfig     = "slot.max.retries"
	SlotRetryDelayConfig     = "slot.retry.delay.ms"
	PublicationNameConfig    = "publication.name"
	PublicationAutocreate    = "publication.autocreate.mode"
	SchemaIncludeConfig      = "schema.include.list"
	SchemaExcludeConfig      = "schema.exclude.list"
	TableIncludeConfig       = "table.include.list"
	TableExcludeConfig       = "table.exclude.list"
	ColumnIncludeConfig      = "column.include.list"
	ColumnExcludeConfig      = "column.exclude.list"
	SkippedOperationsConfig  = "skipped.operations"
	MsgKeyColumnsConfig      = "message.key.columns"
	SnapshotModeConfig       = "snapshot.mode"
	HeartbeatIntervalConfig  = "heartbeat.interval.ms"
	HeartbeatTopicPrefix     = "topic.heartbeat.prefix"
	TombstonesOnDeleteConfig = "tombstones.on.delete"
	StatusUpdateConfig       = "status.update.interval.ms"
	LSNFlushModeConfig       = "lsn.flush.mode"
	FlushLSNSourceConfig     = "flush.lsn.source"
	MaxBatchSizeConfig       = "max.batch.size"
	MaxQueueSizeConfig       = "max.queue.size"
	PollIntervalConfig       = "poll.interval.ms"
	IncludeUnknownConfig     = "include.unknown.datatypes"
	PlaceholderConfig        = "unavailable.value.placeholder"
	MoneyDigitsConfig        = "money.fraction.digits"
	TimePrecisionConfig      = "time.precision.mode"
	DecimalHandlingConfig    = "decimal.handling.mode"
	IntervalHandlingConfig   = "interval.handling.mode"
	TopicDelimiterConfig     = "topic.delimiter"
	SSLCertConfig            = "database.sslcert"
	SSLKeyConfig             = "database.sslkey"
	SSLPasswordConfig        = "database.sslpassword"
	SSLRootCertConfig        = "database.sslrootcert"
)

// Snapshot modes.
const (
	SnapshotInitial     = "initial"
	SnapshotAlways      = "always"
	SnapshotNever       = "never"
	SnapshotNoData      = "no_data"
	SnapshotWhenNeeded  = "when_needed"
	SnapshotInitialOnly = "initial_only"
)

// Publication auto-create modes.
const (
	PublicationAllTables = "all_tables"
	PublicationDisabled  = "disabled"
	PublicationFiltered  = "filtered"
)

// DefaultPlaceholder is Debezium's unavailable.value.placeholder: the value
// of a TOASTed column PostgreSQL did not send because it did not change.
const DefaultPlaceholder = "__debezium_unavailable_value"

// ConnectorConfig returns the config definition of the connector.
func ConnectorConfig() *connect.ConfigDef {
	str := func(name string, def any, imp connect.Importance, doc string, v connect.ConfigValidator) connect.ConfigKey {
		return connect.ConfigKey{Name: name, Type: connect.ConfigString, Default: def, Importance: imp, Doc: doc, Validator: v}
	}
	list := func(name, doc string) connect.ConfigKey {
		return connect.ConfigKey{Name: name, Type: connect.ConfigList, Default: "", Importance: connect.Medium, Doc: doc, Validator: regexList}
	}
	return defineUnsupported(connect.NewConfigDef().
		Define(connect.ConfigKey{Name: TopicPrefixConfig, Type: connect.ConfigString, Required: true, Validator: topicPrefixValid,
			Importance: connect.High, Doc: "Topic prefix that identifies and provides a namespace for the particular database server/cluster " +
				"is capturing changes. It is the prefix of every topic and the source partition's \"server\"."}).
		Define(connect.ConfigKey{Name: HostnameConfig, Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(),
			Importance: connect.High, Doc: "Resolvable hostname or IP address of the database server."}).
		Define(connect.ConfigKey{Name: PortConfig, Type: connect.ConfigInt, Default: int32(5432), Validator: connect.Between(1, 65535),
			Importance: connect.High, Doc: "Port of the database server."}).
		Define(connect.ConfigKey{Name: UserConfig, Type: connect.ConfigString, Required: true, Importance: connect.High,
			Doc: "Name of the database user to be used when connecting to the database."}).
		Define(connect.ConfigKey{Name: PasswordConfig, Type: connect.ConfigPassword, Default: nil, Importance: connect.High,
			Doc: "Password of the database user to be used when connecting to the database."}).
		Define(connect.ConfigKey{Name: DBNameConfig, Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(),
			Importance: connect.High, Doc: "The name of the database from which the connector should capture changes"}).
		Define(str(SSLModeConfig, "prefer", connect.Medium, "Whether to use an encrypted connection to Postgres: disable, allow, prefer, require, verify-ca, verify-full.",
			connect.OneOfIgnoreCase("disable", "allow", "prefer", "require", "verify-ca", "verify-full"))).
		Define(str(PluginNameConfig, "pgoutput", connect.Medium, "The name of the Postgres logical decoding plugin installed on the server. "+
			"Only pgoutput is supported (Debezium's default, decoderbufs, needs a server extension).", pluginValid)).
		Define(str(SlotNameConfig, "debezium", connect.Medium, "The name of the Postgres logical decoding slot created for streaming changes "+
			"from a plugin. Defaults to 'debezium'", slotNameValid)).
		Define(connect.ConfigKey{Name: SlotDropOnStopConfig, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium,
			Doc: "Whether or not to drop the logical replication slot when the connector finishes orderly. " +
				"By default the replication is kept so that on restart progress can resume from the last recorded location"}).
		Define(connect.ConfigKey{Name: SlotMaxRetriesConfig, Type: connect.ConfigInt, Default: int32(6), Validator: connect.AtLeast(1),
			Importance: connect.Low, Doc: "How many times to retry connecting to a replication slot when an attempt fails."}).
		Define(connect.ConfigKey{Name: SlotRetryDelayConfig, Type: connect.ConfigLong, Default: int64(10000), Validator: connect.AtLeast(0),
			Importance: connect.Low, Doc: "Time to wait between retry attempts when the connector fails to connect to a replication slot, given in milliseconds. Defaults to 10 seconds (10,000 ms)."}).
		Define(str(PublicationNameConfig, "dbz_publication", connect.Low, "The name of the Postgres 10+ publication used for streaming changes from a plugin. "+
			"Defaults to 'dbz_publication'", identValid)).
		Define(str(PublicationAutocreate, PublicationAllTables, connect.Low, "Applies only when streaming changes using pgoutput. "+
			"all_tables: create the publication for all tables if it does not exist; disabled: the publication must exist; "+
			"filtered: create the publication for the tables the include/exclude lists select, and set its tables on every start.",
			connect.OneOfIgnoreCase(PublicationAllTables, PublicationDisabled, PublicationFiltered))).
		Define(list(SchemaIncludeConfig, "The schemas for which events should be captured (regular expressions matched against the whole schema name)")).
		Define(list(SchemaExcludeConfig, "The schemas for which events must not be captured")).
		Define(list(TableIncludeConfig, "The tables for which changes are to be captured (regular expressions matched against schema.table)")).
		Define(list(TableExcludeConfig, "A comma-separated list of regular expressions that match the fully-qualified names of tables to be excluded from monitoring")).
		Define(list(ColumnIncludeConfig, "Regular expressions matching columns to include in change events")).
		Define(list(ColumnExcludeConfig, "Regular expressions matching columns to exclude from change events")).
		Define(connect.ConfigKey{Name: SkippedOperationsConfig, Type: connect.ConfigList, Default: "t", Validator: skippedOperationsValid,
			Importance: connect.Low, Doc: "The comma-separated list of operations to skip during streaming, defined as: 'c' for inserts/create; " +
				"'u' for updates; 'd' for deletes, 't' for truncates, and 'none' to indicate nothing skipped. " +
				"By default, only truncate operations will be skipped."}).
		Define(connect.ConfigKey{Name: MsgKeyColumnsConfig, Type: connect.ConfigString, Default: nil, Validator: msgKeyColumnsValid,
			Importance: connect.Medium, Doc: "A semicolon-separated list of expressions that match fully-qualified tables and column(s) to be used as message key. " +
				"Each expression must match the pattern '<fully-qualified table name>:<key columns>', " +
				"where the table names could be defined as (DB_NAME.TABLE_NAME) or (SCHEMA_NAME.TABLE_NAME), depending on the specific connector, " +
				"and the key columns are a comma-separated list of columns representing the custom key. " +
				"For any table without an explicit key configuration the table's primary key column(s) will be used as message key. " +
				"Example: dbserver1.inventory.orderlines:orderId,orderLineId;dbserver1.inventory.orders:id"}).
		Define(str(SnapshotModeConfig, SnapshotInitial, connect.Medium, "The criteria for running a snapshot upon startup of the connector. "+
			"'initial' (the default): snapshot when no offset is found, or the last snapshot did not complete; 'always': snapshot on every start; "+
			"'no_data' (or the older 'never'): never snapshot, stream from the offset or the slot; 'when_needed': snapshot as 'initial', "+
			"and also when the offset's position is no longer available in the slot; 'initial_only': snapshot, then stop.",
			connect.OneOfIgnoreCase(SnapshotInitial, SnapshotAlways, SnapshotNever, SnapshotNoData, SnapshotWhenNeeded, SnapshotInitialOnly))).
		Define(connect.ConfigKey{Name: HeartbeatIntervalConfig, Type: connect.ConfigInt, Default: int32(0), Validator: connect.AtLeast(0),
			Importance: connect.Medium, Doc: "Length of an interval in milli-seconds in in which the connector periodically sends heartbeat messages " +
				"to a heartbeat topic. Use 0 to disable heartbeat messages. Disabled by default."}).
		Define(str(HeartbeatTopicPrefix, "__debezium-heartbeat", connect.Low, "The prefix that is used to name heartbeat topics.Defaults to __debezium-heartbeat.", nil)).
		Define(connect.ConfigKey{Name: TombstonesOnDeleteConfig, Type: connect.ConfigBoolean, Default: true, Importance: connect.Medium,
			Doc: "Whether delete operations should be represented by a delete event and a subsequent tombstone event (true) or only by a delete event (false)."}).
		Define(connect.ConfigKey{Name: StatusUpdateConfig, Type: connect.ConfigInt, Default: int32(10000), Validator: connect.AtLeast(1),
			Importance: connect.Medium, Doc: "Frequency for sending replication connection status updates to the server, given in milliseconds. Defaults to 10 seconds (10,000 ms)."}).
		Define(str(LSNFlushModeConfig, "connector", connect.Medium, "Who flushes the LSN of the slot: 'connector' (the default) after the offsets are committed, "+
			"or 'manual' (never: something else advances the slot). 'connector_and_driver' is taken as 'connector'.",
			connect.OneOfIgnoreCase("connector", "manual", "connector_and_driver"))).
		Define(connect.ConfigKey{Name: FlushLSNSourceConfig, Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
			Doc: "Deprecated: use lsn.flush.mode. false means lsn.flush.mode=manual."}).
		Define(connect.ConfigKey{Name: MaxBatchSizeConfig, Type: connect.ConfigInt, Default: int32(2048), Validator: connect.AtLeast(1),
			Importance: connect.Medium, Doc: "Maximum size of each batch of source records. Defaults to 2048."}).
		Define(connect.ConfigKey{Name: MaxQueueSizeConfig, Type: connect.ConfigInt, Default: int32(8192), Validator: connect.AtLeast(1),
			Importance: connect.Medium, Doc: "Maximum size of the queue of change events read from the database. Defaults to 8192."}).
		Define(connect.ConfigKey{Name: PollIntervalConfig, Type: connect.ConfigLong, Default: int64(500), Validator: connect.AtLeast(1),
			Importance: connect.Medium, Doc: "Time to wait for new change events to appear after receiving no events, given in milliseconds. Defaults to 500 ms."}).
		Define(connect.ConfigKey{Name: IncludeUnknownConfig, Type: connect.ConfigBoolean, Default: false, Importance: connect.Low,
			Doc: "Specify whether the fields of data type not supported by Debezium should be processed: false (the default) omits them; " +
				"true includes them as bytes holding the value's text."}).
		Define(str(PlaceholderConfig, DefaultPlaceholder, connect.Medium, "Specify the constant that will be provided by Debezium to indicate that "+
			"the original value is unavailable and not provided by the database.", nil)).
		Define(connect.ConfigKey{Name: MoneyDigitsConfig, Type: connect.ConfigShort, Default: int16(2), Importance: connect.Medium,
			Doc: "Number of fractional digits when money type is converted to 'precise' decimal number."}).
		Define(str(TimePrecisionConfig, "adaptive", connect.Medium, "Time, date, and timestamps can be represented with different kinds of precisions: "+
			"'adaptive' (the default), 'adaptive_time_microseconds' or 'connect'.",
			connect.OneOfIgnoreCase("adaptive", "adaptive_time_microseconds", "connect"))).
		Define(str(DecimalHandlingConfig, "precise", connect.Medium, "Specify how DECIMAL and NUMERIC columns should be represented in change events: "+
			"'precise' (the default), 'string' or 'double'.", connect.OneOfIgnoreCase("precise", "string", "double"))).
		Define(str(IntervalHandlingConfig, "numeric", connect.Medium, "Specify how INTERVAL columns should be represented in change events: "+
			"'numeric' (the default, microseconds) or 'string' (ISO 8601).", connect.OneOfIgnoreCase("numeric", "string"))).
		Define(str(TopicDelimiterConfig, ".", connect.Low, "Specify the delimiter for topic name, defaults to '.'.", nil)).
		Define(str(SSLCertConfig, nil, connect.Medium, "File containing the SSL Certificate for the client. See the Postgres SSL docs for further information", nil)).
		Define(str(SSLKeyConfig, nil, connect.Medium, "File containing the SSL private key for the client. See the Postgres SSL docs for further information", nil)).
		Define(connect.ConfigKey{Name: SSLPasswordConfig, Type: connect.ConfigPassword, Default: nil, Importance: connect.Medium,
			Doc: "Password to access the client private key from the file specified by 'database.sslkey'. See the Postgres SSL docs for further information"}).
		Define(str(SSLRootCertConfig, nil, connect.Medium, "File containing the root certificate(s) against which the server is validated. See the Postgres JDBC SSL docs for further information", nil)))
}

func topicPrefixValid(v any) error {
	s, _ := v.(string)
	if s == "" {
		return errors.New("String must be non-empty")
	}
	for _, r := range s {
		if !validTopicRune(r) {
			return fmt.Errorf("The topic prefix may only contain letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

func validTopicRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

func pluginValid(v any) error {
	s, _ := v.(string)
	if !strings.EqualFold(s, "pgoutput") {
		return fmt.Errorf("Only the pgoutput plugin is supported")
	}
	return nil
}

var slotNameRE = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func slotNameValid(v any) error {
	s, _ := v.(string)
	if !slotNameRE.MatchString(s) {
		return fmt.Errorf("Valid replication slot name must contain only digits, lowercase characters and underscores with length <= 63")
	}
	return nil
}

func identValid(v any) error {
	s, _ := v.(string)
	if s == "" || len(s) > 63 {
		return fmt.Errorf("String must be non-empty and at most 63 bytes")
	}
	return nil
}

func regexList(v any) error {
	l, _ := v.([]string)
	for _, e := range l {
		if _, err := compileAnchored(e); err != nil {
			return fmt.Errorf("A comma-separated list of valid regular expressions is expected, but %s", err)
		}
	}
	return nil
}

// compileAnchored compiles a Debezium filter regex: Java's, matched
// against the whole name, case-insensitively (Predicates.includes).
func compileAnchored(expr string) (*javaregex.Pattern, error) {
	// Compiled alone first, so that an error quotes the expression as given.
	if _, err := javaregex.Compile(expr); err != nil {
		return nil, err
	}
	return javaregex.Compile("(?i)" + expr)
}

// skippedOperationsValid is Debezium's validateSkippedOperation.
func skippedOperationsValid(v any) error {
	l, _ := v.([]string)
	if len(l) == 0 {
		return errors.New("Invalid operation")
	}
	none, ops := false, false
	for _, op := range l {
		switch strings.TrimSpace(op) {
		case "none":
			none = true
		case "r", "c", "u", "d", "t":
			ops = true
		default:
			return fmt.Errorf("Invalid operation %q", op)
		}
	}
	if none && ops {
		return errors.New("'none' cannot be specified with other skipped operation types")
	}
	return nil
}

// msgKeyColumnsPattern is Debezium's CustomKeyMapper.MSG_KEY_COLUMNS_PATTERN.
var msgKeyColumnsPattern = regexp.MustCompile(`^\s*([^\s:]+):([^:\s]+)\s*$`)

func msgKeyColumnsValid(v any) error {
	if v == nil {
		return nil
	}
	_, err := parseKeyColumns(v.(string))
	return err
}

// parseKeyColumns reads message.key.columns as Debezium's CustomKeyMapper
// does: "table:col1,col2;..." becomes one regular expression per column,
// "table.col", in the order given, each matched against the whole of
// "schema.table.column".
func parseKeyColumns(s string) ([]*javaregex.Pattern, error) {
	if s == "" {
		return nil, errors.New("Must not be empty")
	}
	// Java's String.split drops trailing empty strings, not leading ones.
	parts := strings.Split(s, ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	var out []*javaregex.Pattern
	for _, p := range parts {
		m := msgKeyColumnsPattern.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf("%s has an invalid format (expecting '%s')", p, `^\s*([^\s:]+):([^:\s]+)\s*$`)
		}
		for _, col := range strings.Split(m[2], ",") {
			if col == "" {
				continue
			}
			re, err := compileAnchored(m[1] + "." + col)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", p, err)
			}
			out = append(out, re)
		}
	}
	return out, nil
}

// config is a parsed connector config.
type config struct {
	props map[string]string

	prefix   string
	host     string
	port     int
	user     string
	password string
	dbname   string
	sslmode  string
	// libpq's sslcert, sslkey, sslpassword, sslrootcert: "" when unset.
	sslFiles    [4]string
	slot        string
	dropSlot    bool
	slotRetries int
	slotDelay   time.Duration
	publication string
	pubMode     string

	schemaInclude, schemaExclude []*javaregex.Pattern
	tableInclude, tableExclude   []*javaregex.Pattern
	// Matched against "schema.table.column" (Debezium's ColumnFilterMode.SCHEMA).
	columnInclude, columnExclude []*javaregex.Pattern
	// keyColumns is message.key.columns: nil means every table's primary key.
	keyColumns []*javaregex.Pattern
	// skipped holds the streaming operations not emitted ("c", "u", "d", "t").
	skipped map[string]bool

	snapshotMode      string
	heartbeat         time.Duration
	heartbeatTopic    string
	tombstones        bool
	statusInterval    time.Duration
	manualFlush       bool
	maxBatch          int
	maxQueue          int
	pollInterval      time.Duration
	includeUnknown    bool
	placeholder       string
	moneyDigits       int
	timePrecision     string
	decimalMode       string
	intervalMode      string
	topicDelimiter    string
	heartbeatTopicStr string
}

func parseConfig(props map[string]string) (*config, error) {
	pc, err := ConnectorConfig().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &config{
		props:          props,
		prefix:         pc.String(TopicPrefixConfig),
		host:           pc.String(HostnameConfig),
		port:           pc.Int(PortConfig),
		user:           pc.String(UserConfig),
		password:       pc.String(PasswordConfig),
		dbname:         pc.String(DBNameConfig),
		sslmode:        strings.ToLower(pc.String(SSLModeConfig)),
		slot:           pc.String(SlotNameConfig),
		dropSlot:       pc.Bool(SlotDropOnStopConfig),
		slotRetries:    pc.Int(SlotMaxRetriesConfig),
		slotDelay:      time.Duration(pc.Long(SlotRetryDelayConfig)) * time.Millisecond,
		publication:    pc.String(PublicationNameConfig),
		pubMode:        strings.ToLower(pc.String(PublicationAutocreate)),
		snapshotMode:   strings.ToLower(pc.String(SnapshotModeConfig)),
		heartbeat:      time.Duration(pc.Int(HeartbeatIntervalConfig)) * time.Millisecond,
		heartbeatTopic: pc.String(HeartbeatTopicPrefix),
		tombstones:     pc.Bool(TombstonesOnDeleteConfig),
		statusInterval: time.Duration(pc.Int(StatusUpdateConfig)) * time.Millisecond,
		maxBatch:       pc.Int(MaxBatchSizeConfig),
		maxQueue:       pc.Int(MaxQueueSizeConfig),
		pollInterval:   time.Duration(pc.Long(PollIntervalConfig)) * time.Millisecond,
		includeUnknown: pc.Bool(IncludeUnknownConfig),
		placeholder:    pc.String(PlaceholderConfig),
		moneyDigits:    pc.Int(MoneyDigitsConfig),
		timePrecision:  strings.ToLower(pc.String(TimePrecisionConfig)),
		decimalMode:    strings.ToLower(pc.String(DecimalHandlingConfig)),
		intervalMode:   strings.ToLower(pc.String(IntervalHandlingConfig)),
		topicDelimiter: pc.String(TopicDelimiterConfig),
	}
	for i, k := range []string{SSLCertConfig, SSLKeyConfig, SSLPasswordConfig, SSLRootCertConfig} {
		c.sslFiles[i] = pc.String(k)
	}
	mode := strings.ToLower(pc.String(LSNFlushModeConfig))
	c.manualFlush = mode == "manual" || !pc.Bool(FlushLSNSourceConfig)
	if c.snapshotMode == SnapshotNever {
		c.snapshotMode = SnapshotNoData
	}
	if c.topicDelimiter == "" {
		c.topicDelimiter = "."
	}
	// AbstractTopicNamingStrategy.heartbeatTopic joins with topic.delimiter.
	c.heartbeatTopicStr = c.heartbeatTopic + c.topicDelimiter + c.prefix
	for _, l := range []struct {
		key string
		dst *[]*javaregex.Pattern
	}{
		{SchemaIncludeConfig, &c.schemaInclude}, {SchemaExcludeConfig, &c.schemaExclude},
		{TableIncludeConfig, &c.tableInclude}, {TableExcludeConfig, &c.tableExclude},
		{ColumnIncludeConfig, &c.columnInclude}, {ColumnExcludeConfig, &c.columnExclude},
	} {
		for _, e := range pc.List(l.key) {
			if e == "" {
				continue
			}
			re, err := compileAnchored(e)
			if err != nil {
				return nil, &connect.ConfigError{Name: l.key, Message: fmt.Sprintf("Invalid value %s for configuration %s: %v", e, l.key, err)}
			}
			*l.dst = append(*l.dst, re)
		}
	}
	if len(c.schemaInclude) > 0 && len(c.schemaExclude) > 0 {
		return nil, &connect.ConfigError{Name: SchemaExcludeConfig, Message: "\"schema.include.list\" is already specified"}
	}
	if len(c.tableInclude) > 0 && len(c.tableExclude) > 0 {
		return nil, &connect.ConfigError{Name: TableExcludeConfig, Message: "\"table.include.list\" is already specified"}
	}
	if len(c.columnInclude) > 0 && len(c.columnExclude) > 0 {
		return nil, &connect.ConfigError{Name: ColumnExcludeConfig, Message: "\"column.include.list\" is already specified"}
	}
	c.skipped = map[string]bool{}
	for _, op := range pc.List(SkippedOperationsConfig) {
		if op = strings.TrimSpace(op); op != "none" {
			c.skipped[op] = true
		}
	}
	if v, ok := props[MsgKeyColumnsConfig]; ok {
		if c.keyColumns, err = parseKeyColumns(v); err != nil {
			return nil, &connect.ConfigError{Name: MsgKeyColumnsConfig, Message: fmt.Sprintf("Invalid value %s for configuration %s: %v", v, MsgKeyColumnsConfig, err)}
		}
	}
	if err := refuseUnsupported(props); err != nil {
		return nil, err
	}
	return c, nil
}

// captured says whether the connector captures a table, as Debezium's
// table filters do: system schemas never; then the schema lists, then the
// table lists (regular expressions on "schema.table").
func (c *config) captured(schema, table string) bool {
	if schema == "information_schema" || strings.HasPrefix(schema, "pg_") {
		return false
	}
	if !filterAllows(schema, c.schemaInclude, c.schemaExclude) {
		return false
	}
	return filterAllows(schema+"."+table, c.tableInclude, c.tableExclude)
}

// inValue says whether a captured table's column is in its events'
// values: the key keeps its columns whatever the column lists say, as
// Debezium's TableSchemaBuilder does.
func (c *config) inValue(schema, table, column string) bool {
	return filterAllows(schema+"."+table+"."+column, c.columnInclude, c.columnExclude)
}

func filterAllows(name string, include, exclude []*javaregex.Pattern) bool {
	if len(include) > 0 {
		for _, re := range include {
			if re.Matches(name) {
				return true
			}
		}
		return false
	}
	for _, re := range exclude {
		if re.Matches(name) {
			return false
		}
	}
	return true
}

// dsn returns a libpq keyword/value connection string.
func (c *config) dsn(replication bool) string {
	var b strings.Builder
	kv := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteString("='")
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v))
		b.WriteByte('\'')
	}
	kv("host", c.host)
	kv("port", fmt.Sprint(c.port))
	kv("user", c.user)
	if c.password != "" {
		kv("password", c.password)
	}
	kv("dbname", c.dbname)
	kv("sslmode", c.sslmode)
	for i, k := range []string{"sslcert", "sslkey", "sslpassword", "sslrootcert"} {
		if c.sslFiles[i] != "" {
			kv(k, c.sslFiles[i])
		}
	}
	kv("application_name", "connectd-"+c.prefix)
	if replication {
		kv("replication", "database")
	}
	return b.String()
}

// redacted names the database for messages.
func (c *config) redacted() string {
	u := url.URL{Scheme: "postgresql", Host: fmt.Sprintf("%s:%d", c.host, c.port), Path: "/" + c.dbname}
	if c.user != "" {
		u.User = url.User(c.user)
	}
	return u.String()
}
