package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ids reads the id field of every record value in a topic (values written
// by the JsonConverter without schemas), once at least n are there.
func ids(t *testing.T, bootstrap, topic string, n int) []int64 {
	t.Helper()
	var out []int64
	for _, v := range readTopic(t, bootstrap, topic, n) {
		var rec struct{ ID int64 }
		if err := json.Unmarshal([]byte(v), &rec); err != nil {
			t.Fatalf("record %s: %v", v, err)
		}
		out = append(out, rec.ID)
	}
	return out
}

// The seed's JDBC source flows, through the REST API: read a 1042-row
// table, see incrementing 1042 in the offsets, go back to 500 and get rows
// 501 to 1042 again, then skip a poison row by moving past it.
func TestSeedJdbcSourceFlows(t *testing.T) {
	db, schema := servertest.PGSchema(t, "e2e")
	servertest.MustExec(t, db, "CREATE TABLE "+schema+".orders (id SERIAL PRIMARY KEY, customer TEXT NOT NULL, updated_at TIMESTAMP NOT NULL)")
	const ts = "2024-07-10 14:30:00" // 1720621800000 ms
	servertest.MustExec(t, db, "INSERT INTO "+schema+".orders (customer, updated_at) SELECT 'c' || g, '"+ts+"' FROM generate_series(1, 1042) g")
	w := startWorker(t, t.TempDir(), map[string]string{
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	})
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "orders-source",
		"config": map[string]string{
			"connector.class":          "io.confluent.connect.jdbc.JdbcSourceConnector",
			"connection.url":           "jdbc:postgresql://127.0.0.1:5432/test",
			"connection.user":          "postgres",
			"mode":                     "timestamp+incrementing",
			"incrementing.column.name": "id",
			"timestamp.column.name":    "updated_at",
			"table.whitelist":          schema + ".orders",
			"topic.prefix":             "pg-",
			"poll.interval.ms":         "100",
			"batch.max.rows":           "500",
		},
	}))
	got := ids(t, w.bootstrap(), "pg-orders", 1042)
	if len(got) != 1042 || got[0] != 1 || got[1041] != 1042 {
		t.Fatalf("read %d rows, first %d last %d", len(got), got[0], got[len(got)-1])
	}
	partition := fmt.Sprintf(`{"protocol":"1","table":"%s.orders"}`, schema)
	eventually(t, "offsets at row 1042", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return strings.Contains(body, `"partition":`+partition) && strings.Contains(body, `"incrementing":1042`) && strings.Contains(body, `"timestamp":1720621800000`)
	})

	// Reprocess from row 500, with the seed's PATCH body shape.
	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	w.must(200, "PATCH", "/connectors/orders-source/offsets", fmt.Sprintf(`{
    "offsets": [
      {
        "partition": %s,
        "offset": {"incrementing": 500, "timestamp": 1720621800000, "timestamp_nanos": 0}
      }
    ]
  }`, partition))
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	got = ids(t, w.bootstrap(), "pg-orders", 1042+542)
	if again := got[1042:]; len(again) != 542 || again[0] != 501 || again[541] != 1042 {
		t.Fatalf("after PATCH 500: %d rows from %d to %d", len(again), again[0], again[len(again)-1])
	}
	// New rows follow.
	servertest.MustExec(t, db, "INSERT INTO "+schema+".orders (customer, updated_at) VALUES ('new', '2024-07-10 14:31:00')")
	got = ids(t, w.bootstrap(), "pg-orders", 1042+542+1)
	if got[len(got)-1] != 1043 {
		t.Fatalf("the new row did not follow: %v", got[len(got)-3:])
	}

	// Skip a poison row: stop, two new rows, move past the first.
	eventually(t, "offsets at row 1043", func() bool {
		_, body := w.do("GET", "/connectors/orders-source/offsets", "")
		return strings.Contains(body, `"incrementing":1043`)
	})
	w.must(204, "PUT", "/connectors/orders-source/stop", "")
	servertest.MustExec(t, db, "INSERT INTO "+schema+".orders (customer, updated_at) VALUES ('poison', '2024-07-10 14:32:00'), ('fine', '2024-07-10 14:32:00')")
	w.must(200, "PATCH", "/connectors/orders-source/offsets", fmt.Sprintf(`{"offsets":[{"partition":%s,"offset":{"incrementing":1044,"timestamp":1720621920000,"timestamp_nanos":0}}]}`, partition))
	w.must(202, "PUT", "/connectors/orders-source/resume", "")
	got = ids(t, w.bootstrap(), "pg-orders", 1042+542+2)
	if last := got[len(got)-1]; last != 1045 || got[len(got)-2] == 1044 {
		t.Fatalf("after skipping row 1044: %v", got[len(got)-3:])
	}
}

