package postgrescdc

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// Helpers to read change events.

func envOf(tb testing.TB, rec *connect.SourceRecord) *connect.Struct {
	tb.Helper()
	if rec.Value == nil {
		return nil
	}
	s, ok := rec.Value.(*connect.Struct)
	if !ok {
		tb.Fatalf("record value %T", rec.Value)
	}
	return s
}

func opOf(tb testing.TB, rec *connect.SourceRecord) string {
	tb.Helper()
	if rec.Value == nil {
		return "tombstone"
	}
	if rec.ValueSchema.Name == heartbeatValueSchema.Name {
		return "heartbeat"
	}
	return envOf(tb, rec).Get("op").(string)
}

func rowField(tb testing.TB, rec *connect.SourceRecord, which, field string) any {
	tb.Helper()
	v := envOf(tb, rec).Get(which)
	if v == nil {
		return nil
	}
	return v.(*connect.Struct).Get(field)
}

func sourceField(tb testing.TB, rec *connect.SourceRecord, field string) any {
	tb.Helper()
	return envOf(tb, rec).Get("source").(*connect.Struct).Get(field)
}

// describe renders a record as "topic op key" for comparisons.
func describe(tb testing.TB, rec *connect.SourceRecord) string {
	tb.Helper()
	key := "null"
	if k, ok := rec.Key.(*connect.Struct); ok {
		key = k.String()
	}
	op := opOf(tb, rec)
	id := ""
	if op != "tombstone" && op != "heartbeat" {
		row := "after"
		if op == "d" {
			row = "before"
		}
		if v := envOf(tb, rec).Get(row); v != nil {
			id = " " + v.(*connect.Struct).String()
		}
	}
	return rec.Topic + " " + op + " " + key + id
}

