package sink

import (
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

var sinkTypesSchema = connect.StructSchema("types.Value",
	connect.Field{Name: "id", Schema: connect.Int32Schema},
	connect.Field{Name: "i8", Schema: connect.OptionalInt8Schema},
	connect.Field{Name: "i16", Schema: connect.OptionalInt16Schema},
	connect.Field{Name: "i64", Schema: connect.OptionalInt64Schema},
	connect.Field{Name: "f32", Schema: connect.OptionalFloat32Schema},
	connect.Field{Name: "f64", Schema: connect.OptionalFloat64Schema},
	connect.Field{Name: "b", Schema: connect.OptionalBooleanSchema},
	connect.Field{Name: "s", Schema: connect.OptionalStringSchema},
	connect.Field{Name: "raw", Schema: connect.OptionalBytesSchema},
	connect.Field{Name: "dec", Schema: connect.DecimalSchema(2).AsOptional()},
	connect.Field{Name: "day", Schema: connect.DateSchema().AsOptional()},
	connect.Field{Name: "at", Schema: connect.TimeSchema().AsOptional()},
	connect.Field{Name: "ts", Schema: connect.TimestampSchema().AsOptional()},
)

func sinkTypesRecord(offset int64, id int32, full bool) connect.SinkRecord {
	v := connect.NewStruct(sinkTypesSchema).Put("id", id)
	if full {
		v.Put("i8", int8(-8)).Put("i16", int16(1600)).Put("i64", int64(1)<<40).
			Put("f32", float32(1.5)).Put("f64", 2.25).Put("b", true).Put("s", "it's \\ \"quoted\"").
			Put("raw", []byte{0, 1, 0xfe}).
			Put("dec", &connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}).
			Put("day", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)).
			Put("at", time.UnixMilli(13*3600_000+14*60_000+15_678).UTC()).
			Put("ts", time.Date(2024, 2, 29, 23, 30, 1, 250_000_000, time.UTC))
	}
	return connect.SinkRecord{Topic: "types", Offset: offset, ValueSchema: sinkTypesSchema, Value: v}
}

// sinkTypesQuery reads the columns back as comparable text in each database.
func sinkTypesQuery(d *jdbcdb.Dialect) string {
	switch d {
	case jdbcdb.PostgreSQL:
		return `SELECT id, i8, i16, i64, f32, f64, b, s, encode(raw, 'hex'), dec::text, day::text, at::text, ts::text FROM types`
	case jdbcdb.MySQL:
		return "SELECT id, i8, i16, i64, f32, f64, b, s, hex(raw), CAST(`dec` AS CHAR), CAST(day AS CHAR), CAST(at AS CHAR), CAST(ts AS CHAR) FROM types"
	}
	return `SELECT id, i8, i16, i64, f32, f64, b, s, hex(raw), dec, day || '', at || '', ts || '' FROM types`
}

func TestSinkTypes(t *testing.T) {
	want := map[*jdbcdb.Dialect][]string{
		jdbcdb.PostgreSQL: {
			`1|-8|1600|1099511627776|1.5|2.25|true|it's \ "quoted"|0001fe|-123.45|2024-02-29|13:14:15.678|2024-02-29 23:30:01.25`,
			`2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL`,
		},
		jdbcdb.MySQL: {
			`1|-8|1600|1099511627776|1.5|2.25|1|it's \ "quoted"|0001FE|-123.45|2024-02-29|13:14:15.678|2024-02-29 23:30:01.250`,
			`2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL`,
		},
		jdbcdb.SQLite: {
			`1|-8|1600|1099511627776|1.5|2.25|1|it's \ "quoted"|0001FE|-123.45|2024-02-29|13:14:15.678|2024-02-29 23:30:01.250`,
			`2|NULL|NULL|NULL|NULL|NULL|NULL|NULL||NULL|NULL|NULL|NULL`,
		},
	}
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "topics", "types", "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id"),
			[]connect.SinkRecord{sinkTypesRecord(0, 1, true), sinkTypesRecord(1, 2, false)})
		sinkWantRows(t, sinkRows(t, db, sinkTypesQuery(db.Dialect)), want[db.Dialect]...)
	})
}

