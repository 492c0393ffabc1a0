package sink

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// Class names and version of the sink, as Confluent names them.
const (
	ConnectorClass = "io.confluent.connect.jdbc.JdbcSinkConnector"
	TaskClass      = "io.confluent.connect.jdbc.sink.JdbcSinkTask"
	// Version is the release of Confluent's connector whose configs
	// and behaviour the sink follows.
	Version = "10.8.0"
)

// The sink's config keys, as JdbcSinkConfig names them.
const (
	sinkConnectionURL      = "connection.url"
	sinkConnectionUser     = "connection.user"
	sinkConnectionPassword = "connection.password"
	sinkDialectName        = "dialect.name"
	sinkConnectionAttempts = "connection.attempts"
	sinkConnectionBackoff  = "connection.backoff.ms"
	sinkInsertMode         = "insert.mode"
	sinkBatchSize          = "batch.size"
	sinkDeleteEnabled      = "delete.enabled"
	sinkTableTypes         = "table.types"
	sinkTableNameFormat    = "table.name.format"
	sinkPKMode             = "pk.mode"
	sinkPKFields           = "pk.fields"
	sinkFieldsWhitelist    = "fields.whitelist"
	sinkDBTimezone         = "db.timezone"
	sinkDateTimezone       = "date.timezone"
	sinkAutoCreate         = "auto.create"
	sinkAutoEvolve         = "auto.evolve"
	sinkQuoteIdentifiers   = "quote.sql.identifiers"
	sinkMaxRetries         = "max.retries"
	sinkRetryBackoff       = "retry.backoff.ms"
)

// The insert modes and primary key modes.
const (
	sinkModeInsert = "insert"
	sinkModeUpsert = "upsert"
	sinkModeUpdate = "update"

	sinkPKNone        = "none"
	sinkPKKafka       = "kafka"
	sinkPKRecordKey   = "record_key"
	sinkPKRecordValue = "record_value"
)

// sinkDefaultKafkaPKNames are the key columns of pk.mode=kafka when
// pk.fields is empty.
var sinkDefaultKafkaPKNames = []string{"__connect_topic", "__connect_partition", "__connect_offset"}

const (
	sinkGroupConnection = "Connection"
	sinkGroupWrites     = "Writes"
	sinkGroupMapping    = "Data Mapping"
	sinkGroupDDL        = "DDL Support"
	sinkGroupRetries    = "Retries"
)