func toJSON(tb testing.TB, schema *connect.Schema, value any) map[string]any {
	tb.Helper()
	conv := new(converters.JSONConverter)
	if err := conv.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		tb.Fatal(err)
	}
	b, err := conv.FromConnectData("t", schema, value)
	if err != nil {
		tb.Fatalf("JsonConverter: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// fieldSchema finds a field's schema in the JSON schema of a struct.
func fieldSchema(tb testing.TB, schema map[string]any, path ...string) map[string]any {
	tb.Helper()
	cur := schema
	for _, p := range path {
		var next map[string]any
		for _, f := range cur["fields"].([]any) {
			fm := f.(map[string]any)
			if fm["field"] == p {
				next = fm
			}
		}
		if next == nil {
			tb.Fatalf("no field %s in %v", p, cur)
		}
		cur = next
	}
	return cur
}

const threeTables = `
CREATE TABLE customers (
	id serial PRIMARY KEY,
	name text NOT NULL,
	email varchar(100),
	active boolean NOT NULL DEFAULT true,
	balance numeric(10,2),
	born date,
	created timestamp(6),
	updated timestamptz,
	props jsonb,
	uid uuid,
	score double precision,
	small smallint,
	big bigint,
	flags text[],
	blob bytea
);
CREATE TABLE orders (
	id bigint PRIMARY KEY,
	customer_id int NOT NULL,
	amount numeric(12,3) NOT NULL
);
CREATE TABLE order_items (
	order_id bigint NOT NULL,
	line int NOT NULL,
	sku text NOT NULL,
	PRIMARY KEY (order_id, line)
);
`

func TestSnapshotThenStreaming(t *testing.T) {
	db := newDB(t)
	db.exec(threeTables)
	db.exec(`INSERT INTO customers (name, email, balance, born, created, updated, props, uid, score, small, big, flags, blob) VALUES
		('alice', 'a@x.org', 12.50, '1990-03-04', '2024-07-10 14:30:00.123456', '2024-07-10 14:30:00+02', '{"a": 1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.5, 7, 9000000000, '{x,"y z",NULL}', '\x0102'),
		('bob', NULL, -3.00, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	db.exec(`INSERT INTO orders VALUES (1, 1, 10.5), (2, 2, 20)`)
	db.exec(`INSERT INTO order_items VALUES (1, 1, 'A'), (1, 2, 'B'), (2, 1, 'C')`)

	store := newOffsetStore()
	r := startRunner(t, store, db.config("shop", "snap_stream"))
	snap := r.pollN(7)
	if len(snap) != 7 {
		t.Fatalf("snapshot: %d records", len(snap))
	}
	var markers []string
	for i, rec := range snap {
		if op := opOf(t, rec); op != "r" {
			t.Fatalf("snapshot record %d: op %s", i, op)
		}
		markers = append(markers, sourceField(t, rec, "snapshot").(string))
		off := rec.SourceOffset
		if off[OffsetSnapshot] != true || off[OffsetLastSnapshotRecord] != (i == 6) {
			t.Fatalf("snapshot record %d: offset %v", i, off)
		}
		if _, ok := off[OffsetLSN].(int64); !ok {
			t.Fatalf("snapshot offset lsn: %v", off)
		}
		if _, ok := off[OffsetTxID].(int64); !ok {
			t.Fatalf("snapshot offset txId: %v", off)
		}
	}
	// Tables in schema.table order: customers, order_items, orders.
	wantTopics := []string{"shop.public.customers", "shop.public.customers", "shop.public.order_items", "shop.public.order_items",
		"shop.public.order_items", "shop.public.orders", "shop.public.orders"}
	for i, rec := range snap {
		if rec.Topic != wantTopics[i] {
			t.Fatalf("snapshot record %d: topic %s, want %s", i, rec.Topic, wantTopics[i])
		}
	}
	if want := []string{"first", "last_in_data_collection", "first_in_data_collection", "true", "last_in_data_collection",
		"first_in_data_collection", "last"}; !slices.Equal(markers, want) {
		t.Fatalf("snapshot markers %v, want %v", markers, want)
	}

	// The values, the schemas, through the JsonConverter.
	alice := snap[0]
	if k := alice.Key.(*connect.Struct); k.Get("id") != int32(1) || alice.KeySchema.Name != "shop.public.customers.Key" {
		t.Fatalf("key %v %s", k, alice.KeySchema.Name)
	}
	js := toJSON(t, alice.ValueSchema, alice.Value)
	schema := js["schema"].(map[string]any)
	if schema["name"] != "shop.public.customers.Envelope" {
		t.Fatalf("envelope name %v", schema["name"])
	}
	var fieldNames []string
	for _, f := range schema["fields"].([]any) {
		fieldNames = append(fieldNames, f.(map[string]any)["field"].(string))
	}
	if want := []string{"before", "after", "source", "op", "ts_ms", "ts_us", "ts_ns", "transaction"}; !slices.Equal(fieldNames, want) {
		t.Fatalf("envelope fields %v", fieldNames)
	}
	if s := fieldSchema(t, schema, "after"); s["name"] != "shop.public.customers.Value" || s["optional"] != true {
		t.Fatalf("after schema %v", s)
	}
	checks := map[string]string{
		"id":      `{"field":"id","optional":false,"type":"int32"}`,
		"name":    `{"field":"name","optional":false,"type":"string"}`,
		"email":   `{"field":"email","optional":true,"type":"string"}`,
		"active":  `{"field":"active","optional":false,"type":"boolean"}`,
		"balance": `{"field":"balance","name":"org.apache.kafka.connect.data.Decimal","optional":true,"parameters":{"connect.decimal.precision":"10","scale":"2"},"type":"bytes","version":1}`,
		"born":    `{"field":"born","name":"io.debezium.time.Date","optional":true,"type":"int32","version":1}`,
		"created": `{"field":"created","name":"io.debezium.time.MicroTimestamp","optional":true,"type":"int64","version":1}`,
		"updated": `{"field":"updated","name":"io.debezium.time.ZonedTimestamp","optional":true,"type":"string","version":1}`,
		"props":   `{"field":"props","name":"io.debezium.data.Json","optional":true,"type":"string","version":1}`,
		"uid":     `{"field":"uid","name":"io.debezium.data.Uuid","optional":true,"type":"string","version":1}`,
		"score":   `{"field":"score","optional":true,"type":"double"}`,
		"small":   `{"field":"small","optional":true,"type":"int16"}`,
		"big":     `{"field":"big","optional":true,"type":"int64"}`,
		"flags":   `{"field":"flags","items":{"optional":true,"type":"string"},"optional":true,"type":"array"}`,
		"blob":    `{"field":"blob","optional":true,"type":"bytes"}`,
	}
	for col, want := range checks {
		got, _ := json.Marshal(fieldSchema(t, schema, "after", col))
		if string(got) != want {
			t.Errorf("schema of %s:\n got %s\nwant %s", col, got, want)
		}
	}
	after := js["payload"].(map[string]any)["after"].(map[string]any)
	wantPayload := map[string]any{
		"id": 1.0, "name": "alice", "email": "a@x.org", "active": true, "balance": "BOI=", // 1250
		"born": 7367.0, "created": 1720621800123456.0, "updated": "2024-07-10T12:30:00.000000Z",
		"props": `{"a": 1}`, "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "score": 1.5, "small": 7.0, "big": 9e9,
		"flags": []any{"x", "y z", nil}, "blob": "AQI=",
	}
	for k, want := range wantPayload {
		if fmt.Sprint(after[k]) != fmt.Sprint(want) {
			t.Errorf("payload %s = %v, want %v", k, after[k], want)
		}
	}
	source := js["payload"].(map[string]any)["source"].(map[string]any)
	if source["connector"] != "postgresql" || source["name"] != "shop" || source["db"] != db.name || source["schema"] != "public" ||
		source["table"] != "customers" || source["version"] != Version || source["snapshot"] != "first" {
		t.Fatalf("source %v", source)
	}
	if b := snap[1]; rowField(t, b, "after", "balance").(*connect.Decimal).String() != "-3.00" {
		t.Fatalf("bob's balance %v", rowField(t, b, "after", "balance"))
	}
	if k := snap[2].Key.(*connect.Struct); k.Get("order_id") != int64(1) || k.Get("line") != int32(1) {
		t.Fatalf("composite key %v", k)
	}

	// Streaming: changes on the three tables.
	db.exec(`INSERT INTO customers (name) VALUES ('carol')`)
	db.exec(`UPDATE orders SET amount = 11 WHERE id = 1`)
	db.exec(`DELETE FROM order_items WHERE order_id = 2`)
	db.exec(`BEGIN; INSERT INTO orders VALUES (3, 3, 1); UPDATE customers SET email = 'b@x.org' WHERE id = 2; DELETE FROM orders WHERE id = 2; COMMIT`)
	recs := r.pollN(8)
	var got []string
	for _, rec := range recs {
		got = append(got, describe(t, rec))
	}
	want := []string{
		"shop.public.customers c Struct{id=3} Struct{id=3,name=carol,active=true}",
		"shop.public.orders u Struct{id=1} Struct{id=1,customer_id=1,amount=11.000}",
		"shop.public.order_items d Struct{order_id=2,line=1} Struct{order_id=2,line=1,sku=}",
		"shop.public.order_items tombstone Struct{order_id=2,line=1}",
		"shop.public.orders c Struct{id=3} Struct{id=3,customer_id=3,amount=1.000}",
		"shop.public.customers u Struct{id=2} Struct{id=2,name=bob,email=b@x.org,active=true,balance=-3.00}",
		"shop.public.orders d Struct{id=2} Struct{id=2,customer_id=0,amount=0.000}",
		"shop.public.orders tombstone Struct{id=2}",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, rec := range recs {
		if rec.Value == nil {
			continue
		}
		if sourceField(t, rec, "snapshot") != "false" { // unset: the schema's default
			t.Fatalf("streamed record %d has source.snapshot %v", i, sourceField(t, rec, "snapshot"))
		}
		if _, ok := sourceField(t, rec, "lsn").(int64); !ok {
			t.Fatalf("streamed record %d: no source.lsn", i)
		}
		if _, ok := sourceField(t, rec, "txId").(int64); !ok {
			t.Fatalf("streamed record %d: no source.txId", i)
		}
		if op := opOf(t, rec); op == "u" && rowField(t, rec, "before", "id") != nil {
			t.Fatalf("update with REPLICA IDENTITY DEFAULT has a before: %v", envOf(t, rec))
		}
	}
	// The JsonConverter writes a streaming event's source.snapshot as its
	// default, "false".
	if s := toJSON(t, recs[0].ValueSchema, recs[0].Value)["payload"].(map[string]any)["source"].(map[string]any); s["snapshot"] != "false" {
		t.Fatalf("streamed source.snapshot %v", s["snapshot"])
	}
	// Offsets: the last record of each transaction carries its COMMIT
	// position; the delete before its tombstone carries none.
	for i, rec := range recs {
		off := rec.SourceOffset
		switch i {
		case 0, 1, 3, 7:
			if off[OffsetMessageType] != "COMMIT" || off[OffsetLSN] != off[OffsetLSNCommit] || off[OffsetLSN] != off[OffsetLSNProc] {
				t.Fatalf("record %d: offset %v, want a COMMIT position", i, off)
			}
			for _, k := range []string{OffsetLSN, OffsetLSNProc, OffsetLSNCommit, OffsetTxID, OffsetTsUsec} {
				if _, ok := off[k].(int64); !ok {
					t.Fatalf("record %d: offset %v: %s is not an int64", i, off, k)
				}
			}
		case 2:
			if off != nil {
				t.Fatalf("delete before its tombstone carries offset %v", off)
			}
		case 4, 5:
			if off[OffsetMessageType] == "COMMIT" || off[OffsetLSNProc] == nil || off[OffsetLSNCommit] == nil {
				t.Fatalf("record %d: offset %v, want a change position", i, off)
			}
		}
	}
}
