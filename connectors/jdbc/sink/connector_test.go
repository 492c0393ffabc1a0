package sink

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

func TestSinkConfigDefaults(t *testing.T) {
	def := ConfigDef()
	want := map[string]string{
		"connection.attempts": "3", "connection.backoff.ms": "10000", "insert.mode": "insert", "batch.size": "3000",
		"delete.enabled": "false", "table.name.format": "${topic}", "pk.mode": "none", "pk.fields": "",
		"fields.whitelist": "", "db.timezone": "UTC", "auto.create": "false", "auto.evolve": "false",
		"quote.sql.identifiers": "ALWAYS", "max.retries": "10", "retry.backoff.ms": "3000", "table.types": "TABLE",
		"jdbc.credentials.provider.class": "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider", "mssql.use.merge.holdlock": "true",
	}
	for k, v := range want {
		key := def.Key(k)
		if key == nil {
			t.Errorf("no key %s", k)
			continue
		}
		if got := connect.FormatValue(key.Default); got == nil || *got != v {
			t.Errorf("%s default = %v, want %s", k, got, v)
		}
	}
	if k := def.Key("connection.url"); k == nil || !k.Required || k.Group != "Connection" {
		t.Errorf("connection.url: %+v", k)
	}
	if k := def.Key("connection.password"); k == nil || k.Type != connect.ConfigPassword {
		t.Errorf("connection.password: %+v", k)
	}
	if k := def.Key("pk.fields"); k == nil || k.Type != connect.ConfigList || !strings.Contains(k.Doc, "__connect_topic,__connect_partition,__connect_offset") {
		t.Errorf("pk.fields: %+v", k)
	}
}

func TestSinkConnectorTaskConfigs(t *testing.T) {
	c := &Connector{}
	props := map[string]string{"name": "s", "connection.url": "jdbc:sqlite:/tmp/x.db", "topics": "a,b", "insert.mode": "upsert", "pk.mode": "kafka"}
	if err := c.Start(nil, props); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(3)
	if err != nil || len(cfgs) != 3 {
		t.Fatalf("%d configs, %v", len(cfgs), err)
	}
	for _, cfg := range cfgs {
		if fmt.Sprint(cfg) != fmt.Sprint(props) {
			t.Errorf("task config %v", cfg)
		}
	}
	cfgs[0]["x"] = "y"
	if _, ok := cfgs[1]["x"]; ok {
		t.Error("task configs share a map")
	}
	if c.TaskClass() != TaskClass || c.Version() != Version {
		t.Error("TaskClass or Version")
	}
	off := int64(0)
	if ok, err := c.AlterOffsets(props, map[connect.TopicPartition]*int64{{Topic: "a"}: &off, {Topic: "b"}: nil}); !ok || err != nil {
		t.Errorf("AlterOffsets = %v, %v", ok, err)
	}
}

func TestSinkConnectorStartErrors(t *testing.T) {
	base := map[string]string{"connection.url": "jdbc:sqlite:/tmp/x.db"}
	cases := []struct {
		kv   []string
		want string
	}{
		{[]string{"delete.enabled", "true"}, "Primary key mode must be 'record_key' when delete support is enabled"},
		{[]string{"delete.enabled", "true", "pk.mode", "kafka"}, "Primary key mode must be 'record_key' when delete support is enabled"},
		{[]string{"insert.mode", "upsert"}, "'upsert' is invalid: UPSERT mode requires key field names to be known"},
		{[]string{"insert.mode", "bulk"}, "Invalid value bulk for configuration insert.mode: Invalid enumerator"},
		{[]string{"pk.mode", "Kafka"}, "Invalid value Kafka for configuration pk.mode: Invalid enumerator"},
		{[]string{"pk.mode", "kafka", "pk.fields", "a,b"}, "or exactly 3, defined fields are: [a, b]"},
		{[]string{"db.timezone", "Mars/Olympus"}, "Invalid value Mars/Olympus for configuration db.timezone: Invalid time zone identifier"},
		{[]string{"batch.size", "-1"}, "Invalid value -1 for configuration batch.size: Value must be at least 0"},
		{[]string{"connection.url", "jdbc:oracle:thin:@h:1521:x"}, "Unsupported JDBC URL"},
		{[]string{"table.name.format", ""}, "Invalid value  for configuration table.name.format: String must be non-empty"},
		{[]string{"jdbc.credentials.provider.class", "com.example.Vault"},
			"Invalid value com.example.Vault for configuration jdbc.credentials.provider.class: connectd does not implement this setting; only its default (io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider) is accepted"},
		{[]string{"mssql.use.merge.holdlock", "false"}, "Invalid value false for configuration mssql.use.merge.holdlock: connectd does not implement this setting"},
	}
	for _, c := range cases {
		props := map[string]string{}
		for k, v := range base {
			props[k] = v
		}
		for i := 0; i < len(c.kv); i += 2 {
			props[c.kv[i]] = c.kv[i+1]
		}
		err := (&Connector{}).Start(nil, props)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.kv, err, c.want)
		}
		if err := (&Task{}).Start(nil, props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("task %v: err = %v, want %q", c.kv, err, c.want)
		}
	}
	if err := (&Connector{}).Start(nil, map[string]string{}); err == nil || !strings.Contains(err.Error(), `"connection.url"`) {
		t.Errorf("no url: %v", err)
	}
}