// ConfigDef returns the sink connector's config definition, with
// JdbcSinkConfig's keys, defaults, docs and groups. The runtime adds
// topics, topics.regex and the other framework keys.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef().
		// Connection
		Define(connect.ConfigKey{
			Name: sinkConnectionURL, Type: connect.ConfigString, Required: true, Importance: connect.High,
			Doc: "JDBC connection URL.\nFor example: ``jdbc:oracle:thin:@localhost:1521:orclpdb1``, " +
				"``jdbc:mysql://localhost/db_name``, " +
				"``jdbc:sqlserver://localhost;instance=SQLEXPRESS;databaseName=db_name``",
			Group: sinkGroupConnection, OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "JDBC URL",
		}).
		Define(connect.ConfigKey{
			Name: sinkConnectionUser, Type: connect.ConfigString, Importance: connect.High,
			Doc:   "JDBC connection user.",
			Group: sinkGroupConnection, OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "JDBC User",
		}).
		Define(connect.ConfigKey{
			Name: sinkConnectionPassword, Type: connect.ConfigPassword, Importance: connect.High,
			Doc:   "JDBC connection password.",
			Group: sinkGroupConnection, OrderInGroup: 3, Width: connect.WidthMedium, DisplayName: "JDBC Password",
		}).
		Define(connect.ConfigKey{
			Name: sinkDialectName, Type: connect.ConfigString, Default: "", Importance: connect.Low,
			Validator: sinkValidDialect,
			Doc: "The name of the database dialect that should be used for this connector. By default this " +
				"is empty, and the connector automatically determines the dialect based upon the " +
				"JDBC connection URL. Use this if you want to override that behavior and use a " +
				"specific dialect. All properly-packaged dialects in the JDBC connector plugin " +
				"can be used.",
			Group: sinkGroupConnection, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Database Dialect",
			Recommended: []string{"", jdbcdb.PostgreSQL.Name, jdbcdb.MySQL.Name, jdbcdb.SQLite.Name},
		}).
		Define(connect.ConfigKey{
			Name: sinkConnectionAttempts, Type: connect.ConfigInt, Default: int32(3), Importance: connect.Low,
			Validator: connect.AtLeast(1),
			Doc:       "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer.",
			Group:     sinkGroupConnection, OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "JDBC connection attempts",
		}).
		Define(connect.ConfigKey{
			Name: sinkConnectionBackoff, Type: connect.ConfigLong, Default: int64(10000), Importance: connect.Low,
			Doc:   "Backoff time in milliseconds between connection attempts.",
			Group: sinkGroupConnection, OrderInGroup: 6, Width: connect.WidthShort, DisplayName: "JDBC connection backoff in milliseconds",
		}).
		// Writes
		Define(connect.ConfigKey{
			Name: sinkInsertMode, Type: connect.ConfigString, Default: sinkModeInsert, Importance: connect.High,
			Validator: sinkEnum(sinkModeInsert, sinkModeUpsert, sinkModeUpdate),
			Doc: "The insertion mode to use. Supported modes are:\n" +
				"``insert``\n    Use standard SQL ``INSERT`` statements.\n" +
				"``upsert``\n    Use the appropriate upsert semantics for the target database if it is supported by " +
				"the connector, e.g. ``INSERT OR IGNORE``.\n" +
				"``update``\n    Use the appropriate update semantics for the target database if it is supported by " +
				"the connector, e.g. ``UPDATE``.",
			Group: sinkGroupWrites, OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Insert Mode",
		}).
		Define(connect.ConfigKey{
			Name: sinkBatchSize, Type: connect.ConfigInt, Default: int32(3000), Importance: connect.Medium,
			Validator: connect.AtLeast(0),
			Doc: "Specifies how many records to attempt to batch together for insertion into the destination" +
				" table, when possible.",
			Group: sinkGroupWrites, OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Batch Size",
		}).
		Define(connect.ConfigKey{
			Name: sinkDeleteEnabled, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium,
			Doc:   "Whether to treat ``null`` record values as deletes. Requires ``pk.mode`` to be ``record_key``.",
			Group: sinkGroupWrites, OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Enable deletes",
		}).
		Define(connect.ConfigKey{
			Name: sinkTableTypes, Type: connect.ConfigList, Default: "TABLE", Importance: connect.Low,
			Validator: sinkValidTableTypes,
			Doc: "The comma-separated types of database tables to which the sink connector can write. " +
				"By default this is ``TABLE``, but any combination of ``TABLE``, ``PARTITIONED_TABLE`` and " +
				"``VIEW`` is allowed. Not all databases support writing to views, and when they do the sink " +
				"connector will fail if the view definition does not match the records' schemas (regardless " +
				"of ``auto.evolve``).",
			Group: sinkGroupWrites, OrderInGroup: 4, Width: connect.WidthMedium, DisplayName: "Table Types",
			Recommended: []string{"PARTITIONED_TABLE", "TABLE", "VIEW"},
		}).
		// Data Mapping
		Define(connect.ConfigKey{
			Name: sinkTableNameFormat, Type: connect.ConfigString, Default: "${topic}", Importance: connect.Medium,
			Validator: connect.NonEmptyString(),
			Doc: "A format string for the destination table name, which may contain '${topic}' as a " +
				"placeholder for the originating topic name.\n" +
				"For example, ``kafka_${topic}`` for the topic 'orders' will map to the table name " +
				"'kafka_orders'.",
			Group: sinkGroupMapping, OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Table Name Format",
		}).
		Define(connect.ConfigKey{
			Name: sinkPKMode, Type: connect.ConfigString, Default: sinkPKNone, Importance: connect.High,
			Validator: sinkEnum(sinkPKNone, sinkPKKafka, sinkPKRecordKey, sinkPKRecordValue),
			Doc: "The primary key mode, also refer to ``pk.fields`` documentation for interplay. " +
				"Supported modes are:\n" +
				"``none``\n    No keys utilized.\n" +
				"``kafka``\n    Kafka coordinates are used as the PK.\n" +
				"``record_key``\n    Field(s) from the record key are used, which may be a primitive or a struct.\n" +
				"``record_value``\n    Field(s) from the record value are used, which must be a struct.",
			Group: sinkGroupMapping, OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Primary Key Mode",
			Recommended: []string{sinkPKNone, sinkPKKafka, sinkPKRecordKey, sinkPKRecordValue},
		}).
		Define(connect.ConfigKey{
			Name: sinkPKFields, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
			Doc: "List of comma-separated primary key field names. The runtime interpretation of this config" +
				" depends on the ``pk.mode``:\n" +
				"``none``\n    Ignored as no fields are used as primary key in this mode.\n" +
				"``kafka``\n    Must be a trio representing the Kafka coordinates, defaults to ``" +
				strings.Join(sinkDefaultKafkaPKNames, ",") + "`` if empty.\n" +
				"``record_key``\n    If empty, all fields from the key struct will be used, otherwise used to extract the" +
				" desired fields - for primitive key only a single field name must be configured.\n" +
				"``record_value``\n    If empty, all fields from the value struct will be used, otherwise used to extract " +
				"the desired fields.",
			Group: sinkGroupMapping, OrderInGroup: 3, Width: connect.WidthLong, DisplayName: "Primary Key Fields",
		}).
		Define(connect.ConfigKey{
			Name: sinkFieldsWhitelist, Type: connect.ConfigList, Default: "", Importance: connect.Medium,
			Doc: "List of comma-separated record value field names. If empty, all fields from the record " +
				"value are utilized, otherwise used to filter to the desired fields.\n" +
				"Note that ``pk.fields`` is applied independently in the context of which field" +
				"(s) form the primary key columns in the destination database," +
				" while this configuration is applicable for the other columns.",
			Group: sinkGroupMapping, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Fields Whitelist",
		}).
		Define(connect.ConfigKey{
			Name: sinkDBTimezone, Type: connect.ConfigString, Default: "UTC", Importance: connect.Medium,
			Validator: sinkValidTimezone,
			Doc: "Name of the JDBC timezone that should be used in the connector when " +
				"inserting time-based values. Defaults to UTC.",
			Group: sinkGroupMapping, OrderInGroup: 5, Width: connect.WidthMedium, DisplayName: "DB Time Zone",
		}).
		Define(connect.ConfigKey{
			Name: sinkDateTimezone, Type: connect.ConfigString, Default: "DB_TIMEZONE", Importance: connect.Low,
			Validator: sinkEnum("db_timezone", "utc"),
			Doc: "Name of the JDBC timezone that should be used in the connector when inserting DATE type values. " +
				"Defaults to DB_TIMEZONE that uses the timezone set for db.timzeone configuration (to maintain " +
				"backward compatibility). It is recommended to set this to UTC to avoid conversion for DATE type values.",
			Group: sinkGroupMapping, OrderInGroup: 6, Width: connect.WidthMedium, DisplayName: "Time Zone used for Date",
			Recommended: []string{"DB_TIMEZONE", "UTC"},
		}).
		// DDL
		Define(connect.ConfigKey{
			Name: sinkAutoCreate, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium,
			Doc: "Whether to automatically create the destination table based on record schema if it is " +
				"found to be missing by issuing ``CREATE``.",
			Group: sinkGroupDDL, OrderInGroup: 1, Width: connect.WidthShort, DisplayName: "Auto-Create",
		}).
		Define(connect.ConfigKey{
			Name: sinkAutoEvolve, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium,
			Doc: "Whether to automatically add columns in the table schema when found to be missing relative " +
				"to the record schema by issuing ``ALTER``.",
			Group: sinkGroupDDL, OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Auto-Evolve",
		}).
		Define(connect.ConfigKey{
			Name: sinkQuoteIdentifiers, Type: connect.ConfigString, Default: "ALWAYS", Importance: connect.Medium,
			Validator: connect.OneOfIgnoreCase("always", "never"),
			Doc: "When to quote table names, column names, and other identifiers in SQL statements. " +
				"For backward compatibility, the default is ``always``.",
			Group: sinkGroupDDL, OrderInGroup: 3, Width: connect.WidthMedium, DisplayName: "Quote Identifiers",
			Recommended: []string{"always", "never"},
		}).
		// Retries
		Define(connect.ConfigKey{
			Name: sinkMaxRetries, Type: connect.ConfigInt, Default: int32(10), Importance: connect.Medium,
			Validator: connect.AtLeast(0),
			Doc:       "The maximum number of times to retry on errors before failing the task.",
			Group:     sinkGroupRetries, OrderInGroup: 1, Width: connect.WidthShort, DisplayName: "Maximum Retries",
		}).
		Define(connect.ConfigKey{
			Name: sinkRetryBackoff, Type: connect.ConfigInt, Default: int32(3000), Importance: connect.Medium,
			Validator: connect.AtLeast(0),
			Doc:       "The time in milliseconds to wait following an error before a retry attempt is made.",
			Group:     sinkGroupRetries, OrderInGroup: 2, Width: connect.WidthShort, DisplayName: "Retry Backoff (millis)",
		})
	// connectd supports no SQL Server, whose MERGE alone this is about.
	jdbcdb.DefineUnsupported(d, sinkGroupConnection, jdbcdb.CredentialsProvider, jdbcdb.Unsupported{Name: "mssql.use.merge.holdlock", Default: "true"})
	return d
}

