package source

import (
	"encoding/binary"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
	"github.com/connectd/connectd/connectors/jdbc/pgbinary"
	"github.com/jackc/pgx/v5/pgtype"
)

// srcTypesCase is a table of many column types and what the source makes
// of it: one "name:schema" per field, and each row's values.
type srcTypesCase struct {
	ddl    string
	insert []string
	config map[string]string
	fields []string
	rows   [][]string
}

var srcTypesGoldens = map[string][]srcTypesCase{
	"postgres": {{
		ddl: `CREATE TABLE types (
  id SERIAL PRIMARY KEY, c_bool BOOLEAN, c_int2 SMALLINT NOT NULL, c_int4 INTEGER, c_int8 BIGINT,
  c_real REAL, c_double DOUBLE PRECISION, c_numeric NUMERIC(10,2), c_numeric0 NUMERIC(5,0), c_numeric_free NUMERIC,
  c_char CHAR(3), c_varchar VARCHAR(20), c_text TEXT, c_bytea BYTEA, c_date DATE, c_time TIME(3), c_timetz TIMETZ,
  c_ts TIMESTAMP(6), c_tstz TIMESTAMPTZ, c_json JSON, c_jsonb JSONB, c_uuid UUID, c_bit1 BIT(1), c_bit4 BIT(4),
  c_bit16 BIT(16), c_xml XML, c_interval INTERVAL, c_arr INT[])`,
		insert: []string{
			`INSERT INTO types VALUES (1, true, -2, 2147483647, -9223372036854775808, 1.5, 2.25, -12345678.91, 99999, 42,
  'ab', 'héllo', 'text', '\x00ff10', '2024-02-29', '13:14:15.678', '13:14:15+02', '2024-01-02 03:04:05.123456',
  '2024-01-02 03:04:05.5+01', '{"a": 1}', '{"b": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', B'1', B'0101',
  B'1000000000000001', '<a>x</a>', '1 day', '{1,2}')`,
			`INSERT INTO types (id, c_int2) VALUES (2, 7)`,
		},
		fields: []string{"id:INT32", "c_bool:BOOLEAN?", "c_int2:INT16", "c_int4:INT32?", "c_int8:INT64?", "c_real:FLOAT32?",
			"c_double:FLOAT64?", "c_numeric:Decimal{scale=2,connect.decimal.precision=10}?",
			"c_numeric0:Decimal{scale=0,connect.decimal.precision=5}?", "c_numeric_free:Decimal{scale=0,connect.decimal.precision=0}?",
			"c_char:STRING?", "c_varchar:STRING?", "c_text:STRING?", "c_bytea:BYTES?", "c_date:Date?", "c_time:Time?",
			"c_timetz:Time?", "c_ts:Timestamp?", "c_tstz:Timestamp?", "c_json:STRING?", "c_jsonb:STRING?", "c_uuid:STRING?",
			"c_bit1:BOOLEAN?", "c_bit4:INT8?", "c_bit16:BYTES?", "c_xml:STRING?"},
		rows: [][]string{
			{"int32(1)", "bool(true)", "int16(-2)", "int32(2147483647)", "int64(-9223372036854775808)", "float32(1.5)",
				"float64(2.25)", "-12345678.91", "99999", "42", `"ab "`, `"héllo"`, `"text"`, "0x00ff10",
				"2024-02-29T00:00:00Z", "1970-01-01T13:14:15.678Z", "1970-01-01T11:14:15Z", "2024-01-02T03:04:05.123456Z",
				"2024-01-02T02:04:05.5Z", `"{\"a\": 1}"`, `"{\"b\": [1, 2]}"`, `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`,
				"bool(true)", "int8(5)", "0x8001", `"<a>x</a>"`},
			{"int32(2)", "null", "int16(7)", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null",
				"null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null"},
		},
	}, {
		// numeric.mapping=best_fit maps NUMERIC by precision and scale
		// (Confluent: a NUMERIC without precision reports precision 0).
		ddl:    `CREATE TABLE types (id INT PRIMARY KEY, n1 NUMERIC(10,2), n2 NUMERIC(5,0), n3 NUMERIC(2), n4 NUMERIC(18,0), n5 NUMERIC(20,0), n6 NUMERIC, n7 NUMERIC(20,4))`,
		insert: []string{`INSERT INTO types VALUES (1, 12.5, 12345, 12, 123456789012345678, 12345678901234567890, 7, 1.2345)`},
		config: map[string]string{srcNumericMapping: "best_fit"},
		fields: []string{"id:INT32", "n1:FLOAT64?", "n2:INT32?", "n3:INT8?", "n4:INT64?",
			"n5:Decimal{scale=0,connect.decimal.precision=20}?", "n6:INT8?", "n7:Decimal{scale=4,connect.decimal.precision=20}?"},
		rows: [][]string{{"int32(1)", "float64(12.5)", "int32(12345)", "int8(12)", "int64(123456789012345678)",
			"12345678901234567890", "int8(7)", "1.2345"}},
	}, {
		ddl:    `CREATE TABLE types (id INT PRIMARY KEY, n1 NUMERIC(10,2), n7 NUMERIC(20,4), ts TIMESTAMP, d DATE)`,
		insert: []string{`INSERT INTO types VALUES (1, 12.5, 1.2345, '2024-07-01 10:00:00', '2024-07-01')`},
		config: map[string]string{srcNumericMapping: "best_fit_eager_double", srcDBTimezone: "America/New_York"},
		fields: []string{"id:INT32", "n1:FLOAT64?", "n7:FLOAT64?", "ts:Timestamp?", "d:Date?"},
		rows:   [][]string{{"int32(1)", "float64(12.5)", "float64(1.2345)", "2024-07-01T14:00:00Z", "2024-07-01T00:00:00Z"}},
	}, {
		// The task reads BIGINTs and UTC timestamps without boxing them
		// when nanoseconds since the epoch hold them (1677 to 2262), and
		// boxed beyond: both read back the same.
		ddl: `CREATE TABLE types (id BIGINT PRIMARY KEY, ts TIMESTAMP, tstz TIMESTAMPTZ)`,
		insert: []string{`INSERT INTO types VALUES (1, '2262-04-11 23:47:16.854775', '1677-09-21 00:12:43.145225+00'),
  (2, '2262-04-11 23:47:16.854776', '1677-09-21 00:12:43.145224+00'), (3, '4000-01-01 00:00:00', '1500-06-01 12:00:00+00'),
  (-9223372036854775808, '2000-01-01 00:00:00', '1970-01-01 00:00:00+00')`},
		fields: []string{"id:INT64", "ts:Timestamp?", "tstz:Timestamp?"},
		rows: [][]string{
			{"int64(1)", "2262-04-11T23:47:16.854775Z", "1677-09-21T00:12:43.145225Z"},
			{"int64(2)", "2262-04-11T23:47:16.854776Z", "1677-09-21T00:12:43.145224Z"},
			{"int64(3)", "4000-01-01T00:00:00Z", "1500-06-01T12:00:00Z"},
			{"int64(-9223372036854775808)", "2000-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		},
	}},
	"mariadb": {{
		ddl: `CREATE TABLE types (id INT AUTO_INCREMENT PRIMARY KEY, c_tinyint TINYINT, c_utinyint TINYINT UNSIGNED,
  c_smallint SMALLINT, c_usmallint SMALLINT UNSIGNED, c_mediumint MEDIUMINT, c_int INT NOT NULL, c_uint INT UNSIGNED,
  c_bigint BIGINT, c_float FLOAT, c_double DOUBLE, c_decimal DECIMAL(10,2), c_char CHAR(3), c_varchar VARCHAR(20),
  c_text TEXT, c_enum ENUM('a','b'), c_binary BINARY(2), c_varbinary VARBINARY(10), c_blob BLOB, c_date DATE,
  c_time TIME(3), c_datetime DATETIME(6), c_timestamp TIMESTAMP(3) NULL, c_year YEAR, c_bit BIT(8), c_json JSON)`,
		insert: []string{
			`INSERT INTO types VALUES (1, -128, 255, -32768, 65535, -8388608, 2147483647, 4294967295, -9223372036854775808,
  1.5, 2.25, -12345678.91, 'ab', 'héllo', 'text', 'b', x'00ff', x'0102', x'03', '2024-02-29', '13:14:15.678',
  '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.5', 2024, b'00000101', '{"a": 1}')`,
			`INSERT INTO types (id, c_int) VALUES (2, 7)`,
		},
		fields: []string{"id:INT32", "c_tinyint:INT8?", "c_utinyint:INT16?", "c_smallint:INT16?", "c_usmallint:INT32?",
			"c_mediumint:INT32?", "c_int:INT32", "c_uint:INT64?", "c_bigint:INT64?", "c_float:FLOAT32?", "c_double:FLOAT64?",
			"c_decimal:Decimal{scale=2,connect.decimal.precision=10}?", "c_char:STRING?", "c_varchar:STRING?", "c_text:STRING?",
			"c_enum:STRING?", "c_binary:BYTES?", "c_varbinary:BYTES?", "c_blob:BYTES?", "c_date:Date?", "c_time:Time?",
			"c_datetime:Timestamp?", "c_timestamp:Timestamp?", "c_year:Date?", "c_bit:INT8?", "c_json:STRING?"},
		rows: [][]string{
			{"int32(1)", "int8(-128)", "int16(255)", "int16(-32768)", "int32(65535)", "int32(-8388608)", "int32(2147483647)",
				"int64(4294967295)", "int64(-9223372036854775808)", "float32(1.5)", "float64(2.25)", "-12345678.91", `"ab"`,
				`"héllo"`, `"text"`, `"b"`, "0x00ff", "0x0102", "0x03", "2024-02-29T00:00:00Z", "1970-01-01T13:14:15.678Z",
				"2024-01-02T03:04:05.123456Z", "2024-01-02T03:04:05.5Z", "2024-01-01T00:00:00Z", "int8(5)", `"{\"a\": 1}"`},
			{"int32(2)", "null", "null", "null", "null", "null", "int32(7)", "null", "null", "null", "null", "null", "null",
				"null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null"},
		},
	}},
	"sqlite": {{
		ddl: `CREATE TABLE types (id INTEGER PRIMARY KEY, c_bool BOOLEAN, c_tinyint TINYINT, c_smallint SMALLINT, c_int INT,
  c_bigint BIGINT, c_real REAL, c_double DOUBLE, c_numeric NUMERIC(10,2), c_decimal DECIMAL(5,0), c_numeric_free NUMERIC,
  c_varchar VARCHAR(20), c_text TEXT NOT NULL, c_blob BLOB, c_date DATE, c_datetime DATETIME, c_timestamp TIMESTAMP,
  c_time TIME)`,
		insert: []string{
			`INSERT INTO types VALUES (1, 1, -5, 300, 70000, 9223372036854775807, 1.5, 2.25, 12.34, 99999, 2.5, 'héllo', 'text',
  x'00ff', '2024-02-29', '2024-01-02 03:04:05', '2024-01-02 03:04:05.123', '13:14:15.678')`,
			`INSERT INTO types (id, c_text) VALUES (2, 't')`,
		},
		fields: []string{"id:INT64", "c_bool:BOOLEAN?", "c_tinyint:INT8?", "c_smallint:INT16?", "c_int:INT64?",
			"c_bigint:INT64?", "c_real:FLOAT64?", "c_double:FLOAT64?", "c_numeric:Decimal{scale=2,connect.decimal.precision=10}?",
			"c_decimal:Decimal{scale=0,connect.decimal.precision=5}?", "c_numeric_free:FLOAT64?", "c_varchar:STRING?",
			"c_text:STRING", "c_blob:BYTES?", "c_date:Date?", "c_datetime:Timestamp?", "c_timestamp:Timestamp?", "c_time:Time?"},
		rows: [][]string{
			{"int64(1)", "bool(true)", "int8(-5)", "int16(300)", "int64(70000)", "int64(9223372036854775807)", "float64(1.5)",
				"float64(2.25)", "12.34", "99999", "float64(2.5)", `"héllo"`, `"text"`, "0x00ff", "2024-02-29T00:00:00Z",
				"2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123Z", "1970-01-01T13:14:15.678Z"},
			{"int64(2)", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", "null", `"t"`, "null",
				"null", "null", "null", "null"},
		},
	}},
}

// The SQL types → Connect schema mapping (spec §1.7), per dialect, with
// the values read back.
func TestSourceTypeMapping(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		name := map[string]string{jdbcdb.PostgreSQL.Name: "postgres", jdbcdb.MySQL.Name: "mariadb", jdbcdb.SQLite.Name: "sqlite"}[db.Dialect.Name]
		for i, c := range srcTypesGoldens[name] {
			db.Exec(t, "DROP TABLE IF EXISTS types")
			db.Exec(t, c.ddl)
			for _, ins := range c.insert {
				db.Exec(t, ins)
			}
			cfg := srcBaseConfig(db, map[string]string{srcMode: "bulk", srcTableWhitelist: "types"})
			for k, v := range c.config {
				cfg[k] = v
			}
			ctx := &srcTestContext{}
			task := srcStartTask(t, cfg, ctx)
			recs := srcPollAtLeast(t, task, ctx, len(c.rows))[:len(c.rows)]
			task.Stop()
			st := recs[0].Value.(*connect.Struct)
			schema := st.Schema()
			if schema.Name != "types" || schema.Optional || recs[0].ValueSchema != schema {
				t.Errorf("case %d: struct schema %q optional=%v", i, schema.Name, schema.Optional)
			}
			var fields []string
			for _, f := range schema.Fields {
				fields = append(fields, f.Name+":"+srcSchemaString(f.Schema))
			}
			if os.Getenv("SRC_PRINT_GOLDENS") != "" {
				t.Logf("case %d fields:\n%s", i, strings.Join(fields, "\n"))
			}
			if strings.Join(fields, "\n") != strings.Join(c.fields, "\n") {
				t.Errorf("case %d fields:\n%s\nwant:\n%s", i, strings.Join(fields, "\n"), strings.Join(c.fields, "\n"))
			}
			for r, rec := range recs {
				st := rec.Value.(*connect.Struct)
				if err := st.Validate(); err != nil {
					t.Errorf("case %d row %d does not validate: %v", i, r, err)
				}
				var vals []string
				for j := range schema.Fields {
					vals = append(vals, srcValueString(st.At(j)))
				}
				if os.Getenv("SRC_PRINT_GOLDENS") != "" {
					t.Logf("case %d row %d:\n%s", i, r, strings.Join(vals, "\n"))
				}
				if r < len(c.rows) && strings.Join(vals, "\n") != strings.Join(c.rows[r], "\n") {
					for j := range vals {
						if j >= len(c.rows[r]) || vals[j] != c.rows[r][j] {
							want := "(none)"
							if j < len(c.rows[r]) {
								want = c.rows[r][j]
							}
							t.Errorf("case %d row %d field %s = %s, want %s", i, r, schema.Fields[j].Name, vals[j], want)
						}
					}
				}
			}
		}
	})
}

