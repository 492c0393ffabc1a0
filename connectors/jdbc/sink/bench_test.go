package sink

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
	"github.com/jackc/pgx/v5"
)

// BenchmarkJdbcSinkPostgres compares the sink task writing N rows (insert,
// then upsert into an empty table, then upsert over existing rows) with
// pgx's COPY of the same rows into the same kind of table, in the same
// run, and prints rows/s and the ratios to COPY. N is 100000, or
// CONNECTD_JDBC_BENCH_ROWS. It skips without PostgreSQL on 127.0.0.1:5432.
func BenchmarkJdbcSinkPostgres(b *testing.B) {
	n := 100_000
	if s := os.Getenv("CONNECTD_JDBC_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("CONNECTD_JDBC_BENCH_ROWS=%q", s)
		}
		n = v
	}
	ctx := context.Background()
	base := "jdbc:postgresql://127.0.0.1:5432/test"
	admin, _, err := jdbcdb.Open(ctx, base, "postgres", "")
	if err != nil {
		b.Skipf("PostgreSQL is unreachable: %v", err)
	}
	defer admin.Close()
	schema := jdbctest.UniqueName("bench")
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	url := base + "?search_path=" + schema
	conn, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:5432/test?search_path="+schema)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)

	keySchema := connect.StructSchema("bench.Key", connect.Field{Name: "id", Schema: connect.Int64Schema})
	valueSchema := connect.StructSchema("bench.Value",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "name", Schema: connect.StringSchema},
		connect.Field{Name: "amount", Schema: connect.Float64Schema},
		connect.Field{Name: "qty", Schema: connect.Int32Schema},
		connect.Field{Name: "flag", Schema: connect.BooleanSchema},
		connect.Field{Name: "ts", Schema: connect.TimestampSchema()},
	)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]connect.SinkRecord, n)
	rows := make([][]any, n)
	for i := range n {
		id := int64(i)
		name := fmt.Sprintf("customer-%07d", i)
		amount := float64(i%10000) / 100
		qty := int32(i % 50)
		flag := i%2 == 0
		ts := t0.Add(time.Duration(i) * time.Second)
		recs[i] = connect.SinkRecord{
			Topic: "bench", Partition: int32(i % 3), Offset: int64(i / 3),
			KeySchema: keySchema, Key: connect.NewStruct(keySchema).Put("id", id),
			ValueSchema: valueSchema,
			Value:       connect.NewStruct(valueSchema).Put("id", id).Put("name", name).Put("amount", amount).Put("qty", qty).Put("flag", flag).Put("ts", ts),
		}
		rows[i] = []any{id, name, amount, qty, flag, ts}
	}
	ddl := " (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL, qty INT NOT NULL, flag BOOLEAN NOT NULL, ts TIMESTAMP NOT NULL)"
	for _, tbl := range []string{"copy_t", "insert_t", "upsert_t"} {
		if _, err := conn.Exec(ctx, "CREATE TABLE "+tbl+ddl); err != nil {
			b.Fatal(err)
		}
	}
	cols := []string{"id", "name", "amount", "qty", "flag", "ts"}

	runTask := func(props map[string]string) time.Duration {
		task := &Task{}
		if err := task.Start(nil, props); err != nil {
			b.Fatal(err)
		}
		defer task.Stop()
		start := time.Now()
		for off := 0; off < n; off += 1000 { // the runtime's polls
			if err := task.Put(recs[off:min(off+1000, n)]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := task.PreCommit(nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	props := func(kv ...string) map[string]string {
		p := map[string]string{"connection.url": url, "connection.user": "postgres", "max.retries": "0"}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}

	var copyD, insertD, upsertD, upsert2D time.Duration
	for range b.N {
		for _, tbl := range []string{"copy_t", "insert_t", "upsert_t"} {
			if _, err := conn.Exec(ctx, "TRUNCATE "+tbl); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"copy_t"}, cols, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
		copyD += time.Since(start)
		insertD += runTask(props("table.name.format", "insert_t"))
		upsertD += runTask(props("table.name.format", "upsert_t", "insert.mode", "upsert", "pk.mode", "record_key"))
		upsert2D += runTask(props("table.name.format", "upsert_t", "insert.mode", "upsert", "pk.mode", "record_key"))
	}
	for _, tbl := range []string{"copy_t", "insert_t", "upsert_t"} {
		var got int
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM "+tbl).Scan(&got); err != nil || got != n {
			b.Fatalf("%s holds %d rows (%v), want %d", tbl, got, err, n)
		}
	}
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(copyD), "copy_rows/s")
	b.ReportMetric(rate(insertD), "insert_rows/s")
	b.ReportMetric(rate(upsertD), "upsert_rows/s")
	b.ReportMetric(rate(upsert2D), "reupsert_rows/s")
	b.ReportMetric(rate(insertD)/rate(copyD), "insert/copy")
	b.ReportMetric(rate(upsertD)/rate(copyD), "upsert/copy")
	fmt.Printf("JDBC sink, PostgreSQL, %d rows: COPY %.0f rows/s; insert %.0f rows/s (%.2f of COPY, target 0.5); "+
		"upsert %.0f rows/s (%.2f, target 0.3); upsert over existing rows %.0f rows/s (%.2f)\n",
		n, rate(copyD), rate(insertD), rate(insertD)/rate(copyD), rate(upsertD), rate(upsertD)/rate(copyD),
		rate(upsert2D), rate(upsert2D)/rate(copyD))
}