// sinkEnum is Confluent's EnumValidator: the value in lower or upper case.
func sinkEnum(values ...string) connect.ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		for _, x := range values {
			if s == strings.ToLower(x) || s == strings.ToUpper(x) {
				return nil
			}
		}
		return errors.New("Invalid enumerator")
	}
}

func sinkValidTimezone(v any) error {
	s, _ := v.(string)
	if _, err := time.LoadLocation(s); err != nil || s == "" || s == "Local" {
		return errors.New("Invalid time zone identifier")
	}
	return nil
}

func sinkValidTableTypes(v any) error {
	l, _ := v.([]string)
	for _, s := range l {
		switch strings.ToUpper(s) {
		case "TABLE", "PARTITIONED_TABLE", "VIEW":
		default:
			return fmt.Errorf("No matching TableType found for '%s'", s)
		}
	}
	return nil
}

func sinkValidDialect(v any) error {
	s, _ := v.(string)
	switch s {
	case "", jdbcdb.PostgreSQL.Name, jdbcdb.MySQL.Name, jdbcdb.SQLite.Name:
		return nil
	}
	return fmt.Errorf("connectd supports the dialects %s, %s and %s", jdbcdb.PostgreSQL.Name, jdbcdb.MySQL.Name, jdbcdb.SQLite.Name)
}

