package source

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // db.timezone must resolve on machines without zoneinfo

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// Class names and version of the JDBC source, as Confluent names them.
const (
	ConnectorClass = "io.confluent.connect.jdbc.JdbcSourceConnector"
	TaskClass      = "io.confluent.connect.jdbc.source.JdbcSourceTask"
	// Version is the Confluent release whose configs, offsets and
	// records the source follows.
	Version = "10.8.0"
)

// Source partition and offset keys, as Confluent's JdbcSourceConnectorConstants
// and TimestampIncrementingOffset name them.
const (
	PartitionProtocolKey = "protocol"
	PartitionProtocolV1  = "1"
	PartitionTableKey    = "table"
	PartitionQueryKey    = "query"
	PartitionQueryValue  = "query"

	OffsetIncrementing   = "incrementing"
	OffsetTimestamp      = "timestamp"
	OffsetTimestampNanos = "timestamp_nanos"
)

// The source config keys (Confluent's names).
const (
	srcConnectionURL      = "connection.url"
	srcConnectionUser     = "connection.user"
	srcConnectionPassword = "connection.password"
	srcConnectionAttempts = "connection.attempts"
	srcConnectionBackoff  = "connection.backoff.ms"
	srcTableWhitelist     = "table.whitelist"
	srcTableBlacklist     = "table.blacklist"
	srcTableIncludeList   = "table.include.list"
	srcTableExcludeList   = "table.exclude.list"
	srcCatalogPattern     = "catalog.pattern"
	srcSchemaPattern      = "schema.pattern"
	srcNumericPrecision   = "numeric.precision.mapping"
	srcNumericMapping     = "numeric.mapping"
	srcMode               = "mode"
	srcIncrementingColumn = "incrementing.column.name"
	srcTimestampColumn    = "timestamp.column.name"
	srcTimestampInitial   = "timestamp.initial"
	srcValidateNonNull    = "validate.non.null"
	srcQuery              = "query"
	srcQuerySuffix        = "query.suffix"
	srcTableTypes         = "table.types"
	srcPollInterval       = "poll.interval.ms"
	srcBatchMaxRows       = "batch.max.rows"
	srcTablePollInterval  = "table.poll.interval.ms"
	srcTopicPrefix        = "topic.prefix"
	srcTimestampDelay     = "timestamp.delay.interval.ms"
	srcDBTimezone         = "db.timezone"
	srcDialectName        = "dialect.name"

	// srcTablesConfig is the task config key holding the task's tables,
	// a comma list of quoted fully-qualified names (Confluent's "tables").
	srcTablesConfig = "tables"
	// srcTablesFetched tells a task whether the connector had listed the
	// tables when it made the task config (Confluent's "tables.fetched").
	srcTablesFetched = "tables.fetched"
)

// The modes.
const (
	srcModeUnspecified           = ""
	srcModeBulk                  = "bulk"
	srcModeTimestamp             = "timestamp"
	srcModeIncrementing          = "incrementing"
	srcModeTimestampIncrementing = "timestamp+incrementing"
)

// The numeric.mapping values.
const (
	srcNumericNone               = "none"
	srcNumericPrecisionOnly      = "precision_only"
	srcNumericBestFit            = "best_fit"
	srcNumericBestFitEagerDouble = "best_fit_eager_double"
)

const (
	srcDatabaseGroup  = "Database"
	srcModeGroup      = "Mode"
	srcConnectorGroup = "Connector"
)

