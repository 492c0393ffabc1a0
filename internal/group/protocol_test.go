package group

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The example of the reference §4.6: v2 metadata of a fresh worker with url
// http://10.0.0.5:8083/ (21 bytes) at config offset 42.
func TestMetadataGoldenSpecExample(t *testing.T) {
	want := unhex(t, "00 02 | 00 15 68 74 74 70 3a 2f 2f 31 30 2e 30 2e 30 2e 35 3a 38 30 38 33 2f | 00 00 00 00 00 00 00 2a | ff ff ff ff")
	md := Metadata{Version: 2, URL: "http://10.0.0.5:8083/", ConfigOffset: 42}
	got := EncodeMetadata(md)
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeMetadata:\n got %x\nwant %x", got, want)
	}
	dec, err := DecodeMetadata(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, md) {
		t.Fatalf("DecodeMetadata = %+v, want %+v", dec, md)
	}
}

func TestMetadataGoldenV0(t *testing.T) {
	want := unhex(t, "0000 0008 687474703a2f2f61 ffffffffffffffff")
	md := Metadata{Version: 0, URL: "http://a", ConfigOffset: -1}
	if got := EncodeMetadata(md); !bytes.Equal(got, want) {
		t.Fatalf("got %x want %x", got, want)
	}
	// v0 never carries an allocation, even if Current is set.
	md.Current = &Assignment{Version: 1}
	if got := EncodeMetadata(md); !bytes.Equal(got, want) {
		t.Fatalf("v0 with Current: got %x want %x", got, want)
	}
	dec, err := DecodeMetadata(append(want, 0xde, 0xad)) // trailing bytes ignored
	if err != nil || dec.Version != 0 || dec.URL != "http://a" || dec.ConfigOffset != -1 || dec.Current != nil {
		t.Fatalf("DecodeMetadata = %+v, %v", dec, err)
	}
}

func TestAssignmentGoldenV1(t *testing.T) {
	a := Assignment{
		Version: 1, Error: 0, Leader: "L", LeaderURL: "u", ConfigOffset: 7,
		Assigned: []ConnectorTasks{{Connector: "c", Tasks: []int32{-1, 0}}},
		Revoked:  []ConnectorTasks{},
		Delay:    500,
	}
	want := unhex(t, `
		0001 0000 0001 4c 0001 75 0000000000000007
		00000001 0001 63 00000002 ffffffff 00000000
		00000000
		000001f4`)
	got := EncodeAssignment(a)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	dec, err := DecodeAssignment(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, a) {
		t.Fatalf("decoded %+v, want %+v", dec, a)
	}
}

func TestAssignmentGoldenV0(t *testing.T) {
	a := Assignment{
		Version: 0, Error: 1, Leader: "L", LeaderURL: "u", ConfigOffset: 7,
		Assigned: []ConnectorTasks{{Connector: "c", Tasks: []int32{3}}},
		Revoked:  []ConnectorTasks{{Connector: "ignored", Tasks: []int32{1}}}, // not in v0
		Delay:    9,                                                           // not in v0
	}
	want := unhex(t, "0000 0001 0001 4c 0001 75 0000000000000007 00000001 0001 63 00000001 00000003")
	if got := EncodeAssignment(a); !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	dec, err := DecodeAssignment(want)
	if err != nil {
		t.Fatal(err)
	}
	a.Revoked, a.Delay = nil, 0
	if !reflect.DeepEqual(dec, a) {
		t.Fatalf("decoded %+v, want %+v", dec, a)
	}
	// A nil Assigned is written as an empty (non-null) array in v0.
	if got := EncodeAssignment(Assignment{Version: 0}); !bytes.Equal(got[len(got)-4:], []byte{0, 0, 0, 0}) {
		t.Fatalf("v0 nil assigned: %x", got)
	}
}

