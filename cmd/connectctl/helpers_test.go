package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
)

// The end-to-end tests run connectctl against real connectd workers
// started in-process (internal/server), each with its embedded Kafka
// broker unless said otherwise, over real HTTP.

// standalone starts a standalone connectd worker with its own embedded
// broker, in dir.
func standalone(t *testing.T, dir string, extra map[string]string) *server.Standalone {
	t.Helper()
	props := map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":     "100",
		"key.converter":                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":              "org.apache.kafka.connect.storage.StringConverter",
	}
	for k, v := range extra {
		props[k] = v
	}
	s, err := server.StartStandalone(context.Background(), props, nil, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
	if err != nil {
		t.Fatalf("starting a standalone worker: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// distributed starts a one-worker connectd cluster on bootstrap.
// startBroker starts an embedded broker with its data in the test's
// directory, closed with the test, and returns its address.
func startBroker(t *testing.T) string {
	t.Helper()
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(t.TempDir(), "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addr()
}

func distributed(t *testing.T, bootstrap string) *server.Distributed {
	t.Helper()
	return distributedWith(t, bootstrap, nil)
}

// distributedWith is distributed with extra (or other) worker properties.
func distributedWith(t *testing.T, bootstrap string, extra map[string]string) *server.Distributed {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers":                 bootstrap,
		"listeners":                         "http://127.0.0.1:0",
		"group.id":                          "connect-cluster",
		"config.storage.topic":              "connect-configs",
		"offset.storage.topic":              "connect-offsets",
		"status.storage.topic":              "connect-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"offset.flush.interval.ms":          "100",
		"heartbeat.interval.ms":             "300",
		"session.timeout.ms":                "6000",
		"rebalance.timeout.ms":              "10000",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
	}
	maps.Copy(props, extra)
	d, err := server.StartDistributed(context.Background(), props, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
	if err != nil {
		t.Fatalf("starting a distributed worker: %v", err)
	}
	t.Cleanup(d.Close)
	eventually(t, "the worker healthy", func() bool {
		resp, err := http.Get("http://" + d.RESTAddr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return d
}

// cli runs connectctl with a private home (config file, history).
type cli struct {
	t    *testing.T
	home string
	env  map[string]string
	url  string // passed as --url unless empty
}

func newCLI(t *testing.T, url string) *cli {
	home := t.TempDir()
	return &cli{t: t, home: home, url: url, env: map[string]string{"HOME": home}}
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run runs connectctl, with --url first when set.
func (c *cli) run(args ...string) result {
	c.t.Helper()
	return c.exec(env{stdin: strings.NewReader("")}, args...)
}

// ok runs connectctl and fails the test unless it succeeds.
func (c *cli) ok(args ...string) result {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("connectctl %s:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// fail runs connectctl and fails the test unless it fails.
func (c *cli) fail(args ...string) result {
	c.t.Helper()
	r := c.run(args...)
	if r.code == 0 {
		c.t.Fatalf("connectctl %s succeeded:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// terminal runs connectctl as if on a terminal, answering with input.
func (c *cli) terminal(input string, args ...string) result {
	c.t.Helper()
	return c.exec(env{stdin: strings.NewReader(input), stdinTTY: true, stderrTTY: true}, args...)
}

func (c *cli) exec(e env, args ...string) result {
	c.t.Helper()
	if c.url != "" {
		args = append([]string{"--url", c.url}, args...)
	}
	var out, errOut bytes.Buffer
	e.stdout, e.stderr = &out, &errOut
	e.getenv = func(k string) string { return c.env[k] }
	code := execute(context.Background(), args, e)
	return result{code, out.String(), errOut.String()}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restClient is a client of the Go client package, for checks.
func restClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func offsetsJSON(t *testing.T, c *client.Client, name string) string {
	t.Helper()
	o, err := c.Offsets(context.Background(), name)
	if err != nil {
		t.Fatalf("offsets of %s: %v", name, err)
	}
	b, err := json.Marshal(client.ConnectorOffsets{Offsets: sortOffsets(o)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func state(c *client.Client, name string) string {
	st, err := c.Status(context.Background(), name)
	if err != nil {
		return ""
	}
	s := st.Connector.State
	for _, t := range st.Tasks {
		s += "/" + t.State
	}
	return s
}

func lineRange(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("line-%03d", i))
	}
	return out
}

// consumer reads a topic from the start, all partitions.
type consumer struct {
	t   *testing.T
	cl  *kgo.Client
	got []string
}

func newConsumer(t *testing.T, bootstrap, topic string) *consumer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &consumer{t: t, cl: cl}
}

// until reads until n records in all have been seen, and returns them.
func (c *consumer) until(n int) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(c.got) < n {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("got %d records %v, want %d", len(c.got), c.got, n)
		}
		fs.EachRecord(func(r *kgo.Record) { c.got = append(c.got, string(r.Value)) })
	}
	return c.got
}

// quiet checks that no more records come for a while.
func (c *consumer) quiet(d time.Duration) []string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { c.got = append(c.got, string(r.Value)) })
	}
	return c.got
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	writeLines = servertest.WriteLines
	readLines  = servertest.ReadLines
)
