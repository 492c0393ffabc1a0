package debezium

import (
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// The schemas below are those connectd's PostgreSQL CDC source
// (connectors/postgrescdc, schema.go and events.go) gives a table
// inventory.customers (id serial PRIMARY KEY, name text NOT NULL, email
// varchar) under topic.prefix dbserver1: the same names, versions, field
// order and optionality, so the transforms see what the source emits.
var (
	pgSourceSchema = connect.StructSchema("io.debezium.connector.postgresql.Source",
		connect.Field{Name: "version", Schema: connect.StringSchema},
		connect.Field{Name: "connector", Schema: connect.StringSchema},
		connect.Field{Name: "name", Schema: connect.StringSchema},
		connect.Field{Name: "ts_ms", Schema: connect.Int64Schema},
		connect.Field{Name: "snapshot", Schema: &connect.Schema{Type: connect.TypeString, Optional: true, Default: "false", Name: "io.debezium.data.Enum", Version: 1,
			Parameters: []connect.Parameter{{Key: "allowed", Value: "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}}},
		connect.Field{Name: "db", Schema: connect.StringSchema},
		connect.Field{Name: "sequence", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "ts_us", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "ts_ns", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "schema", Schema: connect.StringSchema},
		connect.Field{Name: "table", Schema: connect.StringSchema},
		connect.Field{Name: "txId", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "lsn", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "xmin", Schema: connect.OptionalInt64Schema},
	)
	pgTransactionSchema = func() *connect.Schema {
		s := connect.StructSchema("event.block",
			connect.Field{Name: "id", Schema: connect.StringSchema},
			connect.Field{Name: "total_order", Schema: connect.Int64Schema},
			connect.Field{Name: "data_collection_order", Schema: connect.Int64Schema},
		)
		s.Optional, s.Version = true, 1
		return s
	}()
	pgHeartbeatSchema = func() *connect.Schema {
		s := connect.StructSchema("io.debezium.connector.common.Heartbeat", connect.Field{Name: "ts_ms", Schema: connect.Int64Schema})
		s.Version = 1
		return s
	}()
	customersKey   = connect.StructSchema("dbserver1.inventory.customers.Key", connect.Field{Name: "id", Schema: connect.Int32Schema})
	customersValue = func() *connect.Schema {
		s := connect.StructSchema("dbserver1.inventory.customers.Value",
			connect.Field{Name: "id", Schema: connect.Int32Schema},
			connect.Field{Name: "name", Schema: connect.StringSchema},
			connect.Field{Name: "email", Schema: connect.OptionalStringSchema},
		)
		s.Optional = true
		return s
	}()
	customersEnvelope = func() *connect.Schema {
		s := connect.StructSchema("dbserver1.inventory.customers.Envelope",
			connect.Field{Name: "before", Schema: customersValue},
			connect.Field{Name: "after", Schema: customersValue},
			connect.Field{Name: "source", Schema: pgSourceSchema},
			connect.Field{Name: "op", Schema: connect.StringSchema},
			connect.Field{Name: "ts_ms", Schema: connect.OptionalInt64Schema},
			connect.Field{Name: "ts_us", Schema: connect.OptionalInt64Schema},
			connect.Field{Name: "ts_ns", Schema: connect.OptionalInt64Schema},
			connect.Field{Name: "transaction", Schema: pgTransactionSchema},
		)
		s.Version = 2
		return s
	}()
)

type row struct {
	id    int32
	name  string
	email any
}

func customer(r *row) *connect.Struct {
	if r == nil {
		return nil
	}
	return connect.NewStruct(customersValue).Put("id", r.id).Put("name", r.name).Put("email", r.email)
}

// change builds a change event as the source's changeRecords does: key,
// envelope with source block, and (when tx) a transaction block.
func change(op string, before, after *row, tx bool) *connect.Record {
	src := connect.NewStruct(pgSourceSchema).
		Put("version", "2.7.0.Final").Put("connector", "postgresql").Put("name", "dbserver1").
		Put("ts_ms", int64(1700000000123)).Put("db", "test").Put("sequence", `["100","200"]`).
		Put("ts_us", int64(1700000000123456)).Put("ts_ns", int64(1700000000123456000)).
		Put("schema", "inventory").Put("table", "customers").Put("txId", int64(771)).Put("lsn", int64(200))
	if op == "r" {
		src.Put("snapshot", "true")
	}
	env := connect.NewStruct(customersEnvelope).Put("source", src).Put("op", op).
		Put("ts_ms", int64(1700000000200)).Put("ts_us", int64(1700000000200000)).Put("ts_ns", int64(1700000000200000000))
	if b := customer(before); b != nil {
		env.Put("before", b)
	}
	if a := customer(after); a != nil {
		env.Put("after", a)
	}
	if tx {
		env.Put("transaction", connect.NewStruct(pgTransactionSchema).Put("id", "771:200").Put("total_order", int64(3)).Put("data_collection_order", int64(2)))
	}
	keyRow := after
	if keyRow == nil {
		keyRow = before
	}
	var key any
	var keySchema *connect.Schema
	if keyRow != nil {
		keySchema, key = customersKey, connect.NewStruct(customersKey).Put("id", keyRow.id)
	}
	return &connect.Record{Topic: "dbserver1.inventory.customers", KeySchema: keySchema, Key: key, ValueSchema: customersEnvelope, Value: env}
}

func tombstone() *connect.Record {
	return &connect.Record{Topic: "dbserver1.inventory.customers", KeySchema: customersKey, Key: connect.NewStruct(customersKey).Put("id", int32(1))}
}

func heartbeat() *connect.Record {
	return &connect.Record{Topic: "__debezium-heartbeat.dbserver1", ValueSchema: pgHeartbeatSchema, Value: connect.NewStruct(pgHeartbeatSchema).Put("ts_ms", int64(1))}
}

var (
	alice  = &row{1, "alice", "a@example.com"}
	alice2 = &row{1, "alice", nil}
)

func jsonConverter(tb testing.TB) *converters.JSONConverter {
	tb.Helper()
	c := new(converters.JSONConverter)
	if err := c.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		tb.Fatal(err)
	}
	return c
}

func configured(tb testing.TB, config map[string]string) *ExtractNewRecordState {
	tb.Helper()
	t := NewExtractNewRecordState()
	if err := t.Configure(config); err != nil {
		tb.Fatalf("Configure(%v): %v", config, err)
	}
	return t
}
