package postgrescdc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pgx/v5"
)

// flushOf is the position a committed offset lets the slot confirm.
func flushOf(tb testing.TB, off map[string]any) int64 {
	tb.Helper()
	p, err := parseOffset(off)
	if err != nil {
		tb.Fatal(err)
	}
	return int64(p.flushLSN())
}

// watchSlot samples the slot's confirmed_flush_lsn until the test ends and
// fails it if the position ever passes the committed one.
func watchSlot(t *testing.T, db *testDB, slot string, committed *atomic.Int64) {
	conn := db.c.connect(t, db.name)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer conn.Close(context.Background())
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			// The committed position is raised before Commit is called:
			// read after the slot's, it is at least what was committed
			// when the slot moved.
			var s *string
			if err := conn.QueryRow(context.Background(), "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&s); err != nil || s == nil {
				continue
			}
			c := committed.Load()
			if f := parseLSNText(t, *s); c > 0 && f > c {
				t.Errorf("confirmed_flush_lsn %X passed the committed position %X", f, c)
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// The slot's confirmed_flush_lsn moves only when Commit is called, only up
// to the committed offset's position, never past it.
func TestSlotFlushFollowsCommittedOffsets(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE t (id int PRIMARY KEY, v text)`)
	store := newOffsetStore()
	const slot = "flush_order"
	r := startRunner(t, store, db.config("fo", slot, "status.update.interval.ms", "20"))
	var committed atomic.Int64
	committed.Store(db.confirmedFlush(slot))
	initial := db.confirmedFlush(slot)
	watchSlot(t, db, slot, &committed)

	for i := 1; i <= 3; i++ {
		db.exec(`INSERT INTO t VALUES ($1, 'x')`, i)
	}
	recs := r.pollN(3)
	// Polled, not committed: the slot stays where it was, however long
	// the task keeps sending status updates.
	time.Sleep(300 * time.Millisecond)
	r.poll()
	if f := db.confirmedFlush(slot); f != initial {
		t.Fatalf("confirmed_flush_lsn moved to %X without a commit (was %X)", f, initial)
	}

	// Commit the first transaction only.
	first := recs[0].SourceOffset
	committed.Store(flushOf(t, first))
	store.put(t, recs[0].SourcePartition, first)
	if err := r.task.Commit(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slot at the first commit", func() bool { return db.confirmedFlush(slot) == committed.Load() })
	time.Sleep(200 * time.Millisecond)
	r.poll()
	if f := db.confirmedFlush(slot); f != committed.Load() {
		t.Fatalf("confirmed_flush_lsn %X, want %X", f, committed.Load())
	}

	// Then everything.
	committed.Store(flushOf(t, recs[2].SourceOffset))
	r.commit()
	eventually(t, "the slot at the last commit", func() bool { return db.confirmedFlush(slot) == committed.Load() })

	// lsn.flush.mode=manual: commits never move the slot.
	r.stop()
	r2 := startRunner(t, store, db.config("fo", slot, "lsn.flush.mode", "manual"))
	db.exec(`INSERT INTO t VALUES (4, 'y')`)
	r2.pollN(1)
	before := db.confirmedFlush(slot)
	r2.commit()
	time.Sleep(300 * time.Millisecond)
	if f := db.confirmedFlush(slot); f != before {
		t.Fatalf("lsn.flush.mode=manual: the slot moved from %X to %X", before, f)
	}
}

func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// idOf returns a change record's row id ("" for tombstones/heartbeats).
func idOf(tb testing.TB, rec *connect.SourceRecord) string {
	tb.Helper()
	if rec.Value == nil || rec.ValueSchema.Name == heartbeatValueSchema.Name {
		return ""
	}
	env := envOf(tb, rec)
	row := env.Get("after")
	if row == nil {
		row = env.Get("before")
	}
	return fmt.Sprint(row.(*connect.Struct).Get("id"))
}

// A task killed mid-stream (not stopped, its last records not committed)
// loses nothing: the next task resumes from the last committed offset and
// sends again every change after it, also in the middle of a transaction
// and of a multi-row COPY, and sends none of those before it again.
func TestKillMidStream(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE t (id int PRIMARY KEY, v text)`)
	store := newOffsetStore()
	const slot = "kill_mid"
	cfg := db.config("km", slot, "max.batch.size", "40", "status.update.interval.ms", "50")
	r := startRunner(t, store, cfg)
	var committed atomic.Int64
	committed.Store(db.confirmedFlush(slot))
	watchSlot(t, db, slot, &committed)

	// The load: small transactions, big ones, and COPYs (whose rows share
	// an LSN), from another connection while the task streams.
	const total = 3000
	var wg sync.WaitGroup
	wg.Add(1)
	writer := db.c.connect(t, db.name)
	go func() {
		defer wg.Done()
		defer writer.Close(context.Background())
		ctx := context.Background()
		id := 1
		for step := 0; id <= total; step++ {
			switch step % 4 {
			case 0: // one row per transaction
				writer.Exec(ctx, `INSERT INTO t VALUES ($1, 'a')`, id)
				id++
			case 1: // a transaction of 150 statements
				n := min(150, total-id+1)
				b := &pgx.Batch{}
				b.Queue("BEGIN")
				for k := 0; k < n; k++ {
					b.Queue(`INSERT INTO t VALUES ($1, 'b')`, id+k)
				}
				b.Queue("COMMIT")
				writer.SendBatch(ctx, b).Close()
				id += n
			case 2: // a COPY of 200 rows
				n := min(200, total-id+1)
				rows := make([][]any, n)
				for k := range rows {
					rows[k] = []any{int32(id + k), "c"}
				}
				if _, err := writer.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "v"}, pgx.CopyFromRows(rows)); err != nil {
					t.Errorf("COPY: %v", err)
					return
				}
				id += n
			case 3: // updates of earlier rows
				writer.Exec(ctx, `UPDATE t SET v = 'u' WHERE id = $1`, id-1)
			}
		}
	}()

	// Poll and commit every few polls; kill after about half the rows.
	seen := func(recs []*connect.SourceRecord) map[string]int {
		m := map[string]int{}
		for _, rec := range recs {
			if id := idOf(t, rec); id != "" && opOf(t, rec) == "c" {
				m[id]++
			}
		}
		return m
	}
	polls := 0
	r.pollUntil("half the rows", func() bool {
		polls++
		if polls%3 == 0 && r.newest != nil {
			committed.Store(flushOf(t, r.newest))
			r.commit()
		}
		return len(seen(r.records)) >= total/2
	})
	committedRecs := r.records[:r.committed]
	lost := len(r.records) - r.committed
	lastOff := store.get("km")
	// The dead task's connection lingers for a moment: the new task waits
	// for the slot (slot.retry.delay.ms) instead of failing.
	dropped := r.kill(700 * time.Millisecond)
	if lost == 0 {
		t.Log("the kill lost no polled record")
	}
	t.Logf("killed after %d records, %d committed (offset %v)", len(r.records), len(committedRecs), lastOff)

	r2 := startRunner(t, store, cfg)
	if !dropped.Load() {
		t.Fatal("the new task streamed while the dead one still held the slot")
	}
	before := seen(committedRecs)
	r2.pollUntil("every row", func() bool {
		after := seen(r2.records)
		n := 0
		for i := 1; i <= total; i++ {
			k := fmt.Sprint(i)
			if before[k]+after[k] > 0 {
				n++
			}
		}
		return n == total
	})
	wg.Wait()
	after := seen(r2.records)
	var dups []string
	for k := range after {
		if before[k] > 0 {
			dups = append(dups, k)
		}
	}
	if len(dups) > 0 {
		t.Fatalf("the new task sent again %d inserts the committed offset covered: %s", len(dups), strings.Join(dups[:min(10, len(dups))], ","))
	}
	for k, n := range after {
		if n > 1 {
			t.Fatalf("insert %s sent %d times by the new task", k, n)
		}
	}
}