func TestSinkConnectorValidate(t *testing.T) {
	db := jdbctest.SQLite(t)
	c := &Connector{}
	if errs := c.Validate(sinkProps(db)); len(errs) != 0 {
		t.Errorf("valid config: %v", errs)
	}
	cases := []struct {
		kv   []string
		key  string
		want string
	}{
		{[]string{"delete.enabled", "true"}, "pk.mode", "'none' is invalid: Deletes are only supported for pk.mode 'record_key'"},
		{[]string{"delete.enabled", "true", "pk.mode", "record_value"}, "pk.mode", "'record_value' is invalid: Deletes are only supported for pk.mode 'record_key'"},
		{[]string{"insert.mode", "update"}, "insert.mode", "'update' is invalid: UPDATE mode requires key field names to be known, check the primary key configuration (pk.mode is 'none')"},
		{[]string{"insert.mode", "UPSERT", "pk.mode", "NONE"}, "insert.mode", "'UPSERT' is invalid: UPSERT mode requires key field names to be known, check the primary key configuration (pk.mode is 'none')"},
		{[]string{"pk.mode", "kafka", "pk.fields", "t,p"}, "pk.fields", "PK mode is KAFKA so there should either be no field names defined for defaults [__connect_topic, __connect_partition, __connect_offset] to be applicable, or exactly 3, defined fields are: [t, p]"},
		{[]string{"dialect.name", "MySqlDatabaseDialect"}, "dialect.name", "The dialect MySqlDatabaseDialect does not match the JDBC URL, which names the SqliteDatabaseDialect"},
	}
	for _, tc := range cases {
		errs := c.Validate(sinkProps(db, tc.kv...))
		if !slices.Contains(errs[tc.key], tc.want) {
			t.Errorf("%v: errors %q, want %q on %s", tc.kv, errs, tc.want, tc.key)
		}
	}
	// A key invalid on its own is not judged again.
	if errs := c.Validate(sinkProps(db, "delete.enabled", "true", "pk.mode", "bogus")); len(errs["pk.mode"]) != 0 {
		t.Errorf("bogus pk.mode: %v", errs)
	}
}

func TestSinkConnectorValidateUnreachable(t *testing.T) {
	c := &Connector{}
	for _, url := range []string{
		"jdbc:postgresql://127.0.0.1:1/test?user=u&password=urlsecret",
		"jdbc:mysql://127.0.0.1:1/test?password=urlsecret",
	} {
		errs := c.Validate(map[string]string{"connection.url": url, "connection.user": "u", "connection.password": "topsecret", "connection.attempts": "1"})
		msgs := errs["connection.url"]
		if len(msgs) != 1 {
			t.Fatalf("%s: errors %v", url, errs)
		}
		if !strings.Contains(msgs[0], "127.0.0.1:1") || strings.Contains(msgs[0], "secret") {
			t.Errorf("%s: %q", url, msgs[0])
		}
	}
	// The task, too, names the database without the password.
	err := (&Task{}).Start(nil, map[string]string{"connection.url": "jdbc:postgresql://127.0.0.1:1/test?password=urlsecret",
		"connection.password": "topsecret", "connection.attempts": "2", "connection.backoff.ms": "1"})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("task Start: %v", err)
	}
}

