package source

import (
	"fmt"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Validate checks the database: that it answers (naming the problem, not
// the password), that the query is valid, and that listed tables and
// the mode's columns exist.
func TestSourceValidateAgainstDatabase(t *testing.T) {
	for _, url := range []string{"jdbc:postgresql://127.0.0.1:1/test", "jdbc:mysql://127.0.0.1:1/test",
		"jdbc:sqlite:" + filepath.Join(t.TempDir(), "missing.db")} {
		cfg := map[string]string{srcConnectionURL: url, srcConnectionUser: "someone", srcConnectionPassword: "s3cret-pw",
			srcTopicPrefix: "p-", srcMode: "bulk"}
		errs := (&Connector{}).Validate(cfg)
		msgs := errs[srcConnectionURL]
		if len(errs) != 1 || len(msgs) != 1 || !strings.HasPrefix(msgs[0], "Could not connect to database. Cannot connect to "+url) {
			t.Fatalf("%s: %v", url, errs)
		}
		if strings.Contains(msgs[0], "s3cret-pw") {
			t.Fatalf("the password shows in %q", msgs[0])
		}
		cfg[srcConnectionAttempts] = "2"
		cfg[srcConnectionBackoff] = "1"
		if err := (&Connector{}).Start(&srcConnContext{}, cfg); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("%s: Start: %v", url, err)
		}
	}

	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateOrders(t, db)
		db.Exec(t, "CREATE TABLE notes (note VARCHAR(10), noted_at "+
			map[string]string{jdbcdb.PostgreSQL.Name: "TIMESTAMP", jdbcdb.MySQL.Name: "DATETIME", jdbcdb.SQLite.Name: "TIMESTAMP"}[db.Dialect.Name]+")")
		orders := srcTableID(db, "orders").String()
		cases := []struct {
			props map[string]string
			want  map[string]string
		}{
			{map[string]string{srcMode: "timestamp+incrementing", srcIncrementingColumn: "id", srcTimestampColumn: "updated_at",
				srcTableWhitelist: "orders"}, nil},
			// The auto-increment (or primary-key rowid) column is found.
			{map[string]string{srcMode: "incrementing", srcTableWhitelist: orders}, nil},
			{map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcTableWhitelist: "orders,missing"}, map[string]string{
				srcTableWhitelist: "Table missing was not found in the database"}},
			{map[string]string{srcMode: "incrementing", srcIncrementingColumn: "order_id", srcTableWhitelist: "orders"},
				map[string]string{srcIncrementingColumn: "Incrementing column order_id not found in table " + orders}},
			{map[string]string{srcMode: "timestamp", srcTimestampColumn: "created_at", srcTableWhitelist: "orders"},
				map[string]string{srcTimestampColumn: "Timestamp column created_at not found in table " + orders}},
			{map[string]string{srcMode: "timestamp", srcTimestampColumn: "noted_at", srcTableWhitelist: "notes"},
				map[string]string{srcTimestampColumn: "Cannot make incremental queries using timestamp columns [noted_at] on " +
					srcTableID(db, "notes").String() + " because all of these columns nullable."}},
			{map[string]string{srcMode: "incrementing", srcTableWhitelist: "notes"}, map[string]string{
				srcIncrementingColumn: "Table " + srcTableID(db, "notes").String() + " has no auto-incrementing column"}},
			{map[string]string{srcMode: "incrementing", srcTableIncludeList: `.*orders`, srcIncrementingColumn: "id"}, nil},
			{map[string]string{srcMode: "incrementing", srcTableIncludeList: `nothing_.*`, srcIncrementingColumn: "id"},
				map[string]string{srcTableIncludeList: "No table of the database matches nothing_.*"}},
			{map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcQuery: "SELECT id, customer FROM orders"}, nil},
			{map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcQuery: "SELECT id, nope FROM orders"},
				map[string]string{srcQuery: "The configured query is not valid and has database/connection errors."}},
		}
		for _, c := range cases {
			errs := (&Connector{}).Validate(srcBaseConfig(db, c.props))
			if len(errs) != len(c.want) {
				t.Errorf("%v: errors %v", c.props, errs)
				continue
			}
			for k, w := range c.want {
				if len(errs[k]) != 1 || !strings.HasPrefix(errs[k][0], w) {
					t.Errorf("%v: %s errors %q, want %q", c.props, k, errs[k], w)
				}
			}
		}
	})
}