var srcTopicPrefixInvalid = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// ConfigDef returns the config definition of the JDBC source,
// with Confluent's keys, types, defaults and documentation.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	// inGroup defines keys in group, numbered in the order defined.
	inGroup := func(group string) func(connect.ConfigKey) {
		order := 0
		return func(k connect.ConfigKey) {
			order++
			k.Group, k.OrderInGroup = group, order
			d.Define(k)
		}
	}
	db := inGroup(srcDatabaseGroup)
	db(connect.ConfigKey{Name: srcConnectionURL, Type: connect.ConfigString, Required: true, Importance: connect.High,
		Doc: "JDBC connection URL.\nFor example: ``jdbc:postgresql://localhost:5432/db_name``, " +
			"``jdbc:mysql://localhost/db_name``, ``jdbc:mariadb://localhost/db_name``, ``jdbc:sqlite:/path/to/file.db``",
		Width: connect.WidthLong, DisplayName: "JDBC URL", Dependents: []string{srcTableWhitelist, srcTableBlacklist}})
	db(connect.ConfigKey{Name: srcConnectionUser, Type: connect.ConfigString, Importance: connect.High,
		Doc: "JDBC connection user.", Width: connect.WidthLong, DisplayName: "JDBC User"})
	db(connect.ConfigKey{Name: srcConnectionPassword, Type: connect.ConfigPassword, Importance: connect.High,
		Doc: "JDBC connection password.", Width: connect.WidthShort, DisplayName: "JDBC Password"})
	db(connect.ConfigKey{Name: srcConnectionAttempts, Type: connect.ConfigInt, Default: int32(3), Validator: connect.AtLeast(1),
		Importance: connect.Low, Doc: "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.",
		Width: connect.WidthShort, DisplayName: "JDBC connection attempts"})
	db(connect.ConfigKey{Name: srcConnectionBackoff, Type: connect.ConfigLong, Default: int64(10000), Importance: connect.Low,
		Doc: "Backoff time in milliseconds between connection attempts.", Width: connect.WidthShort,
		DisplayName: "JDBC connection backoff in milliseconds"})
	db(connect.ConfigKey{Name: srcTableWhitelist, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
		Doc: "List of tables to include in copying. If specified, ``table.blacklist`` may not be set. " +
			"Use a comma-separated list to specify multiple tables (for example, ``table.whitelist: \"User, Address, Email\"``).",
		Width: connect.WidthLong, DisplayName: "Table Whitelist"})
	db(connect.ConfigKey{Name: srcTableBlacklist, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
		Doc: "List of tables to exclude from copying. If specified, ``table.whitelist`` may not be set. " +
			"Use a comma-separated list to specify multiple tables (for example, ``table.blacklist: \"User, Address, Email\"``).",
		Width: connect.WidthLong, DisplayName: "Table Blacklist"})
	db(connect.ConfigKey{Name: srcTableIncludeList, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
		Doc: "List of regular expressions matching the tables to include in copying, matched against the whole " +
			"fully-qualified table name (for example ``orders\\.orders``, ``inventory\\..*``); a plain table name also matches " +
			"tables of that name. Replaces ``table.whitelist``, with which it may not be combined.",
		Width: connect.WidthLong, DisplayName: "Table Include List"})
	db(connect.ConfigKey{Name: srcTableExcludeList, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
		Doc: "List of regular expressions matching the tables to leave out among those ``table.include.list`` selects, " +
			"matched as in ``table.include.list``. Replaces ``table.blacklist``, with which it may not be combined; it " +
			"requires ``table.include.list``.",
		Width: connect.WidthLong, DisplayName: "Table Exclude List"})
	db(connect.ConfigKey{Name: srcCatalogPattern, Type: connect.ConfigString, Importance: connect.Medium,
		Doc: "Catalog pattern to fetch table metadata from the database.\n" +
			"  * ``\"\"`` retrieves those without a catalog \n" +
			"  * null (default) indicates that the schema name is not used to narrow the search and that all table " +
			"metadata is fetched, regardless of the catalog.",
		Width: connect.WidthShort, DisplayName: "Schema pattern"})
	db(connect.ConfigKey{Name: srcSchemaPattern, Type: connect.ConfigString, Importance: connect.High,
		Doc: "Schema pattern to fetch table metadata from the database.\n" +
			"  * ``\"\"`` retrieves those without a schema.\n" +
			"  * null (default) indicates that the schema name is not used to narrow the search and that all table " +
			"metadata is fetched, regardless of the schema.",
		Width: connect.WidthShort, DisplayName: "Schema pattern"})
	db(connect.ConfigKey{Name: srcNumericPrecision, Type: connect.ConfigBoolean, Default: false, Importance: connect.Low,
		Doc: "Whether or not to attempt mapping NUMERIC values by precision to integral types. This option is now " +
			"deprecated. A future version may remove it completely. Please use ``numeric.mapping`` instead.",
		Width: connect.WidthShort, DisplayName: "Map Numeric Values By Precision (deprecated)"})
	db(connect.ConfigKey{Name: srcNumericMapping, Type: connect.ConfigString, Validator: srcNumericMappingValidator,
		Importance: connect.Low,
		Doc: "Map NUMERIC values by precision and optionally scale to integral or decimal types.\n" +
			"  * Use ``none`` if all NUMERIC columns are to be represented by Connect's DECIMAL logical type.\n" +
			"  * Use ``best_fit`` if NUMERIC columns should be cast to Connect's INT8, INT16, INT32, INT64, or FLOAT64 " +
			"based upon the column's precision and scale. This option may still represent the NUMERIC value as Connect " +
			"DECIMAL if it cannot be cast to a native type without losing precision. For example, a NUMERIC(20) type with " +
			"precision 20 would not be able to fit in a native INT64 without overflowing and thus would be retained as DECIMAL.\n" +
			"  * Use ``best_fit_eager_double`` if in addition to the properties of ``best_fit`` described above, it is " +
			"desirable to always cast NUMERIC columns with scale to Connect FLOAT64 type, despite potential of loss in accuracy.\n" +
			"  * Use ``precision_only`` to map NUMERIC columns based only on the column's precision assuming that column's scale is 0.\n" +
			"  * The ``none`` option is the default, but may lead to serialization issues with Avro since Connect's DECIMAL " +
			"type is mapped to its binary representation, and ``best_fit`` will often be preferred since it maps to the most " +
			"appropriate primitive type.",
		Width: connect.WidthShort, DisplayName: "Map Numeric Values, Integral or Decimal, By Precision and Scale",
		Recommended: []string{srcNumericNone, srcNumericPrecisionOnly, srcNumericBestFit, srcNumericBestFitEagerDouble}})

	mode := inGroup(srcModeGroup)
	mode(connect.ConfigKey{Name: srcMode, Type: connect.ConfigString, Default: srcModeUnspecified,
		Validator:  connect.OneOf(srcModeUnspecified, srcModeBulk, srcModeTimestamp, srcModeIncrementing, srcModeTimestampIncrementing),
		Importance: connect.High,
		Doc: "The mode for updating a table each time it is polled. Options include:\n" +
			"  * bulk: perform a bulk load of the entire table each time it is polled\n" +
			"  * incrementing: use a strictly incrementing column on each table to detect only new rows. Note that this " +
			"will not detect modifications or deletions of existing rows.\n" +
			"  * timestamp: use a timestamp (or timestamp-like) column to detect new and modified rows. This assumes the " +
			"column is updated with each write, and that values are monotonically incrementing, but not necessarily unique.\n" +
			"  * timestamp+incrementing: use two columns, a timestamp column that detects new and modified rows and a " +
			"strictly incrementing column which provides a globally unique ID for updates so each row can be assigned a " +
			"unique stream offset.",
		Width: connect.WidthMedium, DisplayName: "Table Loading Mode",
		Dependents: []string{srcIncrementingColumn, srcTimestampColumn, srcValidateNonNull}})
	mode(connect.ConfigKey{Name: srcIncrementingColumn, Type: connect.ConfigString, Default: "", Importance: connect.Medium,
		Doc: "The name of the strictly incrementing column to use to detect new rows. Any empty value indicates the " +
			"column should be autodetected by looking for an auto-incrementing column. This column may not be nullable.",
		Width: connect.WidthMedium, DisplayName: "Incrementing Column Name"})
	mode(connect.ConfigKey{Name: srcTimestampColumn, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
		Doc: "Comma separated list of one or more timestamp columns to detect new or modified rows using the COALESCE " +
			"SQL function. Rows whose first non-null timestamp value is greater than the largest previous timestamp value " +
			"seen will be discovered with each poll. At least one column should not be nullable.",
		Width: connect.WidthMedium, DisplayName: "Timestamp Column Name"})
	mode(connect.ConfigKey{Name: srcTimestampInitial, Type: connect.ConfigLong, Importance: connect.Low,
		Doc: "The epoch timestamp used for initial queries that use timestamp criteria. Use -1 to use the current " +
			"time. If not specified, all data will be retrieved.",
		Width: connect.WidthMedium, DisplayName: "Unix time value of initial timestamp"})
	mode(connect.ConfigKey{Name: srcValidateNonNull, Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
		Doc: "By default, the JDBC connector will validate that all incrementing and timestamp tables have NOT NULL set " +
			"for the columns being used as their ID/timestamp. If the tables don't, JDBC connector will fail to start. " +
			"Setting this to false will disable these checks.",
		Width: connect.WidthShort, DisplayName: "Validate Non Null"})
	mode(connect.ConfigKey{Name: srcQuery, Type: connect.ConfigString, Default: "", Importance: connect.Medium,
		Doc: "If specified, the query to perform to select new or updated rows. Use this setting if you want to join " +
			"tables, select subsets of columns in a table, or filter data. If used, this connector will only copy data " +
			"using this query -- whole-table copying will be disabled. Different query modes may still be used for " +
			"incremental updates, but in order to properly construct the incremental query, it must be possible to append " +
			"a WHERE clause to this query (i.e. no WHERE clauses may be used). If you use a WHERE clause, it must handle " +
			"incremental queries itself.",
		Width: connect.WidthShort, DisplayName: "Query"})
	mode(connect.ConfigKey{Name: srcQuerySuffix, Type: connect.ConfigString, Default: "", Importance: connect.Low,
		Doc: "Suffix to append at the end of the generated query.", Width: connect.WidthMedium, DisplayName: "Query suffix"})

	conn := inGroup(srcConnectorGroup)
	conn(connect.ConfigKey{Name: srcTableTypes, Type: connect.ConfigList, Default: "TABLE", Importance: connect.Low,
		Doc: "By default, the JDBC connector will only detect tables with type TABLE from the source Database. This " +
			"config allows a command separated list of table types to extract. Options include:\n" +
			"  * TABLE\n  * VIEW\n  * SYSTEM TABLE\n  * GLOBAL TEMPORARY\n  * LOCAL TEMPORARY\n  * ALIAS\n  * SYNONYM\n" +
			"  In most cases it only makes sense to have either TABLE or VIEW.",
		Width: connect.WidthMedium, DisplayName: "Table Types"})
	conn(connect.ConfigKey{Name: srcPollInterval, Type: connect.ConfigInt, Default: int32(5000), Importance: connect.High,
		Doc: "Frequency in ms to poll for new data in each table.", Width: connect.WidthShort, DisplayName: "Poll Interval (ms)"})
	conn(connect.ConfigKey{Name: srcBatchMaxRows, Type: connect.ConfigInt, Default: int32(100), Validator: connect.AtLeast(1),
		Importance: connect.Low,
		Doc: "Maximum number of rows to include in a single batch when polling for new data. This setting can be used " +
			"to limit the amount of data buffered internally in the connector.",
		Width: connect.WidthShort, DisplayName: "Max Rows Per Batch"})
	conn(connect.ConfigKey{Name: srcTablePollInterval, Type: connect.ConfigLong, Default: int64(60000), Importance: connect.Low,
		Doc: "Frequency in ms to poll for new or removed tables, which may result in updated task configurations to " +
			"start polling for data in added tables or stop polling for data in removed tables.",
		Width: connect.WidthShort, DisplayName: "Metadata Change Monitoring Interval (ms)"})
	conn(connect.ConfigKey{Name: srcTopicPrefix, Type: connect.ConfigString, Required: true, Validator: srcTopicPrefixValidator,
		Importance: connect.High,
		Doc: "Prefix to prepend to table names to generate the name of the Kafka topic to publish data to, or in the " +
			"case of a custom query, the full name of the topic to publish to.",
		Width: connect.WidthMedium, DisplayName: "Topic Prefix"})
	conn(connect.ConfigKey{Name: srcTimestampDelay, Type: connect.ConfigLong, Default: int64(0), Importance: connect.High,
		Doc: "How long to wait after a row with certain timestamp appears before we include it in the result. You may " +
			"choose to add some delay to allow transactions with earlier timestamp to complete. The first execution will " +
			"fetch all available records (i.e. starting at timestamp 0) until current time minus the delay. Every " +
			"following execution will get data from the last time we fetched until current time minus the delay.",
		Width: connect.WidthMedium, DisplayName: "Delay Interval (ms)"})
	conn(connect.ConfigKey{Name: srcDBTimezone, Type: connect.ConfigString, Default: "UTC", Validator: srcTimeZoneValidator,
		Importance: connect.Medium,
		Doc:        "Name of the JDBC timezone used in the connector when querying with time-based criteria. Defaults to UTC.",
		Width:      connect.WidthMedium, DisplayName: "DB time zone"})
	db(connect.ConfigKey{Name: srcDialectName, Type: connect.ConfigString, Default: "", Validator: srcValidDialect, Importance: connect.Low,
		Doc: "The name of the database dialect that should be used for this connector. By default this is empty, and the connector " +
			"automatically determines the dialect based upon the JDBC connection URL. connectd takes the URL's dialect, so a name " +
			"given here must be that one.",
		Width: connect.WidthLong, DisplayName: "Database Dialect"})
	jdbcdb.DefineUnsupported(d, srcConnectorGroup, jdbcdb.CredentialsProvider,
		jdbcdb.Unsupported{Name: "quote.sql.identifiers", Default: "ALWAYS"},
		jdbcdb.Unsupported{Name: "transaction.isolation.mode", Default: "DEFAULT"},
		jdbcdb.Unsupported{Name: "query.retry.attempts", Default: "-1"},
		jdbcdb.Unsupported{Name: "timestamp.granularity", Default: "connect_logical"},
		jdbcdb.Unsupported{Name: "table.monitoring.startup.polling.limit.ms", Default: "10000"})
	return d
}

