package transforms

import (
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/owned"
)

// The chain of bench/'s smt-file figure, on a FileStreamSource's record,
// and the JsonConverter after it.
func BenchmarkFileLineChain(b *testing.B) {
	configure := func(t ownedTransformation, config map[string]string) ownedTransformation {
		if err := t.Configure(config); err != nil {
			b.Fatal(err)
		}
		return t
	}
	// As a source task's chain runs them: each struct after the first is
	// built in place in the one before, and the first is the previous
	// record's, converted (internal/owned).
	chain := []ownedTransformation{
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
	var (
		buf     []byte
		st      owned.State[connect.Struct]
		scratch connect.Record
		value   any = line
	)
	b.ReportAllocs()
	for b.Loop() {
		scratch = connect.Record{Topic: "lines-in", ValueSchema: connect.StringSchema, Value: value}
		r := &scratch
		st.Parts = 0
		for _, t := range chain {
			var err error
			if r, err = t.ApplyOwned(r, &st); err != nil {
				b.Fatal(err)
			}
		}
		var err error
		if buf, err = conv.AppendFromConnectData(buf[:0], r.Topic, r.ValueSchema, r.Value); err != nil {
			b.Fatal(err)
		}
		st.Spare = r.Value.(*connect.Struct)
	}
}
