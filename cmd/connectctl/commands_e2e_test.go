package main

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
)

// Every connector, plugin and logger command against a real worker.
func TestConnectorCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lineRange(1, 3)...)

	props := writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n")
	if r := c.ok("apply", "-f", props); r.stdout != "connector src created\n" {
		t.Errorf("apply:\n%s", r)
	}
	if r := c.ok("apply", "-f", props); r.stdout != "connector src unchanged\n" {
		t.Errorf("apply again:\n%s", r)
	}
	props2 := writeFile(t, "src2.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines2\nfile="+in+"\nbatch.size=10\n")
	if r := c.ok("apply", "-f", props2, "--dry-run"); r.stdout != "connector src would be configured (changed: batch.size, topic) (dry run)\n" {
		t.Errorf("apply --dry-run:\n%s", r)
	}
	if r := c.ok("apply", "-f", props2); r.stdout != "connector src configured (changed: batch.size, topic)\n" {
		t.Errorf("apply a change:\n%s", r)
	}
	bad := writeFile(t, "bad.json", `{"name":"bad","connector.class":"FileStreamSource","file":"/x"}`)
	r := c.fail("apply", "-f", bad, "--dry-run")
	mustContain(t, "apply --dry-run of a bad config", r.stdout, "KEY", "topic", `Missing required configuration "topic" which has no default value.`)
	mustContain(t, "apply --dry-run of a bad config", r.stderr, "Error: connector bad: the config has 1 error(s)")
	r = c.fail("apply", "-f", bad)
	mustContain(t, "apply of a bad config", r.stderr, "Error: Connector configuration is invalid and contains the following 1 error(s):")
	sink := writeFile(t, "sink.json", fmt.Sprintf(`{"name":"sink","config":{"connector.class":"FileStreamSink","topics":"lines2","file":%q},"initial_state":"PAUSED"}`, filepath.Join(dir, "out.txt")))
	if r := c.ok("apply", "-f", sink); r.stdout != "connector sink created (PAUSED)\n" {
		t.Errorf("apply with initial_state:\n%s", r)
	}
	eventually(t, "both connectors up", func() bool {
		return state(rc, "src") == "RUNNING/RUNNING" && state(rc, "sink") == "PAUSED"
	})

	r = c.ok("get", "connectors")
	want := "NAME   STATE     TASKS   TYPE     EXACTLY-ONCE\n" +
		"sink   PAUSED    0/0     sink     -\n" +
		"src    RUNNING   1/1     source   no\n"
	if r.stdout != want {
		t.Errorf("get connectors:\n%s\nwant:\n%s", r.stdout, want)
	}
	if r := c.ok("connectors", "list"); r.stdout != want {
		t.Errorf("connectors list:\n%s", r.stdout)
	}
	r = c.ok("get", "connectors", "-o", "yaml")
	mustContain(t, "get connectors -o yaml", r.stdout, "sink:\n  status:\n    name: sink\n    connector:\n      state: PAUSED\n")
	r = c.ok("describe", "src")
	mustContain(t, "describe", r.stdout, "Name:     src\nType:     source\nClass:    FileStreamSource\nState:    RUNNING\n",
		"Topics:   lines", "\nConfig:\n  KEY               VALUE\n  batch.size        10\n", "\nTasks:\n  ID   STATE     WORKER\n  0    RUNNING   ")
	r = c.ok("describe", "src", "-o", "json")
	var desc client.ConnectorExpanded
	if err := json.Unmarshal([]byte(r.stdout), &desc); err != nil || desc.Info.Config["topic"] != "lines2" || desc.Status.Connector.State != "RUNNING" {
		t.Errorf("describe -o json: %v\n%s", err, r.stdout)
	}

	r = c.ok("patch", "config", "src", "--set", "topic=lines", "--unset", "batch.size")
	if r.stdout != "connector src patched (batch.size, topic)\n" {
		t.Errorf("patch:\n%s", r)
	}
	if cfg, _ := rc.Config(t.Context(), "src"); cfg["topic"] != "lines" || cfg["batch.size"] != "" {
		t.Errorf("config after patch: %v", cfg)
	}
	r = c.fail("patch", "config", "src", "--set", "nokey")
	mustContain(t, "patch --set without =", r.stderr, `Error: --set "nokey": want KEY=VALUE`)

	for _, step := range []struct{ verb, out, state string }{
		{"pause", "connector src paused\n", "PAUSED/PAUSED"},
		{"resume", "connector src resumed\n", "RUNNING/RUNNING"},
		{"stop", "connector src stopped\n", "STOPPED"},
		{"resume", "connector src resumed\n", "RUNNING/RUNNING"},
	} {
		if r := c.ok(step.verb, "src"); r.stdout != step.out {
			t.Errorf("%s:\n%s", step.verb, r)
		}
		eventually(t, "src "+step.state, func() bool { return state(rc, "src") == step.state })
	}
	if r := c.ok("restart", "src"); r.stdout != "connector src restarted\n" {
		t.Errorf("restart:\n%s", r)
	}
	r = c.ok("restart", "src", "--include-tasks")
	mustContain(t, "restart --include-tasks", r.stdout, "restart of connector src requested\nINSTANCE    STATE        WORKER\nconnector   RESTARTING   ", "task 0      RESTARTING   ")
	eventually(t, "src running again", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })

	eventually(t, "the topic tracked", func() bool {
		return strings.Contains(c.ok("topics", "src").stdout, "lines\n")
	})
	r = c.ok("topics", "src", "-o", "json")
	mustContain(t, "topics -o json", r.stdout, `"src": {`, `"lines"`)
	if r := c.ok("topics", "src", "--reset"); r.stdout != "active topics of connector src reset\n" {
		t.Errorf("topics --reset:\n%s", r)
	}

	r = c.ok("plugins")
	mustContain(t, "plugins", r.stdout, "CLASS", "org.apache.kafka.connect.file.FileStreamSourceConnector   source")
	r = c.ok("plugins", "list", "--all", "-o", "json")
	mustContain(t, "plugins --all", r.stdout, `"type": "converter"`)
	r = c.ok("plugins", "describe", "FileStreamSource")
	mustContain(t, "plugins describe", r.stdout, "NAME", "DOCUMENTATION", "topic ", "yes")
	r = c.fail("plugins", "describe", "Nope")
	mustContain(t, "plugins describe Nope", r.stderr, "Error: Unknown plugin Nope.", "hint: list the installed plugins with: connectctl plugins")
	r = c.ok("plugins", "validate", "-f", props)
	mustContain(t, "plugins validate", r.stdout, "config valid for FileStreamSource (")
	noName := writeFile(t, "noname.properties", "connector.class=FileStreamSource\nfile=/x\n")
	r = c.fail("plugins", "validate", "-f", noName)
	mustContain(t, "plugins validate without topic", r.stdout, "topic", "Missing required configuration")
	mustContain(t, "plugins validate without topic", r.stderr, "Error: the config has 2 error(s)") // name and topic

	r = c.ok("loggers", "set", "org.apache.kafka.connect", "debug")
	mustContain(t, "loggers set", r.stdout, "level of org.apache.kafka.connect set to DEBUG (")
	r = c.ok("loggers", "get")
	mustContain(t, "loggers get", r.stdout, "LOGGER", "\norg.apache.kafka.connect     ", "   DEBUG   ", "root")
	r = c.ok("loggers", "get", "org.apache.kafka.connect", "-o", "json")
	mustContain(t, "loggers get one", r.stdout, `"level": "DEBUG"`)
	r = c.ok("loggers", "set", "org.apache.kafka.connect", "INFO", "--scope", "cluster")
	mustContain(t, "loggers set --scope cluster", r.stdout, "set to INFO on every worker of the cluster")

	// Shell completion: the script, and connector names from the worker.
	r = c.ok("completion", "bash")
	mustContain(t, "completion bash", r.stdout, "connectctl")
	r = c.ok("__complete", "pause", "")
	mustContain(t, "dynamic completion", r.stdout, "sink\nsrc\n")

	if r := c.ok("delete", "sink"); r.stdout != "connector sink deleted\n" {
		t.Errorf("delete:\n%s", r)
	}
	r = c.fail("describe", "sink")
	if r.stderr != "Error: Connector sink not found\nhint: list the connectors with: connectctl get connectors\n" {
		t.Errorf("describe a deleted connector:\n%s", r)
	}
	r = c.fail("offsets", "get", "sink")
	mustContain(t, "offsets of a deleted connector", r.stderr, "hint: list the connectors with: connectctl get connectors")
}

