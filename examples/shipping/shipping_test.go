package shipping_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd"
	"github.com/connectd/connectd/internal/servertest"
)

// The test runs the worker as a child process of its own binary, so that
// it can kill -9 it without building connectd first.
const workerEnv = "SHIPPING_TEST_RUN_CONNECTD"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		if connectd.RunCLI(connectd.Builtin()) != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// need skips the test when a program the example needs is missing, and
// fails it under CI=true, where everything must be installed.
func need(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is needed under CI: %v", what, err)
	}
	t.Skipf("%s: %v", what, err)
}

// pipeline is the example as run.sh runs it, on ports and in a schema of
// the test's own.
type pipeline struct {
	t        *testing.T
	dir      string
	pgDir    string
	shopPort int
	restAddr string
	schema   string
	shop     *sql.DB
	test     *sql.DB
	args     []string
	worker   *exec.Cmd
	exited   chan struct{}
	logs     *servertest.SyncBuffer
}

func startPipeline(t *testing.T) *pipeline {
	for _, prog := range []string{"psql", "curl", "bash"} {
		_, err := exec.LookPath(prog)
		need(t, prog+" is not installed", err)
	}
	test, schema := servertest.PGSchema(t, "shipping")
	p := &pipeline{t: t, dir: t.TempDir(), schema: schema, test: test, shopPort: servertest.FreePort(t)}

	// The cluster runs as postgres when the test runs as root: its
	// directory must be reachable by that user, which t.TempDir's is not.
	var err error
	p.pgDir, err = os.MkdirTemp("", "shipping-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p.pgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("bash", "pg.sh", "stop", p.pgDir).Run()
		os.RemoveAll(p.pgDir)
	})
	out, err := exec.Command("bash", "pg.sh", "start", p.pgDir, strconv.Itoa(p.shopPort)).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
		need(t, "a throwaway PostgreSQL cluster", fmt.Errorf("%s", out))
	}
	if err != nil {
		t.Fatalf("pg.sh start: %v\n%s", err, out)
	}
	p.shop, err = sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/shop", p.shopPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.shop.Close() })

	restPort, kafkaPort := servertest.FreePort(t), servertest.FreePort(t)
	p.restAddr = fmt.Sprintf("127.0.0.1:%d", restPort)
	props := p.adapt("worker.properties", map[string]string{
		"listeners=http://:8083":        fmt.Sprintf("listeners=http://%s", p.restAddr),
		"127.0.0.1:9092":                fmt.Sprintf("127.0.0.1:%d", kafkaPort),
		"connectd-data/shipping/":       p.dir + "/",
		"offset.flush.interval.ms=1000": "offset.flush.interval.ms=200",
	})
	p.args = []string{"standalone", props, p.adapt("orders-source.json", nil), p.adapt("orders-sink.json", nil)}
	p.startWorker()
	return p
}

// adapt copies one of the example's files into the test's directory with
// the test's ports, directories and schema.
func (p *pipeline) adapt(name string, extra map[string]string) string {
	p.t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		p.t.Fatal(err)
	}
	s := p.localize(string(b))
	for from, to := range extra {
		if !strings.Contains(s, from) {
			p.t.Fatalf("%s no longer holds %q", name, from)
		}
		s = strings.ReplaceAll(s, from, to)
	}
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// localize turns the example's ports and schema into the test's.
func (p *pipeline) localize(s string) string {
	s = strings.ReplaceAll(s, "54329", strconv.Itoa(p.shopPort))
	s = strings.ReplaceAll(s, "localhost:8083", p.restAddr)
	return strings.ReplaceAll(s, "analytics.", p.schema+".")
}

func (p *pipeline) startWorker() {
	p.t.Helper()
	cmd := exec.Command(os.Args[0], p.args...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	p.logs = &servertest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.worker, p.exited = cmd, make(chan struct{})
	exited := p.exited
	go func() { cmd.Wait(); close(exited) }()
	logs := p.logs
	p.t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if p.t.Failed() {
			p.t.Logf("worker log:\n%s", logs.String())
		}
	})
	p.eventually("both connectors and their tasks RUNNING", func() bool {
		resp, err := http.Get("http://" + p.restAddr + "/connectors?expand=status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return strings.Count(buf.String(), `"RUNNING"`) == 4
	})
}

// kill is kill -9 of the worker.
func (p *pipeline) kill() {
	p.t.Helper()
	if err := p.worker.Process.Kill(); err != nil {
		p.t.Fatal(err)
	}
	<-p.exited
}

func (p *pipeline) eventually(what string, cond func() bool) {
	p.t.Helper()
	servertest.Eventually(p.t, what, 30*time.Second, cond)
}

// readmeSteps returns README.md's command blocks by the name of the
// <!-- step: NAME --> comment before each.
func readmeSteps(t *testing.T) (map[string]string, []string) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- step: ([a-z-]+) -->\n```sh\n(.*?)```")
	steps := map[string]string{}
	var order []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		steps[m[1]] = m[2]
		order = append(order, m[1])
	}
	return steps, order
}

// run runs a README block with bash, each command failing the block if it
// fails: curl fails on an HTTP error status and psql on an SQL error.
func (p *pipeline) run(name, block string) string {
	p.t.Helper()
	prelude := `curl() { command curl --fail-with-body -sS "$@"; }
psql() { command psql -X -v ON_ERROR_STOP=1 "$@"; }
`
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", prelude+p.localize(block))
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("README step %s: %v\n%s", name, err, out)
	}
	return string(out)
}

