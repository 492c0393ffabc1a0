package postgrescdc

import (
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// ids returns the ids of the create events among recs.
func createdIDs(tb testing.TB, recs []*connect.SourceRecord) []string {
	tb.Helper()
	var out []string
	for _, rec := range recs {
		if rec.Value != nil && rec.ValueSchema.Name != heartbeatValueSchema.Name && (opOf(tb, rec) == "c" || opOf(tb, rec) == "r") {
			out = append(out, idOf(tb, rec))
		}
	}
	return out
}

// alter changes the stored offset as PATCH /connectors/<name>/offsets
// does, after the connector's check.
func alter(t *testing.T, store *offsetStore, config map[string]string, offset map[string]any) {
	t.Helper()
	partition := map[string]any{PartitionServerKey: config[TopicPrefixConfig]}
	if _, err := (&Connector{}).AlterOffsets(config, []connect.SourceOffset{{Partition: partition, Offset: offset}}); err != nil {
		t.Fatalf("AlterOffsets(%v): %v", offset, err)
	}
	store.put(t, partition, offset)
}

// An lsn moved back replays the changes after it (the slot still has
// them); moved forward, it skips the changes before it.
func TestOffsetMovedBackwardAndForward(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	store := newOffsetStore()
	cfg := db.config("mv", "move_lsn")
	r := startRunner(t, store, cfg)
	db.exec(`INSERT INTO t VALUES (1)`)
	db.exec(`INSERT INTO t VALUES (2)`)
	db.exec(`INSERT INTO t VALUES (3)`)
	recs := r.pollN(3)
	// The slot confirmed the first transaction; the offset store has the
	// third (its flush to the slot not sent yet when the task stops).
	afterFirst := recs[0].SourceOffset
	store.put(t, recs[0].SourcePartition, afterFirst)
	if err := r.task.Commit(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the slot at the first commit", func() bool { return db.confirmedFlush("move_lsn") == flushOf(t, afterFirst) })
	store.put(t, recs[2].SourcePartition, recs[2].SourceOffset)
	r.stop()

	// Back to the end of the first transaction: 2 and 3 again.
	alter(t, store, cfg, map[string]any{OffsetLSN: afterFirst[OffsetLSN]})
	r = startRunner(t, store, cfg)
	if got := createdIDs(t, r.pollN(2)); !slices.Equal(got, []string{"2", "3"}) {
		t.Fatalf("after moving back: %v, want [2 3]", got)
	}
	r.commit()
	r.stop()

	// Forward past 4: only 5 follows.
	db.exec(`INSERT INTO t VALUES (4)`)
	skipTo := db.currentLSN()
	db.exec(`INSERT INTO t VALUES (5)`)
	alter(t, store, cfg, map[string]any{OffsetLSN: skipTo, OffsetLSNProc: skipTo, OffsetLSNCommit: skipTo})
	r = startRunner(t, store, cfg)
	if got := createdIDs(t, r.pollN(1)); !slices.Equal(got, []string{"5"}) {
		t.Fatalf("after moving forward: %v, want [5]", got)
	}
	db.exec(`INSERT INTO t VALUES (6)`)
	if got := createdIDs(t, r.pollN(1)); !slices.Equal(got, []string{"6"}) {
		t.Fatalf("then: %v, want [6]", got)
	}
}

// Deleting the offsets makes the next task snapshot again, from the
// existing slot, and stream on from the snapshot without loss.
func TestDeletedOffsetsSnapshotAgain(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	db.exec(`INSERT INTO t VALUES (1), (2)`)
	store := newOffsetStore()
	cfg := db.config("del", "delete_offsets")
	r := startRunner(t, store, cfg)
	if got := createdIDs(t, r.pollN(2)); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("first snapshot: %v", got)
	}
	db.exec(`INSERT INTO t VALUES (3)`)
	db.exec(`DELETE FROM t WHERE id = 1`)
	r.pollN(3)
	r.commit()
	eventually(t, "the slot at the commit", func() bool { return db.confirmedFlush("delete_offsets") == flushOf(t, store.get("del")) })
	r.stop()

	db.exec(`INSERT INTO t VALUES (4)`)
	alter(t, store, cfg, nil) // DELETE /connectors/<name>/offsets
	r = startRunner(t, store, cfg)
	snap := r.pollN(3)
	if got := createdIDs(t, snap); !slices.Equal(got, []string{"2", "3", "4"}) {
		t.Fatalf("second snapshot: %v, want [2 3 4]", got)
	}
	for _, rec := range snap {
		if opOf(t, rec) != "r" {
			t.Fatalf("second snapshot record %s", describe(t, rec))
		}
	}
	if off := snap[2].SourceOffset; off[OffsetLastSnapshotRecord] != true {
		t.Fatalf("last snapshot record's offset %v", off)
	}
	db.exec(`INSERT INTO t VALUES (5)`)
	if got := createdIDs(t, r.pollN(1)); !slices.Equal(got, []string{"5"}) {
		t.Fatalf("streamed after the second snapshot: %v, want [5]", got)
	}
	r.commit()
	r.stop()

	// snapshot.mode=always snapshots on every start.
	r = startRunner(t, store, db.config("del", "delete_offsets", "snapshot.mode", "always"))
	if got := createdIDs(t, r.pollN(4)); !slices.Equal(got, []string{"2", "3", "4", "5"}) {
		t.Fatalf("snapshot.mode=always: %v", got)
	}
}

// An offset the slot can no longer serve fails the task with an error
// that says how to recover; snapshot.mode=when_needed snapshots instead.
func TestWALGone(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	store := newOffsetStore()
	cfg := db.config("gone", "wal_gone")
	r := startRunner(t, store, cfg)
	early := db.currentLSN()
	db.exec(`INSERT INTO t VALUES (1)`)
	db.exec(`INSERT INTO t VALUES (2)`)
	r.pollN(2)
	r.commit()
	eventually(t, "the slot at the commit", func() bool { return db.confirmedFlush("wal_gone") == flushOf(t, store.get("gone")) })
	r.stop()

	// Back before the slot's confirmed_flush_lsn: those changes are gone.
	alter(t, store, cfg, map[string]any{OffsetLSN: early})
	_, err := tryStartRunner(t, store, cfg)
	if err == nil {
		t.Fatal("the task started from an offset behind the slot")
	}
	for _, want := range []string{"WAL", "confirmed_flush_lsn", "DELETE", "snapshot.mode=when_needed"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}

	// when_needed: a new snapshot instead.
	r = startRunner(t, store, db.config("gone", "wal_gone", "snapshot.mode", "when_needed"))
	if got := createdIDs(t, r.pollN(2)); !slices.Equal(got, []string{"1", "2"}) || opOf(t, r.records[0]) != "r" {
		t.Fatalf("when_needed snapshot: %v", got)
	}
	r.commit()
	r.stop()

	// A dropped slot: the same.
	eventually(t, "the slot dropped", func() bool {
		_, err := db.conn.Exec(t.Context(), `SELECT pg_drop_replication_slot('wal_gone')`)
		return err == nil // fails while the stopped task's walsender exits
	})
	if _, err := tryStartRunner(t, store, cfg); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("start without the slot: %v", err)
	}
}