func TestSinkTimezones(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		sinkWriteAll(t, db, sinkProps(db, "topics", "types", "auto.create", "true", "db.timezone", "America/New_York"),
			[]connect.SinkRecord{sinkTypesRecord(0, 1, true)})
		q := strings.Replace(sinkTypesQuery(db.Dialect), "SELECT id, i8, i16, i64, f32, f64, b, s,", "SELECT", 1)
		q = strings.Replace(q, "encode(raw, 'hex'), dec::text,", "", 1)
		q = strings.Replace(q, "hex(raw), CAST(`dec` AS CHAR),", "", 1)
		q = strings.Replace(q, "hex(raw), dec,", "", 1)
		// DATE follows db.timezone too (date.timezone=DB_TIMEZONE), as in
		// Confluent: midnight UTC is the evening before in New York.
		got := sinkRows(t, db, q)
		if len(got) != 1 || !strings.HasPrefix(got[0], "2024-02-28|08:14:15.678|2024-02-29 18:30:01.25") {
			t.Errorf("rows = %q", got)
		}
	})
}

func TestSinkCreateTableSQL(t *testing.T) {
	cfg, err := parseSinkConfig(map[string]string{"connection.url": "jdbc:postgresql://h/db", "pk.mode": "kafka"})
	if err != nil {
		t.Fatal(err)
	}
	withDefaults := connect.StructSchema("v",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "i8", Schema: connect.Int8Schema},
		connect.Field{Name: "i16", Schema: connect.Int16Schema},
		connect.Field{Name: "f32", Schema: connect.Float32Schema},
		connect.Field{Name: "f64", Schema: connect.OptionalFloat64Schema},
		connect.Field{Name: "b", Schema: &connect.Schema{Type: connect.TypeBoolean, Default: true}},
		connect.Field{Name: "s", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "it's"}},
		connect.Field{Name: "raw", Schema: connect.BytesSchema},
		connect.Field{Name: "dec", Schema: connect.DecimalSchema(3)},
		connect.Field{Name: "day", Schema: connect.DateSchema()},
		connect.Field{Name: "at", Schema: connect.TimeSchema()},
		connect.Field{Name: "ts", Schema: connect.TimestampSchema()},
		connect.Field{Name: "tags", Schema: connect.ArrayOf(connect.StringSchema).AsOptional()},
	)
	f, err := extractSinkFields(cfg, jdbcdb.PostgreSQL, "t", nil, withDefaults)
	if err != nil {
		t.Fatal(err)
	}
	got := sinkSQL{d: jdbcdb.PostgreSQL, quote: true}.createTableSQL(jdbcdb.TableID{Schema: "s", Table: "t"}, f, cfg)
	want := `CREATE TABLE "s"."t" (
"__connect_topic" TEXT NOT NULL,
"__connect_partition" INT NOT NULL,
"__connect_offset" BIGINT NOT NULL,
"id" INT NOT NULL,
"i8" SMALLINT NOT NULL,
"i16" SMALLINT NOT NULL,
"f32" REAL NOT NULL,
"f64" DOUBLE PRECISION NULL,
"b" BOOLEAN DEFAULT TRUE,
"s" TEXT DEFAULT 'it''s',
"raw" BYTEA NOT NULL,
"dec" DECIMAL NOT NULL,
"day" DATE NOT NULL,
"at" TIME NOT NULL,
"ts" TIMESTAMP NOT NULL,
"tags" TEXT[] NULL,
PRIMARY KEY("__connect_topic","__connect_partition","__connect_offset"))`
	if got != want {
		t.Errorf("Postgres:\n%s\nwant:\n%s", got, want)
	}

	// MySQL: bounded key strings, DECIMAL(65,scale), no arrays.
	cfg.pkMode = sinkPKRecordKey
	key := connect.StructSchema("k", connect.Field{Name: "code", Schema: connect.StringSchema})
	noArray := *withDefaults
	noArray.Fields = noArray.Fields[:len(noArray.Fields)-1]
	f, err = extractSinkFields(cfg, jdbcdb.MySQL, "t", key, &noArray)
	if err != nil {
		t.Fatal(err)
	}
	got = sinkSQL{d: jdbcdb.MySQL, quote: true}.createTableSQL(jdbcdb.TableID{Table: "t"}, f, cfg)
	for _, part := range []string{"`code` VARCHAR(256) NOT NULL", "`i8` TINYINT NOT NULL", "`b` TINYINT DEFAULT 1",
		"`raw` VARBINARY(1024) NOT NULL", "`dec` DECIMAL(65,3) NOT NULL", "`at` TIME(3) NOT NULL", "`ts` DATETIME(3) NOT NULL",
		"PRIMARY KEY(`code`)"} {
		if !strings.Contains(got, part) {
			t.Errorf("MySQL DDL lacks %q:\n%s", part, got)
		}
	}
	if _, err := extractSinkFields(cfg, jdbcdb.MySQL, "t", key, withDefaults); err == nil || !strings.Contains(err.Error(), "'tags'") {
		t.Errorf("MySQL array: %v", err)
	}
}

