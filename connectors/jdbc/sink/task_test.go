package sink

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

// sinkWriteAll runs a task over the batches, committing after each, and stops it.
func sinkWriteAll(t *testing.T, db *jdbctest.DB, props map[string]string, batches ...[]connect.SinkRecord) {
	t.Helper()
	task, _ := sinkStart(t, db, props)
	for _, b := range batches {
		sinkPut(t, task, b...)
		sinkCommit(t, task)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
}

func sinkPrimitiveKeys(recs []connect.SinkRecord) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(recs))
	for i, r := range recs {
		r.KeySchema = connect.Int64Schema
		r.Key = int64(r.Value.(*connect.Struct).Get("id").(int32)) * 100
		out[i] = r
	}
	return out
}

func TestSinkModes(t *testing.T) {
	first := []connect.SinkRecord{
		sinkOrder(0, 0, 1, "apple", 10),
		sinkOrder(0, 1, 2, "pear", 20),
		sinkOrder(1, 0, 3, "plum", 30),
	}
	second := []connect.SinkRecord{ // new values for ids 1 and 3, same coordinates
		sinkOrder(0, 0, 1, "APPLE", 11),
		sinkOrder(1, 0, 3, "PLUM", 31),
	}
	type combo struct {
		name    string
		props   []string
		batches [][]connect.SinkRecord
		prep    [][]connect.SinkRecord // written first by an insert task with the same pk settings
		query   string
		want    []string
	}
	cols := func(tbl string, c ...string) string {
		return "SELECT " + strings.Join(c, ",") + " FROM " + tbl
	}
	combos := []combo{
		{name: "insert_none", props: []string{"pk.mode", "none"}, batches: [][]connect.SinkRecord{first},
			query: cols("t", "id", "name", "qty"), want: []string{"1|apple|10", "2|pear|20", "3|plum|30"}},
		{name: "insert_kafka", props: []string{"pk.mode", "kafka"}, batches: [][]connect.SinkRecord{first},
			query: cols("t", "__connect_topic", "__connect_partition", "__connect_offset", "id", "name"),
			want:  []string{"orders|0|0|1|apple", "orders|0|1|2|pear", "orders|1|0|3|plum"}},
		{name: "insert_kafka_renamed", props: []string{"pk.mode", "kafka", "pk.fields", "src_topic,src_part,src_off"}, batches: [][]connect.SinkRecord{first},
			query: cols("t", "src_topic", "src_part", "src_off", "name"),
			want:  []string{"orders|0|0|apple", "orders|0|1|pear", "orders|1|0|plum"}},
		{name: "insert_record_key_struct", props: []string{"pk.mode", "record_key"}, batches: [][]connect.SinkRecord{first},
			query: cols("t", "id", "name", "qty"), want: []string{"1|apple|10", "2|pear|20", "3|plum|30"}},
		{name: "insert_record_key_primitive", props: []string{"pk.mode", "record_key", "pk.fields", "order_key"},
			batches: [][]connect.SinkRecord{sinkPrimitiveKeys(first)},
			query:   cols("t", "order_key", "id", "name"), want: []string{"100|1|apple", "200|2|pear", "300|3|plum"}},
		{name: "insert_record_value", props: []string{"pk.mode", "record_value", "pk.fields", "id"}, batches: [][]connect.SinkRecord{first},
			query: cols("t", "id", "name", "qty"), want: []string{"1|apple|10", "2|pear|20", "3|plum|30"}},
		{name: "upsert_kafka", props: []string{"insert.mode", "upsert", "pk.mode", "kafka"}, batches: [][]connect.SinkRecord{first, second},
			query: cols("t", "__connect_partition", "__connect_offset", "name", "qty"),
			want:  []string{"0|0|APPLE|11", "0|1|pear|20", "1|0|PLUM|31"}},
		{name: "upsert_record_key_struct", props: []string{"insert.mode", "upsert", "pk.mode", "record_key"}, batches: [][]connect.SinkRecord{first, second},
			query: cols("t", "id", "name", "qty"), want: []string{"1|APPLE|11", "2|pear|20", "3|PLUM|31"}},
		{name: "upsert_record_key_primitive", props: []string{"insert.mode", "upsert", "pk.mode", "record_key", "pk.fields", "order_key"},
			batches: [][]connect.SinkRecord{sinkPrimitiveKeys(first), sinkPrimitiveKeys(second)},
			query:   cols("t", "order_key", "name", "qty"), want: []string{"100|APPLE|11", "200|pear|20", "300|PLUM|31"}},
		{name: "upsert_record_value", props: []string{"insert.mode", "upsert", "pk.mode", "record_value", "pk.fields", "id"}, batches: [][]connect.SinkRecord{first, second},
			query: cols("t", "id", "name", "qty"), want: []string{"1|APPLE|11", "2|pear|20", "3|PLUM|31"}},
		{name: "upsert_record_value_all_keys", props: []string{"insert.mode", "upsert", "pk.mode", "record_value"}, batches: [][]connect.SinkRecord{first, first},
			query: cols("t", "id", "name", "qty"), want: []string{"1|apple|10", "2|pear|20", "3|plum|30"}},
		{name: "update_kafka", props: []string{"insert.mode", "update", "pk.mode", "kafka"}, prep: [][]connect.SinkRecord{first}, batches: [][]connect.SinkRecord{second},
			query: cols("t", "__connect_offset", "name", "qty"), want: []string{"0|APPLE|11", "1|pear|20", "0|PLUM|31"}},
		{name: "update_record_key_struct", props: []string{"insert.mode", "update", "pk.mode", "record_key"}, prep: [][]connect.SinkRecord{first}, batches: [][]connect.SinkRecord{second},
			query: cols("t", "id", "name", "qty"), want: []string{"1|APPLE|11", "2|pear|20", "3|PLUM|31"}},
		{name: "update_record_key_primitive", props: []string{"insert.mode", "update", "pk.mode", "record_key", "pk.fields", "order_key"},
			prep: [][]connect.SinkRecord{sinkPrimitiveKeys(first)}, batches: [][]connect.SinkRecord{sinkPrimitiveKeys(second)},
			query: cols("t", "order_key", "name", "qty"), want: []string{"100|APPLE|11", "200|pear|20", "300|PLUM|31"}},
		{name: "update_record_value", props: []string{"insert.mode", "update", "pk.mode", "record_value", "pk.fields", "id"}, prep: [][]connect.SinkRecord{first}, batches: [][]connect.SinkRecord{second},
			query: cols("t", "id", "name", "qty"), want: []string{"1|APPLE|11", "2|pear|20", "3|PLUM|31"}},
	}
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		for _, c := range combos {
			t.Run(c.name, func(t *testing.T) {
				table := "t_" + c.name
				base := append([]string{"table.name.format", table, "auto.create", "true"}, c.props...)
				if c.prep != nil {
					prep := append(append([]string{}, base...), "insert.mode", "insert")
					sinkWriteAll(t, db, sinkProps(db, prep...), c.prep...)
				}
				sinkWriteAll(t, db, sinkProps(db, base...), c.batches...)
				sinkWantRows(t, sinkRows(t, db, strings.Replace(c.query, " FROM t", " FROM "+table, 1)), c.want...)
			})
		}
	})
}

