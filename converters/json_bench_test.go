package converters

import (
	"math/big"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// A JDBC-like record in the envelope: the schema is most of its bytes.
const benchEnvelope = `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":false,"field":"customer"},{"type":"double","optional":false,"field":"amount"}],` +
	`"optional":false,"name":"bench.order"},"payload":{"id":123456,"customer":"customer-456","amount":1234.56}}`

func BenchmarkJSONToConnectEnvelope(b *testing.B) {
	for _, size := range []string{"1000", "0"} {
		b.Run("schemas.cache.size="+size, func(b *testing.B) {
			c := newJSON(b, map[string]string{"schemas.cache.size": size})
			data := []byte(benchEnvelope)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.ToConnectData("t", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A JDBC source row without the envelope (schemas.enable=false), as the
// JDBC source figure writes it.
func BenchmarkJSONFromConnectStruct(b *testing.B) {
	s := connect.StructSchema("orders",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "customer", Schema: connect.StringSchema},
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "updated_at", Schema: connect.TimestampSchema()})
	v := connect.NewStruct(s).Put("id", int64(123456)).Put("customer", "customer-456").
		Put("amount", &connect.Decimal{Unscaled: big.NewInt(123456), Scale: 2}).
		Put("updated_at", time.UnixMilli(1700000000123).UTC())
	for _, schemas := range []string{"false", "true"} {
		b.Run("schemas.enable="+schemas, func(b *testing.B) {
			c := newJSON(b, map[string]string{"schemas.enable": schemas})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.FromConnectData("t", s, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The same row as a JDBC source fills it, each field from its kind's
// constructor.
func BenchmarkJSONFromConnectStructValues(b *testing.B) {
	s := connect.StructSchema("orders",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "customer", Schema: connect.StringSchema},
		connect.Field{Name: "amount", Schema: connect.DecimalSchema(2)},
		connect.Field{Name: "updated_at", Schema: connect.TimestampSchema()})
	v := connect.NewStruct(s)
	v.SetValueAt(0, connect.Int64Value(123456))
	v.SetValueAt(1, connect.StringValue("customer-456"))
	v.SetValueAt(2, connect.DecimalValue(123456, 2))
	v.SetValueAt(3, connect.UnixNanoValue(1700000000123000000))
	c := newJSON(b, map[string]string{"schemas.enable": "false"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.FromConnectData("t", s, v); err != nil {
			b.Fatal(err)
		}
	}
}