// sinkConfig is a parsed and checked sink config.
type sinkConfig struct {
	name            string
	url, user       string
	password        string
	dialectName     string
	connAttempts    int
	connBackoff     time.Duration
	insertMode      string
	batchSize       int
	deleteEnabled   bool
	tableTypes      []string // upper case
	tableNameFormat string
	pkMode          string
	pkFields        []string
	fieldsWhitelist map[string]bool // nil: every field
	loc, dateLoc    *time.Location
	autoCreate      bool
	autoEvolve      bool
	quote           bool
	maxRetries      int
	retryBackoff    time.Duration
}

// parseSinkConfig parses props and applies the cross-key checks that make
// Confluent's JdbcSinkConfig constructor (or a first write) fail.
func parseSinkConfig(props map[string]string) (*sinkConfig, error) {
	pc, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &sinkConfig{
		name:            props["name"],
		url:             pc.String(sinkConnectionURL),
		user:            pc.String(sinkConnectionUser),
		password:        pc.String(sinkConnectionPassword),
		dialectName:     pc.String(sinkDialectName),
		connAttempts:    pc.Int(sinkConnectionAttempts),
		connBackoff:     time.Duration(pc.Long(sinkConnectionBackoff)) * time.Millisecond,
		insertMode:      strings.ToLower(pc.String(sinkInsertMode)),
		batchSize:       max(pc.Int(sinkBatchSize), 1),
		deleteEnabled:   pc.Bool(sinkDeleteEnabled),
		tableNameFormat: strings.TrimSpace(pc.String(sinkTableNameFormat)),
		pkMode:          strings.ToLower(pc.String(sinkPKMode)),
		pkFields:        pc.List(sinkPKFields),
		autoCreate:      pc.Bool(sinkAutoCreate),
		autoEvolve:      pc.Bool(sinkAutoEvolve),
		quote:           strings.EqualFold(pc.String(sinkQuoteIdentifiers), "always"),
		maxRetries:      pc.Int(sinkMaxRetries),
		retryBackoff:    time.Duration(pc.Int(sinkRetryBackoff)) * time.Millisecond,
	}
	for _, t := range pc.List(sinkTableTypes) {
		c.tableTypes = append(c.tableTypes, strings.ToUpper(t))
	}
	if wl := pc.List(sinkFieldsWhitelist); len(wl) > 0 {
		c.fieldsWhitelist = map[string]bool{}
		for _, f := range wl {
			c.fieldsWhitelist[f] = true
		}
	}
	c.loc, _ = time.LoadLocation(pc.String(sinkDBTimezone))
	c.dateLoc = c.loc
	if strings.EqualFold(pc.String(sinkDateTimezone), "utc") {
		c.dateLoc = time.UTC
	}
	if c.deleteEnabled && c.pkMode != sinkPKRecordKey {
		// JdbcSinkConfig's own wording.
		return nil, &connect.ConfigError{Name: sinkPKMode, Message: "Primary key mode must be 'record_key' when delete support is enabled"}
	}
	problems := sinkCrossChecks(pc)
	for _, key := range []string{sinkConnectionURL, sinkDialectName, sinkInsertMode, sinkPKMode, sinkPKFields} {
		if msgs := problems[key]; len(msgs) > 0 {
			return nil, &connect.ConfigError{Name: key, Message: msgs[0]}
		}
	}
	return c, nil
}