// rows reads a table's orders, one line per row, in id order.
func rows(db *sql.DB, table, where string) ([]string, error) {
	rs, err := db.Query("SELECT id, customer, item, quantity, amount::text, status FROM " + table + " " + where + " ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id, qty int
		var customer, item, amount, status string
		if err := rs.Scan(&id, &customer, &item, &qty, &amount, &status); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%d|%s|%s|%d|%s|%s", id, customer, item, qty, amount, status))
	}
	return out, rs.Err()
}

// expectAnalytics waits until analytics.orders holds exactly the shop's
// orders (those where says), row by row, and returns them.
func (p *pipeline) expectAnalytics(when, where string) []string {
	p.t.Helper()
	var want, got []string
	var err error
	servertest.Eventually(p.t, "analytics.orders matching the shop "+when, 30*time.Second, func() bool {
		if want, err = rows(p.shop, "orders", where); err != nil {
			p.t.Fatalf("reading the shop: %v", err)
		}
		got, err = rows(p.test, p.schema+".orders", "")
		return err == nil && slices.Equal(got, want)
	})
	return got
}

// The example end to end: README.md's commands in order, analytics.orders
// checked against the shop after each, then a kill -9 of the worker.
func TestShippingPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs PostgreSQL clusters and the worker as a process")
	}
	steps, order := readmeSteps(t)
	if want := []string{"changes", "wrong-table", "fix-and-reprocess", "bad-row", "reset"}; !slices.Equal(order, want) {
		t.Fatalf("README.md's steps are %v, want %v", order, want)
	}
	p := startPipeline(t)

	initial := p.expectAnalytics("after the snapshot", "")
	if len(initial) != 4 {
		t.Fatalf("snapshot: %d rows, want the 4 of shop.sql: %v", len(initial), initial)
	}

	p.run("changes", steps["changes"])
	got := p.expectAnalytics("after an insert, an update and a delete", "")
	if !slices.Contains(got, "1|acme|pallet jack|2|1180.00|SHIPPED") || slices.ContainsFunc(got, func(r string) bool { return strings.HasPrefix(r, "2|") }) {
		t.Fatalf("after the changes: %v", got)
	}

	// Surface 1: the new order lands in the wrong table only.
	before := got
	p.run("wrong-table", steps["wrong-table"])
	p.eventually("stark's order in analytics.shipments", func() bool {
		r, err := rows(p.test, p.schema+".shipments", "WHERE customer = 'stark'")
		return err == nil && len(r) == 1
	})
	if got, err := rows(p.test, p.schema+".orders", ""); err != nil || !slices.Equal(got, before) {
		t.Fatalf("analytics.orders changed while the sink wrote elsewhere: %v %v", got, err)
	}
	p.run("fix-and-reprocess", steps["fix-and-reprocess"])
	got = p.expectAnalytics("after reprocessing from offset 0", "")
	if !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "|stark|") }) {
		t.Fatalf("stark's order not reprocessed: %v", got)
	}

	// Surface 2: the corrupt row is skipped, the next one arrives.
	p.run("bad-row", steps["bad-row"])
	got = p.expectAnalytics("but the corrupt row after advancing the source", "WHERE status <> 'CORRUPT'")
	if !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, "|wayne|") }) {
		t.Fatalf("wayne's order missing: %v", got)
	}

	// Surface 3: from an empty table, the new snapshot restores it.
	p.run("reset", steps["reset"])
	got = p.expectAnalytics("after the reset", "")
	if len(got) != len(initial)+2 { // hooli, stark and wayne added, globex deleted
		t.Fatalf("after the reset: %v", got)
	}

	// A crash before the new snapshot's offset is durable would snapshot
	// once more, and a row deleted meanwhile would stay in analytics (as
	// with Debezium): the burst starts once the source has an offset.
	p.eventually("the source's offset after the new snapshot", func() bool {
		resp, err := http.Get("http://" + p.restAddr + "/connectors/orders-source/offsets")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return strings.Contains(buf.String(), `"lsn"`)
	})

	// A burst of changes, then kill -9 before they all got through.
	for _, q := range []string{
		`INSERT INTO orders (customer, item, quantity, amount) SELECT 'bulk-' || g, 'box', g, g * 1.5 FROM generate_series(1, 200) g`,
		`UPDATE orders SET status = 'PACKED' WHERE customer LIKE 'bulk-%' AND quantity % 3 = 0`,
		`DELETE FROM orders WHERE customer LIKE 'bulk-%' AND quantity % 5 = 0`,
		`UPDATE orders SET quantity = quantity + 1 WHERE id = 1`,
	} {
		servertest.MustExec(t, p.shop, q)
	}
	p.kill()
	p.startWorker()
	got = p.expectAnalytics("after kill -9 and a restart", "")
	if len(got) != len(initial)+2+200-40 {
		t.Fatalf("after the crash: %d rows", len(got))
	}
	servertest.MustExec(t, p.shop, `DELETE FROM orders WHERE customer LIKE 'bulk-%' AND quantity % 2 = 0`)
	servertest.MustExec(t, p.shop, `INSERT INTO orders (customer, item, quantity, amount) VALUES ('after', 'crash', 1, 1.00)`)
	got = p.expectAnalytics("after changes once restarted", "")
	if len(got) != len(initial)+2+200-40-80+1 {
		t.Fatalf("after the restart's changes: %d rows", len(got))
	}
}