func TestHeartbeats(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE captured (id int PRIMARY KEY)`)
	db.exec(`CREATE TABLE other (id int PRIMARY KEY)`)
	store := newOffsetStore()
	const slot = "heartbeats"
	r := startRunner(t, store, db.config("hb", slot, "heartbeat.interval.ms", "100", "table.include.list", "public.captured",
		"status.update.interval.ms", "50"))
	db.exec(`INSERT INTO captured VALUES (1)`)
	var beat *connect.SourceRecord
	r.pollUntil("a heartbeat", func() bool {
		for _, rec := range r.records {
			if rec.Topic == "__debezium-heartbeat.hb" {
				beat = rec
				return true
			}
		}
		return false
	})
	if *beat.Partition != 0 || beat.Key.(*connect.Struct).Get("serverName") != "hb" || beat.KeySchema.Name != "io.debezium.connector.common.ServerNameKey" ||
		beat.ValueSchema.Name != "io.debezium.connector.common.Heartbeat" || beat.SourceOffset[OffsetLSN] == nil {
		t.Fatalf("heartbeat %+v", beat)
	}
	r.commit()
	// Changes to a table that is not captured: the heartbeats' offsets
	// follow the server's position, so that the slot does not hold their
	// WAL forever.
	start := db.confirmedFlush(slot)
	for i := 0; i < 20; i++ {
		db.exec(`INSERT INTO other VALUES ($1)`, i)
	}
	target := db.currentLSN()
	r.pollUntil("a heartbeat past the uncaptured changes", func() bool {
		r.commit()
		return flushOf(t, r.newest) >= target
	})
	eventually(t, "the slot past the uncaptured changes", func() bool { return db.confirmedFlush(slot) >= target })
	if db.confirmedFlush(slot) <= start {
		t.Fatal("the slot did not move")
	}
	for _, rec := range r.records {
		if rec.Topic == "hb.public.other" {
			t.Fatalf("an event of a table not captured: %s", describe(t, rec))
		}
	}
}

func TestSnapshotModesAndFilteredPublication(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TABLE a (id int PRIMARY KEY)`)
	db.exec(`CREATE TABLE b (id int PRIMARY KEY)`)
	db.exec(`INSERT INTO a VALUES (1)`)
	db.exec(`INSERT INTO b VALUES (1)`)
	pubTables := func(pub string) string {
		var s string
		db.conn.QueryRow(t.Context(), `SELECT coalesce(string_agg(tablename, ',' ORDER BY tablename), '') FROM pg_publication_tables WHERE pubname = $1`, pub).Scan(&s)
		return s
	}

	// no_data with a filtered publication: no snapshot, the included
	// table's changes only.
	store := newOffsetStore()
	cfg := db.config("nd", "no_data", "snapshot.mode", "no_data", "publication.autocreate.mode", "filtered", "table.include.list", "public.a")
	r := startRunner(t, store, cfg)
	if got := pubTables("no_data_pub"); got != "a" {
		t.Fatalf("filtered publication tables %q", got)
	}
	db.exec(`INSERT INTO b VALUES (2)`)
	db.exec(`INSERT INTO a VALUES (2)`)
	if recs := r.pollN(1); opOf(t, recs[0]) != "c" || idOf(t, recs[0]) != "2" || recs[0].Topic != "nd.public.a" {
		t.Fatalf("no_data: %s", describe(t, recs[0]))
	}
	r.stop()
	// A start with other filters sets the publication's tables.
	cfg["table.include.list"] = "public.a,public.b"
	r = startRunner(t, store, cfg)
	if got := pubTables("no_data_pub"); got != "a,b" {
		t.Fatalf("filtered publication tables after a change %q", got)
	}
	r.stop()

	// initial_only: a snapshot, then nothing.
	store = newOffsetStore()
	cfg = db.config("io", "initial_only", "snapshot.mode", "initial_only")
	r = startRunner(t, store, cfg)
	if got := createdIDs(t, r.pollN(4)); len(got) != 4 {
		t.Fatalf("initial_only snapshot: %v", got)
	}
	r.commit()
	db.exec(`INSERT INTO a VALUES (3)`)
	for range 5 {
		if recs := r.poll(); len(recs) > 0 {
			t.Fatalf("initial_only streamed %s", describe(t, recs[0]))
		}
	}
	r.stop()
	r = startRunner(t, store, cfg)
	if recs := r.poll(); len(recs) > 0 {
		t.Fatalf("initial_only after its snapshot: %s", describe(t, recs[0]))
	}

	// disabled without the publication: a clear error.
	_, err := tryStartRunner(t, newOffsetStore(), db.config("dis", "disabled_pub", "publication.autocreate.mode", "disabled"))
	if err == nil || !strings.Contains(err.Error(), "Publication autocreation is disabled") {
		t.Fatalf("disabled: %v", err)
	}
}