// A NUMERIC without declared scale is mapped as Confluent does (scale 0),
// but a value with a fraction fails the task instead of being rounded.
func TestSourceUnconstrainedNumericRefusesRounding(t *testing.T) {
	db := jdbctest.Postgres(t)
	db.Exec(t, "CREATE TABLE money (id INT PRIMARY KEY, amount NUMERIC)")
	db.Exec(t, "INSERT INTO money VALUES (1, 12.5)")
	cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcTableWhitelist: "money"})
	task := srcStartTask(t, cfg, &srcTestContext{})
	for range 100 {
		recs, err := task.Poll(t.Context())
		if err != nil {
			if !strings.Contains(err.Error(), "amount") || !strings.Contains(err.Error(), "NUMERIC(p,s)") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if len(recs) > 0 {
			t.Fatalf("a rounded value was emitted: %v", recs[0].Value)
		}
	}
	t.Fatal("no error")
}

func TestSourceRescale(t *testing.T) {
	cases := []struct {
		v        int64
		from, to int32
		want     string
	}{
		{12345, 2, 2, "12345"}, {125, 1, 0, "13"}, {-125, 1, 0, "-13"}, {124, 1, 0, "12"}, {-124, 1, 0, "-12"},
		{5, 0, 3, "5000"}, {15, 1, 0, "2"}, {-15, 1, 0, "-2"},
	}
	for _, c := range cases {
		got, err := srcRescale(big.NewInt(c.v), c.from, c.to, false)
		if err != nil || got.String() != c.want {
			t.Errorf("rescale(%d, %d→%d) = %v, %v; want %s", c.v, c.from, c.to, got, err, c.want)
		}
	}
	if _, err := srcRescale(big.NewInt(125), 1, 0, true); err == nil {
		t.Error("an exact rescale dropped a digit")
	}
	for s, want := range map[string]string{"12.50": "12.50", "-0.001": "-0.001", "1E+3": "1000", "1.5e-2": "0.015", "42": "42"} {
		v, scale, err := srcParseDecimal(s)
		if err != nil || (&connect.Decimal{Unscaled: v, Scale: scale}).String() != want {
			t.Errorf("parse %s = %v/%d %v", s, v, scale, err)
		}
	}
}