func TestSinkNestedValuesRefused(t *testing.T) {
	nested := connect.StructSchema("v",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "address", Schema: connect.StructSchema("addr", connect.Field{Name: "city", Schema: connect.StringSchema})},
	)
	mapped := connect.StructSchema("v",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "attrs", Schema: connect.MapOf(connect.StringSchema, connect.StringSchema)},
	)
	listed := connect.StructSchema("v",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "tags", Schema: connect.ArrayOf(connect.StringSchema)},
	)
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		cases := []struct {
			schema *connect.Schema
			field  string
			value  any
		}{
			{nested, "address", connect.NewStruct(nested.Fields[1].Schema).Put("city", "Oslo")},
			{mapped, "attrs", map[string]any{"a": "b"}},
			{listed, "tags", []any{"x"}},
		}
		for _, c := range cases {
			if db.Dialect == jdbcdb.PostgreSQL && c.field == "tags" {
				continue // PostgreSQL takes arrays: TestSinkPostgresArrays
			}
			task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true"))
			v := connect.NewStruct(c.schema).Put("id", int32(1)).Put(c.field, c.value)
			err := task.Put([]connect.SinkRecord{{Topic: "orders", ValueSchema: c.schema, Value: v}})
			if err == nil {
				err = task.Flush(nil)
			}
			sinkWantErr(t, err, "'"+c.field+"'", "Unsupported source data type")
		}
	})
}

func TestSinkPostgresArrays(t *testing.T) {
	db := jdbctest.Postgres(t)
	s := connect.StructSchema("v",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "tags", Schema: connect.ArrayOf(connect.OptionalStringSchema)},
		connect.Field{Name: "nums", Schema: connect.ArrayOf(connect.Int32Schema).AsOptional()},
	)
	v := connect.NewStruct(s).Put("id", int32(1)).Put("tags", []any{"a", nil, "c"}).Put("nums", []any{int32(1), int32(2)})
	sinkWriteAll(t, db, sinkProps(db, "auto.create", "true"), []connect.SinkRecord{{Topic: "orders", ValueSchema: s, Value: v}})
	sinkWantRows(t, sinkRows(t, db, "SELECT id, tags::text, nums::text FROM orders"), "1|{a,NULL,c}|{1,2}")
}

