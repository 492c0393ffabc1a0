package transforms

import (
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// The chain of bench/'s smt-file figure, on a FileStreamSource's record,
// and the JsonConverter after it.
func BenchmarkFileLineChain(b *testing.B) {
	configure := func(t connect.Transformation, config map[string]string) connect.Transformation {
		if err := t.Configure(config); err != nil {
			b.Fatal(err)
		}
		return t
	}
	chain := []connect.Transformation{
		configure(&HoistField{part: Value}, map[string]string{"field": "line"}),
		configure(&InsertField{part: Value}, map[string]string{"static.field": "source", "static.value": "bench"}),
		configure(&ReplaceField{part: Value}, map[string]string{"renames": "line:text"}),
		configure(&RegexRouter{}, map[string]string{"regex": "(.*)-in", "replacement": "$1"}),
	}
	conv := &converters.JSONConverter{}
	if err := conv.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		b.Fatal(err)
	}
	line := "0000001 the quick brown fox jumps over the lazy dog, the quick brown fox jumps over the lazy"
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		r := &connect.Record{Topic: "lines-in", ValueSchema: connect.StringSchema, Value: line}
		for _, t := range chain {
			var err error
			if r, err = t.Apply(r); err != nil {
				b.Fatal(err)
			}
		}
		var err error
		if buf, err = conv.AppendFromConnectData(buf[:0], r.Topic, r.ValueSchema, r.Value); err != nil {
			b.Fatal(err)
		}
	}
}
