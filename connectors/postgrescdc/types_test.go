package postgrescdc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// Values of many types, read by the snapshot and by streaming, as the
// JsonConverter writes them.
func TestColumnTypes(t *testing.T) {
	db := newDB(t)
	db.exec(`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`)
	db.exec(`CREATE DOMAIN posint AS int CHECK (VALUE > 0)`)
	db.exec(`CREATE TABLE ty (
		id int PRIMARY KEY,
		t_time time, t_time3 time(3), t_timetz timetz, t_ts3 timestamp(3), t_tstz0 timestamptz(0), t_tstz3 timestamptz(3),
		t_interval interval, t_money money, t_bit1 bit(1), t_bits bit(10), t_varbit varbit(16),
		t_mood mood, t_num numeric, t_numnan numeric(5,1), t_dom posint, t_char char(4), t_inet inet, t_mac macaddr,
		t_ints int[], t_xml xml, t_json json, t_real real, t_oid oid, t_bc date, t_inf timestamp, t_name name, t_uuids uuid[]
	)`)
	const values = `(%d, '14:30:15.5', '01:02:03.456', '14:30:00+02', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05+00', '2024-01-02 03:04:05.1+00',
		'1 year 2 months 3 days 04:05:06.5', 1234.56, B'1', B'1000000001', B'101',
		'happy', 12345.6789, 'NaN', 5, 'ab', '192.168.0.1/32', '08:00:2b:01:02:03',
		'{1,2,NULL}', '<a>x</a>', '{"k": [1]}', 1.25, 4000000000, '0044-03-15 BC', 'infinity', 'nm', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}')`
	db.exec(fmt.Sprintf(`INSERT INTO ty VALUES `+values, 1))
	r := startRunner(t, newOffsetStore(), db.config("ty", "types"))
	snap := r.pollN(1)[0]
	db.exec(fmt.Sprintf(`INSERT INTO ty VALUES `+values, 2))
	streamed := r.pollN(1)[0]

	want := map[string]string{
		"t_time":     `{"field":"t_time","name":"io.debezium.time.MicroTime","optional":true,"type":"int64","version":1} 52215500000`,
		"t_time3":    `{"field":"t_time3","name":"io.debezium.time.Time","optional":true,"type":"int32","version":1} 3723456`,
		"t_timetz":   `{"field":"t_timetz","name":"io.debezium.time.ZonedTime","optional":true,"type":"string","version":1} "12:30:00Z"`,
		"t_ts3":      `{"field":"t_ts3","name":"io.debezium.time.Timestamp","optional":true,"type":"int64","version":1} 1704164645678`,
		"t_tstz0":    `{"field":"t_tstz0","name":"io.debezium.time.ZonedTimestamp","optional":true,"type":"string","version":1} "2024-01-02T03:04:05Z"`,
		"t_tstz3":    `{"field":"t_tstz3","name":"io.debezium.time.ZonedTimestamp","optional":true,"type":"string","version":1} "2024-01-02T03:04:05.100Z"`,
		"t_interval": `{"field":"t_interval","name":"io.debezium.time.MicroDuration","optional":true,"type":"int64","version":1} 37091106500000`,
		"t_money":    `{"field":"t_money","name":"org.apache.kafka.connect.data.Decimal","optional":true,"parameters":{"scale":"2"},"type":"bytes","version":1} "AeJA"`,
		"t_bit1":     `{"field":"t_bit1","optional":true,"type":"boolean"} true`,
		"t_bits":     `{"field":"t_bits","name":"io.debezium.data.Bits","optional":true,"parameters":{"length":"10"},"type":"bytes","version":1} "AQI="`,
		"t_varbit":   `{"field":"t_varbit","name":"io.debezium.data.Bits","optional":true,"parameters":{"length":"16"},"type":"bytes","version":1} "BQA="`,
		"t_mood":     `{"field":"t_mood","name":"io.debezium.data.Enum","optional":true,"parameters":{"allowed":"sad,ok,happy"},"type":"string","version":1} "happy"`,
		"t_num":      `{"doc":"Variable scaled decimal","field":"t_num","fields":[{"field":"scale","optional":false,"type":"int32"},{"field":"value","optional":false,"type":"bytes"}],"name":"io.debezium.data.VariableScaleDecimal","optional":true,"type":"struct","version":1} {"scale":4,"value":"B1vNFQ=="}`,
		"t_numnan":   `{"field":"t_numnan","name":"org.apache.kafka.connect.data.Decimal","optional":true,"parameters":{"connect.decimal.precision":"5","scale":"1"},"type":"bytes","version":1} null`,
		"t_dom":      `{"field":"t_dom","optional":true,"type":"int32"} 5`,
		"t_char":     `{"field":"t_char","optional":true,"type":"string"} "ab  "`,
		"t_inet":     `{"field":"t_inet","optional":true,"type":"string"} "192.168.0.1"`,
		"t_mac":      `{"field":"t_mac","optional":true,"type":"string"} "08:00:2b:01:02:03"`,
		"t_ints":     `{"field":"t_ints","items":{"optional":true,"type":"int32"},"optional":true,"type":"array"} [1,2,null]`,
		"t_xml":      `{"field":"t_xml","name":"io.debezium.data.Xml","optional":true,"type":"string","version":1} "<a>x</a>"`,
		"t_json":     `{"field":"t_json","name":"io.debezium.data.Json","optional":true,"type":"string","version":1} "{\"k\": [1]}"`,
		"t_real":     `{"field":"t_real","optional":true,"type":"float"} 1.25`,
		"t_oid":      `{"field":"t_oid","optional":true,"type":"int64"} 4000000000`,
		"t_bc":       `{"field":"t_bc","name":"io.debezium.time.Date","optional":true,"type":"int32","version":1} -735160`,
		"t_inf":      `{"field":"t_inf","name":"io.debezium.time.MicroTimestamp","optional":true,"type":"int64","version":1} null`,
		"t_name":     `{"field":"t_name","optional":true,"type":"string"} "nm"`,
		"t_uuids":    `{"field":"t_uuids","items":{"name":"io.debezium.data.Uuid","optional":true,"type":"string","version":1},"optional":true,"type":"array"} ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]`,
	}
	for _, rec := range []*connect.SourceRecord{snap, streamed} {
		js := toJSON(t, rec.ValueSchema, rec.Value)
		after := js["payload"].(map[string]any)["after"].(map[string]any)
		schema := js["schema"].(map[string]any)
		for col, w := range want {
			s, v := marshal(fieldSchema(t, schema, "after", col)), marshal(after[col])
			if got := string(s) + " " + string(v); got != w {
				t.Errorf("%s (%s):\n got %s\nwant %s", col, opOf(t, rec), got, w)
			}
		}
	}
}