// sinkIdlePIDs are the backend PIDs of the PostgreSQL connections sinkIdle
// holds for db.
func sinkIdlePIDs(t *testing.T, db *jdbctest.DB) []uint32 {
	t.Helper()
	return jdbctest.HeldPIDs(sinkIdle, db, func(h *sql.DB) uint32 {
		var pid uint32
		if err := h.QueryRow("SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		return pid
	})
}

func sinkTaskPID(t *testing.T, task *Task) uint32 {
	t.Helper()
	conn, err := task.connection()
	if err != nil {
		t.Fatal(err)
	}
	var pid uint32
	if err := conn.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// The connection that validated a config is the one its task starts
// with; one the server closed meanwhile is replaced.
func TestSinkHandsConnectionOver(t *testing.T) {
	db := jdbctest.Postgres(t)
	props := sinkProps(db, "auto.create", "true")
	c := &Connector{}
	if errs := c.Validate(props); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	validated := sinkIdlePIDs(t, db)
	if len(validated) != 1 {
		t.Fatalf("after Validate, idle connections %v, want 1", validated)
	}
	task, _ := sinkStart(t, db, props)
	if got := sinkTaskPID(t, task); got != validated[0] {
		t.Errorf("the task runs on backend %d, want the validated %d", got, validated[0])
	}
	if got := sinkIdlePIDs(t, db); len(got) != 0 {
		t.Errorf("idle connections %v after the task took its own", got)
	}

	if errs := c.Validate(props); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	gone := sinkIdlePIDs(t, db)
	if len(gone) != 1 {
		t.Fatalf("after Validate, idle connections %v, want 1", gone)
	}
	db.Exec(t, "SELECT pg_terminate_backend($1)", gone[0])
	task, _ = sinkStart(t, db, props)
	if got := sinkTaskPID(t, task); got == gone[0] {
		t.Errorf("the task runs on the terminated backend %d", got)
	}
	sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1))
	sinkCommit(t, task)
	if n := sinkCount(t, db, "orders"); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}

// A stopped task hands its connection on, as a restart needs it: rolled
// back, with no statement left prepared, to the next validation and the
// next task of the same database. A connection that is not healthy is
// closed instead.
func TestSinkTaskHandsConnectionOnWhenStopped(t *testing.T) {
	db := jdbctest.Postgres(t)
	props := sinkProps(db, "auto.create", "true")
	task, _ := sinkStart(t, db, props)
	first := sinkTaskPID(t, task)
	sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1))
	sinkCommit(t, task)
	sinkPut(t, task, sinkOrder(0, 1, 2, "b", 2)) // never committed
	if err := task.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if got := sinkIdlePIDs(t, db); !slices.Equal(got, []uint32{first}) {
		t.Fatalf("after Stop, idle connections %v, want the task's %d", got, first)
	}
	if n := sinkCount(t, db, "orders"); n != 1 {
		t.Errorf("%d rows after Stop, want the committed 1", n)
	}

	// Validation takes it and leaves it for the task, which finds no
	// transaction and nothing prepared, and writes.
	if errs := (&Connector{}).Validate(props); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	if got := sinkIdlePIDs(t, db); !slices.Equal(got, []uint32{first}) {
		t.Fatalf("after Validate, idle connections %v, want %d", got, first)
	}
	task, _ = sinkStart(t, db, props)
	if got := sinkTaskPID(t, task); got != first {
		t.Fatalf("the next task runs on backend %d, want the handed-on %d", got, first)
	}
	conn, err := task.connection()
	if err != nil {
		t.Fatal(err)
	}
	// The test's own queries are prepared too; the first task's are gone.
	var prepared string
	if err := conn.QueryRowContext(context.Background(), `SELECT COALESCE(string_agg(statement, '; '), '') FROM pg_prepared_statements
WHERE statement NOT LIKE '%pg_prepared_statements%' AND statement NOT LIKE '%pg_backend_pid%'`).Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	if prepared != "" {
		t.Errorf("statements still prepared on the handed-on connection: %s", prepared)
	}
	sinkPut(t, task, sinkOrder(0, 1, 2, "b", 2))
	sinkCommit(t, task)
	if n := sinkCount(t, db, "orders"); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}

	// The server ends the task's connection (waiting until it is gone):
	// Stop closes it.
	db.Exec(t, "SELECT pg_terminate_backend($1, 10000)", first)
	if err := task.Stop(); err != nil {
		t.Logf("Stop: %v", err)
	}
	if got := sinkIdlePIDs(t, db); len(got) != 0 {
		t.Errorf("after Stop on a terminated connection, idle connections %v, want none", got)
	}
}
