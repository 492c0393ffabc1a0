package source

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// srcTestContext is an in-memory SourceTaskContext: stored offsets by
// partition, as the runtime keeps them.
type srcTestContext struct {
	mu      sync.Mutex
	offsets map[string]map[string]any
}

func srcPartitionKey(p map[string]any) string {
	keys := slices.Sorted(maps.Keys(p))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%#v;", k, p[k])
	}
	return b.String()
}

func (c *srcTestContext) Offset(p map[string]any) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offsets[srcPartitionKey(p)], nil
}

func (*srcTestContext) Logger() *slog.Logger { return slog.Default() }

func (*srcTestContext) TransactionContext() connect.TransactionContext { return nil }

func (c *srcTestContext) set(p, o map[string]any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.offsets == nil {
		c.offsets = map[string]map[string]any{}
	}
	c.offsets[srcPartitionKey(p)] = o
}

// commit stores the offsets of recs, as the runtime does once Kafka has
// acknowledged them.
func (c *srcTestContext) commit(recs []*connect.SourceRecord) {
	for _, r := range recs {
		if r.SourceOffset != nil {
			c.set(r.SourcePartition, r.SourceOffset)
		}
	}
}

// srcConnContext is an in-memory ConnectorContext.
type srcConnContext struct {
	reconfigs atomic.Int64
	mu        sync.Mutex
	errs      []error
}

func (c *srcConnContext) RequestTaskReconfiguration() { c.reconfigs.Add(1) }
func (*srcConnContext) Logger() *slog.Logger          { return slog.Default() }
func (c *srcConnContext) RaiseError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// srcBaseConfig is a source config for the test database: fast polls.
func srcBaseConfig(db *jdbctest.DB, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":    ConnectorClass,
		srcConnectionURL:     db.URL,
		srcTopicPrefix:       "db-",
		srcPollInterval:      "10",
		srcConnectionBackoff: "10",
	}
	if db.User != "" {
		cfg[srcConnectionUser] = db.User
	}
	if db.Dialect == jdbcdb.PostgreSQL {
		cfg[srcSchemaPattern] = db.Schema
	}
	maps.Copy(cfg, extra)
	return cfg
}

// srcTableID is the id the connector gives a test table.
func srcTableID(db *jdbctest.DB, table string) jdbcdb.TableID {
	switch db.Dialect {
	case jdbcdb.PostgreSQL:
		return jdbcdb.TableID{Schema: db.Schema, Table: table}
	case jdbcdb.MySQL:
		return jdbcdb.TableID{Catalog: db.Schema, Table: table}
	}
	return jdbcdb.TableID{Table: table}
}

// srcTaskConfigs starts a connector with cfg and returns its task configs.
func srcTaskConfigs(t testing.TB, cfg map[string]string, maxTasks int) []map[string]string {
	t.Helper()
	c := &Connector{}
	if err := c.Start(&srcConnContext{}, cfg); err != nil {
		t.Fatalf("connector Start: %v", err)
	}
	defer c.Stop()
	tcs, err := c.TaskConfigs(maxTasks)
	if err != nil {
		t.Fatalf("TaskConfigs: %v", err)
	}
	return tcs
}

// srcStartTask starts a task with the connector's one task config.
func srcStartTask(t *testing.T, cfg map[string]string, ctx *srcTestContext) *Task {
	t.Helper()
	tcs := srcTaskConfigs(t, cfg, 1)
	if len(tcs) != 1 {
		t.Fatalf("%d task configs, want 1", len(tcs))
	}
	task := NewTask()
	task.idleWait = 50 * time.Millisecond
	if err := task.Start(ctx, tcs[0]); err != nil {
		t.Fatalf("task Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

// srcPollN polls until n records came (committing their offsets to ctx),
// failing after a deadline; then checks that one more Poll (long enough
// for the table to be queried again) brings nothing more.
func srcPollN(t *testing.T, task *Task, ctx *srcTestContext, n int) []*connect.SourceRecord {
	t.Helper()
	all := srcPollAtLeast(t, task, ctx, n)
	if len(all) > n {
		t.Fatalf("got %d records, want %d", len(all), n)
	}
	srcPollNone(t, task)
	return all
}

// srcPollAtLeast polls until n records came, failing after a deadline.
func srcPollAtLeast(t *testing.T, task *Task, ctx *srcTestContext, n int) []*connect.SourceRecord {
	t.Helper()
	var all []*connect.SourceRecord
	deadline := time.Now().Add(30 * time.Second)
	for len(all) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records before the deadline, want %d", len(all), n)
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		ctx.commit(recs)
		all = append(all, recs...)
	}
	return all
}

// srcPollNone checks that the task has nothing more to give: Polls until
// every table was queried again (after this call began) bring nothing.
func srcPollNone(t *testing.T, task *Task) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if len(recs) > 0 {
			t.Fatalf("expected no more records, got %d (first %v)", len(recs), recs[0].Value)
		}
		done := task.active == nil
		for _, q := range task.queriers {
			done = done && q.lastUpdate.After(start)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the tables were not queried again before the deadline")
		}
	}
}

