package source

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

var srcOrdersBase = time.Date(2024, 7, 10, 12, 0, 0, 0, time.UTC)

// srcOrderTS is the timestamp srcInsertOrders gives an order.
func srcOrderTS(id int) time.Time { return srcOrdersBase.Add(time.Duration(id/3) * time.Second) }

// The seed's flow at the task level: a table orders with 1042 rows is read
// fully (offset incrementing 1042), read again from an offset altered to
// 500 (rows 501..1042 again), and from 1043 (row 1043 skipped); rows
// inserted later are picked up.
func TestSourceSeedFlow(t *testing.T) {
	for _, mode := range []string{srcModeTimestampIncrementing, srcModeIncrementing} {
		t.Run(mode, func(t *testing.T) {
			jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) { srcSeedFlow(t, db, mode) })
		})
	}
}

func srcSeedFlow(t *testing.T, db *jdbctest.DB, mode string) {
	srcCreateOrders(t, db)
	srcInsertOrders(t, db, 1, 1042, srcOrdersBase)
	cfg := srcBaseConfig(db, map[string]string{
		srcMode:               mode,
		srcIncrementingColumn: "id",
		srcTableWhitelist:     "orders",
	})
	if mode == srcModeTimestampIncrementing {
		cfg[srcTimestampColumn] = "updated_at"
	}
	id := srcTableID(db, "orders")
	wantTable := map[string]string{jdbcdb.PostgreSQL.Name: db.Schema + ".orders", jdbcdb.MySQL.Name: db.Schema + ".orders", jdbcdb.SQLite.Name: "orders"}[db.Dialect.Name]
	if id.String() != wantTable {
		t.Fatalf("table id %s, want %s", id, wantTable)
	}
	partition := map[string]any{"protocol": "1", "table": wantTable}
	offsetOf := func(id int) map[string]any {
		o := map[string]any{"incrementing": int64(id)}
		if mode == srcModeTimestampIncrementing {
			o["timestamp"] = srcOrderTS(id).UnixMilli()
			o["timestamp_nanos"] = int64(srcOrderTS(id).Nanosecond())
		}
		return o
	}

	// 1. A first run reads the 1042 rows, in order, to offset 1042.
	ctx := &srcTestContext{}
	task := srcStartTask(t, cfg, ctx)
	recs := srcPollN(t, task, ctx, 1042)
	if got := srcIDs(t, recs); !slices.Equal(got, srcSeq(1, 1042)) {
		t.Fatalf("ids %v...%v, want 1..1042", got[:3], got[len(got)-3:])
	}
	for _, r := range recs {
		if r.Topic != "db-orders" || !reflect.DeepEqual(r.SourcePartition, partition) || r.Key != nil || r.KeySchema != nil {
			t.Fatalf("record topic %q partition %v key %v", r.Topic, r.SourcePartition, r.Key)
		}
	}
	if got := srcLastOffset(recs); !reflect.DeepEqual(got, offsetOf(1042)) {
		t.Fatalf("last offset %v, want %v", got, offsetOf(1042))
	}
	stored, _ := ctx.Offset(partition)
	if !reflect.DeepEqual(stored, offsetOf(1042)) {
		t.Fatalf("stored offset %v", stored)
	}
	last := recs[len(recs)-1].Value.(*connect.Struct)
	if last.Schema().Name != "orders" || last.Get("customer") != "customer-6" {
		t.Fatalf("last record %v (schema %q)", last, last.Schema().Name)
	}
	if dec, ok := last.Get("amount").(*connect.Decimal); !ok || dec.String() != "10.42" {
		t.Fatalf("amount %v", last.Get("amount"))
	}
	task.Stop()

	// 2. The offset altered to 500, as the seed's PATCH: rows 501..1042
	// come again. In timestamp+incrementing mode the offset holds the
	// timestamp of row 500, or (a PATCH with incrementing only) none.
	alters := []map[string]any{offsetOf(500)}
	if mode == srcModeTimestampIncrementing {
		alters = append(alters, map[string]any{"incrementing": int64(500)})
	}
	for _, o := range alters {
		ctx := &srcTestContext{}
		ctx.set(partition, o)
		task := srcStartTask(t, cfg, ctx)
		recs := srcPollN(t, task, ctx, 542)
		if got := srcIDs(t, recs); !slices.Equal(got, srcSeq(501, 1042)) {
			t.Fatalf("from %v: ids %v...%v, want 501..1042", o, got[:3], got[len(got)-3:])
		}
		task.Stop()
	}

	// 3. Rows 1043..1050 arrive; an offset of 1043 skips row 1043.
	srcInsertOrders(t, db, 1043, 1050, srcOrdersBase)
	for _, o := range []map[string]any{offsetOf(1043), {"incrementing": int64(1043)}} {
		ctx := &srcTestContext{}
		ctx.set(partition, o)
		task := srcStartTask(t, cfg, ctx)
		recs := srcPollN(t, task, ctx, 7)
		if got := srcIDs(t, recs); !slices.Equal(got, srcSeq(1044, 1050)) {
			t.Fatalf("from %v: ids %v, want 1044..1050", o, got)
		}
		// 4. A row inserted while the task runs is picked up.
		srcInsertOrders(t, db, 1051, 1051, srcOrdersBase)
		recs = srcPollN(t, task, ctx, 1)
		if got := srcIDs(t, recs); !slices.Equal(got, []int64{1051}) {
			t.Fatalf("new row: ids %v", got)
		}
		if got := srcLastOffset(recs); !reflect.DeepEqual(got, offsetOf(1051)) {
			t.Fatalf("offset after the new row %v, want %v", got, offsetOf(1051))
		}
		task.Stop()
		db.Exec(t, "DELETE FROM orders WHERE id = 1051")
	}

	// 5. A legacy protocol-0 offset {"table":"orders"} is read when no
	// protocol-1 offset exists; records are written with protocol 1.
	ctx = &srcTestContext{}
	ctx.set(map[string]any{"table": "orders"}, offsetOf(1048))
	task = srcStartTask(t, cfg, ctx)
	recs = srcPollN(t, task, ctx, 2)
	if got := srcIDs(t, recs); !slices.Equal(got, []int64{1049, 1050}) {
		t.Fatalf("from the legacy offset: ids %v", got)
	}
	if !reflect.DeepEqual(recs[0].SourcePartition, partition) {
		t.Fatalf("partition %v", recs[0].SourcePartition)
	}
}
