package debezium

import (
	"fmt"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/valuefields"
)

const (
	benchRowSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"customer"},{"type":"double","optional":false,"field":"amount"}],` +
		`"optional":true,"name":"bench.public.orders.Value","field":"%s"}`
	benchSourceSchema = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},` +
		`{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"db"},` +
		`{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"}`
	benchFlatSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"customer"},{"type":"double","optional":false,"field":"amount"}],` +
		`"optional":false,"name":"bench.order"}`
)

var benchEnvelopeSchema = `{"type":"struct","fields":[` + fmt.Sprintf(benchRowSchema, "before") + `,` + fmt.Sprintf(benchRowSchema, "after") + `,` + benchSourceSchema +
	`,{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"bench.public.orders.Envelope","version":2}`

// What a JDBC sink of bench/'s smt-jdbc-sink figure costs the worker
// before Put: a Debezium envelope read by the JsonConverter and unwrapped,
// against the same row flat.
func BenchmarkEnvelopeToRow(b *testing.B) {
	row := `{"id":42,"customer":"customer-42","amount":123.45}`
	env := []byte(`{"schema":` + benchEnvelopeSchema + `,"payload":{"before":null,"after":` + row +
		`,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"bench","ts_ms":1720621800000,"db":"test","schema":"public","table":"orders","lsn":1042},"op":"c","ts_ms":1720621800123}}`)
	flat := []byte(`{"schema":` + benchFlatSchema + `,"payload":` + row + `}`)
	conv := &converters.JSONConverter{}
	if err := conv.Configure(map[string]string{}, false); err != nil {
		b.Fatal(err)
	}
	unwrap := NewExtractNewRecordState()
	if err := unwrap.Configure(map[string]string{}); err != nil {
		b.Fatal(err)
	}
	b.Run("envelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, v, err := conv.ToConnectData("t", env)
			if err != nil {
				b.Fatal(err)
			}
			r, err := unwrap.Apply(&connect.Record{Topic: "t", ValueSchema: s, Value: v, Sink: true})
			if err != nil || r == nil {
				b.Fatal(err)
			}
		}
	})
	// As the worker converts for this transform: the envelope's source
	// block checked, not built.
	b.Run("envelope, fields read", func(b *testing.B) {
		needs := valuefields.New(unwrap)
		b.ReportAllocs()
		for b.Loop() {
			s, v, err := conv.ToConnectDataFields("t", env, needs)
			if err != nil {
				b.Fatal(err)
			}
			r, err := unwrap.Apply(&connect.Record{Topic: "t", ValueSchema: s, Value: v, Sink: true})
			if err != nil || r == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unwrap only", func(b *testing.B) {
		s, v, err := conv.ToConnectData("t", env)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if r, err := unwrap.Apply(&connect.Record{Topic: "t", ValueSchema: s, Value: v, Sink: true}); err != nil || r == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := conv.ToConnectData("t", flat); err != nil {
				b.Fatal(err)
			}
		}
	})
}