// sinkCrossChecks returns the problems that involve several keys, by key,
// for keys that are valid on their own.
func sinkCrossChecks(pc *connect.ParsedConfig) map[string][]string {
	out := map[string][]string{}
	pkMode := strings.ToLower(pc.String(sinkPKMode))
	insertMode := strings.ToLower(pc.String(sinkInsertMode))
	if pc.Bool(sinkDeleteEnabled) && pkMode != sinkPKRecordKey {
		// The wording of Confluent's JdbcSinkConnector.validate.
		out[sinkPKMode] = append(out[sinkPKMode],
			fmt.Sprintf("'%s' is invalid: Deletes are only supported for pk.mode 'record_key'", pc.String(sinkPKMode)))
	}
	if pkMode == sinkPKNone && (insertMode == sinkModeUpsert || insertMode == sinkModeUpdate) {
		// Confluent fails the first write of an upsert without keys
		// ("Write to table '...' in UPSERT mode requires key field names
		// to be known, check the primary key configuration") and runs an
		// update without keys as an UPDATE of every row; both are refused
		// up front here.
		out[sinkInsertMode] = append(out[sinkInsertMode],
			fmt.Sprintf("'%s' is invalid: %s mode requires key field names to be known, check the primary key configuration (pk.mode is 'none')",
				pc.String(sinkInsertMode), strings.ToUpper(insertMode)))
	}
	if f := pc.List(sinkPKFields); pkMode == sinkPKKafka && len(f) != 0 && len(f) != 3 {
		out[sinkPKFields] = append(out[sinkPKFields], fmt.Sprintf(
			"PK mode is KAFKA so there should either be no field names defined for defaults [%s] to be applicable, or exactly 3, defined fields are: [%s]",
			strings.Join(sinkDefaultKafkaPKNames, ", "), strings.Join(f, ", ")))
	}
	if url := pc.String(sinkConnectionURL); url != "" {
		if d, _, err := jdbcdb.ParseURL(url, "", ""); err != nil {
			out[sinkConnectionURL] = append(out[sinkConnectionURL], err.Error())
		} else if dn := pc.String(sinkDialectName); dn != "" && dn != d.Name {
			out[sinkDialectName] = append(out[sinkDialectName], fmt.Sprintf(
				"The dialect %s does not match the JDBC URL, which names the %s", dn, d.Name))
		}
	}
	return out
}

// allowsTombstones reports whether null values are deletes.
func (c *sinkConfig) allowsTombstones() bool {
	return c.deleteEnabled && c.pkMode == sinkPKRecordKey
}

func (c *sinkConfig) tableTypeAllowed(t string) bool {
	return slices.Contains(c.tableTypes, t)
}
