package debezium

import (
	"strings"
	"testing"
)

// FuzzParseFieldRefs checks that any add.fields / add.headers value is
// either refused with Debezium's message or read into references whose
// names carry the prefix.
func FuzzParseFieldRefs(f *testing.F) {
	for _, s := range []string{"op,table,lsn,source.ts_ms", "op:OP,source.lsn:LSN", "a.b.c", ":", "op,,", " , ", "op:a:b", ".x", "x.", "transaction.id:ID"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		refs, err := parseFieldRefs("__", spec)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Unexpected field name: ") {
				t.Fatalf("%q: %v", spec, err)
			}
			if e := NewExtractNewRecordState().Configure(map[string]string{"add.fields": spec}); e == nil {
				t.Fatalf("%q: Configure accepted what the parser refused", spec)
			}
			return
		}
		for _, r := range refs {
			if !strings.HasPrefix(r.newField, "__") {
				t.Fatalf("%q: %+v", spec, r)
			}
		}
		// The references work on a real event, whatever they name.
		tr := NewExtractNewRecordState()
		if err := tr.Configure(map[string]string{"add.headers": spec}); err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		tr.Apply(change("c", nil, alice, true))
	})
}
