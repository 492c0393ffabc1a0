package converters

import "testing"

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
