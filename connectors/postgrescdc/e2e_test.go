package postgrescdc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/postgrescdc"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/clustertest"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/server"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// worker is a standalone connectd with its embedded broker, as
// internal/server's tests start it.
type worker struct {
	t *testing.T
	s *server.Standalone
}

func startWorker(t *testing.T) *worker {
	t.Helper()
	dir := t.TempDir()
	s, err := server.StartStandalone(context.Background(), map[string]string{
		"listeners":                      "http://127.0.0.1:0",
		"embedded.kafka.listeners":       "127.0.0.1:0",
		"embedded.kafka.data.dir":        filepath.Join(dir, "kafka"),
		"offset.storage.file.filename":   filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":       "100",
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":   "false",
		"value.converter.schemas.enable": "true",
	}, nil, append(postgrescdc.Plugins(), converters.Plugins()...), logging.NewRegistry(io.Discard))
	if err != nil {
		t.Fatalf("starting the worker: %v", err)
	}
	t.Cleanup(s.Close)
	return &worker{t: t, s: s}
}

// event is a record read back from a topic.
type event struct {
	key   string
	value map[string]any // nil for a tombstone
}

// consume reads a topic from the start until n records arrived.
func consume(t *testing.T, bootstrap, topic string, n int) []event {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var out []event
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: %d records, want %d", topic, len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			e := event{key: string(r.Key)}
			if r.Value != nil {
				if err := json.Unmarshal(r.Value, &e.value); err != nil {
					t.Fatalf("value %s: %v", r.Value, err)
				}
			}
			out = append(out, e)
		})
	}
	return out
}

func payload(e event) map[string]any { return e.value["payload"].(map[string]any) }

func (e event) describe() string {
	if e.value == nil {
		return "tombstone " + e.key
	}
	p := payload(e)
	row := p["after"]
	if p["op"] == "d" {
		row = p["before"]
	}
	b, _ := json.Marshal(row)
	return fmt.Sprintf("%s %s %s snapshot=%v", p["op"], e.key, b, p["source"].(map[string]any)["snapshot"])
}

