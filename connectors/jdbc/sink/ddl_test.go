package sink

import (
	"fmt"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

var (
	sinkOrderV2 = connect.StructSchema("orders.Value",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "name", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "qty", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "note", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "priority", Schema: &connect.Schema{Type: connect.TypeInt32, Default: int32(5)}},
	)
	sinkOrderV3 = connect.StructSchema("orders.Value",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "name", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "qty", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "note", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "priority", Schema: &connect.Schema{Type: connect.TypeInt32, Default: int32(5)}},
		connect.Field{Name: "region", Schema: connect.StringSchema},
	)
)

func sinkV2Record(offset int64, id int32, note string) connect.SinkRecord {
	r := sinkOrder(0, offset, id, "n", 1)
	r.ValueSchema = sinkOrderV2
	r.Value = connect.NewStruct(sinkOrderV2).Put("id", id).Put("name", "n").Put("qty", int64(1)).Put("note", note)
	return r
}

func TestSinkAutoEvolve(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "auto.evolve", "true", "pk.mode", "record_key", "batch.size", "10"))
		// Records of two schemas in one Put: the first batch is written,
		// the table gains note and priority, the second batch follows.
		sinkPut(t, task, sinkOrder(0, 0, 1, "a", 1), sinkV2Record(1, 2, "hello"), sinkOrder(0, 2, 3, "c", 3))
		sinkCommit(t, task)
		sinkWantRows(t, sinkRows(t, db, "SELECT id, note, priority FROM orders"), "1|NULL|5", "2|hello|5", "3|NULL|5")

		// A new required field without a default cannot be added.
		r := sinkOrder(0, 3, 4, "d", 4)
		r.ValueSchema = sinkOrderV3
		r.Value = connect.NewStruct(sinkOrderV3).Put("id", int32(4)).Put("region", "eu")
		err := task.Put([]connect.SinkRecord{r})
		sinkWantErr(t, err, "Cannot ALTER to add missing field", "name='region'", "not optional")
	})
}

func TestSinkAutoEvolveRefusals(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_key"), []connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
		q := db.Dialect.Quote("orders")

		// auto.evolve off: the missing columns are named.
		task, _ := sinkStart(t, db, sinkProps(db, "pk.mode", "record_key"))
		err := task.Put([]connect.SinkRecord{sinkV2Record(1, 2, "x")})
		want := fmt.Sprintf("Table %s is missing fields ([SinkRecordField{schema=Schema{STRING}, name='note', isPrimaryKey=false}, SinkRecordField{schema=Schema{INT32}, name='priority', isPrimaryKey=false}]) and auto-evolution is disabled", q)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant   %s", err, want)
		}

		// auto.evolve on, but region is required and has no default.
		task, _ = sinkStart(t, db, sinkProps(db, "pk.mode", "record_key", "auto.evolve", "true"))
		r := sinkOrder(0, 3, 4, "d", 4)
		r.ValueSchema = sinkOrderV3
		r.Value = connect.NewStruct(sinkOrderV3).Put("id", int32(4)).Put("region", "eu")
		err = task.Put([]connect.SinkRecord{r})
		want = "Cannot ALTER to add missing field SinkRecordField{schema=Schema{STRING}, name='region', isPrimaryKey=false}, as it is not optional and does not have a default value"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant   %s", err, want)
		}
		if n := sinkCount(t, db, q); n != 1 {
			t.Errorf("%d rows", n)
		}
	})
}

func TestSinkMissingTable(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		task, _ := sinkStart(t, db, sinkProps(db, "table.name.format", "kafka_${topic}"))
		err := task.Put([]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
		want := fmt.Sprintf("Table %s is missing and auto-creation is disabled", db.Dialect.Quote("kafka_orders"))
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	})
}

func TestSinkExistingTableAndQualifiedNames(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		// A table the user made, in a named schema (database for
		// MySQL), with a column the records do not have.
		schema := "main"
		switch db.Dialect {
		case jdbcdb.PostgreSQL:
			schema = "sales_" + db.Schema
			db.Exec(t, "CREATE SCHEMA "+schema)
			t.Cleanup(func() { db.DB.Exec("DROP SCHEMA " + schema + " CASCADE") })
		case jdbcdb.MySQL:
			schema = db.Schema
		}
		db.Exec(t, "CREATE TABLE "+schema+".placed (id INT PRIMARY KEY, name VARCHAR(100), qty BIGINT, created VARCHAR(20) DEFAULT 'now')")
		sinkWriteAll(t, db, sinkProps(db, "table.name.format", schema+".placed", "pk.mode", "record_key", "insert.mode", "upsert"),
			[]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 1, 1, "b", 2)})
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty, created FROM "+schema+".placed"), "1|b|2|now")
	})
}

func TestSinkQuoteNever(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "table.name.format", "Kafka_${topic}", "auto.create", "true", "quote.sql.identifiers", "never"),
			[]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
		// Unquoted, the name folds as the database folds it; PostgreSQL's
		// dialect lowercases it, as Confluent's does. MariaDB on Linux
		// keeps the case of table names.
		table := "kafka_orders"
		if db.Dialect == jdbcdb.MySQL {
			table = "Kafka_orders"
		}
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM "+table), "1|a")
	})
}

func TestSinkUpsertRepeatedKeyInOneBatch(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_key", "insert.mode", "upsert"),
			[]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 1, 2, "b", 1), sinkOrder(0, 2, 1, "a2", 2), sinkOrder(0, 3, 1, "a3", 3)})
		sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty FROM orders"), "1|a3|3", "2|b|1")
	})
}

func TestSinkTableTypes(t *testing.T) {
	db := jdbctest.Postgres(t)
	db.Exec(t, "CREATE TABLE base (id INT PRIMARY KEY, name TEXT, qty BIGINT)")
	db.Exec(t, "CREATE VIEW orders AS SELECT * FROM base")
	task, _ := sinkStart(t, db, sinkProps(db, "pk.mode", "record_key"))
	err := task.Put([]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
	sinkWantErr(t, err, `Table "orders" is missing and auto-creation is disabled`)

	sinkWriteAll(t, db, sinkProps(db, "pk.mode", "record_key", "table.types", "TABLE,VIEW"), []connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
	sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM base"), "1|a")
}

func TestSinkFieldsWhitelist(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id", "fields.whitelist", "name"),
			[]connect.SinkRecord{sinkOrder(0, 0, 1, "a", 1)})
		sinkWantRows(t, sinkRows(t, db, "SELECT * FROM orders"), "1|a")
	})
}

func TestSinkDateTimezoneUTC(t *testing.T) {
	db := jdbctest.Postgres(t)
	sinkWriteAll(t, db, sinkProps(db, "topics", "types", "auto.create", "true", "db.timezone", "Asia/Tokyo", "date.timezone", "UTC"),
		[]connect.SinkRecord{sinkTypesRecord(0, 1, true)})
	sinkWantRows(t, sinkRows(t, db, "SELECT day::text, ts::text FROM types"), "2024-02-29|2024-03-01 08:30:01.25")
}