func srcValidDialect(v any) error {
	switch s, _ := v.(string); s {
	case "", jdbcdb.PostgreSQL.Name, jdbcdb.MySQL.Name, jdbcdb.SQLite.Name:
		return nil
	}
	return fmt.Errorf("connectd supports the dialects %s, %s and %s", jdbcdb.PostgreSQL.Name, jdbcdb.MySQL.Name, jdbcdb.SQLite.Name)
}

func srcTopicPrefixValidator(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("Topic prefix must not be null.")
	}
	s = strings.TrimSpace(s)
	if len(s) > 249 {
		return fmt.Errorf("Topic prefix length must not exceed max topic name length, 249 chars")
	}
	if srcTopicPrefixInvalid.MatchString(s) {
		return fmt.Errorf("Topic prefix must not contain any character other than ASCII alphanumerics, '.', '_' and '-'.")
	}
	return nil
}

func srcNumericMappingValidator(v any) error {
	s, ok := v.(string)
	if !ok || v == nil {
		return nil
	}
	switch strings.ToLower(s) {
	case srcNumericNone, srcNumericPrecisionOnly, srcNumericBestFit, srcNumericBestFitEagerDouble:
		return nil
	}
	return fmt.Errorf("Invalid enumerator value; must be one of: %s, %s, %s, %s",
		srcNumericNone, srcNumericPrecisionOnly, srcNumericBestFit, srcNumericBestFitEagerDouble)
}