// A value that has no Connect form fails the task with a message naming
// the table and the column, rather than being retried forever or skipped.
func TestSourceValueErrorsFailTheTask(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		var ddl, insert, column string
		switch db.Dialect {
		case jdbcdb.PostgreSQL:
			ddl, insert, column = "CREATE TABLE bad (id INT PRIMARY KEY, at TIMESTAMP)", "INSERT INTO bad VALUES (1, 'infinity')", "at"
		case jdbcdb.MySQL:
			ddl, insert, column = "CREATE TABLE bad (id INT PRIMARY KEY, big BIGINT UNSIGNED)", "INSERT INTO bad VALUES (1, 18446744073709551615)", "big"
		default:
			ddl, insert, column = "CREATE TABLE bad (id INTEGER PRIMARY KEY, d DATE)", "INSERT INTO bad VALUES (1, 'not a date')", "d"
		}
		db.Exec(t, ddl)
		db.Exec(t, insert)
		cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcTableWhitelist: "bad"})
		task := srcStartTask(t, cfg, &srcTestContext{})
		for range 100 {
			recs, err := task.Poll(t.Context())
			if err != nil {
				if !strings.Contains(err.Error(), srcTableID(db, "bad").String()) || !strings.Contains(err.Error(), column) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(recs) > 0 {
				t.Fatalf("the bad row was emitted: %v", recs[0].Value)
			}
		}
		t.Fatal("no error")
	})
}