func TestSinkPostgresCopyColumnTypes(t *testing.T) {
	db := jdbctest.Postgres(t)
	// A user's table: narrower and zoned types than auto.create makes.
	db.Exec(t, `CREATE TABLE types (id SMALLINT PRIMARY KEY, i8 INT, i16 INT, i64 NUMERIC(20), f32 DOUBLE PRECISION, f64 REAL,
		b BOOLEAN, s VARCHAR(40), raw BYTEA, dec NUMERIC(10,2), day DATE, at TIME, ts TIMESTAMPTZ)`)
	task, _ := sinkStart(t, db, sinkProps(db, "topics", "types", "db.timezone", "Europe/Paris"))
	var stmts []string
	task.execHook = func(q string, _ []any) error { stmts = append(stmts, strings.Fields(q)[0]); return nil }
	sinkPut(t, task, sinkTypesRecord(0, 1, true), sinkTypesRecord(1, 2, false))
	sinkCommit(t, task)
	// i64 goes to a NUMERIC column, which the COPY path does not take.
	if strings.Join(stmts, ",") != "INSERT" {
		t.Errorf("statements %v", stmts)
	}
	sinkWantRows(t, sinkRows(t, db, `SELECT id, i64::text, f64::text, s, dec::text, day::text, at::text, ts AT TIME ZONE 'UTC' FROM types`),
		`1|1099511627776|2.25|it's \ "quoted"|-123.45|2024-02-29|14:14:15.678|2024-02-29 23:30:01.250`,
		`2|NULL|NULL|NULL|NULL|NULL|NULL|NULL`)

	db.Exec(t, `CREATE TABLE narrow (id SMALLINT PRIMARY KEY, day DATE, ts TIMESTAMPTZ, s CHAR(3))`)
	s := connect.StructSchema("n",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "day", Schema: connect.DateSchema()},
		connect.Field{Name: "ts", Schema: connect.TimestampSchema()},
		connect.Field{Name: "s", Schema: connect.StringSchema})
	rec := func(off int64, id int64) connect.SinkRecord {
		return connect.SinkRecord{Topic: "narrow", Offset: off, ValueSchema: s, Value: connect.NewStruct(s).Put("id", id).
			Put("day", time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)).Put("ts", time.UnixMilli(1700000000123).UTC()).Put("s", "abc")}
	}
	task, _ = sinkStart(t, db, sinkProps(db, "topics", "narrow", "insert.mode", "upsert", "pk.mode", "record_value", "pk.fields", "id"))
	stmts = nil
	task.execHook = func(q string, _ []any) error { stmts = append(stmts, strings.Fields(q)[0]); return nil }
	sinkPut(t, task, rec(0, 7))
	sinkCommit(t, task)
	sinkPut(t, task, rec(1, 7)) // an existing key: COPY fails, ON CONFLICT writes
	sinkCommit(t, task)
	if strings.Join(stmts, ",") != "SAVEPOINT,COPY,RELEASE,SAVEPOINT,COPY,ROLLBACK,INSERT" {
		t.Errorf("statements %v", stmts)
	}
	sinkWantRows(t, sinkRows(t, db, `SELECT id, day::text, extract(epoch from ts)::text, s FROM narrow`), "7|2024-01-02|1700000000.123000|abc")
	err := task.Put([]connect.SinkRecord{rec(2, 70000)})
	if err == nil {
		_, err = task.PreCommit(nil)
	}
	sinkWantErr(t, err, "70000", "narrow")

	task, _ = sinkStart(t, db, sinkProps(db, "topics", "narrow"))
	err = task.Put([]connect.SinkRecord{rec(3, 70000)})
	if err == nil {
		_, err = task.PreCommit(nil)
	}
	sinkWantErr(t, err, "Field 'id' holds 70000, out of range for a smallint column")
}

// On PostgreSQL upsert batches load with COPY in the background while the
// next batch is prepared; a batch whose keys exist falls back to
// statements when the next one is written, and that one may itself be
// written with statements (COPY is skipped for a while after a fallback).
// Every row must end with its last value, in order.
func TestSinkPostgresBackgroundCopyUpsertFallback(t *testing.T) {
	db := jdbctest.Postgres(t)
	task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "insert.mode", "upsert",
		"pk.mode", "record_value", "pk.fields", "id", "batch.size", "2"))
	var stmts []string
	task.execHook = func(q string, _ []any) error { stmts = append(stmts, strings.Fields(q)[0]); return nil }
	var recs []connect.SinkRecord
	for i := range 6 {
		recs = append(recs, sinkOrder(0, int64(i), int32(i+1), "old", 1))
	}
	sinkPut(t, task, recs...)
	sinkCommit(t, task)
	recs = recs[:0]
	for i := range 6 {
		recs = append(recs, sinkOrder(0, int64(6+i), int32(i+1), "new", int64(i+10)))
	}
	recs = append(recs, sinkOrder(0, 12, 7, "seven", 7))
	sinkPut(t, task, recs...)
	sinkCommit(t, task)
	sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty FROM orders"),
		"1|new|10", "2|new|11", "3|new|12", "4|new|13", "5|new|14", "6|new|15", "7|seven|7")
	if got := strings.Join(stmts, ","); !strings.Contains(got, "COPY,ROLLBACK,INSERT") {
		t.Errorf("statements %s: no COPY fell back to INSERT ... ON CONFLICT", got)
	}
}

