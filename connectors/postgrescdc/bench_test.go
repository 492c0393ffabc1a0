package postgrescdc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCDCPostgres measures change events per second through the task
// (pgoutput decoded into Debezium's events, offsets included) against
// pg_recvlogical reading the same changes from a second slot to /dev/null,
// and prints the ratio. CDC_BENCH_ROWS sets the rows inserted (default
// 20000), in transactions of 100 rows.
//
//	go test ./connectors/postgrescdc -run '^$' -bench CDCPostgres -benchtime 1x
func BenchmarkCDCPostgres(b *testing.B) {
	rows := 20000
	if s := os.Getenv("CDC_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("CDC_BENCH_ROWS=%q", s)
		}
		rows = n
	}
	db := newDB(b)
	recv := filepath.Join(db.c.bin, "pg_recvlogical")
	if _, err := os.Stat(recv); err != nil {
		if recv, err = exec.LookPath("pg_recvlogical"); err != nil {
			b.Skip("pg_recvlogical is not installed")
		}
	}
	db.exec(`CREATE TABLE bench (id int PRIMARY KEY, name text NOT NULL, amount numeric(10,2), at timestamp, tags jsonb)`)
	db.exec(`CREATE PUBLICATION bench_pub FOR ALL TABLES`)
	var taskRate, recvRate float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		taskSlot, recvSlot := fmt.Sprintf("bench_task_%d", i), fmt.Sprintf("bench_recv_%d", i)
		db.exec(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, taskSlot)
		db.exec(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, recvSlot)
		// The load, committed and flushed before either reader starts.
		db.exec(`SET synchronous_commit = on`)
		base := i * rows
		for done := 0; done < rows; done += 100 {
			n := min(100, rows-done)
			db.exec(`INSERT INTO bench SELECT g, 'name ' || g, g * 1.25, '2024-07-10 14:30:00'::timestamp + g * interval '1 second', '{"k": 1}'
				FROM generate_series($1::int, $2::int) g`, base+done+1, base+done+n)
		}
		end := db.currentLSN()

		// pg_recvlogical, from the other slot, up to the same position
		// (first: the WAL is then as cold for it as for the task).
		b.StartTimer()
		start := time.Now()
		out, err := exec.Command(recv, "-d", db.c.dsn(db.name), "--slot", recvSlot, "--start", "--no-loop",
			"-o", "proto_version=1", "-o", "publication_names=bench_pub",
			"-E", fmt.Sprintf("%X/%X", uint64(end)>>32, uint32(end)), "-f", "/dev/null").CombinedOutput()
		recvTime := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatalf("pg_recvlogical: %v: %s", err, out)
		}
		// The task.
		store := newOffsetStore()
		cfg := db.config("bench", taskSlot, "snapshot.mode", "no_data", "publication.name", "bench_pub",
			"publication.autocreate.mode", "disabled", "max.batch.size", "4096", "max.queue.size", "65536")
		task := NewTask()
		if err := task.Start(store, cfg); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start = time.Now()
		got := 0
		ctx := context.Background()
		for got < rows {
			recs, err := task.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			got += len(recs)
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("the task read %d of %d events", got, rows)
			}
		}
		taskTime := time.Since(start)
		b.StopTimer()
		task.Stop()

		taskRate = float64(rows) / taskTime.Seconds()
		recvRate = float64(rows) / recvTime.Seconds()
		for _, s := range []string{taskSlot, recvSlot} {
			eventually(b, "the slot dropped", func() bool {
				_, err := db.conn.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, s)
				return err == nil
			})
		}
		b.StartTimer()
	}
	b.ReportMetric(taskRate, "task-events/s")
	b.ReportMetric(recvRate, "pg_recvlogical-events/s")
	b.ReportMetric(taskRate/recvRate, "ratio")
	b.Logf("%d change events: task %.0f events/s, pg_recvlogical %.0f events/s, ratio %.2f", rows, taskRate, recvRate, taskRate/recvRate)
}
