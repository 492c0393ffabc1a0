package debezium

import (
	"testing"

	"github.com/connectd/connectd/connect"
)

// A delete event as Debezium's PostgreSQL connector writes it with the
// JsonConverter (schemas.enable=true), for a table id int PRIMARY KEY,
// name text NOT NULL.
const debeziumDelete = `{"schema":{"type":"struct","fields":[` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"name":"pg.public.t.Value","field":"before"},` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"name":"pg.public.t.Value","field":"after"},` +
	`{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"},{"type":"int64","optional":true,"field":"xmin"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},` +
	`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"},` +
	`{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"}` +
	`],"optional":false,"name":"pg.public.t.Envelope","version":2},` +
	`"payload":{"before":{"id":1,"name":"old"},"after":null,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000123,"snapshot":"false","db":"test","sequence":"[\"100\",\"200\"]","ts_us":1700000000123456,"ts_ns":1700000000123456000,"schema":"public","table":"t","txId":771,"lsn":200,"xmin":null},` +
	`"op":"d","ts_ms":1700000000200,"ts_us":1700000000200000,"ts_ns":1700000000200000000,"transaction":null}}`

const debeziumCreate = `{"schema":{"type":"struct","fields":[` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"name":"pg.public.t.Value","field":"before"},` +
	`{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"name":"pg.public.t.Value","field":"after"},` +
	`{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"},` +
	`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}` +
	`],"optional":false,"name":"pg.public.t.Envelope","version":2},` +
	`"payload":{"before":null,"after":{"id":2,"name":"new"},"source":{"version":"2.7.0.Final","connector":"postgresql","name":"pg","ts_ms":1700000000123,"schema":"public","table":"t","lsn":300},"op":"c","ts_ms":1700000000200}}`

// What a Java worker running Debezium's ExtractNewRecordState writes with
// the JsonConverter: the row's struct, required (Debezium rebuilds it),
// with __deleted and the added fields, optional, after the columns.
func TestFlattenedJSONBytes(t *testing.T) {
	conv := jsonConverter(t)
	tr := configured(t, map[string]string{"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,table,lsn,source.ts_ms"})
	for _, c := range []struct{ in, want string }{
		{debeziumDelete, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"__deleted"},{"type":"string","optional":true,"field":"__op"},{"type":"string","optional":true,"field":"__table"},{"type":"int64","optional":true,"field":"__lsn"},{"type":"int64","optional":true,"field":"__source_ts_ms"}],"optional":false,"name":"pg.public.t.Value"},` +
			`"payload":{"id":1,"name":"old","__deleted":"true","__op":"d","__table":"t","__lsn":200,"__source_ts_ms":1700000000123}}`},
		{debeziumCreate, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"},{"type":"string","optional":true,"field":"__deleted"},{"type":"string","optional":true,"field":"__op"},{"type":"string","optional":true,"field":"__table"},{"type":"int64","optional":true,"field":"__lsn"},{"type":"int64","optional":true,"field":"__source_ts_ms"}],"optional":false,"name":"pg.public.t.Value"},` +
			`"payload":{"id":2,"name":"new","__deleted":"false","__op":"c","__table":"t","__lsn":300,"__source_ts_ms":1700000000123}}`},
	} {
		schema, value, err := conv.ToConnectData("pg.public.t", []byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := tr.Apply(&connect.Record{Topic: "pg.public.t", Sink: true, ValueSchema: schema, Value: value})
		if err != nil {
			t.Fatal(err)
		}
		b, err := conv.FromConnectData(out.Topic, out.ValueSchema, out.Value)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("got  %s\nwant %s", b, c.want)
		}
	}

	// In the default mode a delete is the row's schema with a null
	// payload, which the JDBC sinks take as a delete.
	schema, value, err := conv.ToConnectData("pg.public.t", []byte(debeziumDelete))
	if err != nil {
		t.Fatal(err)
	}
	out, err := configured(t, map[string]string{}).Apply(&connect.Record{Topic: "pg.public.t", Sink: true, ValueSchema: schema, Value: value})
	if err != nil {
		t.Fatal(err)
	}
	b, err := conv.FromConnectData(out.Topic, out.ValueSchema, out.Value)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"name"}],"optional":true,"name":"pg.public.t.Value"},"payload":null}`; string(b) != want {
		t.Errorf("tombstone mode delete: %s", b)
	}
}