// The main flow through a real worker and its REST API: a connector
// configured by its alias snapshots a table and streams its changes as
// Debezium's events; its offsets are Debezium's, the slot follows the
// committed ones; after DELETE of the offsets it snapshots again.
func TestEndToEndThroughWorker(t *testing.T) {
	db := postgrescdc.NewTestDB(t)
	db.Exec(`CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(10,2))`)
	db.Exec(`INSERT INTO accounts VALUES (1, 'ann', 10.00), (2, 'ben', 20.50)`)
	w := startWorker(t)

	if body := w.must(200, "GET", "/connector-plugins", ""); !strings.Contains(body, `{"class":"io.debezium.connector.postgresql.PostgresConnector","type":"source","version":"2.7.0.Final"}`) {
		t.Fatalf("connector-plugins: %s", body)
	}
	cfg := db.Config("bank", "e2e_slot")
	cfg["connector.class"] = "PostgresConnector"
	cfgJSON, _ := json.Marshal(map[string]any{"name": "pg-cdc", "config": cfg})
	w.must(201, "POST", "/connectors", string(cfgJSON))
	eventually(t, "RUNNING", func() bool {
		_, body := w.do("GET", "/connectors/pg-cdc/status", "")
		return strings.Count(body, `"RUNNING"`) == 2
	})

	bootstrap := w.s.Broker.Addr()
	const topic = "bank.public.accounts"
	got := consume(t, bootstrap, topic, 2)
	if d := got[0].describe(); d != `r {"id":1} {"balance":"A+g=","id":1,"owner":"ann"} snapshot=first` {
		t.Fatalf("first snapshot event: %s", d)
	}
	if d := got[1].describe(); d != `r {"id":2} {"balance":"CAI=","id":2,"owner":"ben"} snapshot=last` {
		t.Fatalf("second snapshot event: %s", d)
	}
	schema := got[0].value["schema"].(map[string]any)
	if schema["name"] != "bank.public.accounts.Envelope" || schema["version"] != 2.0 {
		t.Fatalf("envelope schema %v", schema)
	}

	db.Exec(`INSERT INTO accounts VALUES (3, 'cy', 1)`)
	db.Exec(`UPDATE accounts SET balance = 11 WHERE id = 1`)
	db.Exec(`DELETE FROM accounts WHERE id = 2`)
	got = consume(t, bootstrap, topic, 6)
	var lines []string
	for _, e := range got[2:] {
		lines = append(lines, e.describe())
	}
	want := []string{
		`c {"id":3} {"balance":"ZA==","id":3,"owner":"cy"} snapshot=false`,
		`u {"id":1} {"balance":"BEw=","id":1,"owner":"ann"} snapshot=false`,
		`d {"id":2} {"balance":null,"id":2,"owner":""} snapshot=false`,
		`tombstone {"id":2}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("streamed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	// The offsets: Debezium's partition and keys, integers; the slot
	// follows them.
	var offsets struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	lastTx := payload(got[4])["source"].(map[string]any)["txId"]
	eventually(t, "the offsets at the last transaction", func() bool {
		_, body := w.do("GET", "/connectors/pg-cdc/offsets", "")
		json.Unmarshal([]byte(body), &offsets)
		return len(offsets.Offsets) == 1 && offsets.Offsets[0].Offset["txId"] == lastTx && offsets.Offsets[0].Offset["messageType"] == "COMMIT"
	})
	o := offsets.Offsets[0]
	if len(o.Partition) != 1 || o.Partition["server"] != "bank" {
		t.Fatalf("partition %v", o.Partition)
	}
	for _, k := range []string{"lsn", "lsn_proc", "lsn_commit", "txId", "ts_usec"} {
		if _, ok := o.Offset[k].(float64); !ok {
			t.Fatalf("offset %v: no number %s", o.Offset, k)
		}
	}
	commit := int64(o.Offset["lsn_commit"].(float64))
	eventually(t, "the slot at the committed offset", func() bool { return db.ConfirmedFlush("e2e_slot") == commit })

	// Offsets of another connector's shape are refused.
	w.must(204, "PUT", "/connectors/pg-cdc/stop", "")
	if code, body := w.do("PATCH", "/connectors/pg-cdc/offsets", `{"offsets":[{"partition":{"server":"other"},"offset":{"lsn":1}}]}`); code/100 != 4 && code/100 != 5 {
		t.Fatalf("PATCH with a foreign partition: %d %s", code, body)
	}
	// DELETE the offsets: a new snapshot.
	w.must(200, "DELETE", "/connectors/pg-cdc/offsets", "")
	w.must(202, "PUT", "/connectors/pg-cdc/resume", "")
	got = consume(t, bootstrap, topic, 8)
	// (Heap order: the updated row 1 now follows row 3.)
	if a, b := got[6].describe(), got[7].describe(); a != `r {"id":3} {"balance":"ZA==","id":3,"owner":"cy"} snapshot=first` ||
		b != `r {"id":1} {"balance":"BEw=","id":1,"owner":"ann"} snapshot=last` {
		t.Fatalf("snapshot after DELETE offsets:\n%s\n%s", a, b)
	}
	db.Exec(`INSERT INTO accounts VALUES (4, 'di', 2)`)
	got = consume(t, bootstrap, topic, 9)
	if d := got[8].describe(); d != `c {"id":4} {"balance":"AMg=","id":4,"owner":"di"} snapshot=false` {
		t.Fatalf("after the new snapshot: %s", d)
	}
}

func (w *worker) do(method, path, body string) (int, string) {
	w.t.Helper()
	return servertest.REST{T: w.t, Addr: w.s.RESTAddr}.Do(method, path, body)
}

func (w *worker) must(want int, method, path, body string) string {
	w.t.Helper()
	return servertest.REST{T: w.t, Addr: w.s.RESTAddr}.Must(want, method, path, body)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	servertest.Eventually(t, what, 45*time.Second, cond)
}

// Exactly once, in a cluster with exactly-once source support and
// transaction.boundary=connector: each database transaction's events are
// one Kafka transaction (the snapshot's batch another), which a
// read_committed consumer sees whole, and the task's metrics count.
func TestExactlyOnceDatabaseTransactions(t *testing.T) {
	db := postgrescdc.NewTestDB(t)
	db.Exec(`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`)
	db.Exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	bootstrap, rest := clustertest.ExactlyOnce(t, append(postgrescdc.Plugins(), converters.Plugins()...), map[string]string{
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true",
	})
	cfg := db.Config("shop", "eos_slot")
	cfg["connector.class"] = "PostgresConnector"
	cfg["exactly.once.support"] = "required"
	cfg["transaction.boundary"] = "connector"
	body, _ := json.Marshal(map[string]any{"name": "cdc", "config": cfg})
	eventually(t, "the connector created", func() bool {
		code, _ := rest.Do("POST", "/connectors", string(body))
		return code == 201
	})
	eventually(t, "RUNNING", func() bool {
		_, body := rest.Do("GET", "/connectors/cdc/status", "")
		return strings.Count(body, `"RUNNING"`) == 2
	})
	db.Exec(`BEGIN; INSERT INTO items SELECT g, 'x' FROM generate_series(3, 5) g; COMMIT`)
	db.Exec(`BEGIN; INSERT INTO items SELECT g, 'y' FROM generate_series(6, 12) g; COMMIT`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("shop.public.items"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var ids []float64
	for len(ids) < 12 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var v struct {
				Payload struct {
					After struct{ ID float64 } `json:"after"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("value %s: %v", r.Value, err)
			}
			ids = append(ids, v.Payload.After.ID)
		})
	}
	for i, id := range ids {
		if id != float64(i+1) {
			t.Fatalf("ids %v", ids)
		}
	}
	// Transactions of 2 (the snapshot's batch), 3 and 7 records.
	eventually(t, "the transaction sizes", func() bool {
		_, m := rest.Do("GET", "/metrics", "")
		return strings.Contains(m, `kafka_connect_source_task_transaction_size_max{connector="cdc",task="0"} 7`) &&
			strings.Contains(m, `kafka_connect_source_task_transaction_size_min{connector="cdc",task="0"} 2`)
	})
}