// srcPGPrim reads a BIGINT, a timestamp read in UTC that nanoseconds
// since the epoch hold, and a text into a connect.Value that boxes
// nothing; anything else goes to srcPGDecode.
func TestSourcePGPrim(t *testing.T) {
	be := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	// PostgreSQL's microseconds since 2000 of an instant.
	pgMicros := func(tm time.Time) int64 { return tm.UnixMicro() - pgbinary.Epoch.UnixMicro() }
	maxNanos := time.Unix(0, math.MaxInt64).UTC().Truncate(time.Microsecond)
	minNanos := time.Unix(0, math.MinInt64).UTC().Truncate(time.Microsecond).Add(time.Microsecond)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	int8F := &srcField{pgOID: pgtype.Int8OID}
	tsF := &srcField{pgOID: pgtype.TimestampOID}
	tstzF := &srcField{pgOID: pgtype.TimestamptzOID}
	for _, c := range []struct {
		name string
		f    *srcField
		b    []byte
		loc  *time.Location
		want connect.Value
		ok   bool
	}{
		{"bigint", int8F, be(math.MinInt64), time.UTC, connect.Int64Value(math.MinInt64), true},
		{"null", int8F, nil, time.UTC, connect.Value{}, false},
		{"int4", &srcField{pgOID: pgtype.Int4OID}, []byte{0, 0, 0, 1}, time.UTC, connect.Value{}, false},
		{"latest instant", tsF, be(pgMicros(maxNanos)), time.UTC, connect.UnixNanoValue(maxNanos.UnixNano()), true},
		{"past 2262", tsF, be(pgMicros(maxNanos) + 1), time.UTC, connect.Value{}, false},
		{"earliest instant", tstzF, be(pgMicros(minNanos)), time.UTC, connect.UnixNanoValue(minNanos.UnixNano()), true},
		{"before 1677", tstzF, be(pgMicros(minNanos) - 1), time.UTC, connect.Value{}, false},
		{"infinity", tsF, be(math.MaxInt64), time.UTC, connect.Value{}, false},
		{"-infinity", tstzF, be(math.MinInt64), time.UTC, connect.Value{}, false},
		// db.timezone: a TIMESTAMP is a wall clock there, a TIMESTAMPTZ
		// an instant still.
		{"timestamp, db.timezone", tsF, be(0), ny, connect.Value{}, false},
		{"timestamptz, db.timezone", tstzF, be(0), ny, connect.UnixNanoValue(pgbinary.Epoch.UnixNano()), true},
		{"text", &srcField{pgOID: pgtype.TextOID}, []byte("customer-1"), time.UTC, connect.StringValue("customer-1"), true},
		{"empty varchar", &srcField{pgOID: pgtype.VarcharOID}, []byte{}, time.UTC, connect.StringValue(""), true},
		{"null text", &srcField{pgOID: pgtype.TextOID}, nil, time.UTC, connect.Value{}, false},
	} {
		var arena srcArena
		got, ok := srcPGPrim(c.f, c.b, c.loc, &arena)
		if srcValueText(got) != srcValueText(c.want) || ok != c.ok {
			t.Errorf("%s: %s, %v; want %s, %v", c.name, srcValueText(got), ok, srcValueText(c.want), c.ok)
		}
	}
}

