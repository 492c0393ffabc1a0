package source

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
	"github.com/connectd/connectd/converters"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkJdbcSourcePostgres reads a table through the source task and
// with pgx alone (the same statement, typed scans), in the same run, and
// reports both rates, their ratio, and the CPU each spends per million
// rows in this process (PostgreSQL's is its own). The task is driven as
// the worker drives it: incrementing mode, batch.max.rows=10000 (the
// bench's), each batch's values written by the JsonConverter and the
// batch then released for the task to fill again. What the worker adds
// on top, franz-go and the broker, is the bench's jdbc-source figure.
// SRC_BENCH_ROWS sets the table size (default 200000). It skips when
// PostgreSQL is unreachable.
func BenchmarkJdbcSourcePostgres(b *testing.B) {
	rows := 200_000
	if s := os.Getenv("SRC_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("SRC_BENCH_ROWS=%q", s)
		}
		rows = n
	}
	base := "jdbc:postgresql://127.0.0.1:5432/test"
	admin, _, err := jdbcdb.Open(context.Background(), base, "postgres", "")
	if err != nil {
		b.Skipf("PostgreSQL is unreachable: %v", err)
	}
	defer admin.Close()
	schema := jdbctest.UniqueName("bench")
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	table := schema + ".orders"
	for _, q := range []string{
		"CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount NUMERIC(10,2), " +
			"status TEXT, updated_at TIMESTAMP(3) NOT NULL)",
		"INSERT INTO " + table + " SELECT g, 'customer-' || (g % 1000), (g % 100000) / 100.0, " +
			"CASE WHEN g % 3 = 0 THEN 'shipped' ELSE 'placed' END, TIMESTAMP '2024-01-01' + g * INTERVAL '1 second' " +
			"FROM generate_series(1, " + strconv.Itoa(rows) + ") g",
		"ANALYZE " + table,
	} {
		if _, err := admin.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	cfg := map[string]string{
		srcConnectionURL: base, srcConnectionUser: "postgres", srcTopicPrefix: "bench-", srcMode: "incrementing",
		srcIncrementingColumn: "id", srcPollInterval: "10", srcSchemaPattern: schema, srcBatchMaxRows: "10000",
	}
	tcs := srcTaskConfigs(b, cfg, 1)

	conv := &converters.JSONConverter{}
	if err := conv.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		b.Fatal(err)
	}
	var buf []byte
	readTask := func() int {
		task := NewTask()
		if err := task.Start(&srcTestContext{}, tcs[0]); err != nil {
			b.Fatal(err)
		}
		defer task.Stop()
		n := 0
		for n < rows {
			recs, err := task.Poll(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				if buf, err = conv.AppendFromConnectData(buf[:0], r.Topic, r.ValueSchema, r.Value); err != nil {
					b.Fatal(err)
				}
			}
			n += len(recs)
			task.ReleaseRecords(recs)
		}
		return n
	}
	_, dsn, _ := jdbcdb.ParseURL(base, "postgres", "")
	stmt := srcStatement(jdbcdb.PostgreSQL, &jdbcdb.TableID{Schema: schema, Table: "orders"}, "", srcModeIncrementing, "id", nil, "")
	readPgx := func() int {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		rs, err := conn.Query(context.Background(), stmt, int64(-1))
		if err != nil {
			b.Fatal(err)
		}
		defer rs.Close()
		var (
			id       int64
			customer string
			amount   pgtype.Numeric
			status   pgtype.Text
			updated  time.Time
		)
		n := 0
		for rs.Next() {
			if err := rs.Scan(&id, &customer, &amount, &status, &updated); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if err := rs.Err(); err != nil {
			b.Fatal(err)
		}
		return n
	}

	readTask() // warm up both paths (connections, plans, caches)
	readPgx()
	// The two reads alternate, so that a change of the machine's load
	// weighs on both; the median of the pairs' ratios is reported too.
	var taskTime, pgxTime, taskCPU, pgxCPU time.Duration
	var ratios []float64
	b.ResetTimer()
	for range b.N {
		start, cpu := time.Now(), processCPU(b)
		if n := readTask(); n != rows {
			b.Fatalf("the task read %d rows, want %d", n, rows)
		}
		tt, tc := time.Since(start), processCPU(b)-cpu
		start, cpu = time.Now(), processCPU(b)
		if n := readPgx(); n != rows {
			b.Fatalf("pgx read %d rows, want %d", n, rows)
		}
		pt, pc := time.Since(start), processCPU(b)-cpu
		taskTime, pgxTime = taskTime+tt, pgxTime+pt
		taskCPU, pgxCPU = taskCPU+tc, pgxCPU+pc
		ratios = append(ratios, pt.Seconds()/tt.Seconds())
	}
	b.StopTimer()
	slices.Sort(ratios)
	median := ratios[len(ratios)/2]
	taskRate := float64(rows*b.N) / taskTime.Seconds()
	pgxRate := float64(rows*b.N) / pgxTime.Seconds()
	b.ReportMetric(taskRate, "task-rows/s")
	b.ReportMetric(pgxRate, "pgx-rows/s")
	b.ReportMetric(taskRate/pgxRate, "ratio")
	b.ReportMetric(median, "median-ratio")
	perM := func(d time.Duration) float64 { return d.Seconds() / float64(rows*b.N) * 1e6 }
	b.ReportMetric(perM(taskCPU), "task-cpu-s/Mrows")
	b.ReportMetric(perM(pgxCPU), "pgx-cpu-s/Mrows")
	fmt.Printf("JDBC source on PostgreSQL, %d rows x %d: task with JSON values %.0f rows/s (%.2f CPU-s per million rows), "+
		"pgx alone %.0f rows/s (%.2f CPU-s per million rows), ratio %.2f, median ratio %.2f\n",
		rows, b.N, taskRate, perM(taskCPU), pgxRate, perM(pgxCPU), taskRate/pgxRate, median)
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