// Contexts in the config file, basic auth and TLS, through an HTTPS proxy
// that requires a password in front of a real worker.
func TestContextsAuthAndTLS(t *testing.T) {
	t.Parallel()
	w := standalone(t, t.TempDir(), nil)
	plainURL := "http://" + w.RESTAddr
	target, _ := url.Parse(plainURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(401)
			io.WriteString(rw, `{"error_code":401,"message":"User cannot access the resource."}`)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	c := newCLI(t, "")

	r := c.ok("config", "set-context", "secure", "--url", srv.URL, "--user", "admin", "--password", "s3cret", "--ca-file", ca, "--bootstrap-server", w.Broker.Addr())
	if r.stdout != "context \"secure\" created (now the current context)\n" {
		t.Errorf("set-context:\n%s", r)
	}
	c.ok("config", "set-context", "plain", "--url", plainURL)
	path := filepath.Join(c.home, ".config", "connectctl", "config.yaml")
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", st, err)
	}
	r = c.ok("config", "get-contexts")
	want := "CURRENT   NAME     URL" + strings.Repeat(" ", len(srv.URL)-3+3) + "USER\n" +
		"*         secure   " + srv.URL + "   admin\n" +
		"          plain    " + plainURL + strings.Repeat(" ", len(srv.URL)-len(plainURL)+3) + "-\n"
	if r.stdout != want {
		t.Errorf("get-contexts:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = c.ok("config", "get-contexts", "-o", "json")
	if strings.Contains(r.stdout, "s3cret") || !strings.Contains(r.stdout, `"password": "********"`) {
		t.Errorf("get-contexts -o json shows the password:\n%s", r.stdout)
	}
	// Through the current context: HTTPS, the CA file, basic auth.
	r = c.ok("get", "connectors")
	if r.stdout != "NAME   STATE   TASKS   TYPE   EXACTLY-ONCE\n" {
		t.Errorf("get connectors through the proxy:\n%s", r)
	}
	c.ok("--context", "plain", "get", "connectors")
	// The context's bootstrap server serves --to-datetime and friends.
	adm, err := kgo.NewClient(kgo.SeedBrokers(w.Broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	if _, err := kadm.NewClient(adm).CreateTopic(t.Context(), 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	c.ok("apply", "-f", writeFile(t, "s.json", `{"name":"s","connector.class":"FileStreamSink","topics":"t","file":"`+filepath.Join(t.TempDir(), "o")+`"}`))
	r = c.ok("offsets", "set", "s", "--to-datetime", "2026-01-01T00:00:00Z", "--topic", "t", "--yes", "--dry-run")
	mustContain(t, "to-datetime with the context's bootstrap", r.stdout, `+ {"kafka_partition":0,"kafka_topic":"t"} {"kafka_offset":0}`)

	r = c.ok("config", "use-context", "plain")
	if r.stdout != "switched to context \"plain\"\n" || c.ok("config", "current-context").stdout != "plain\n" {
		t.Errorf("use-context:\n%s", r)
	}
	r = c.fail("config", "use-context", "nope")
	mustContain(t, "use-context nope", r.stderr, `Error: no context "nope"`, "hint: create it with: connectctl config set-context nope --url URL")

	// $CONNECT_URL wins over the current context, --url over both.
	c.env["CONNECT_URL"] = "http://127.0.0.1:1"
	r = c.fail("get", "connectors")
	mustContain(t, "refused connection", r.stderr, "connection refused", "hint: is a worker listening at http://127.0.0.1:1?")
	c.ok("--url", plainURL, "get", "connectors")
	c.ok("--context", "secure", "get", "connectors")
	delete(c.env, "CONNECT_URL")

	// TLS and auth problems come with their hint.
	r = c.fail("--url", srv.URL, "get", "connectors")
	mustContain(t, "unknown CA", r.stderr, "x509", "hint: the worker's TLS certificate is not trusted: pass --ca-file FILE")
	r = c.fail("--url", srv.URL, "--insecure-skip-tls-verify", "get", "connectors")
	if r.stderr != "Error: User cannot access the resource.\nhint: check the credentials: --user and --password, or connectctl config set-context NAME --user U --password P\n" {
		t.Errorf("no credentials:\n%s", r)
	}
	c.ok("--url", srv.URL, "--insecure-skip-tls-verify", "--user", "admin", "--password", "s3cret", "get", "connectors")
	c.env["CONNECT_USER"], c.env["CONNECT_PASSWORD"] = "admin", "s3cret"
	c.ok("--url", srv.URL, "--ca-file", ca, "get", "connectors")
	delete(c.env, "CONNECT_USER")
	delete(c.env, "CONNECT_PASSWORD")

	// $XDG_CONFIG_HOME and --config move the file.
	xdg := t.TempDir()
	c.env["XDG_CONFIG_HOME"] = xdg
	r = c.ok("config", "get-contexts")
	if r.stdout != "CURRENT   NAME   URL   USER\n" {
		t.Errorf("contexts under an empty $XDG_CONFIG_HOME:\n%s", r)
	}
	c.ok("config", "set-context", "x", "--url", plainURL)
	if _, err := os.Stat(filepath.Join(xdg, "connectctl", "config.yaml")); err != nil {
		t.Errorf("set-context with $XDG_CONFIG_HOME: %v", err)
	}
	r = c.ok("--config", path, "config", "current-context")
	if r.stdout != "plain\n" {
		t.Errorf("--config:\n%s", r)
	}
	c.ok("config", "delete-context", "x")
	r = c.fail("--config", filepath.Join(xdg, "missing.yaml"), "config", "get-contexts")
	mustContain(t, "--config of a missing file", r.stderr, "Error: reading the config file:")
	r = c.fail("--context", "nope", "get", "connectors")
	mustContain(t, "--context nope", r.stderr, "Error: no context \"nope\" in the config file")
}