// srcValueText is what a test compares of a connect.Value, which ==
// cannot compare: its kind and value.
func srcValueText(v connect.Value) string { return v.Kind().String() + " " + v.String() }

// A NUMERIC read as a Decimal is a connect.DecimalValue when the boxed
// decoder would take its int64 path, and then holds what that path gives.
func TestSourcePGPrimNumeric(t *testing.T) {
	enc := func(s string) []byte { return jdbctest.PGNumeric(t, s) }
	dec2 := &srcField{pgOID: pgtype.NumericOID, kind: srcDecimal, scale: 2}
	dec0 := &srcField{pgOID: pgtype.NumericOID, kind: srcDecimal, scale: 0}
	dec1 := &srcField{pgOID: pgtype.NumericOID, kind: srcDecimal, scale: 1}
	dec3 := &srcField{pgOID: pgtype.NumericOID, kind: srcDecimal, scale: 3}
	for _, c := range []struct {
		f    *srcField
		in   string
		want int64
		ok   bool
	}{
		{dec2, "123.45", 12345, true},
		{dec2, "-0.01", -1, true},
		{dec2, "0", 0, true},
		{dec2, "1.5", 150, true},
		{dec2, "-999999999999.99", -99999999999999, true}, // four base-10000 digits, the most the int64 path takes
		{dec2, "1.234", 0, false},                         // not exact at scale 2: the boxed path rounds or refuses
		{dec2, "12345678901234567.89", 0, false},          // more than 16 digits: the big.Int path
		{dec3, "1.234", 1234, true},                       // digits of scale 4, one place over the field's
		{dec1, "1.5", 15, true},                           // three places over
		{dec1, "1.55", 0, false},                          // not exact at scale 1
		{dec1, "-12345678.9", -123456789, true},
		{dec0, "1000000000000000", 1000000000000000, true},
		{dec0, "-7", -7, true},
		{dec2, "NaN", 0, false},
		{&srcField{pgOID: pgtype.NumericOID, kind: srcInt64}, "42", 0, false}, // only Decimal fields
	} {
		b := enc(c.in)
		got, ok := srcPGPrim(c.f, b, time.UTC, &srcArena{})
		n, scale, small := got.SmallDecimal()
		if ok != c.ok || ok && (!small || n != c.want || scale != c.f.scale) {
			t.Errorf("%s at scale %d: %s, %v; want %d, %v", c.in, c.f.scale, srcValueText(got), ok, c.want, c.ok)
		}
		if !ok {
			continue
		}
		var decs srcDecimals
		boxed, err := srcPGNumeric(c.f, b, &decs)
		d, isDec := boxed.(*connect.Decimal)
		if err != nil || !isDec || !d.Unscaled.IsInt64() || d.Unscaled.Int64() != n || d.Scale != c.f.scale {
			t.Errorf("%s: unboxed %d at scale %d, boxed %v, %v", c.in, n, c.f.scale, boxed, err)
		}
	}
	if _, ok := srcPGPrim(dec2, nil, time.UTC, &srcArena{}); ok {
		t.Error("a null NUMERIC was unboxed")
	}
}