func TestSinkPreCommitOffsetsAndOneTransaction(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_key", "batch.size", "2"))
		sinkPut(t, task, sinkOrder(0, 5, 1, "a", 1), sinkOrder(1, 7, 2, "b", 2), sinkOrder(0, 6, 3, "c", 3))
		// Written (one full batch) but not committed: invisible outside.
		if n := sinkCount(t, db, "orders"); n != 0 {
			t.Errorf("%d rows visible before the commit", n)
		}
		offs := sinkCommit(t, task)
		want := map[connect.TopicPartition]int64{{Topic: "orders", Partition: 0}: 7, {Topic: "orders", Partition: 1}: 8}
		if fmt.Sprint(offs) != fmt.Sprint(want) {
			t.Errorf("PreCommit = %v, want %v", offs, want)
		}
		if n := sinkCount(t, db, "orders"); n != 3 {
			t.Errorf("%d rows after the commit, want 3", n)
		}
		// Flush commits too; Close forgets the partition.
		sinkPut(t, task, sinkOrder(1, 8, 4, "d", 4))
		if err := task.Flush(nil); err != nil {
			t.Fatal(err)
		}
		if n := sinkCount(t, db, "orders"); n != 4 {
			t.Errorf("%d rows after Flush, want 4", n)
		}
		if err := task.Close([]connect.TopicPartition{{Topic: "orders", Partition: 0}}); err != nil {
			t.Fatal(err)
		}
		offs = sinkCommit(t, task)
		if len(offs) != 1 || offs[connect.TopicPartition{Topic: "orders", Partition: 1}] != 9 {
			t.Errorf("after Close PreCommit = %v", offs)
		}
	})
}

