package converters

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/valuefields"
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

// A struct member's literal (true, false, null) is read in place; a
// misspelt one is refused as the general parser refuses it.
func TestStructPayloadLiterals(t *testing.T) {
	c := newJSON(t, nil)
	const schema = `{"type":"struct","fields":[{"type":"boolean","optional":true,"field":"flag"},` +
		`{"type":"struct","optional":true,"field":"inner","fields":[{"type":"boolean","optional":false,"field":"on"}]}],"optional":false,"name":"t"}`
	for _, tc := range []struct {
		payload string
		flag    any
		msg     string
	}{
		{`{"flag":true,"inner":null}`, true, ""},
		{`{"flag":false,"inner":{"on":true}}`, false, ""},
		{`{"flag":null}`, nil, ""},
		{`{"flag":tru}`, nil, "unrecognized token"},
		{`{"flag":nul}`, nil, "unrecognized token"},
		{`{"flag":false,"inner":nulL}`, nil, "unrecognized token"},
	} {
		_, v, err := c.ToConnectData("t", []byte(`{"schema":`+schema+`,"payload":`+tc.payload+`}`))
		if tc.msg != "" {
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v, want an error naming %q", tc.payload, err, tc.msg)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.payload, err)
		}
		if got := v.(*connect.Struct).Get("flag"); got != tc.flag {
			t.Errorf("%s: flag = %v, want %v", tc.payload, got, tc.flag)
		}
	}
}

// A Debezium envelope converted for ExtractNewRecordState's fields: the
// row and op are built, the source block is checked and left null; a
// source block the conversion refuses is refused with its message.
func TestToConnectDataFieldsChecksWhatItSkips(t *testing.T) {
	c := newJSON(t, nil)
	const schema = `{"type":"struct","fields":[` +
		`{"type":"struct","optional":true,"field":"after","fields":[{"type":"int64","field":"id"},{"type":"string","field":"name"}]},` +
		`{"type":"struct","field":"source","fields":[{"type":"string","field":"version"},{"type":"int64","field":"ts_ms"},{"type":"string","optional":true,"field":"sequence"}]},` +
		`{"type":"string","field":"op"}],"name":"shop.public.orders.Envelope"}`
	needs := valuefields.New(readsNamed{"after", "before", "op"})
	record := func(source string) []byte {
		return []byte(`{"schema":` + schema + `,"payload":{"after":{"id":7,"name":"gizmo"},"source":` + source + `,"op":"c"}}`)
	}
	s, v, err := c.ToConnectDataFields("t", record(`{"version":"2.7.0.Final","ts_ms":1720621800000,"sequence":null}`), needs)
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*connect.Struct)
	if st.Schema() != s || st.Get("source") != nil || st.Get("op") != "c" {
		t.Fatalf("got %v, want source null and op c", st)
	}
	if after := st.Get("after").(*connect.Struct); after.Get("id") != int64(7) || after.Get("name") != "gizmo" {
		t.Fatalf("after = %v", after)
	}
	for _, source := range []string{
		`{"version":2,"ts_ms":1}`,                 // a number for a string
		`{"version":"2","ts_ms":"1"}`,             // a string for an int64
		`{"version":"2"}`,                         // a required field missing
		`{"version":"2","ts_ms":1,"x":[}`,         // not JSON
		`null`,                                    // a required struct null
		`{"version":"2","ts_ms":true}`,            // a boolean for an int64
		`{"version":"2","ts_ms":1,"sequence":{}}`, // an object for a string
	} {
		_, _, want := c.ToConnectData("t", record(source))
		_, _, got := c.ToConnectDataFields("t", record(source), needs)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("source %s: error %v, want the full conversion's %v", source, got, want)
		}
	}
}
