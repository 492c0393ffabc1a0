package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
)

// browserTools finds Chromium, Node.js and playwright-core, or says what
// is missing: the test skips then, except under CI=true, where .ci/run
// installed them.
func browserTools(t *testing.T) (node, script string) {
	t.Helper()
	script, _ = filepath.Abs(filepath.Join("browsertest", "console.mjs"))
	var missing []string
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, "Chromium ("+chromium+"; apt-get install chromium)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "Node.js")
	}
	if _, err := os.Stat(filepath.Join("browsertest", "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "playwright-core (npm ci --prefix internal/console/browsertest)")
	}
	if len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the browser test needs %s", strings.Join(missing, ", "))
		}
		t.Skipf("the browser test needs %s", strings.Join(missing, ", "))
	}
	return node, script
}

// The console in a real browser against a standalone worker on the
// embedded broker: a connector's offsets changed through the safe flow
// and undone, a consumer group reset, a connector created; the worker's
// state is checked after the browser is done.
func TestConsoleInBrowser(t *testing.T) {
	node, script := browserTools(t)
	dir := t.TempDir()
	w, err := server.StartStandalone(context.Background(), map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":     "100",
		"key.converter":                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":              "org.apache.kafka.connect.storage.StringConverter",
	}, nil, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	base := "http://" + w.RESTAddr
	ctx := context.Background()
	rc, err := client.New(base)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.txt")
	servertest.WriteLines(t, in, "line-001", "line-002", "line-003", "line-004", "line-005", "line-006", "line-007", "line-008", "line-009", "line-010")
	if _, err := rc.CreateConnector(ctx, "src", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"}, "", nil); err != nil {
		t.Fatal(err)
	}
	position := func(name string) string {
		o, err := rc.Offsets(ctx, name)
		if err != nil || len(o) != 1 {
			return fmt.Sprint(o, err)
		}
		return fmt.Sprint(o[0].Offset["position"])
	}
	deadline := time.Now().Add(30 * time.Second)
	for position("src") != "90" {
		if time.Now().After(deadline) {
			t.Fatalf("the source's offsets: %s", position("src"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Paused, the source keeps the offsets the browser gives it (running,
	// it would read on from them); the safe flow stops it first and
	// pauses it again after.
	if err := rc.Pause(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	for st, _ := rc.Status(ctx, "src"); st == nil || st.Connector.State != "PAUSED" || len(st.Tasks) != 1 || st.Tasks[0].State != "PAUSED"; st, _ = rc.Status(ctx, "src") {
		if time.Now().After(deadline) {
			t.Fatalf("src not paused: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// An application's group that read 7 of the 10 lines.
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.Broker.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var os7 kadm.Offsets
	os7.AddOffset("lines", 0, 7, -1)
	if err := adm.CommitAllOffsets(ctx, "billing", os7); err != nil {
		t.Fatal(err)
	}

	artifacts, _ := filepath.Abs(filepath.Join("..", "..", "test-artifacts", "console"))
	params, _ := json.Marshal(map[string]any{"connector": "src", "from": 90, "to": 30, "group": "billing", "file": filepath.Join(dir, "new.txt")})
	cmd := exec.Command(node, script, base, artifacts, string(params))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the browser run failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)

	// What the browser did, seen from the worker and Kafka.
	if got := position("src"); got != "90" {
		t.Errorf("after the change and its undo the source is at %s, want 90", got)
	}
	if st, err := rc.Status(ctx, "src"); err != nil || st.Connector.State != "PAUSED" {
		t.Errorf("after the changes src is %+v, %v; want PAUSED again", st, err)
	}
	fetched, err := adm.FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup("lines", 0); o.At != 0 {
		t.Errorf("billing after its reset to earliest: %d, want 0", o.At)
	}
	if info, err := rc.Connector(ctx, "made-in-console"); err != nil || info.Config["topic"] != "console-lines" {
		t.Errorf("the connector created in the console: %+v, %v", info, err)
	}
	shots, _ := filepath.Glob(filepath.Join(artifacts, "*.png"))
	if len(shots) < 10 {
		t.Errorf("%d screenshots in %s, want one per page (10)", len(shots), artifacts)
	}
}