// The arena's strings are copies: the row buffer they came from is
// overwritten by the next row, and they keep their bytes as later values
// fill their chunk and the next ones.
func TestSourceArena(t *testing.T) {
	var arena srcArena
	var got, want []string
	buf := make([]byte, 0, srcArenaMax+1)
	for i := 0; len(want) < 3*srcArenaChunk/8; i++ {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		if i%1000 == 0 {
			// Now and then one over srcArenaMax, which is allocated apart,
			// and an empty one.
			buf = append(buf, strings.Repeat("x", srcArenaMax)...)
			want, got = append(want, ""), append(got, arena.str(nil))
		}
		want = append(want, string(buf))
		got = append(got, arena.str(buf))
		// As the connection's next row does.
		clear(buf)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: %q, want %q", i, got[i], want[i])
		}
	}
	// Into a struct, a text costs no allocation of its own: only the
	// chunks do, one per few thousand short values.
	st := connect.NewStruct(connect.StructSchema("row", connect.Field{Name: "c", Schema: connect.StringSchema}))
	st.SetValueAt(0, connect.StringValue(""))
	allocs := testing.AllocsPerRun(20, func() {
		for i := range 1000 {
			buf = strconv.AppendInt(append(buf[:0], "customer-"...), int64(i), 10)
			st.SetValueAt(0, connect.StringValue(arena.str(buf)))
		}
	})
	if allocs > 1 {
		t.Errorf("%.1f allocations for 1,000 texts, want at most 1 (a chunk)", allocs)
	}
}

