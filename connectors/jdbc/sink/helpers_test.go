package sink

import (
	"context"

	"fmt"
	"log/slog"
	"math/big"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// sinkProps is a sink config for db with the test's overrides, given as
// key, value pairs. Retries are off unless a test turns them on.
func sinkProps(db *jdbctest.DB, kv ...string) map[string]string {
	p := map[string]string{
		"name":             "jdbc-sink-test",
		"connector.class":  ConnectorClass,
		"topics":           "orders",
		"connection.url":   db.URL,
		"max.retries":      "0",
		"retry.backoff.ms": "0",
	}
	if db.User != "" {
		p["connection.user"] = db.User
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

// sinkFakeContext records what a task asks of the runtime.
type sinkFakeContext struct {
	mu      sync.Mutex
	rewinds map[connect.TopicPartition]int64
	commits int
	// reporter, when set, is the errant record reporter the task gets.
	reporter connect.ErrantRecordReporter
	// log writes to the test's log.
	log *slog.Logger
}

func (c *sinkFakeContext) Logger() *slog.Logger { return c.log }

func (c *sinkFakeContext) ErrantRecordReporter() connect.ErrantRecordReporter { return c.reporter }

func (c *sinkFakeContext) Assignment() []connect.TopicPartition { return nil }

func (c *sinkFakeContext) SetOffset(tp connect.TopicPartition, off int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rewinds == nil {
		c.rewinds = map[connect.TopicPartition]int64{}
	}
	c.rewinds[tp] = off
}
func (c *sinkFakeContext) RequestCommit() { c.mu.Lock(); c.commits++; c.mu.Unlock() }

func sinkStart(t *testing.T, db *jdbctest.DB, props map[string]string) (*Task, *sinkFakeContext) {
	t.Helper()
	task := (&Connector{}).NewTask().(*Task)
	ctx := &sinkFakeContext{log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	if err := task.Start(ctx, props); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task, ctx
}

func sinkPut(t *testing.T, task *Task, recs ...connect.SinkRecord) {
	t.Helper()
	if err := task.Put(recs); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func sinkCommit(t *testing.T, task *Task) map[connect.TopicPartition]int64 {
	t.Helper()
	offs, err := task.PreCommit(nil)
	if err != nil {
		t.Fatalf("PreCommit: %v", err)
	}
	return offs
}

// sinkOrderSchema is the value schema most tests write: every primitive and
// logical type the sink maps.
var sinkOrderSchema = connect.StructSchema("orders.Value",
	connect.Field{Name: "id", Schema: connect.Int32Schema},
	connect.Field{Name: "name", Schema: connect.OptionalStringSchema},
	connect.Field{Name: "qty", Schema: connect.OptionalInt64Schema},
)

var sinkOrderKeySchema = connect.StructSchema("orders.Key", connect.Field{Name: "id", Schema: connect.Int32Schema})

func sinkOrderValue(id int32, name string, qty int64) *connect.Struct {
	return connect.NewStruct(sinkOrderSchema).Put("id", id).Put("name", name).Put("qty", qty)
}

func sinkOrderKey(id int32) *connect.Struct {
	return connect.NewStruct(sinkOrderKeySchema).Put("id", id)
}

// sinkOrder is a record of topic orders with a struct key and value.
func sinkOrder(partition int32, offset int64, id int32, name string, qty int64) connect.SinkRecord {
	return connect.SinkRecord{
		Topic: "orders", Partition: partition, Offset: offset,
		KeySchema: sinkOrderKeySchema, Key: sinkOrderKey(id),
		ValueSchema: sinkOrderSchema, Value: sinkOrderValue(id, name, qty),
		Timestamp: time.UnixMilli(1700000000000 + offset), TimestampType: connect.CreateTime,
	}
}

func sinkTombstone(partition int32, offset int64, id int32) connect.SinkRecord {
	return connect.SinkRecord{Topic: "orders", Partition: partition, Offset: offset, KeySchema: sinkOrderKeySchema, Key: sinkOrderKey(id)}
}

// sinkRows returns a query's rows, each value rendered as text, sorted.
func sinkRows(t *testing.T, db *jdbctest.DB, query string, args ...any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.DB.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = sinkText(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func sinkText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000")
	case *big.Int:
		return x.String()
	}
	return fmt.Sprint(v)
}

func sinkCount(t *testing.T, db *jdbctest.DB, table string) int {
	t.Helper()
	var n int
	if err := db.DB.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func sinkWantRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func sinkWantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func sinkTimeMs(ms int64) time.Time { return time.UnixMilli(ms) }