func srcTimeZoneValidator(v any) error {
	s, _ := v.(string)
	if _, err := srcLoadLocation(s); err != nil {
		return fmt.Errorf("Invalid time zone identifier")
	}
	return nil
}

// srcLoadLocation resolves a Java time zone id.
func srcLoadLocation(name string) (*time.Location, error) {
	switch name {
	case "UTC", "GMT", "Z", "UT":
		return time.UTC, nil
	case "":
		return nil, fmt.Errorf("empty time zone")
	}
	return time.LoadLocation(name)
}

// srcConfig is a parsed source (connector or task) config.
type srcConfig struct {
	url, user, password string
	attempts            int
	backoff             time.Duration

	whitelist, blacklist []string
	include, exclude     []*regexp.Regexp
	catalogPattern       *string // nil: any catalog
	schemaPattern        *string // nil: any schema
	tableTypes           []string

	mode             string
	incrementing     string
	timestampColumns []string
	timestampInitial *int64
	validateNonNull  bool
	query            string
	querySuffix      string
	numericMapping   string

	topicPrefix    string
	pollInterval   time.Duration
	batchMaxRows   int
	tablePoll      time.Duration
	timestampDelay time.Duration
	loc            *time.Location
}

func (c *srcConfig) usesIncrementing() bool {
	return c.mode == srcModeIncrementing || c.mode == srcModeTimestampIncrementing
}

