package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
)

// connectCluster is n distributed workers in-process on their own
// embedded broker, with the settings of internal/server's startCluster.
type connectCluster struct {
	bootstrap string // the broker's address
	workers   []*server.Distributed
}

func (c *connectCluster) url(i int) string { return "http://" + c.workers[i].RESTAddr }

func startConnectCluster(t *testing.T, n int) *connectCluster {
	t.Helper()
	bootstrap := startBroker(t)
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
		"scheduled.rebalance.max.delay.ms":  "1000",
		"heartbeat.interval.ms":             "300",
		"session.timeout.ms":                "6000",
		"rebalance.timeout.ms":              "10000",
		"key.converter":                     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
	}
	c := &connectCluster{bootstrap: bootstrap}
	for range n {
		d, err := server.StartDistributed(context.Background(), props, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
		if err != nil {
			t.Fatalf("starting a distributed worker: %v", err)
		}
		t.Cleanup(d.Close)
		c.workers = append(c.workers, d)
	}
	for i := range c.workers {
		eventually(t, fmt.Sprintf("worker %d healthy", i+1), func() bool {
			resp, err := http.Get(c.url(i) + "/health")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	return c
}

// topicIDs reads a topic from its start to its end (as the broker lists
// it now), all partitions, and decodes the id field of every value
// (written by the JsonConverter without schemas).
func topicIDs(t *testing.T, bootstrap, topic string) []int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	if err := ends.Error(); err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	var out []int64
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s to its end: %d ids so far, partitions left %v", topic, len(out), left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var rec struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal(r.Value, &rec); err != nil || rec.ID == nil {
				t.Fatalf("record %s of %s: no id (%v)", r.Value, topic, err)
			}
			out = append(out, *rec.ID)
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

func idRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// A JDBC source moves from an old standalone worker to a new two-worker
// distributed cluster (each with its own broker): the new cluster carries
// on exactly at the row after the old one's last.
func TestCopyMigratesJdbcSourceToCluster(t *testing.T) {
	t.Parallel()
	db, schema := servertest.PGSchema(t, "ctl_e2e")
	servertest.MustExec(t, db, "CREATE TABLE "+schema+".orders (id INT PRIMARY KEY, customer TEXT NOT NULL)")
	servertest.MustExec(t, db, "INSERT INTO "+schema+".orders (id, customer) SELECT g, 'c' || g FROM generate_series(1, 300) g")

	old := standalone(t, t.TempDir(), nil)
	neu := startConnectCluster(t, 2)
	oldURL, newURL := "http://"+old.RESTAddr, neu.url(0)
	c := newCLI(t, "")
	oldC, newC := restClient(t, oldURL), restClient(t, newURL)

	conf := writeFile(t, "orders.json", jsonText(t, map[string]any{
		"name": "orders",
		"config": map[string]string{
			"connector.class":                "io.confluent.connect.jdbc.JdbcSourceConnector",
			"connection.url":                 "jdbc:postgresql://127.0.0.1:5432/test",
			"connection.user":                "postgres",
			"mode":                           "incrementing",
			"incrementing.column.name":       "id",
			"table.whitelist":                schema + ".orders",
			"topic.prefix":                   "pg-",
			"poll.interval.ms":               "100",
			"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
			"value.converter.schemas.enable": "false",
		},
	}))
	if r := c.ok("--url", oldURL, "apply", "-f", conf); r.stdout != "connector orders created\n" {
		t.Errorf("apply:\n%s", r)
	}
	partition := fmt.Sprintf(`{"protocol":"1","table":"%s.orders"}`, schema)
	eventually(t, "the old offsets at row 300", func() bool {
		o := offsetsJSON(t, oldC, "orders")
		return strings.Contains(o, `"partition":`+partition) && strings.Contains(o, `"incrementing":300}`)
	})
	if r := c.ok("--url", oldURL, "stop", "orders"); r.stdout != "connector orders stopped\n" {
		t.Errorf("stop:\n%s", r)
	}
	eventually(t, "the old connector stopped", func() bool { return state(oldC, "orders") == "STOPPED" })
	servertest.MustExec(t, db, "INSERT INTO "+schema+".orders (id, customer) SELECT g, 'c' || g FROM generate_series(301, 350) g")

	r := c.ok("connectors", "copy", "orders", "--from", oldURL, "--to", newURL, "--resume", "--yes")
	if want := "copied orders (source, 1 offset) from " + oldURL + " to " + newURL + ": resumed\n"; r.stdout != want {
		t.Errorf("copy:\n%s\nwant stdout:\n%s", r, want)
	}
	// Both workers of the new cluster know it, and it runs there.
	for i := range neu.workers {
		wc := restClient(t, neu.url(i))
		eventually(t, fmt.Sprintf("orders running, seen by worker %d", i+1), func() bool { return state(wc, "orders") == "RUNNING/RUNNING" })
	}
	eventually(t, "the new offsets at row 350", func() bool {
		o := offsetsJSON(t, newC, "orders")
		return strings.Contains(o, `"partition":`+partition) && strings.Contains(o, `"incrementing":350}`)
	})
	// Offsets are flushed after the records are acknowledged: the topic is
	// complete. A few more polls, to catch any row sent twice.
	time.Sleep(500 * time.Millisecond)
	if got := topicIDs(t, neu.bootstrap, "pg-orders"); !slices.Equal(got, idRange(301, 350)) {
		t.Errorf("the new cluster's pg-orders holds %d rows: %v, want 301..350", len(got), got)
	}
	if got := topicIDs(t, old.Broker.Addr(), "pg-orders"); !slices.Equal(got, idRange(1, 300)) {
		t.Errorf("the old pg-orders holds %d rows: %v, want 1..300", len(got), got)
	}
	if st := state(oldC, "orders"); st != "STOPPED" {
		t.Errorf("the old connector is %s after the copy", st)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The main commands against a two-worker distributed cluster, through
// worker 2, with their effect seen through worker 1.
func TestCommandsAgainstDistributedCluster(t *testing.T) {
	t.Parallel()
	cl := startConnectCluster(t, 2)
	c := newCLI(t, cl.url(1))
	rc, rc2 := restClient(t, cl.url(0)), restClient(t, cl.url(1))
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lineRange(1, 10)...) // 9 bytes a line
	part := fmt.Sprintf(`{"filename":%q}`, in)

	props := writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n")
	if r := c.ok("apply", "-f", props); r.stdout != "connector src created\n" {
		t.Errorf("apply:\n%s", r)
	}
	eventually(t, "src running, seen by worker 1", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })
	if r := c.ok("apply", "-f", props); r.stdout != "connector src unchanged\n" {
		t.Errorf("apply again:\n%s", r)
	}
	topic := newConsumer(t, cl.bootstrap, "lines")
	if got := topic.until(10); !slices.Equal(got, lineRange(1, 10)) {
		t.Fatalf("the source emitted %v", got)
	}
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })

	eventually(t, "worker 2 sees src running", func() bool {
		return c.run("get", "connectors").stdout == "NAME   STATE     TASKS   TYPE     EXACTLY-ONCE\nsrc    RUNNING   1/1     source   no\n"
	})
	r := c.ok("describe", "src")
	mustContain(t, "describe", r.stdout, "Name:     src\nType:     source\nClass:    FileStreamSource\nState:    RUNNING\n",
		"Topics:   lines", "\nTasks:\n  ID   STATE     WORKER\n  0    RUNNING   ")

	for _, step := range []struct{ verb, out, state string }{
		{"pause", "connector src paused\n", "PAUSED/PAUSED"},
		{"resume", "connector src resumed\n", "RUNNING/RUNNING"},
		{"stop", "connector src stopped\n", "STOPPED"},
		{"resume", "connector src resumed\n", "RUNNING/RUNNING"},
	} {
		if r := c.ok(step.verb, "src"); r.stdout != step.out {
			t.Errorf("%s:\n%s", step.verb, r)
		}
		eventually(t, "src "+step.state+" on worker 1", func() bool { return state(rc, "src") == step.state })
	}
	eventually(t, "offset 90 after resuming", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })

	r = c.ok("offsets", "get", "src")
	if want := "PARTITION" + strings.Repeat(" ", len(part)-len("PARTITION")+3) + "OFFSET\n" + part + "   {\"position\":90}\n"; r.stdout != want {
		t.Errorf("offsets get:\n%s\nwant:\n%s", r.stdout, want)
	}

	// Without --yes a running connector is not stopped; with it: stop,
	// change, verify, resume; lines 6-10 again.
	set := []string{"offsets", "set", "src", "--partition", part, "--offset", `{"position":45}`}
	r = c.fail(set...)
	mustContain(t, "refusal", r.stderr, "Error: connector src is RUNNING; its offsets can only change while it is stopped")
	r = c.ok(append(set, "--yes")...)
	mustContain(t, "set --yes", r.stdout,
		"- "+part+` {"position":90}`+"\n"+"+ "+part+` {"position":45}`+"\n",
		"connector src stopped\n",
		"offsets of src changed (1 partition) and verified\n",
		"previous offsets saved; put them back with: connectctl offsets undo src\n",
		"connector src resumed\n")
	if got := topic.until(15); !slices.Equal(got[10:], lineRange(6, 10)) {
		t.Fatalf("after set to 45 the source emitted %v", got[10:])
	}
	eventually(t, "src running again on worker 1", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })
	eventually(t, "offset 90 again", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })

	// Undo on a stopped connector: back to the 90 before the set (already
	// there after re-reading), so first move it, then undo.
	c.ok("stop", "src")
	eventually(t, "src stopped on worker 1", func() bool { return state(rc, "src") == "STOPPED" })
	// The CLI checks the state through worker 2, whose view of the status
	// topic may lag worker 1's.
	eventually(t, "src stopped on worker 2", func() bool { return state(rc2, "src") == "STOPPED" })
	r = c.ok("offsets", "set", "src", "--partition", part, "--offset", `{"position":9}`)
	mustContain(t, "set on a stopped connector", r.stdout, "+ "+part+` {"position":9}`, "changed (1 partition) and verified")
	if got := offsetsJSON(t, rc, "src"); !strings.Contains(got, `"position":9}`) {
		t.Errorf("worker 1 sees offsets %s after set 9", got)
	}
	r = c.ok("offsets", "undo", "src")
	mustContain(t, "undo", r.stdout, "going back to the offsets of ", "- "+part+` {"position":9}`, "+ "+part+` {"position":90}`, "and verified")
	if got := offsetsJSON(t, rc, "src"); !strings.Contains(got, `"position":90}`) {
		t.Errorf("worker 1 sees offsets %s after undo", got)
	}
	if st := state(rc, "src"); st != "STOPPED" {
		t.Errorf("after undo on a stopped connector: %s", st)
	}
	c.ok("resume", "src")
	eventually(t, "src running after undo", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })
	// Nothing re-emitted: the source carries on at 90.
	writeLines(t, in, "line-011")
	if got := topic.until(16); got[15] != "line-011" {
		t.Fatalf("after undo the source emitted %v", got[15:])
	}

	r = c.ok("restart", "src", "--include-tasks")
	mustContain(t, "restart --include-tasks", r.stdout, "restart of connector src requested\n", "INSTANCE", "connector", "task 0")
	eventually(t, "src running after restart", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })

	if r := c.ok("delete", "src"); r.stdout != "connector src deleted\n" {
		t.Errorf("delete:\n%s", r)
	}
	eventually(t, "src gone on worker 1", func() bool {
		names, err := rc.Connectors(t.Context())
		return err == nil && len(names) == 0
	})
	// The CLI asks worker 2, which serves its own reading of the config
	// topic: it may learn of the deletion a moment after worker 1. Its
	// list leaves out a connector without a status, as Kafka's does, so
	// it can be empty while the config is still there: describe is what
	// shows the deletion.
	eventually(t, "worker 2 lists nothing", func() bool {
		return c.run("get", "connectors").stdout == "NAME   STATE   TASKS   TYPE   EXACTLY-ONCE\n"
	})
	eventually(t, "describe fails on worker 2", func() bool { return c.run("describe", "src").code != 0 })
	r = c.fail("describe", "src")
	mustContain(t, "describe a deleted connector", r.stderr, "Error: Connector src not found")
}
