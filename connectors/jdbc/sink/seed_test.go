package sink

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// The reprocessing story of the offsets guide: a sink wrote the orders of
// eip.orders.placed (3 partitions) into the wrong table; the connector is
// stopped, table.name.format fixed, the offsets of the 3 partitions reset
// to 0, and the connector resumed with upsert. The right table must end
// with every order exactly once, at its latest state, however often the
// topic is replayed.

var (
	sinkPlacedKey   = connect.StructSchema("eip.orders.placed.Key", connect.Field{Name: "order_id", Schema: connect.StringSchema})
	sinkPlacedValue = connect.StructSchema("eip.orders.placed.Value",
		connect.Field{Name: "order_id", Schema: connect.StringSchema},
		connect.Field{Name: "customer", Schema: connect.StringSchema},
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "status", Schema: connect.StringSchema},
		connect.Field{Name: "placed_at", Schema: connect.TimestampSchema()},
	)
)

const sinkPlacedTopic = "eip.orders.placed"

// sinkPlacedLog returns the topic's 3 partitions: 30 orders, keyed by
// order id (so each order stays on one partition), 10 of which are later
// updated to status SHIPPED.
func sinkPlacedLog() [3][]connect.SinkRecord {
	var parts [3][]connect.SinkRecord
	add := func(id int, status string, cents int64) {
		p := id % 3
		orderID := fmt.Sprintf("ORD-%03d", id)
		v := connect.NewStruct(sinkPlacedValue).
			Put("order_id", orderID).Put("customer", fmt.Sprintf("cust-%d", id%7)).
			Put("amount", &connect.Decimal{Unscaled: big.NewInt(cents), Scale: 2}).
			Put("status", status).
			Put("placed_at", time.Date(2026, 7, 10, 14, id, 0, 0, time.UTC))
		parts[p] = append(parts[p], connect.SinkRecord{
			Topic: sinkPlacedTopic, Partition: int32(p), Offset: int64(len(parts[p])),
			KeySchema: sinkPlacedKey, Key: connect.NewStruct(sinkPlacedKey).Put("order_id", orderID),
			ValueSchema: sinkPlacedValue, Value: v,
			Timestamp: time.UnixMilli(1783694000000 + int64(id)), TimestampType: connect.CreateTime,
		})
	}
	for id := 1; id <= 30; id++ {
		add(id, "PLACED", int64(id)*100+99)
	}
	for id := 1; id <= 30; id += 3 {
		add(id, "SHIPPED", int64(id)*100+99)
	}
	return parts
}

// sinkConsume feeds a task the partitions from offset 0 as a consumer does:
// polls of up to 7 records, taken from the partitions in turn.
func sinkConsume(t *testing.T, task *Task, parts [3][]connect.SinkRecord) map[connect.TopicPartition]int64 {
	t.Helper()
	var pos [3]int
	for {
		var poll []connect.SinkRecord
		for p := range parts {
			n := min(len(parts[p])-pos[p], 3)
			poll = append(poll, parts[p][pos[p]:pos[p]+n]...)
			pos[p] += n
		}
		if len(poll) == 0 {
			break
		}
		sinkPut(t, task, poll...)
	}
	return sinkCommit(t, task)
}

func TestSinkSeedReprocessIntoRightTable(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		parts := sinkPlacedLog()
		wantOffsets := map[connect.TopicPartition]int64{}
		total := 0
		for p := range parts {
			wantOffsets[connect.TopicPartition{Topic: sinkPlacedTopic, Partition: int32(p)}] = int64(len(parts[p]))
			total += len(parts[p])
		}

		// The misconfigured connector: every record lands in the wrong table.
		wrong := sinkProps(db, "topics", sinkPlacedTopic, "table.name.format", "orders_archive", "auto.create", "true")
		task, _ := sinkStart(t, db, wrong)
		if offs := sinkConsume(t, task, parts); fmt.Sprint(offs) != fmt.Sprint(wantOffsets) {
			t.Fatalf("committed %v, want %v", offs, wantOffsets)
		}
		task.Stop()
		if n := sinkCount(t, db, "orders_archive"); n != total {
			t.Fatalf("wrong table has %d rows, want %d", n, total)
		}

		// Stop, fix the config, reset the 3 partitions to offset 0.
		right := sinkProps(db, "topics", sinkPlacedTopic, "table.name.format", "orders", "auto.create", "true",
			"insert.mode", "upsert", "pk.mode", "record_key", "pk.fields", "order_id")
		conn := &Connector{}
		zero := int64(0)
		reset := map[connect.TopicPartition]*int64{}
		for p := range parts {
			reset[connect.TopicPartition{Topic: sinkPlacedTopic, Partition: int32(p)}] = &zero
		}
		if ok, err := conn.AlterOffsets(right, reset); !ok || err != nil {
			t.Fatalf("AlterOffsets = %v, %v", ok, err)
		}
		if err := conn.Start(nil, right); err != nil {
			t.Fatal(err)
		}
		cfgs, _ := conn.TaskConfigs(1)

		want := make([]string, 0, 30)
		for id := 1; id <= 30; id++ {
			status := "PLACED"
			if id%3 == 1 {
				status = "SHIPPED"
			}
			want = append(want, fmt.Sprintf("ORD-%03d|%d.99|%s", id, id, status))
		}
		query := "SELECT order_id, amount, status FROM orders"
		if db.Dialect == jdbcdb.PostgreSQL {
			query = "SELECT order_id, amount::text, status FROM orders"
		}
		// Reprocessed once, and then again (a second reset, or a crash
		// before the offsets were committed): still one row per order.
		for round := 1; round <= 2; round++ {
			task, _ := sinkStart(t, db, cfgs[0])
			if offs := sinkConsume(t, task, parts); fmt.Sprint(offs) != fmt.Sprint(wantOffsets) {
				t.Errorf("round %d committed %v, want %v", round, offs, wantOffsets)
			}
			task.Stop()
			sinkWantRows(t, sinkRows(t, db, query), want...)
		}
		if n := sinkCount(t, db, "orders_archive"); n != total {
			t.Errorf("the wrong table changed: %d rows", n)
		}
	})
}
