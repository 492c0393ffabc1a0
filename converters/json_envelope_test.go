package converters

import (
	"testing"

	"github.com/connectd/connectd/connect"
)

// Struct payloads read their members into reused nodes: a record must
// not see a member of the record read before it, nested or not, whether
// the member is missing, null, or of another kind this time.
func TestStructPayloadsAreReadIndependently(t *testing.T) {
	c := newJSON(t, nil)
	const schema = `{"type":"struct","fields":[` +
		`{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":true,"field":"note"},` +
		`{"type":"struct","optional":true,"field":"inner","fields":[{"type":"double","optional":true,"field":"x"}]}],` +
		`"optional":false,"name":"t"}`
	for _, tc := range []struct {
		payload string
		note    any
		x       any // inner.x; nil inner when innerNil
		nilIn   bool
	}{
		{`{"id":1,"note":"first","inner":{"x":1.5}}`, "first", 1.5, false},
		{`{"id":2}`, nil, nil, true},
		{`{"id":3,"note":null,"inner":{}}`, nil, nil, false},
		{`{"inner":{"x":2.5},"note":"fourth","id":4}`, "fourth", 2.5, false},
		{`{"id":5,"inner":null}`, nil, nil, true},
	} {
		_, v, err := c.ToConnectData("t", []byte(`{"schema":`+schema+`,"payload":`+tc.payload+`}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.payload, err)
		}
		st := v.(*connect.Struct)
		if got := st.Get("note"); got != tc.note {
			t.Errorf("%s: note = %v, want %v", tc.payload, got, tc.note)
		}
		inner, _ := st.Get("inner").(*connect.Struct)
		if (inner == nil) != tc.nilIn {
			t.Fatalf("%s: inner = %v", tc.payload, st.Get("inner"))
		}
		if inner != nil {
			if got := inner.Get("x"); got != tc.x {
				t.Errorf("%s: inner.x = %v, want %v", tc.payload, got, tc.x)
			}
		}
	}
}