// The seed's JDBC sink flow: a sink wrote to the wrong table; stop it,
// fix table.name.format, set its offsets to 0 on every partition of the
// 3-partition topic, resume: the right table holds every row exactly once.
func TestSeedJdbcSinkWrongTable(t *testing.T) {
	db, schema := servertest.PGSchema(t, "e2e")
	w := startWorker(t, t.TempDir(), map[string]string{
		"value.converter": "org.apache.kafka.connect.json.JsonConverter",
	})
	topic := "eip.orders.placed"
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.bootstrap()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	const n = 90
	for i := 1; i <= n; i++ {
		v := fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":false,"field":"customer"}],"optional":false,"name":"order"},"payload":{"id":%d,"customer":"c%d"}}`, i, i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	config := func(table string) map[string]string {
		return map[string]string{
			"connector.class":   "io.confluent.connect.jdbc.JdbcSinkConnector",
			"connection.url":    "jdbc:postgresql://127.0.0.1:5432/test",
			"connection.user":   "postgres",
			"topics":            topic,
			"table.name.format": schema + "." + table,
			"insert.mode":       "upsert",
			"pk.mode":           "record_value",
			"pk.fields":         "id",
			"auto.create":       "true",
		}
	}
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "orders-sink", "config": config("wrong_orders")}))
	count := func(table string) int {
		var c int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + schema + "." + table).Scan(&c); err != nil {
			return -1
		}
		return c
	}
	eventually(t, "every row in the wrong table", func() bool { return count("wrong_orders") == n })

	w.must(204, "PUT", "/connectors/orders-sink/stop", "")
	w.must(200, "PUT", "/connectors/orders-sink/config", jsonString(config("orders")))
	w.must(200, "PATCH", "/connectors/orders-sink/offsets", `{
    "offsets": [
      {"partition": {"topic": "eip.orders.placed", "partition": 0}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 1}, "offset": {"offset": 0}},
      {"partition": {"topic": "eip.orders.placed", "partition": 2}, "offset": {"offset": 0}}
    ]
  }`)
	w.must(202, "PUT", "/connectors/orders-sink/resume", "")
	eventually(t, "every row in the right table", func() bool { return count("orders") == n })
	eventually(t, "the sink's offsets at the end of each partition", func() bool {
		_, body := w.do("GET", "/connectors/orders-sink/offsets", "")
		return strings.Count(body, `"kafka_offset":30`) == 3
	})
	var distinct int
	if err := db.QueryRow("SELECT COUNT(DISTINCT id) FROM " + schema + ".orders").Scan(&distinct); err != nil || distinct != n {
		t.Fatalf("distinct ids in the right table: %d, %v", distinct, err)
	}
}

// A JDBC URL's password, in its user info or its parameters, never shows
// in the 400 a create gets when the database is unreachable, nor does an
// unsupported URL's.
func TestJdbcURLPasswordsHiddenFromValidation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String() // nothing answers there once l is closed
	l.Close()
	w := startWorker(t, t.TempDir(), nil)
	for _, c := range []struct{ class, url, shown string }{
		{"io.confluent.connect.jdbc.JdbcSourceConnector", "jdbc:postgresql://bob:s3cret-pg@" + closed + "/test", "jdbc:postgresql://bob:[hidden]@" + closed + "/test"},
		{"io.confluent.connect.jdbc.JdbcSinkConnector", "jdbc:postgresql://bob:s3cret-pg@" + closed + "/test", "jdbc:postgresql://bob:[hidden]@" + closed + "/test"},
		{"io.confluent.connect.jdbc.JdbcSourceConnector", "jdbc:mysql://bob:s3cret-my@" + closed + "/test", "jdbc:mysql://bob:[hidden]@" + closed + "/test"},
		{"io.confluent.connect.jdbc.JdbcSinkConnector", "jdbc:mysql://bob:s3cret-my@" + closed + "/test", "jdbc:mysql://bob:[hidden]@" + closed + "/test"},
		{"io.confluent.connect.jdbc.JdbcSourceConnector", "jdbc:postgresql://" + closed + "/test?user=bob&password=s3cret-q", "jdbc:postgresql://" + closed + "/test?user=bob&password=[hidden]"},
		{"io.confluent.connect.jdbc.JdbcSinkConnector", "jdbc:oracle:thin:bob/s3cret-ora@" + closed + ":orcl", "jdbc:oracle:thin:[hidden]@" + closed + ":orcl"},
	} {
		code, body := w.do("POST", "/connectors", jsonString(map[string]any{"name": "db", "config": map[string]string{
			"connector.class": c.class, "connection.url": c.url, "mode": "bulk", "topic.prefix": "db-", "topics": "t",
		}}))
		var e struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || code != 400 || e.ErrorCode != 400 ||
			strings.Contains(body, "s3cret") || !strings.Contains(e.Message, c.shown) {
			t.Errorf("%s with %s: %d %s; want a 400 naming %s", c.class, c.url, code, body, c.shown)
		}
	}
}
