package source

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// The statements are Confluent's, criteria and ordering included.
func TestSourceStatements(t *testing.T) {
	orders := &jdbcdb.TableID{Schema: "orders", Table: "orders"}
	cases := []struct {
		d      *jdbcdb.Dialect
		table  *jdbcdb.TableID
		query  string
		mode   string
		ts     []string
		suffix string
		want   string
	}{
		{jdbcdb.PostgreSQL, orders, "", srcModeIncrementing, nil, "",
			`SELECT * FROM "orders"."orders" WHERE "orders"."orders"."id" > $1 ORDER BY "orders"."orders"."id" ASC`},
		{jdbcdb.PostgreSQL, orders, "", srcModeTimestamp, []string{"updated_at"}, "",
			`SELECT * FROM "orders"."orders" WHERE "orders"."orders"."updated_at" > $1 AND "orders"."orders"."updated_at" < $2 ORDER BY "orders"."orders"."updated_at" ASC`},
		{jdbcdb.PostgreSQL, orders, "", srcModeTimestampIncrementing, []string{"updated_at"}, "LIMIT 1000",
			`SELECT * FROM "orders"."orders" WHERE "orders"."orders"."updated_at" < $1 AND (("orders"."orders"."updated_at" = $2 AND "orders"."orders"."id" > $3) OR "orders"."orders"."updated_at" > $4) ORDER BY "orders"."orders"."updated_at","orders"."orders"."id" ASC LIMIT 1000`},
		{jdbcdb.PostgreSQL, nil, "SELECT * FROM v", srcModeTimestamp, []string{"a", "b"}, "",
			`SELECT * FROM v WHERE COALESCE("a","b") > $1 AND COALESCE("a","b") < $2 ORDER BY COALESCE("a","b") ASC`},
		{jdbcdb.PostgreSQL, orders, "", srcModeBulk, nil, "", `SELECT * FROM "orders"."orders"`},
		{jdbcdb.MySQL, &jdbcdb.TableID{Catalog: "shop", Table: "orders"}, "", srcModeIncrementing, nil, "",
			"SELECT * FROM `shop`.`orders` WHERE `shop`.`orders`.`id` > ? ORDER BY `shop`.`orders`.`id` ASC"},
		{jdbcdb.SQLite, &jdbcdb.TableID{Table: "orders"}, "", srcModeTimestampIncrementing, []string{"ts"}, "",
			`SELECT * FROM "orders" WHERE strftime('%Y-%m-%d %H:%M:%f', "orders"."ts") < ? AND ((strftime('%Y-%m-%d %H:%M:%f', "orders"."ts") = ? AND "orders"."id" > ?) OR strftime('%Y-%m-%d %H:%M:%f', "orders"."ts") > ?) ORDER BY strftime('%Y-%m-%d %H:%M:%f', "orders"."ts"),"orders"."id" ASC`},
	}
	for _, c := range cases {
		if got := srcStatement(c.d, c.table, c.query, c.mode, "id", c.ts, c.suffix); got != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.d.Name, c.mode, got, c.want)
		}
	}
	// Parameters: Confluent's order, the epoch and -1 without an offset.
	end := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	epoch := time.Unix(0, 0).UTC()
	args := srcArgs(jdbcdb.PostgreSQL, srcModeTimestampIncrementing, srcOffset{}, end, time.UTC)
	if !reflect.DeepEqual(args, []any{end, epoch, int64(-1), epoch}) {
		t.Errorf("args %v", args)
	}
	args = srcArgs(jdbcdb.SQLite, srcModeTimestamp, srcOffset{ts: end.Add(1500 * time.Millisecond), hasTS: true}, end, time.UTC)
	if !reflect.DeepEqual(args, []any{"2024-01-01 00:00:01.500", "2024-01-01 00:00:00.000"}) {
		t.Errorf("sqlite args %v", args)
	}
	ny, _ := time.LoadLocation("America/New_York")
	args = srcArgs(jdbcdb.MySQL, srcModeIncrementing, srcOffset{inc: 7, hasInc: true}, end, ny)
	if !reflect.DeepEqual(args, []any{int64(7)}) {
		t.Errorf("mysql args %v", args)
	}
	if got := srcBindTime(jdbcdb.MySQL, end, ny); !got.(time.Time).Equal(time.Date(2023, 12, 31, 19, 0, 0, 0, time.UTC)) {
		t.Errorf("mysql binds %v: the wall clock in db.timezone", got)
	}
}