func (c *srcConfig) usesTimestamp() bool {
	return c.mode == srcModeTimestamp || c.mode == srcModeTimestampIncrementing
}

// parseSourceConfig parses props with the ConfigDef and the checks that
// span several keys; the error is the first problem, in Confluent's words
// where Confluent has them.
func parseSourceConfig(props map[string]string) (*srcConfig, error) {
	pc, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &srcConfig{
		url:              pc.String(srcConnectionURL),
		user:             pc.String(srcConnectionUser),
		password:         pc.String(srcConnectionPassword),
		attempts:         pc.Int(srcConnectionAttempts),
		backoff:          time.Duration(pc.Long(srcConnectionBackoff)) * time.Millisecond,
		whitelist:        srcNonEmpty(pc.List(srcTableWhitelist)),
		blacklist:        srcNonEmpty(pc.List(srcTableBlacklist)),
		tableTypes:       srcNonEmpty(pc.List(srcTableTypes)),
		mode:             pc.String(srcMode),
		incrementing:     pc.String(srcIncrementingColumn),
		timestampColumns: srcNonEmpty(pc.List(srcTimestampColumn)),
		validateNonNull:  pc.Bool(srcValidateNonNull),
		query:            pc.String(srcQuery),
		querySuffix:      pc.String(srcQuerySuffix),
		topicPrefix:      strings.TrimSpace(pc.String(srcTopicPrefix)),
		pollInterval:     time.Duration(pc.Int(srcPollInterval)) * time.Millisecond,
		batchMaxRows:     pc.Int(srcBatchMaxRows),
		tablePoll:        time.Duration(pc.Long(srcTablePollInterval)) * time.Millisecond,
		timestampDelay:   time.Duration(pc.Long(srcTimestampDelay)) * time.Millisecond,
	}
	if v, ok := pc.Get(srcCatalogPattern).(string); ok {
		c.catalogPattern = &v
	}
	if v, ok := pc.Get(srcSchemaPattern).(string); ok {
		c.schemaPattern = &v
	}
	if v, ok := pc.Get(srcTimestampInitial).(int64); ok {
		c.timestampInitial = &v
	}
	c.numericMapping = srcNumericNone
	if v, ok := pc.Get(srcNumericMapping).(string); ok {
		c.numericMapping = strings.ToLower(v)
	} else if pc.Bool(srcNumericPrecision) {
		c.numericMapping = srcNumericPrecisionOnly
	}
	c.loc, err = srcLoadLocation(pc.String(srcDBTimezone))
	if err != nil {
		return nil, &connect.ConfigError{Name: srcDBTimezone, Message: "Invalid value " + pc.String(srcDBTimezone) +
			" for configuration " + srcDBTimezone + ": Invalid time zone identifier"}
	}
	for _, key := range []string{srcTableIncludeList, srcTableExcludeList} {
		for _, expr := range srcNonEmpty(pc.List(key)) {
			re, err := regexp.Compile(`^(?:` + expr + `)$`)
			if err != nil {
				return nil, &connect.ConfigError{Name: key, Message: "Invalid value " + expr + " for configuration " + key +
					": not a valid regular expression: " + err.Error()}
			}
			if key == srcTableIncludeList {
				c.include = append(c.include, re)
			} else {
				c.exclude = append(c.exclude, re)
			}
		}
	}
	if dn := pc.String(srcDialectName); dn != "" {
		if d, _, err := jdbcdb.ParseURL(c.url, "", ""); err == nil && d.Name != dn {
			return nil, &connect.ConfigError{Name: srcDialectName, Message: fmt.Sprintf("The dialect %s does not match the JDBC URL, which names the %s", dn, d.Name)}
		}
	}
	if errs := c.check(); len(errs) > 0 {
		for _, key := range srcCheckOrder {
			if msgs := errs[key]; len(msgs) > 0 {
				return c, &connect.ConfigError{Name: key, Message: msgs[0]}
			}
		}
	}
	return c, nil
}