func TestSinkBatchSize(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "batch.size", "3"))
		var sizes []int
		task.execHook = func(q string, args []any) error {
			if strings.HasPrefix(q, "INSERT") || strings.HasPrefix(q, "COPY") {
				sizes = append(sizes, len(args)/3)
			}
			return nil
		}
		var recs []connect.SinkRecord
		for i := range 10 {
			recs = append(recs, sinkOrder(0, int64(i), int32(i), "x", int64(i)))
		}
		sinkPut(t, task, recs[:4]...)
		sinkPut(t, task, recs[4:]...)
		if fmt.Sprint(sizes) != "[3 3 3]" {
			t.Errorf("statements during Put insert %v rows, want [3 3 3]", sizes)
		}
		sinkCommit(t, task)
		if fmt.Sprint(sizes) != "[3 3 3 1]" {
			t.Errorf("statements insert %v rows, want [3 3 3 1]", sizes)
		}
		if n := sinkCount(t, db, "orders"); n != 10 {
			t.Errorf("%d rows, want 10", n)
		}
	})
}

func TestSinkLargeBatchSplitsByParameterLimit(t *testing.T) {
	db := jdbctest.Postgres(t)
	// Unquoted names keep the INSERT path (COPY has no such limit).
	task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "batch.size", "30000", "pk.mode", "kafka", "quote.sql.identifiers", "never"))
	var sizes []int
	task.execHook = func(q string, args []any) error {
		if !strings.HasPrefix(q, "INSERT") {
			t.Errorf("statement %.20s", q)
		}
		sizes = append(sizes, len(args))
		return nil
	}
	var recs []connect.SinkRecord
	for i := range 25000 {
		recs = append(recs, sinkOrder(0, int64(i), int32(i), "x", int64(i)))
	}
	sinkPut(t, task, recs...)
	sinkCommit(t, task)
	for _, n := range sizes {
		if n > 65535 {
			t.Errorf("a statement with %d parameters", n)
		}
	}
	if len(sizes) != 3 { // 25000 rows of 6 columns: 10922 rows a statement
		t.Errorf("%d statements: %v", len(sizes), sizes)
	}
	if n := sinkCount(t, db, "orders"); n != 25000 {
		t.Errorf("%d rows, want 25000", n)
	}
}

func TestSinkFailedBatchRollsBack(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, ctx := sinkStart(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id", "batch.size", "2"))
		sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 1, 2, "b", 2), sinkOrder(0, 2, 3, "c", 3))
		before := sinkCommit(t, task)
		if before[connect.TopicPartition{Topic: "orders"}] != 3 {
			t.Fatalf("PreCommit = %v", before)
		}
		// Record 4 is fine, 5 repeats key 2: the second batch fails and
		// the whole transaction, with 4 and 6, is rolled back.
		err := task.Put([]connect.SinkRecord{sinkOrder(0, 3, 4, "d", 4), sinkOrder(1, 0, 6, "f", 6), sinkOrder(0, 4, 2, "dup", 5)})
		if err == nil {
			err = task.Flush(nil)
		}
		if err == nil {
			t.Fatal("a duplicate key was accepted")
		}
		if !strings.Contains(err.Error(), "orders") {
			t.Errorf("error does not name the table: %v", err)
		}
		offs, err := task.PreCommit(nil)
		if err != nil {
			t.Fatalf("PreCommit after the failure: %v", err)
		}
		if fmt.Sprint(offs) != fmt.Sprint(before) {
			t.Errorf("PreCommit after the failure = %v, want %v", offs, before)
		}
		sinkWantRows(t, sinkRows(t, db, "SELECT id FROM orders"), "1", "2", "3")
		want := map[connect.TopicPartition]int64{{Topic: "orders", Partition: 0}: 3, {Topic: "orders", Partition: 1}: 0}
		if fmt.Sprint(ctx.rewinds) != fmt.Sprint(want) {
			t.Errorf("rewinds = %v, want %v", ctx.rewinds, want)
		}
		// The task goes on from the rewound position.
		sinkPut(t, task, sinkOrder(0, 3, 4, "d", 4), sinkOrder(1, 0, 6, "f", 6))
		offs = sinkCommit(t, task)
		if offs[connect.TopicPartition{Topic: "orders", Partition: 0}] != 4 || offs[connect.TopicPartition{Topic: "orders", Partition: 1}] != 1 {
			t.Errorf("PreCommit = %v", offs)
		}
		sinkWantRows(t, sinkRows(t, db, "SELECT id FROM orders"), "1", "2", "3", "4", "6")
	})
}