// The connector lists the tables its settings select, splits them among
// tasks, and asks for new task configs when a table appears or goes.
func TestSourceTableDiscovery(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		for _, name := range []string{"a_one", "a_two", "b_one"} {
			db.Exec(t, "CREATE TABLE "+name+" (id INT NOT NULL PRIMARY KEY)")
		}
		db.Exec(t, "CREATE VIEW v_one AS SELECT id FROM a_one")
		id := func(name string) string {
			return db.Dialect.QuoteTable(srcTableID(db, name))
		}
		fqn := func(name string) string { return srcTableID(db, name).String() }
		tablesOf := func(props map[string]string, maxTasks int) []string {
			var out []string
			for _, tc := range srcTaskConfigs(t, srcBaseConfig(db, props), maxTasks) {
				out = append(out, tc[srcTablesConfig])
			}
			return out
		}
		bulk := map[string]string{srcMode: "bulk"}
		with := func(kv ...string) map[string]string {
			m := map[string]string{srcMode: "bulk"}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		cases := []struct {
			props    map[string]string
			maxTasks int
			want     []string
		}{
			{bulk, 1, []string{id("a_one") + "," + id("a_two") + "," + id("b_one")}},
			{bulk, 2, []string{id("a_one") + "," + id("a_two"), id("b_one")}},
			{with(srcTableTypes, "VIEW"), 1, []string{id("v_one")}},
			{with(srcTableTypes, "TABLE,VIEW", srcTableBlacklist, "a_one,"+fqn("b_one")), 1, []string{id("a_two") + "," + id("v_one")}},
			{with(srcTableWhitelist, fqn("a_two")+","+id("b_one")), 1, []string{id("a_two") + "," + id("b_one")}},
			{with(srcTableIncludeList, `a_.*`, srcTableExcludeList, strings.ReplaceAll(fqn("a_two"), ".", `\.`)), 1, []string{id("a_one")}},
			{with(srcTableIncludeList, `.*_one`), 3, []string{id("a_one"), id("b_one")}},
			{with(srcTableWhitelist, "nothing"), 2, []string{""}},
			{with(srcQuery, "SELECT * FROM a_one"), 3, []string{""}},
		}
		if db.Dialect != jdbcdb.SQLite {
			// The catalog is PostgreSQL's database, MySQL's database.
			catalog := map[string]string{jdbcdb.PostgreSQL.Name: "test", jdbcdb.MySQL.Name: db.Schema}[db.Dialect.Name]
			cases = append(cases,
				struct {
					props    map[string]string
					maxTasks int
					want     []string
				}{with(srcCatalogPattern, catalog, srcTableWhitelist, "b_one"), 1, []string{id("b_one")}},
				struct {
					props    map[string]string
					maxTasks int
					want     []string
				}{with(srcCatalogPattern, "no_such_catalog"), 1, []string{""}})
		}
		for _, c := range cases {
			if got := tablesOf(c.props, c.maxTasks); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v (max %d): tables %q, want %q", c.props, c.maxTasks, got, c.want)
			}
		}

		if db.Dialect == jdbcdb.PostgreSQL {
			// As for pgjdbc, a partitioned table is no TABLE; its
			// partitions are.
			db.Exec(t, "CREATE TABLE p_all (id INT NOT NULL) PARTITION BY RANGE (id)")
			db.Exec(t, "CREATE TABLE p_low PARTITION OF p_all FOR VALUES FROM (0) TO (100)")
			db.Exec(t, "CREATE TABLE p_high PARTITION OF p_all FOR VALUES FROM (100) TO (200)")
			if got := tablesOf(with(srcTableIncludeList, `.*\.p_.*`), 1); !reflect.DeepEqual(got, []string{id("p_high") + "," + id("p_low")}) {
				t.Errorf("partitions: %q", got)
			}
			if got := tablesOf(with(srcTableIncludeList, `.*\.p_.*`, srcTableTypes, "PARTITIONED TABLE"), 1); !reflect.DeepEqual(got, []string{id("p_all")}) {
				t.Errorf("partitioned table: %q", got)
			}
			db.Exec(t, "DROP TABLE p_all")
		}

		// A table created while the connector runs: new task configs.
		cctx := &srcConnContext{}
		c := &Connector{}
		if err := c.Start(cctx, srcBaseConfig(db, with(srcTablePollInterval, "20", srcTableIncludeList, `.*_one|.*_three`))); err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		db.Exec(t, "CREATE TABLE c_three (id INT)")
		srcWaitFor(t, func() bool { return cctx.reconfigs.Load() >= 1 })
		tcs, err := c.TaskConfigs(1)
		if err != nil || tcs[0][srcTablesConfig] != id("a_one")+","+id("b_one")+","+id("c_three") {
			t.Fatalf("after a table was added: %v %v", tcs, err)
		}
		db.Exec(t, "DROP TABLE c_three")
		srcWaitFor(t, func() bool { return cctx.reconfigs.Load() >= 2 })
		if tcs, _ := c.TaskConfigs(1); tcs[0][srcTablesConfig] != id("a_one")+","+id("b_one") {
			t.Fatalf("after a table was dropped: %v", tcs[0][srcTablesConfig])
		}
		// Nothing changes: listings go on, requests do not.
		before, listed := cctx.reconfigs.Load(), c.listings.Load()
		srcWaitFor(t, func() bool { return c.listings.Load() >= listed+3 })
		if n := cctx.reconfigs.Load(); n != before {
			t.Fatalf("%d reconfigurations without a change", n-before)
		}
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(tablesOf(with(srcTableWhitelist, "a_one"), 1), []string{id("a_one")}) {
			t.Fatal("whitelist by bare name")
		}
	})
}

func srcWaitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met before the deadline")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// srcIdlePIDs are the backend PIDs of the PostgreSQL connections srcIdle
// holds for db.
func srcIdlePIDs(db *jdbctest.DB) []uint32 {
	return jdbctest.HeldPIDs(srcIdle, db, func(c *srcConn) uint32 { return c.pg.PgConn().PID() })
}

// Validating a config, starting the connector and starting its task use
// one PostgreSQL connection, handed from each to the next; what the
// connection learnt of the tables does not outlive the task that used it;
// a handed-over connection the server closed meanwhile is replaced.
func TestSourceHandsConnectionsOver(t *testing.T) {
	db := jdbctest.Postgres(t)
	db.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, label TEXT)")
	db.Exec(t, "INSERT INTO items VALUES (1, 'one')")
	cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id"})
	c := &Connector{}
	if errs := c.Validate(cfg); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	validated := srcIdlePIDs(db)
	if len(validated) != 1 {
		t.Fatalf("after Validate, idle connections %v, want 1", validated)
	}
	if err := c.Start(&srcConnContext{}, cfg); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if got := srcIdlePIDs(db); !slices.Equal(got, validated) {
		t.Fatalf("after Start, idle connections %v, want Validate's %v", got, validated)
	}
	tcs, err := c.TaskConfigs(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &srcTestContext{}
	task := NewTask()
	if err := task.Start(ctx, tcs[0]); err != nil {
		t.Fatal(err)
	}
	if pid := task.conn.pg.PgConn().PID(); pid != validated[0] || len(srcIdlePIDs(db)) != 0 {
		t.Fatalf("the task's connection is backend %d (idle %v), want the handed-over %d", pid, srcIdlePIDs(db), validated[0])
	}
	recs := srcPollN(t, task, ctx, 1)
	if s := srcSchemaString(recs[0].ValueSchema.Field("label").Schema); s != "STRING?" {
		t.Fatalf("label schema %s, want STRING?", s)
	}
	task.Stop()

	// The next task takes the same connection, and sees the column
	// become NOT NULL.
	db.Exec(t, "ALTER TABLE items ALTER COLUMN label SET NOT NULL")
	db.Exec(t, "INSERT INTO items VALUES (2, 'two')")
	task = srcStartTask(t, cfg, ctx)
	if pid := task.conn.pg.PgConn().PID(); pid != validated[0] {
		t.Fatalf("the second task's connection is backend %d, want %d", pid, validated[0])
	}
	recs = srcPollN(t, task, ctx, 1)
	if s := srcSchemaString(recs[0].ValueSchema.Field("label").Schema); s != "STRING" {
		t.Fatalf("after SET NOT NULL, label schema %s, want STRING", s)
	}
	task.Stop()

	// The server closes the idle connection: the next task gets a new
	// one that works.
	if idle := srcIdlePIDs(db); len(idle) != 1 {
		t.Fatalf("idle connections %v, want 1", idle)
	}
	db.Exec(t, fmt.Sprintf("SELECT pg_terminate_backend(%d)", validated[0]))
	db.Exec(t, "INSERT INTO items VALUES (3, 'three')")
	task = srcStartTask(t, cfg, ctx)
	if pid := task.conn.pg.PgConn().PID(); pid == validated[0] {
		t.Fatalf("the task got the terminated backend %d", pid)
	}
	if got := srcIDs(t, srcPollN(t, task, ctx, 1)); !slices.Equal(got, []int64{3}) {
		t.Fatalf("ids %v, want [3]", got)
	}
}