func TestSourceOffsets(t *testing.T) {
	ts := time.Date(2024, 7, 10, 14, 30, 0, 123456789, time.UTC)
	o := srcOffset{inc: 1042, hasInc: true, ts: ts, hasTS: true}
	m := o.toMap()
	want := map[string]any{"incrementing": int64(1042), "timestamp": int64(1720621800123), "timestamp_nanos": int64(123456789)}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("toMap %v", m)
	}
	back, err := srcOffsetFromMap(m)
	if err != nil || back != o {
		t.Fatalf("fromMap %+v %v", back, err)
	}
	// Without nanos the millis give the fraction; before the epoch too.
	back, _ = srcOffsetFromMap(map[string]any{"timestamp": int64(-1500)})
	if !back.ts.Equal(time.Unix(-2, 500_000_000)) || back.hasInc {
		t.Fatalf("negative millis: %v", back.ts)
	}
	back, _ = srcOffsetFromMap(map[string]any{"timestamp": int64(-1500), "timestamp_nanos": int64(700_000_000)})
	if !back.ts.Equal(time.Unix(-2, 700_000_000)) {
		t.Fatalf("negative millis with nanos: %v", back.ts)
	}
	if (srcOffset{ts: time.Unix(-2, 700_000_000), hasTS: true}).toMap()["timestamp"] != int64(-1300) {
		t.Fatal("Timestamp.getTime of a time before the epoch")
	}
	for _, bad := range []map[string]any{
		{"incrementing": "500"}, {"incrementing": 500.5}, {"incrementing": float64(500)},
		{"timestamp": int64(1), "timestamp_nanos": int64(1_000_000_000)},
	} {
		if _, err := srcOffsetFromMap(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if o, err := srcOffsetFromMap(nil); err != nil || o.hasInc || o.hasTS || o.incOrDefault() != -1 || !o.tsOrDefault().Equal(time.Unix(0, 0)) {
		t.Errorf("empty offset %+v %v", o, err)
	}
}

func TestSourceTableLists(t *testing.T) {
	ids := []jdbcdb.TableID{{Schema: "orders", Table: "orders"}, {Schema: `we"ird`, Table: "a,b.c"}, {Table: "plain"},
		{Catalog: "db", Schema: "s", Table: "t"}}
	s := srcFormatTables(jdbcdb.PostgreSQL, ids)
	if s != `"orders"."orders","we""ird"."a,b.c","plain","db"."s"."t"` {
		t.Fatalf("formatted %s", s)
	}
	back, err := srcParseTables(jdbcdb.PostgreSQL, s)
	if err != nil || !reflect.DeepEqual(back, ids) {
		t.Fatalf("parsed %v %v", back, err)
	}
	back, err = srcParseTables(jdbcdb.MySQL, "`shop`.`orders`, plain , `x``y`")
	if err != nil || !reflect.DeepEqual(back, []jdbcdb.TableID{{Catalog: "shop", Table: "orders"}, {Table: "plain"}, {Table: "x`y"}}) {
		t.Fatalf("mysql parsed %v %v", back, err)
	}
	if back, err := srcParseTables(jdbcdb.SQLite, ""); err != nil || len(back) != 0 {
		t.Fatalf("empty: %v %v", back, err)
	}
	if _, err := srcParseTables(jdbcdb.PostgreSQL, `"open`); err == nil {
		t.Fatal("an unterminated quote was accepted")
	}

	// Confluent's whitelist matching: unquoted or quoted FQN, or bare name.
	id := jdbcdb.TableID{Schema: "orders", Table: "orders"}
	for _, e := range []string{"orders.orders", `"orders"."orders"`, "orders"} {
		if !srcTableMatches(jdbcdb.PostgreSQL, e, id) {
			t.Errorf("%s does not match", e)
		}
	}
	if srcTableMatches(jdbcdb.PostgreSQL, "other.orders", id) {
		t.Error("other.orders matches orders.orders")
	}
	tables := []srcTable{{id: jdbcdb.TableID{Schema: "a", Table: "x"}}, {id: jdbcdb.TableID{Schema: "a", Table: "y"}}, {id: jdbcdb.TableID{Schema: "b", Table: "x"}}}
	sel := func(props map[string]string) []jdbcdb.TableID {
		cfg, err := parseSourceConfig(srcUnitConfig(props))
		if err != nil {
			t.Fatal(err)
		}
		return srcSelectTables(cfg, jdbcdb.PostgreSQL, tables)
	}
	if got := sel(map[string]string{srcTableWhitelist: "a.x, y"}); !reflect.DeepEqual(got, []jdbcdb.TableID{tables[0].id, tables[1].id}) {
		t.Errorf("whitelist: %v", got)
	}
	if got := sel(map[string]string{srcTableBlacklist: "x"}); !reflect.DeepEqual(got, []jdbcdb.TableID{tables[1].id}) {
		t.Errorf("blacklist: %v", got)
	}
	if got := sel(map[string]string{srcTableIncludeList: `a\..*`, srcTableExcludeList: `a\.y`}); !reflect.DeepEqual(got, []jdbcdb.TableID{tables[0].id}) {
		t.Errorf("include/exclude: %v", got)
	}
	if got := sel(map[string]string{srcTableIncludeList: "x"}); !reflect.DeepEqual(got, []jdbcdb.TableID{tables[0].id, tables[2].id}) {
		t.Errorf("include by bare name: %v", got)
	}
}

// srcUnitConfig is a valid config that needs no database.
func srcUnitConfig(extra map[string]string) map[string]string {
	cfg := map[string]string{srcConnectionURL: "jdbc:sqlite:/nonexistent/x.db", srcTopicPrefix: "p-", srcMode: "bulk"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func TestSourceConfigDef(t *testing.T) {
	def := ConfigDef()
	want := map[string]struct {
		typ connect.ConfigType
		def string
	}{
		srcConnectionURL: {connect.ConfigString, "required"}, srcConnectionUser: {connect.ConfigString, "null"},
		srcConnectionPassword: {connect.ConfigPassword, "null"}, srcConnectionAttempts: {connect.ConfigInt, "3"},
		srcConnectionBackoff: {connect.ConfigLong, "10000"}, srcTableWhitelist: {connect.ConfigList, ""},
		srcTableBlacklist: {connect.ConfigList, ""}, srcTableIncludeList: {connect.ConfigList, ""},
		srcTableExcludeList: {connect.ConfigList, ""}, srcCatalogPattern: {connect.ConfigString, "null"},
		srcSchemaPattern: {connect.ConfigString, "null"}, srcTableTypes: {connect.ConfigList, "TABLE"},
		srcMode: {connect.ConfigString, ""}, srcIncrementingColumn: {connect.ConfigString, ""},
		srcTimestampColumn: {connect.ConfigList, ""}, srcTimestampInitial: {connect.ConfigLong, "null"},
		srcValidateNonNull: {connect.ConfigBoolean, "true"}, srcQuery: {connect.ConfigString, ""},
		srcQuerySuffix: {connect.ConfigString, ""}, srcTopicPrefix: {connect.ConfigString, "required"},
		srcPollInterval: {connect.ConfigInt, "5000"}, srcBatchMaxRows: {connect.ConfigInt, "100"},
		srcTablePollInterval: {connect.ConfigLong, "60000"}, srcTimestampDelay: {connect.ConfigLong, "0"},
		srcNumericMapping: {connect.ConfigString, "null"}, srcDBTimezone: {connect.ConfigString, "UTC"},
		srcNumericPrecision: {connect.ConfigBoolean, "false"}, srcDialectName: {connect.ConfigString, ""},
		// Confluent's keys that connectd does not implement: only their defaults are accepted.
		"jdbc.credentials.provider.class":           {connect.ConfigString, "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider"},
		"quote.sql.identifiers":                     {connect.ConfigString, "ALWAYS"},
		"transaction.isolation.mode":                {connect.ConfigString, "DEFAULT"},
		"query.retry.attempts":                      {connect.ConfigString, "-1"},
		"timestamp.granularity":                     {connect.ConfigString, "connect_logical"},
		"table.monitoring.startup.polling.limit.ms": {connect.ConfigString, "10000"},
	}
	for name, w := range want {
		k := def.Key(name)
		if k == nil {
			t.Errorf("%s is not defined", name)
			continue
		}
		got := "required"
		if !k.Required {
			got = "null"
			if v := connect.FormatValue(k.Default); v != nil {
				got = *v
			}
		}
		if k.Type != w.typ || got != w.def || k.Doc == "" {
			t.Errorf("%s: %s default %q, want %s %q", name, k.Type, got, w.typ, w.def)
		}
	}
	if len(def.Keys()) != len(want) {
		t.Errorf("%d keys, want %d", len(def.Keys()), len(want))
	}
	for props, wantErr := range map[string]string{
		srcMode + "=fast":                             "Invalid value fast for configuration mode: String must be one of: , bulk, timestamp, incrementing, timestamp+incrementing",
		srcDBTimezone + "=Mars/Base":                  "Invalid value Mars/Base for configuration db.timezone: Invalid time zone identifier",
		srcTopicPrefix + "=a b":                       "Invalid value a b for configuration topic.prefix: Topic prefix must not contain any character other than ASCII alphanumerics, '.', '_' and '-'.",
		srcNumericMapping + "=exact":                  "Invalid value exact for configuration numeric.mapping: Invalid enumerator value; must be one of: none, precision_only, best_fit, best_fit_eager_double",
		srcConnectionAttempts + "=0":                  "Invalid value 0 for configuration connection.attempts: Value must be at least 1",
		srcTableIncludeList + "=orders[":              "Invalid value orders[ for configuration table.include.list: not a valid regular expression",
		srcPollInterval + "=often":                    "Invalid value often for configuration poll.interval.ms: Not a number of type INT",
		srcTimestampInitial + "=yesterday":            "Invalid value yesterday for configuration timestamp.initial: Not a number of type LONG",
		"quote.sql.identifiers=never":                 "Invalid value never for configuration quote.sql.identifiers: connectd does not implement this setting; only its default (ALWAYS) is accepted",
		"timestamp.granularity=nanos_long":            "Invalid value nanos_long for configuration timestamp.granularity: connectd does not implement this setting",
		"transaction.isolation.mode=SERIALIZABLE":     "Invalid value SERIALIZABLE for configuration transaction.isolation.mode",
		"jdbc.credentials.provider.class=x.Y":         "Invalid value x.Y for configuration jdbc.credentials.provider.class",
		srcDialectName + "=OracleDatabaseDialect":     "Invalid value OracleDatabaseDialect for configuration dialect.name: connectd supports the dialects",
		srcDialectName + "=PostgreSqlDatabaseDialect": "The dialect PostgreSqlDatabaseDialect does not match the JDBC URL, which names the SqliteDatabaseDialect",
	} {
		k, v, _ := strings.Cut(props, "=")
		_, err := parseSourceConfig(srcUnitConfig(map[string]string{k: v}))
		if err == nil || !strings.HasPrefix(err.Error(), wantErr) {
			t.Errorf("%s: %v\nwant %s", props, err, wantErr)
		}
	}
	if _, err := parseSourceConfig(map[string]string{srcConnectionURL: "jdbc:sqlite:x"}); err == nil ||
		err.Error() != `Missing required configuration "topic.prefix" which has no default value.` {
		t.Errorf("missing topic.prefix: %v", err)
	}
	for k, v := range map[string]string{"quote.sql.identifiers": "always", "query.retry.attempts": " -1 ", srcDialectName: "SqliteDatabaseDialect"} {
		if _, err := parseSourceConfig(srcUnitConfig(map[string]string{k: v})); err != nil {
			t.Errorf("%s=%s (the default): %v", k, v, err)
		}
	}
	cfg, err := parseSourceConfig(srcUnitConfig(map[string]string{srcNumericPrecision: "true"}))
	if err != nil || cfg.numericMapping != srcNumericPrecisionOnly {
		t.Errorf("numeric.precision.mapping=true: %v %v", cfg, err)
	}
}

// Checks spanning several keys, reported by Validate on the keys
// concerned, before any database is reached.
func TestSourceConfigChecks(t *testing.T) {
	cases := []struct {
		props map[string]string
		want  map[string]string // key → start of its error
	}{
		{map[string]string{srcMode: ""}, map[string]string{srcMode: "Query mode must be specified"}},
		{map[string]string{srcMode: "timestamp"}, map[string]string{
			srcTimestampColumn: "Timestamp column configuration must be provided when using mode 'timestamp' or 'timestamp+incrementing'. Provide 'timestamp.column.name'.",
			srcMode:            "Timestamp column configuration must be provided"}},
		{map[string]string{srcQuery: "SELECT * FROM t", srcTableWhitelist: "t"}, map[string]string{
			srcQuery:          "Do not specify table filtering configs with 'query'.",
			srcTableWhitelist: "Do not specify table filtering configs with 'query'."}},
		{map[string]string{srcTableWhitelist: "a", srcTableBlacklist: "b"}, map[string]string{
			srcTableWhitelist: "table.whitelist and table.blacklist are exclusive.",
			srcTableBlacklist: "table.whitelist and table.blacklist are exclusive."}},
		{map[string]string{srcTableWhitelist: "a", srcTableIncludeList: "b"}, map[string]string{
			srcTableWhitelist:   "Cannot mix legacy and new configuration approaches.",
			srcTableIncludeList: "Cannot mix legacy and new configuration approaches."}},
		{map[string]string{srcTableExcludeList: "b"}, map[string]string{
			srcTableExcludeList: "table.exclude.list cannot be used without table.include.list."}},
		{map[string]string{srcQuery: "SELECT * FROM t", srcMode: "incrementing"}, map[string]string{
			srcIncrementingColumn: "'incrementing.column.name' must be provided when using mode 'incrementing' or 'timestamp+incrementing' with a custom query."}},
		{map[string]string{srcQuery: "SELECT * FROM t", srcTopicPrefix: ""}, map[string]string{
			srcTopicPrefix: "Topic prefix must be set in query mode"}},
	}
	for _, c := range cases {
		errs := (&Connector{}).Validate(srcUnitConfig(c.props))
		if len(errs) != len(c.want) {
			t.Errorf("%v: errors %v, want errors on %d keys", c.props, errs, len(c.want))
		}
		for k, w := range c.want {
			if len(errs[k]) != 1 || !strings.HasPrefix(errs[k][0], w) {
				t.Errorf("%v: %s errors %q, want %q", c.props, k, errs[k], w)
			}
		}
		// Start refuses the same configs.
		if err := (&Connector{}).Start(&srcConnContext{}, srcUnitConfig(c.props)); err == nil {
			t.Errorf("%v: Start accepted it", c.props)
		}
	}
}

func TestSourceAlterOffsets(t *testing.T) {
	c := &Connector{}
	cfg := srcUnitConfig(map[string]string{srcMode: "timestamp+incrementing", srcTimestampColumn: "ts"})
	p := map[string]any{"protocol": "1", "table": "orders.orders"}
	ok := []map[string]any{
		{"incrementing": int64(500), "timestamp": int64(1720540000000), "timestamp_nanos": int64(0)},
		{"incrementing": int64(1043)},
		nil,
	}
	for _, o := range ok {
		if handled, err := c.AlterOffsets(cfg, []connect.SourceOffset{{Partition: p, Offset: o}}); err != nil || !handled {
			t.Errorf("%v refused: %v", o, err)
		}
	}
	for _, part := range []map[string]any{{"query": "query"}, {"table": "orders"}} {
		if _, err := c.AlterOffsets(cfg, []connect.SourceOffset{{Partition: part, Offset: ok[0]}}); err != nil {
			t.Errorf("partition %v refused: %v", part, err)
		}
	}
	bad := []struct {
		p, o map[string]any
		want string
	}{
		{p, map[string]any{"incrementing": "500"}, "The value for the 'incrementing' key in the offset is expected to be a Long value"},
		{p, map[string]any{"incrementing": 500.5}, "expected to be a Long value"},
		{p, map[string]any{"timestamp": float64(1720540000000)}, "expected to be a Long value"},
		{p, map[string]any{"incremental": int64(1)}, "Unknown key 'incremental'"},
		{p, map[string]any{}, "Offset objects should either be null or contain"},
		{p, map[string]any{"timestamp_nanos": int64(5)}, "without 'timestamp'"},
		{p, map[string]any{"timestamp": int64(5), "timestamp_nanos": int64(-1)}, "between 0 and 999999999"},
		{map[string]any{"protocol": "2", "table": "t"}, ok[0], `must be the string "1"`},
		{map[string]any{"protocol": int64(1), "table": "t"}, ok[0], `must be the string "1"`},
		{map[string]any{"topic": "t"}, ok[0], "Partition objects should contain the key 'table'"},
		{map[string]any{"query": "SELECT 1"}, ok[0], `The partition of a query is {"query":"query"}`},
		{nil, ok[0], "Partition objects cannot be null"},
	}
	for _, b := range bad {
		_, err := c.AlterOffsets(cfg, []connect.SourceOffset{{Partition: b.p, Offset: b.o}})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v %v: %v, want %q", b.p, b.o, err, b.want)
		}
	}
	inc := srcUnitConfig(map[string]string{srcMode: "incrementing"})
	if _, err := c.AlterOffsets(inc, []connect.SourceOffset{{Partition: p, Offset: map[string]any{"timestamp": int64(1)}}}); err == nil {
		t.Error("an incrementing connector accepted an offset without incrementing")
	}
	if _, err := c.AlterOffsets(srcUnitConfig(nil), []connect.SourceOffset{{Partition: p, Offset: ok[0]}}); err == nil {
		t.Error("a bulk connector accepted an offset")
	}
}

func TestSourceTaskSplit(t *testing.T) {
	c := &Connector{d: jdbcdb.PostgreSQL, props: map[string]string{"k": "v"}}
	c.cfg, _ = parseSourceConfig(srcUnitConfig(nil))
	for i := range 5 {
		c.tables = append(c.tables, jdbcdb.TableID{Schema: "s", Table: string(rune('a' + i))})
	}
	tcs, err := c.TaskConfigs(3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range tcs {
		got = append(got, tc[srcTablesConfig])
		if tc["k"] != "v" || tc[srcTablesFetched] != "true" {
			t.Fatalf("task config %v", tc)
		}
	}
	if !reflect.DeepEqual(got, []string{`"s"."a","s"."b"`, `"s"."c","s"."d"`, `"s"."e"`}) {
		t.Fatalf("groups %q", got)
	}
	if tcs, _ := c.TaskConfigs(10); len(tcs) != 5 {
		t.Fatalf("%d tasks for 5 tables", len(tcs))
	}
	c.tables = append(c.tables, jdbcdb.TableID{Schema: "t", Table: "a"})
	if _, err := c.TaskConfigs(2); err == nil || !strings.Contains(err.Error(), "duplicate unqualified table names") ||
		!strings.Contains(err.Error(), "[s.a, t.a]") {
		t.Fatalf("duplicates: %v", err)
	}
	c.tables = nil
	if tcs, _ := c.TaskConfigs(4); len(tcs) != 1 || tcs[0][srcTablesConfig] != "" {
		t.Fatalf("no tables: %v", tcs)
	}
}