// Insert batches of one table stream into one COPY across Puts; a batch
// for another table ends it and starts its own. A failure inside a
// stream rolls the whole transaction back.
func TestSinkPostgresStreamingCopy(t *testing.T) {
	db := jdbctest.Postgres(t)
	task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "topics", "orders,returns",
		"table.name.format", "${topic}", "pk.mode", "record_value", "pk.fields", "id", "batch.size", "2"))
	rec := func(topic string, off int64, id int32) connect.SinkRecord {
		r := sinkOrder(0, off, id, topic, off)
		r.Topic = topic
		return r
	}
	var off int64
	put := func(topic string, ids ...int32) {
		t.Helper()
		var recs []connect.SinkRecord
		for _, id := range ids {
			recs = append(recs, rec(topic, off, id))
			off++
		}
		sinkPut(t, task, recs...)
	}
	var copies []string
	task.execHook = func(q string, _ []any) error {
		if strings.HasPrefix(q, "COPY") {
			copies = append(copies, q)
		}
		return nil
	}
	put("orders", 1, 2, 3, 4)
	put("orders", 5, 6)
	put("returns", 1, 2)
	put("orders", 7, 8)
	want := []string{`COPY "orders"`, `COPY "orders" (continued)`, `COPY "orders" (continued)`, `COPY "returns"`, `COPY "orders"`}
	if !slices.Equal(copies, want) {
		t.Errorf("COPYs %q, want %q", copies, want)
	}
	task.execHook = nil
	sinkCommit(t, task)
	sinkWantRows(t, sinkRows(t, db, "SELECT id FROM orders"), "1", "2", "3", "4", "5", "6", "7", "8")
	sinkWantRows(t, sinkRows(t, db, "SELECT id FROM returns"), "1", "2")

	put("orders", 9, 10)
	err := task.Put([]connect.SinkRecord{rec("orders", off, 11), rec("orders", off+1, 3)}) // 3 exists
	if err == nil {
		_, err = task.PreCommit(nil)
	}
	sinkWantErr(t, err, "orders", "duplicate key")
	sinkWantRows(t, sinkRows(t, db, "SELECT id FROM orders"), "1", "2", "3", "4", "5", "6", "7", "8")
}

// Upsert batches of new keys stream into one COPY inside one savepoint; a
// key met twice in the stream (or already in the table) rolls the whole
// stream back, and every batch in it is written again with statements, in
// order, so that each row ends with its last value.
func TestSinkPostgresStreamingUpsertCopy(t *testing.T) {
	db := jdbctest.Postgres(t)
	task, _ := sinkStart(t, db, sinkProps(db, "auto.create", "true", "insert.mode", "upsert",
		"pk.mode", "record_value", "pk.fields", "id", "batch.size", "2"))
	var stmts []string
	task.execHook = func(q string, _ []any) error {
		if strings.HasSuffix(q, "(continued)") {
			q = "COPY+"
		}
		stmts = append(stmts, strings.Fields(q)[0])
		return nil
	}
	var off int64
	put := func(recs ...connect.SinkRecord) {
		t.Helper()
		for i := range recs {
			recs[i].Offset = off
			off++
		}
		sinkPut(t, task, recs...)
	}
	put(sinkOrder(0, 0, 1, "a", 1), sinkOrder(0, 0, 2, "b", 2), sinkOrder(0, 0, 3, "c", 3), sinkOrder(0, 0, 4, "d", 4))
	put(sinkOrder(0, 0, 5, "e", 5), sinkOrder(0, 0, 6, "f", 6))
	sinkCommit(t, task)
	if got := strings.Join(stmts, ","); got != "SAVEPOINT,COPY,COPY+,COPY+,RELEASE" {
		t.Errorf("statements %s, want one COPY streaming three batches", got)
	}
	sinkWantRows(t, sinkRows(t, db, "SELECT id, name FROM orders"), "1|a", "2|b", "3|c", "4|d", "5|e", "6|f")

	stmts = nil
	put(sinkOrder(0, 0, 7, "g", 7), sinkOrder(0, 0, 8, "h", 8))
	put(sinkOrder(0, 0, 7, "g2", 70), sinkOrder(0, 0, 9, "i", 9)) // 7 again, in the same stream
	sinkCommit(t, task)
	if got := strings.Join(stmts, ","); got != "SAVEPOINT,COPY,COPY+,ROLLBACK,INSERT,INSERT" {
		t.Errorf("statements %s, want the stream rolled back and both batches written again", got)
	}
	sinkWantRows(t, sinkRows(t, db, "SELECT id, name, qty FROM orders WHERE id >= 7"), "7|g2|70", "8|h|8", "9|i|9")
}