// srcCheckOrder is the order in which check's errors are reported by
// parseSourceConfig.
var srcCheckOrder = []string{srcMode, srcTableWhitelist, srcTableBlacklist, srcTableIncludeList, srcTableExcludeList,
	srcQuery, srcIncrementingColumn, srcTimestampColumn, srcTopicPrefix}

// check applies the rules that span several keys and need no database,
// returning the errors by key.
func (c *srcConfig) check() map[string][]string {
	errs := map[string][]string{}
	add := func(msg string, keys ...string) {
		for _, k := range keys {
			errs[k] = append(errs[k], msg)
		}
	}
	if c.mode == srcModeUnspecified {
		add("Query mode must be specified", srcMode)
	}
	legacy := len(c.whitelist) > 0 || len(c.blacklist) > 0
	modern := len(c.include) > 0 || len(c.exclude) > 0
	if c.query != "" && (legacy || modern) {
		msg := "Do not specify table filtering configs with 'query'. Remove table.whitelist / table.blacklist / " +
			"table.include.list / table.exclude.list when using query mode or 'query' when using table filtering mode."
		add(msg, srcQuery)
		for _, k := range []struct {
			key string
			set bool
		}{{srcTableWhitelist, len(c.whitelist) > 0}, {srcTableBlacklist, len(c.blacklist) > 0},
			{srcTableIncludeList, len(c.include) > 0}, {srcTableExcludeList, len(c.exclude) > 0}} {
			if k.set {
				add(msg, k.key)
			}
		}
	}
	switch {
	case legacy && modern:
		msg := "Cannot mix legacy and new configuration approaches. Legacy configurations (table.whitelist, " +
			"table.blacklist) cannot be used together with new configurations (table.include.list, table.exclude.list). " +
			"Please choose one approach: either use all legacy configurations or all new configurations."
		for _, k := range []struct {
			key string
			set bool
		}{{srcTableWhitelist, len(c.whitelist) > 0}, {srcTableBlacklist, len(c.blacklist) > 0},
			{srcTableIncludeList, len(c.include) > 0}, {srcTableExcludeList, len(c.exclude) > 0}} {
			if k.set {
				add(msg, k.key)
			}
		}
	case len(c.whitelist) > 0 && len(c.blacklist) > 0:
		add(srcTableWhitelist+" and "+srcTableBlacklist+" are exclusive.", srcTableWhitelist, srcTableBlacklist)
	case len(c.exclude) > 0 && len(c.include) == 0:
		add(srcTableExcludeList+" cannot be used without "+srcTableIncludeList+
			". Exclude list only applies to tables that match the include list.", srcTableExcludeList)
	}
	if c.usesTimestamp() && len(c.timestampColumns) == 0 {
		add(fmt.Sprintf("Timestamp column configuration must be provided when using mode '%s' or '%s'. Provide '%s'.",
			srcModeTimestamp, srcModeTimestampIncrementing, srcTimestampColumn), srcTimestampColumn, srcMode)
	}
	if c.query != "" && c.usesIncrementing() && strings.TrimSpace(c.incrementing) == "" {
		add(fmt.Sprintf("'%s' must be provided when using mode '%s' or '%s' with a custom query. The incrementing "+
			"column cannot be auto-discovered in query mode because there is no table to inspect.",
			srcIncrementingColumn, srcModeIncrementing, srcModeTimestampIncrementing), srcIncrementingColumn)
	}
	if c.query != "" && c.topicPrefix == "" {
		add("Topic prefix must be set in query mode: it is the name of the topic the query's rows are written to.",
			srcTopicPrefix)
	}
	return errs
}

func srcNonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