// srcIDs returns the "id" field of each record's value.
func srcIDs(t *testing.T, recs []*connect.SourceRecord) []int64 {
	t.Helper()
	out := make([]int64, len(recs))
	for i, r := range recs {
		st, ok := r.Value.(*connect.Struct)
		if !ok {
			t.Fatalf("record %d value is %T", i, r.Value)
		}
		switch v := st.Get("id").(type) {
		case int64:
			out[i] = v
		case int32:
			out[i] = int64(v)
		default:
			t.Fatalf("record %d id is %T", i, v)
		}
	}
	return out
}

func srcSeq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// srcLastOffset is the offset of the last record that has one.
func srcLastOffset(recs []*connect.SourceRecord) map[string]any {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].SourceOffset != nil {
			return recs[i].SourceOffset
		}
	}
	return nil
}

// srcSchemaString renders a field schema compactly for goldens:
// TYPE, name{params}, "?" when optional.
func srcSchemaString(s *connect.Schema) string {
	out := string(s.Type)
	if s.Name != "" {
		out = s.Name[strings.LastIndex(s.Name, ".")+1:]
		var ps []string
		for _, p := range s.Parameters {
			ps = append(ps, p.Key+"="+p.Value)
		}
		if len(ps) > 0 {
			out += "{" + strings.Join(ps, ",") + "}"
		}
	}
	if s.Optional {
		out += "?"
	}
	return out
}

// srcValueString renders a Connect value for goldens.
func srcValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.999999999Z")
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case *connect.Decimal:
		return x.String()
	case string:
		return fmt.Sprintf("%q", x)
	case float32, float64:
		return fmt.Sprintf("%T(%v)", x, x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// srcInsertOrders inserts orders from..to: timestamps base + id/3 seconds
// (so runs of three rows share one), amounts id/100.
func srcInsertOrders(t *testing.T, db *jdbctest.DB, from, to int, base time.Time) {
	t.Helper()
	for start := from; start <= to; start += 500 {
		end := min(start+499, to)
		var vals []string
		for id := start; id <= end; id++ {
			ts := base.Add(time.Duration(id/3) * time.Second).Format("2006-01-02 15:04:05.000")
			vals = append(vals, fmt.Sprintf("(%d, 'customer-%d', %d.%02d, '%s')", id, id%7, id/100, id%100, ts))
		}
		db.Exec(t, "INSERT INTO orders (id, customer, amount, updated_at) VALUES "+strings.Join(vals, ", "))
	}
}

func srcCreateOrders(t *testing.T, db *jdbctest.DB) {
	t.Helper()
	switch db.Dialect {
	case jdbcdb.PostgreSQL:
		db.Exec(t, "CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount NUMERIC(10,2), updated_at TIMESTAMP(3) NOT NULL)")
	case jdbcdb.MySQL:
		db.Exec(t, "CREATE TABLE orders (id BIGINT PRIMARY KEY AUTO_INCREMENT, customer VARCHAR(40) NOT NULL, amount DECIMAL(10,2), updated_at DATETIME(3) NOT NULL)")
	default:
		db.Exec(t, "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount NUMERIC(10,2), updated_at TIMESTAMP NOT NULL)")
	}
}