func TestSinkRetriesRewriteUncommitted(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "batch.size", "2", "max.retries", "2", "retry.backoff.ms", "1"))
		calls := 0
		task.execHook = func(q string, args []any) error {
			calls++
			if calls == 2 || calls == 4 { // the second batch fails twice
				return errors.New("connection reset by peer (injected)")
			}
			return nil
		}
		sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 1, 2, "b", 2), sinkOrder(0, 2, 3, "c", 3), sinkOrder(0, 3, 4, "d", 4), sinkOrder(0, 4, 5, "e", 5))
		sinkCommit(t, task)
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM orders"), "1|a", "2|b", "3|c", "4|d", "5|e")

		// Three failures in a row exhaust max.retries=2.
		task.execHook = func(string, []any) error { return errors.New("still down (injected)") }
		sinkPut(t, task, sinkOrder(0, 5, 6, "f", 6))
		_, err := task.PreCommit(nil)
		sinkWantErr(t, err, "still down")
	})
}

func TestSinkDeletes(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		props := sinkProps(db, "auto.create", "true", "pk.mode", "record_key", "delete.enabled", "true", "insert.mode", "upsert")
		task, _ := sinkStart(t, db, props)
		sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 1, 2, "b", 2), sinkOrder(0, 2, 3, "c", 3))
		sinkCommit(t, task)
		// In one batch: delete 1 and 2, write 2 again, delete 9 (absent).
		sinkPut(t, task, sinkTombstone(0, 3, 1), sinkTombstone(0, 4, 2), sinkOrder(0, 5, 2, "b2", 22), sinkTombstone(0, 6, 9))
		sinkCommit(t, task)
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM orders"), "2|b2", "3|c")
		// A sinkTombstone with a null value schema but a value schema known.
		sinkPut(t, task, sinkTombstone(0, 7, 3))
		sinkCommit(t, task)
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM orders"), "2|b2")
	})
}

func TestSinkTombstoneWithoutDeletes(t *testing.T) {
	db := jdbctest.SQLite(t)
	task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_key"))
	err := task.Put([]connect.SinkRecord{sinkTombstone(2, 9, 1)})
	want := "The JDBC sink connector 'jdbc-sink-test' is configured with 'delete.enabled=false' and 'pk.mode=record_key' and therefore requires non-null record values that are structs, but found record at (topic='orders',partition=2,offset=9,timestamp=null) with a null value and null value schema."
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant   %s", err, want)
	}
}

func TestSinkSchemalessValuesRefused(t *testing.T) {
	// JsonConverter with schemas.enable=false hands a map and no schema;
	// Confluent refuses it in every pk.mode.
	for _, mode := range []string{"none", "kafka", "record_value", "record_key"} {
		t.Run(mode, func(t *testing.T) {
			db := jdbctest.SQLite(t)
			props := sinkProps(db, "auto.create", "true", "pk.mode", mode)
			if mode == "record_key" {
				props["pk.fields"] = "id"
			}
			task, _ := sinkStart(t, db, props)
			rec := connect.SinkRecord{Topic: "orders", Partition: 0, Offset: 4, KeySchema: connect.OptionalInt64Schema, Key: int64(1),
				Value: map[string]any{"id": int64(1), "name": "x"}, Timestamp: sinkTimeMs(1700000000123)}
			err := task.Put([]connect.SinkRecord{rec})
			want := fmt.Sprintf("The JDBC sink connector 'jdbc-sink-test' is configured with 'delete.enabled=false' and 'pk.mode=%s' and therefore requires non-null record values that are structs, but found record at (topic='orders',partition=0,offset=4,timestamp=1700000000123) with a HashMap value and null value schema.", mode)
			if err == nil || err.Error() != want {
				t.Errorf("err = %v\nwant   %s", err, want)
			}
			if offs := sinkCommit(t, task); len(offs) != 0 {
				t.Errorf("PreCommit = %v after a refused record", offs)
			}
		})
	}
	t.Run("string value", func(t *testing.T) {
		db := jdbctest.SQLite(t)
		task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true"))
		err := task.Put([]connect.SinkRecord{{Topic: "orders", ValueSchema: connect.StringSchema, Value: "hello"}})
		sinkWantErr(t, err, "requires record values to be structs", "with a String value and string value schema.")
	})
}