// A column whose values repeat gets one string per value; one whose
// values mostly differ stops being interned and goes to the arena, where
// a text costs no allocation of its own.
// Values that differ in one byte anywhere, of every length the interner
// keeps, each get a string of their own bytes, shared between their rows.
func TestSourceInternerValues(t *testing.T) {
	var values []string
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 23, 24, 25, 33, srcInternLen} {
		base := strings.Repeat("x", n)
		values = append(values, base)
		for i := range n {
			b := []byte(base)
			b[i] = 'y'
			values = append(values, string(b))
		}
	}
	if len(values) > srcInternMax {
		t.Fatalf("%d values, more than the %d kept", len(values), srcInternMax)
	}
	in := &srcInterner{}
	var arena srcArena
	first := map[string]*byte{}
	for round := range 5 {
		for _, v := range values {
			s := in.get([]byte(v), &arena)
			if s != v {
				t.Fatalf("got %q for %q", s, v)
			}
			if round == 0 {
				first[v] = unsafe.StringData(s)
			} else if unsafe.StringData(s) != first[v] {
				t.Fatalf("round %d: %q got a string other than its first", round, v)
			}
		}
	}
	if in.off || in.n != len(values) {
		t.Errorf("off %v, %d values kept; want on, %d", in.off, in.n, len(values))
	}
	if s := in.get(nil, &arena); s != "" {
		t.Errorf("empty value: %q", s)
	}
}

func TestSourceInterner(t *testing.T) {
	var arena srcArena
	in := &srcInterner{}
	first := map[string]*byte{}
	buf := []byte{}
	for i := range 3 * srcInternProbe {
		buf = strconv.AppendInt(append(buf[:0], "status-"...), int64(i%10), 10)
		s := in.get(buf, &arena)
		if s != string(buf) {
			t.Fatalf("got %q for %q", s, buf)
		}
		if p, ok := first[s]; !ok {
			first[s] = unsafe.StringData(s)
		} else if p != unsafe.StringData(s) {
			t.Fatalf("%q: a second string for a repeated value", s)
		}
	}
	if in.off {
		t.Fatal("interning stopped for a column of 10 values")
	}
	unique := &srcInterner{}
	n := 0
	next := func() string {
		n++
		buf = strconv.AppendInt(append(buf[:0], "customer-"...), int64(n), 10)
		s := unique.get(buf, &arena)
		if s != string(buf) {
			t.Fatalf("got %q for %q", s, buf)
		}
		return s
	}
	for range srcInternProbe {
		next()
	}
	if !unique.off || unique.slots != nil {
		t.Fatal("interning went on for a column whose values all differ")
	}
	if allocs := testing.AllocsPerRun(20, func() {
		for range 1000 {
			next()
		}
	}); allocs > 1 {
		t.Errorf("%.1f allocations for 1,000 distinct texts, want at most 1 (a chunk)", allocs)
	}
}
