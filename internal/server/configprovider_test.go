package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
)

// Config providers end to end: the worker's own config and two JDBC sinks
// take their database login from a properties file and from an
// environment variable; rows arrive; the password appears in no REST
// answer and in no log line; a placeholder that cannot resolve is an
// error naming it.
func TestConfigProvidersJdbcSink(t *testing.T) {
	db, schema := servertest.PGSchema(t, "providers")
	for _, table := range []string{"from_file", "from_env"} {
		servertest.MustExec(t, db, "CREATE TABLE "+schema+"."+table+" (id BIGINT PRIMARY KEY, qty BIGINT NOT NULL)")
	}
	dir := t.TempDir()
	secret := fmt.Sprintf("pw-%d-secret", time.Now().UnixNano())
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("user=postgres\npassword="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONNECTD_TEST_PG_PASSWORD", secret)
	// A role that does not exist: PostgreSQL's refusal quotes it.
	t.Setenv("CONNECTD_TEST_PG_ROLE", "role-"+secret)
	t.Setenv("CONNECTD_TEST_HOST", "host-from-env")
	t.Setenv("CONNECTD_TEST_HIDDEN", "not allowed")

	logs := &servertest.SyncBuffer{}
	w := startWorkerLogging(t, dir, logs, map[string]string{
		// KIP-421: the worker's own config.
		"rest.advertised.host.name":                    "${env:CONNECTD_TEST_HOST}",
		"value.converter":                              "org.apache.kafka.connect.json.JsonConverter",
		"config.providers":                             "file,env",
		"config.providers.file.class":                  "org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.file.param.allowed.paths":    dir,
		"config.providers.env.class":                   "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.env.param.allowlist.pattern": "CONNECTD_TEST_(PG|HOST).*",
	})

	var values []string
	for i := range 3 {
		values = append(values, fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"qty"}],"optional":false,"name":"order"},"payload":{"id":%d,"qty":%d}}`, i+1, 10*(i+1)))
	}
	produceValues(t, w, "orders-in", values...)
	sink := func(name, table, user, password string) string {
		return jsonString(map[string]any{"name": name, "config": map[string]string{
			"connector.class":     "io.confluent.connect.jdbc.JdbcSinkConnector",
			"connection.url":      "jdbc:postgresql://127.0.0.1:5432/test",
			"connection.user":     user,
			"connection.password": password,
			"key.converter":       "org.apache.kafka.connect.storage.StringConverter",
			"topics":              "orders-in",
			"table.name.format":   schema + "." + table,
			"pk.mode":             "record_value",
			"pk.fields":           "id",
		}})
	}
	fromFile := "${file:" + secrets + ":password}"
	w.must(201, "POST", "/connectors", sink("sink-file", "from_file", "${file:"+secrets+":user}", fromFile))
	w.must(201, "POST", "/connectors", sink("sink-env", "from_env", "postgres", "${env:CONNECTD_TEST_PG_PASSWORD}"))
	for _, table := range []string{"from_file", "from_env"} {
		eventually(t, "3 rows in "+table, func() bool {
			var n int
			return db.QueryRow("SELECT count(*) FROM "+schema+"."+table).Scan(&n) == nil && n == 3
		})
	}

	// A database's refusals quote the role, from a provider: hidden. At
	// create, while it does not exist; then in a task's trace, once it
	// exists but may not log in.
	role := "role-" + secret
	failing := sink("sink-role", "from_env", "${env:CONNECTD_TEST_PG_ROLE}", "unused")
	failing = strings.Replace(failing, `"connector.class"`, `"connection.attempts":"1","connector.class"`, 1)
	code, refused := w.do("POST", "/connectors", failing)
	if code != 400 || !strings.Contains(refused, `role \"[hidden]\" does not exist`) {
		t.Errorf("creating a connector whose role does not exist: %d %s", code, refused)
	}
	servertest.MustExec(t, db, `CREATE ROLE "`+role+`" LOGIN`)
	t.Cleanup(func() { db.Exec(`DROP ROLE IF EXISTS "` + role + `"`) })
	w.must(201, "POST", "/connectors", strings.Replace(failing, `"config"`, `"initial_state":"STOPPED","config"`, 1))
	// The validation's connection, handed over to the task, goes too.
	servertest.MustExec(t, db, `ALTER ROLE "`+role+`" NOLOGIN`)
	servertest.MustExec(t, db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role)
	w.must(202, "PUT", "/connectors/sink-role/resume", "")
	var trace string
	eventually(t, "sink-role's task FAILED", func() bool {
		_, trace = w.do("GET", "/connectors/sink-role/tasks/0/status", "")
		return strings.Contains(trace, `"FAILED"`)
	})
	if !strings.Contains(trace, `role \"[hidden]\" is not permitted to log in`) {
		t.Errorf("the failed task's trace does not hide the role: %s", trace)
	}

	// Every answer about them shows the placeholders, never the password.
	answers := []string{trace, refused}
	for _, path := range []string{"/connectors?expand=info&expand=status", "/connectors/sink-file", "/connectors/sink-file/config",
		"/connectors/sink-file/tasks", "/connectors/sink-file/status", "/connectors/sink-env/tasks", "/connectors/sink-env/tasks/0/status"} {
		answers = append(answers, w.must(200, "GET", path, ""))
	}
	if !strings.Contains(answers[4], `"connection.password":"${file:`+secrets+`:password}"`) {
		t.Errorf("GET /config does not show the placeholder: %s", answers[4])
	}
	if !strings.Contains(answers[6], `"worker_id":"host-from-env:`) {
		t.Errorf("the worker's rest.advertised.host.name from the environment: %s", answers[6])
	}
	if !strings.Contains(answers[7], "${env:CONNECTD_TEST_PG_PASSWORD}") {
		t.Errorf("GET /tasks does not show the placeholder: %s", answers[7])
	}
	validate := func(password string) string {
		return w.must(200, "PUT", "/connector-plugins/io.confluent.connect.jdbc.JdbcSinkConnector/config/validate", jsonString(map[string]string{
			"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "name": "v", "topics": "orders-in",
			"connection.url": "jdbc:postgresql://127.0.0.1:5432/test", "connection.user": "postgres", "connection.password": password,
		}))
	}
	answers = append(answers, validate(fromFile))
	if !strings.Contains(answers[len(answers)-1], `"error_count":0`) {
		t.Errorf("validate with a placeholder that resolves: %s", answers[len(answers)-1])
	}
	// A placeholder that cannot resolve is an error of its key.
	for password, want := range map[string]string{
		"${vault:db:password}":           "names config provider vault, which the worker does not configure",
		"${env:CONNECTD_TEST_PG_NOPE}":   "environment variable CONNECTD_TEST_PG_NOPE is not set",
		"${env:CONNECTD_TEST_HIDDEN}":    "environment variable CONNECTD_TEST_HIDDEN is not allowed by allowlist.pattern",
		"${file:" + secrets + ":nope}":   secrets + " has no key nope",
		"${file:/etc/hostname:password}": "path /etc/hostname is not in allowed.paths",
	} {
		body := validate(password)
		if !strings.Contains(body, `"error_count":1`) || !strings.Contains(body, want) {
			t.Errorf("validate %s: %s\nwant an error with %q", password, body, want)
		}
		answers = append(answers, body)
	}
	code, body := w.do("POST", "/connectors", sink("sink-bad", "from_env", "postgres", "${env:CONNECTD_TEST_PG_NOPE}"))
	if code != 400 || !strings.Contains(body, "CONNECTD_TEST_PG_NOPE is not set") {
		t.Errorf("creating a connector whose placeholder does not resolve: %d %s", code, body)
	}
	for i, a := range answers {
		if strings.Contains(a, secret) || strings.Contains(a, "[hidden]ist") {
			t.Errorf("answer %d shows the password: %s", i, a)
		}
	}
	w.close()
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, secret) {
			t.Errorf("a log line shows the secret: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "sink-file") {
		t.Errorf("the logs say nothing of the connectors:\n%.2000s", logs.String())
	}
}