func marshal(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func TestParsers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"P1Y2M3DT4H5M6.5S", 37091106500000},
		{"PT0S", 0},
		{"P-1Y-2M3DT-4H-5M-6.5S", 0},
		{"PT1.000001S", 1000001},
		{"P1W", 7 * 86400 * 1_000_000},
	} {
		got, err := parseIntervalMicros(c.in)
		if c.in == "P-1Y-2M3DT-4H-5M-6.5S" {
			// (-14 months * 30.4375 + 3) days, -4h -5m -6.5s
			days := -14*daysPerMonthAvg + 3
			c.want = int64((((days*24-4)*60-5)*60 - 6.5) * 1e6)
		}
		if err != nil || got != c.want {
			t.Errorf("interval %s: %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		zone bool
		want int64
	}{
		{"1970-01-01 00:00:00", false, 0},
		{"1969-12-31 23:59:59.999999", false, -1},
		{"2024-07-10 14:30:00.5+02", true, 1720614600500000},
		{"2024-07-10 14:30:00-05:30", true, 1720621800000000 + 5*3600e6 + 30*60e6},
		{"0001-01-01 00:00:00 BC", false, -62167219200000000},
	} {
		got, err := parseTimestamp(c.in, c.zone)
		if err != nil || got != c.want {
			t.Errorf("timestamp %s: %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	if got := formatZonedTimestamp(1720614600500000, 6); got != "2024-07-10T12:30:00.500000Z" {
		t.Errorf("zoned timestamp %s", got)
	}
	if got := formatZonedTimestamp(1720614600500000, 0); got != "2024-07-10T12:30:00.5Z" {
		t.Errorf("zoned timestamp %s", got)
	}
	for in, want := range map[string]string{"12.50": "12.50", "-0.001": "-0.001", "1e3": "1000", "5": "5"} {
		d, err := parseDecimal(in, -1)
		if err != nil || d.String() != want {
			t.Errorf("decimal %s: %v %v", in, d, err)
		}
	}
	if d, _ := parseDecimal("1.5", 3); d.String() != "1.500" {
		t.Errorf("rescaled decimal %v", d)
	}
	for n, want := range map[int64]string{0: "AA==", 127: "fw==", 128: "AIA=", -1: "/w==", -128: "gA==", -129: "/38=", 1250: "BOI="} {
		if got := base64.StdEncoding.EncodeToString(twosComplement(big.NewInt(n))); got != want {
			t.Errorf("two's complement of %d: %s, want %s", n, got, want)
		}
	}
	items, err := parseArray(`{"a\"b",NULL,"NULL",c d,"e,f"}`)
	if err != nil || len(items) != 5 || *items[0] != `a"b` || items[1] != nil || *items[2] != "NULL" || *items[3] != "c d" || *items[4] != "e,f" {
		t.Errorf("array: %v %v", items, err)
	}
	if got := sequence(0, 23803720); got != `[null,"23803720"]` {
		t.Errorf("sequence %s", got)
	}
}

func TestOffsets(t *testing.T) {
	p := &position{lsn: 24023128, lsnProc: 24023128, lsnCommit: 24023000, txID: 555, hasTxID: true, tsUsec: 1559033904863123, hasTS: true, msgType: "INSERT"}
	want := map[string]any{"lsn_proc": int64(24023128), "messageType": "INSERT", "lsn_commit": int64(24023000), "lsn": int64(24023128), "txId": int64(555), "ts_usec": int64(1559033904863123)}
	if got := p.offset(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("offset %v", got)
	}
	back, err := parseOffset(want)
	if err != nil || *back != *p || !back.midTransaction() || back.flushLSN() != 24023000 || back.startLSN() != 24023128 {
		t.Fatalf("parsed %+v, %v", back, err)
	}
	// Debezium 2.7's snapshot offsets, and 3.x's.
	for _, c := range []struct {
		m    map[string]any
		done bool
	}{
		{snapshotOffset(100, 7, 1, false), false},
		{snapshotOffset(100, 7, 1, true), true},
		{map[string]any{"lsn": int64(100), "snapshot": "INITIAL", "snapshot_completed": false, "last_snapshot_record": false}, false},
		{map[string]any{"lsn": int64(100), "snapshot": "INITIAL", "snapshot_completed": true}, true},
		{map[string]any{"lsn": float64(100)}, true},
	} {
		p, err := parseOffset(c.m)
		if err != nil || p.snapshotDone() != c.done || p.lsn != 100 {
			t.Errorf("%v: %+v %v", c.m, p, err)
		}
	}
	for _, bad := range []map[string]any{
		{"lsn": "12"}, {"lsn": int64(-1)}, {"lsn": int64(1), "ts_usec": 1.5}, {"lsn": int64(1), "last_snapshot_record": "yes"},
	} {
		if _, err := parseOffset(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestAlterOffsetsChecks(t *testing.T) {
	cfg := map[string]string{"topic.prefix": "srv", "database.hostname": "h", "database.dbname": "d", "database.user": "u"}
	c := &Connector{}
	part := map[string]any{"server": "srv"}
	ok := []connect.SourceOffset{
		{Partition: part, Offset: nil},
		{Partition: part, Offset: map[string]any{"lsn": int64(0)}},
		{Partition: part, Offset: map[string]any{"lsn": int64(5), "lsn_proc": int64(5), "lsn_commit": int64(5), "txId": int64(1), "ts_usec": int64(2), "messageType": "COMMIT"}},
		{Partition: part, Offset: map[string]any{"lsn": int64(5), "snapshot": true, "last_snapshot_record": true}},
	}
	for _, o := range ok {
		if handled, err := c.AlterOffsets(cfg, []connect.SourceOffset{o}); err != nil || !handled {
			t.Errorf("%v refused: %v", o, err)
		}
	}
	bad := []connect.SourceOffset{
		{Partition: map[string]any{"server": "other"}, Offset: map[string]any{"lsn": int64(1)}},
		{Partition: map[string]any{"server": "srv", "x": "y"}, Offset: nil},
		{Partition: nil, Offset: nil},
		{Partition: part, Offset: map[string]any{"lsn_proc": int64(1)}},
		{Partition: part, Offset: map[string]any{"lsn": int64(-1)}},
		{Partition: part, Offset: map[string]any{"lsn": "0/16B3748"}},
		{Partition: part, Offset: map[string]any{"lsn": 1.5}},
		{Partition: part, Offset: map[string]any{"lsn": int64(1), "txId": int64(-3)}},
		{Partition: part, Offset: map[string]any{"lsn": int64(1), "messageType": "FOO"}},
	}
	for _, o := range bad {
		if _, err := c.AlterOffsets(cfg, []connect.SourceOffset{o}); err == nil {
			t.Errorf("%v accepted", o)
		}
	}
}

func TestConfig(t *testing.T) {
	base := map[string]string{"topic.prefix": "srv", "database.hostname": "h", "database.dbname": "d", "database.user": "u"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	c, err := parseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.slot != "debezium" || c.publication != "dbz_publication" || c.pubMode != "all_tables" || c.snapshotMode != "initial" ||
		c.port != 5432 || !c.tombstones || c.heartbeat != 0 || c.heartbeatTopicStr != "__debezium-heartbeat.srv" {
		t.Fatalf("defaults %+v", c)
	}
	if c, _ := parseConfig(with("snapshot.mode", "never")); c.snapshotMode != SnapshotNoData {
		t.Fatalf("never: %s", c.snapshotMode)
	}
	for k, v := range map[string]string{
		"plugin.name": "decoderbufs", "slot.name": "Bad-Name", "snapshot.mode": "sometimes", "publication.autocreate.mode": "x",
		"table.include.list": "(", "topic.prefix": "a b",
	} {
		if _, err := parseConfig(with(k, v)); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	if _, err := parseConfig(map[string]string{"database.hostname": "h", "database.dbname": "d", "database.user": "u"}); err == nil {
		t.Error("no topic.prefix accepted")
	}
	c, _ = parseConfig(with("table.include.list", "public.a.*, s2.b"))
	for name, want := range map[string]bool{"public.abc": true, "PUBLIC.ABC": true, "public.xabc": false, "s2.b": true, "s2.bc": false} {
		schema, table, _ := cut(name)
		if c.captured(schema, table) != want {
			t.Errorf("captured(%s) != %v", name, want)
		}
	}
	if c, _ := parseConfig(with("table.exclude.list", "public.skip")); c.captured("public", "skip") || !c.captured("public", "keep") || c.captured("pg_catalog", "x") {
		t.Error("exclude list")
	}
	if _, err := parseConfig(with("table.exclude.list", "x")); err != nil {
		t.Error(err)
	}
	m := with("table.include.list", "a")
	m["table.exclude.list"] = "b"
	if _, err := parseConfig(m); err == nil {
		t.Error("include and exclude lists together accepted")
	}
}

func cut(name string) (string, string, bool) {
	for i := range name {
		if name[i] == '.' {
			return name[:i], name[i+1:], true
		}
	}
	return name, "", false
}