func TestAssignmentNullArraysAndMissingTrailingFields(t *testing.T) {
	full := EncodeAssignment(Assignment{Version: 2, Leader: "L", LeaderURL: "u", ConfigOffset: 3, Delay: 12})
	// null assigned, null revoked
	if !bytes.Contains(full, unhex(t, "ffffffff ffffffff 0000000c")) {
		t.Fatalf("nil arrays not written as null: %x", full)
	}
	head := unhex(t, "0001 0000 0001 4c 0001 75 0000000000000003")
	cases := map[string][]byte{
		"only header fields":  head,
		"assigned only":       append(append([]byte{}, head...), unhex(t, "00000000")...),
		"assigned+revoked":    append(append([]byte{}, head...), unhex(t, "00000000 ffffffff")...),
		"null assigned+delay": append(append([]byte{}, head...), unhex(t, "ffffffff ffffffff 00000005")...),
	}
	for name, b := range cases {
		a, err := DecodeAssignment(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Leader != "L" || a.LeaderURL != "u" || a.ConfigOffset != 3 {
			t.Fatalf("%s: %+v", name, a)
		}
		if name == "null assigned+delay" && (a.Assigned != nil || a.Revoked != nil || a.Delay != 5) {
			t.Fatalf("%s: %+v", name, a)
		}
		if name == "assigned only" && (a.Assigned == nil || len(a.Assigned) != 0 || a.Delay != 0) {
			t.Fatalf("%s: %+v", name, a)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":              nil,
		"negative version":   unhex(t, "ffff 0000"),
		"short url":          unhex(t, "0002 0005 6162"),
		"no offset":          unhex(t, "0002 0001 61 0000"),
		"short allocation":   unhex(t, "0002 0001 61 0000000000000001 00000010 00"),
		"bad allocation":     unhex(t, "0002 0001 61 0000000000000001 00000002 0001"),
		"negative alloc len": unhex(t, "0002 0001 61 0000000000000001 fffffffe"),
	} {
		if _, err := DecodeMetadata(b); err == nil {
			t.Errorf("DecodeMetadata(%s) succeeded", name)
		}
	}
	head := "0001 0000 0001 4c 0001 75 0000000000000003"
	for name, b := range map[string][]byte{
		"empty":            nil,
		"negative version": unhex(t, "fffe"+head[4:]),
		"truncated head":   unhex(t, head)[:10],
		"huge array":       unhex(t, head+"7fffffff"),
		"negative array":   unhex(t, head+"fffffffe"),
		"null task array":  unhex(t, head+"00000001 0001 63 ffffffff"),
		"truncated tasks":  unhex(t, head+"00000001 0001 63 00000002 00000001"),
		"partial delay":    unhex(t, head+"ffffffff ffffffff 0000"),
	} {
		if _, err := DecodeAssignment(b); err == nil {
			t.Errorf("DecodeAssignment(%s) succeeded", name)
		}
	}
}

func TestRoundTrips(t *testing.T) {
	assignments := []Assignment{
		{Version: 0, Leader: "m-1", LeaderURL: "http://h:8083/", ConfigOffset: 5, Assigned: []ConnectorTasks{{Connector: "a", Tasks: []int32{-1, 0, 1}}}},
		{Version: 1, Error: 1, Leader: "m-1", LeaderURL: "http://h:8083/", ConfigOffset: -1},
		{Version: 2, Leader: "x", LeaderURL: "y", ConfigOffset: 1 << 40,
			Assigned: []ConnectorTasks{{Connector: "a", Tasks: []int32{-1}}, {Connector: "b", Tasks: []int32{2, 5}}},
			Revoked:  []ConnectorTasks{{Connector: "ü-connector", Tasks: []int32{}}}, Delay: 300000},
		{Version: 2, Assigned: []ConnectorTasks{}, Revoked: []ConnectorTasks{}},
	}
	for _, a := range assignments {
		got, err := DecodeAssignment(EncodeAssignment(a))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("assignment round trip:\n got %+v\nwant %+v", got, a)
		}
	}
	for _, v := range []int16{1, 2} {
		for _, cur := range []*Assignment{nil, &assignments[2], &assignments[1]} {
			md := Metadata{Version: v, URL: "http://10.0.0.5:8083/", ConfigOffset: 99, Current: cur}
			got, err := DecodeMetadata(EncodeMetadata(md))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, md) {
				t.Errorf("metadata round trip:\n got %+v\nwant %+v", got, md)
			}
		}
	}
	// v1 metadata without the allocation field (tolerated).
	md, err := DecodeMetadata(unhex(t, "0001 0001 61 0000000000000001"))
	if err != nil || md.Version != 1 || md.Current != nil {
		t.Fatalf("v1 without allocation: %+v %v", md, err)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	f.Add(EncodeMetadata(Metadata{Version: 2, URL: "http://10.0.0.5:8083/", ConfigOffset: 42}))
	f.Add(EncodeMetadata(Metadata{Version: 0, URL: "u", ConfigOffset: 1}))
	f.Add(EncodeMetadata(Metadata{Version: 1, URL: "u", Current: &Assignment{Version: 1, Assigned: []ConnectorTasks{{Connector: "c", Tasks: []int32{-1, 1}}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		md, err := DecodeMetadata(b)
		if err != nil {
			return
		}
		// Re-encoding is stable after one normalizing pass.
		enc := EncodeMetadata(md)
		md2, err := DecodeMetadata(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(EncodeMetadata(md2), enc) {
			t.Fatalf("unstable encoding")
		}
	})
}

func FuzzDecodeAssignment(f *testing.F) {
	f.Add(EncodeAssignment(Assignment{Version: 0, Leader: "l", Assigned: []ConnectorTasks{{Connector: "c", Tasks: []int32{0}}}}))
	f.Add(EncodeAssignment(Assignment{Version: 1, Leader: "l", Revoked: []ConnectorTasks{{Connector: "c", Tasks: []int32{-1}}}, Delay: 3}))
	f.Add(EncodeAssignment(Assignment{Version: 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAssignment(b)
		if err != nil {
			return
		}
		enc := EncodeAssignment(a)
		a2, err := DecodeAssignment(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(EncodeAssignment(a2), enc) {
			t.Fatalf("unstable encoding")
		}
	})
}
