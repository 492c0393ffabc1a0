package storage

import (
	"errors"
	"reflect"
	"testing"
)

func TestEncodeOffsetKeySpecExamples(t *testing.T) {
	tests := []struct {
		name      string
		connector string
		partition map[string]any
		want      string
	}{
		{"file source (spec 4.2)", "local-file-source", map[string]any{"filename": "test.txt"},
			`["local-file-source",{"filename":"test.txt"}]`},
		// Go map iteration is random, so getting the Java order here
		// proves the HashMap ordering is applied, not map order.
		{"jdbc protocol 1 (offsets spec 0.1)", "jdbc-orders", map[string]any{"table": "public.orders", "protocol": "1"},
			`["jdbc-orders",{"protocol":"1","table":"public.orders"}]`},
		{"mm2 source", "mm2", map[string]any{"topic": "t", "partition": 3, "cluster": "a"},
			`["mm2",{"cluster":"a","partition":3,"topic":"t"}]`},
		{"mm2 checkpoint", "cp", map[string]any{"group": "g", "topic": "t", "partition": int64(0)},
			`["cp",{"partition":0,"topic":"t","group":"g"}]`},
		{"sink-style two keys", "s", map[string]any{"kafka_topic": "t", "kafka_partition": int32(1)},
			`["s",{"kafka_partition":1,"kafka_topic":"t"}]`},
		{"empty partition (castorm http)", "http", map[string]any{}, `["http",{}]`},
		{"nil partition is empty", "http", nil, `["http",{}]`},
		{"double and escapes", "a\"b", map[string]any{"x": 1.0, "y": "tab\there\u2028</>"},
			"[\"a\\\"b\",{\"x\":1.0,\"y\":\"tab\\there\u2028</>\"}]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order must never leak into the bytes
				got, err := EncodeOffsetKey(tc.connector, tc.partition)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.want {
					t.Fatalf("got  %s\nwant %s", got, tc.want)
				}
			}
		})
	}
}

func TestValidatePrimitive(t *testing.T) {
	ok := map[string]any{
		"nil": nil, "b": true, "s": "x", "i": 1, "i8": int8(1), "i16": int16(1), "i32": int32(1), "i64": int64(1),
		"u8": uint8(1), "u16": uint16(1), "u32": uint32(1), "f32": float32(1), "f64": 1.5,
	}
	if err := ValidatePrimitive("offset", ok); err != nil {
		t.Fatalf("primitives refused: %v", err)
	}
	tests := []struct {
		value any
		msg   string
	}{
		{map[string]any{"a": 1}, "Offsets may only contain primitive types as values, but field f contains MAP"},
		{map[string]string{"a": "b"}, "Offsets may only contain primitive types as values, but field f contains MAP"},
		{[]any{1}, "Offsets may only contain primitive types as values, but field f contains ARRAY"},
		{[]string{"x"}, "Offsets may only contain primitive types as values, but field f contains ARRAY"},
		{uint64(1), "Offsets may only contain primitive types as values, but field f has type uint64"},
		{struct{}{}, "Offsets may only contain primitive types as values, but field f has type struct {}"},
	}
	for _, tc := range tests {
		for _, kind := range []string{"partition", "offset"} {
			err := ValidatePrimitive(kind, map[string]any{"f": tc.value, "ok": "fine"})
			var pe *PrimitiveError
			if !errors.As(err, &pe) {
				t.Fatalf("%T: got %v, want *PrimitiveError", tc.value, err)
			}
			if err.Error() != tc.msg || pe.Kind != kind || pe.Field != "f" {
				t.Errorf("%T: got %q (kind %q field %q), want %q (kind %q)", tc.value, err, pe.Kind, pe.Field, tc.msg, kind)
			}
		}
	}
	if _, err := EncodeOffsetKey("c", map[string]any{"f": []any{}}); err == nil ||
		err.Error() != "Offsets may only contain primitive types as values, but field f contains ARRAY" {
		t.Errorf("EncodeOffsetKey with nested value: %v", err)
	}
}

func TestDecodeOffsetKey(t *testing.T) {
	conn, part, err := DecodeOffsetKey([]byte(`["jdbc-orders",{"table":"public.orders","protocol":"1","n":1,"d":1.0}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"table": "public.orders", "protocol": "1", "n": int64(1), "d": 1.0}
	if conn != "jdbc-orders" || !reflect.DeepEqual(part, want) {
		t.Fatalf("got %q %#v", conn, part)
	}

	conn, part, err = DecodeOffsetKey([]byte(`["src",null]`))
	if !errors.Is(err, ErrNullPartition) || conn != "src" || part != nil {
		t.Fatalf("null partition: got %q %v %v, want ErrNullPartition", conn, part, err)
	}

	for _, bad := range []string{
		``, `not json`, `["src",{"a":1}`, `{"a":1}`, `"src"`, `[]`, `["src"]`,
		`["src",{},{}]`, `[1,{}]`, `[null,{}]`, `["src","x"]`, `["src",[1]]`, `["src",1]`,
		`["src",{"a":99999999999999999999}]`, `["src",{}] trailing`,
	} {
		_, _, err := DecodeOffsetKey([]byte(bad))
		if err == nil || errors.Is(err, ErrNullPartition) {
			t.Errorf("DecodeOffsetKey(%q) = %v, want a malformed-key error", bad, err)
		}
	}
}

func TestCanonicalKey(t *testing.T) {
	a := CanonicalKey("c", map[string]any{"protocol": "1", "table": "t"})
	_, p, err := DecodeOffsetKey([]byte(`["c",{"table":"t","protocol":"1"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if b := CanonicalKey("c", p); a != b {
		t.Errorf("field order changed the canonical key: %q vs %q", a, b)
	}
	same := [][2]map[string]any{
		{{"n": 1}, {"n": int64(1)}},
		{{"n": uint8(7)}, {"n": int64(7)}},
		{{"f": float32(0.1)}, {"f": 0.1}}, // what Java reads back from Float.toString
		{nil, {}},
	}
	for _, pair := range same {
		if x, y := CanonicalKey("c", pair[0]), CanonicalKey("c", pair[1]); x != y {
			t.Errorf("%#v and %#v should be the same partition: %q vs %q", pair[0], pair[1], x, y)
		}
	}
	different := [][2]map[string]any{
		{{"n": int64(1)}, {"n": 1.0}}, // Long vs Double are different keys in Java
		{{"n": int64(1)}, {"n": "1"}},
		{{"a": "b"}, {"a": "b", "c": nil}},
		{{"a": true}, {"a": "true"}},
	}
	for _, pair := range different {
		if x, y := CanonicalKey("c", pair[0]), CanonicalKey("c", pair[1]); x == y {
			t.Errorf("%#v and %#v must stay distinct, both gave %q", pair[0], pair[1], x)
		}
	}
	if CanonicalKey("a", map[string]any{}) == CanonicalKey("b", map[string]any{}) {
		t.Error("connector name ignored")
	}
	// Connector names that would be ambiguous under naive concatenation.
	if CanonicalKey(`a",{}]`, nil) == CanonicalKey("a", nil) {
		t.Error("connector name not quoted")
	}
}

func TestMurmur2Vectors(t *testing.T) {
	// Kafka's UtilsTest.testMurmur2 vectors (spec §4.2).
	vectors := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range vectors {
		if got := Murmur2([]byte(in)); got != want {
			t.Errorf("Murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestPartitionForSpecExample(t *testing.T) {
	key, err := EncodeOffsetKey("local-file-source", map[string]any{"filename": "test.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Murmur2(key); got != 891569160 {
		t.Errorf("murmur2 = %d, want 891569160", got)
	}
	if got := PartitionFor(key, 25); got != 10 {
		t.Errorf("partition = %d, want 10 of 25", got)
	}
	// Negative hashes must be masked, not negated (Utils.toPositive).
	if h := Murmur2([]byte("21")); h >= 0 {
		t.Fatal("vector expected to be negative")
	}
	if got, want := PartitionFor([]byte("21"), 7), int32((-973932308&0x7fffffff)%7); got != want {
		t.Errorf("PartitionFor negative hash = %d, want %d", got, want)
	}
}

func FuzzDecodeOffsetKey(f *testing.F) {
	for _, s := range []string{
		`["local-file-source",{"filename":"test.txt"}]`,
		`["jdbc-orders",{"protocol":"1","table":"public.orders"}]`,
		`["src",null]`, `["src",{"a":1.0,"b":-0.0,"c":1e300,"d":null,"e":true}]`,
		`["src",{"n":{"x":[1,2]}}]`, `[]`, `{}`, `["\u2028",{"\ud83d\ude00":"\u0000"}]`,
		"[\"x\",{\"a\":\"\xff\"}]", `["src",{"a":99999999999999999999}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		conn, part, err := DecodeOffsetKey(key)
		if err != nil {
			return
		}
		canon := CanonicalKey(conn, part)
		if ValidatePrimitive("partition", part) != nil {
			return
		}
		// Whatever we read, we must be able to write it the Java way and
		// find the same partition again.
		enc, err := EncodeOffsetKey(conn, part)
		if err != nil {
			t.Fatalf("cannot re-encode %q: %v", key, err)
		}
		conn2, part2, err := DecodeOffsetKey(enc)
		if err != nil {
			t.Fatalf("re-encoded key %q does not decode: %v", enc, err)
		}
		if CanonicalKey(conn2, part2) != canon {
			t.Fatalf("canonical form changed: %q -> %q", canon, CanonicalKey(conn2, part2))
		}
		enc2, err := EncodeOffsetKey(conn2, part2)
		if err != nil || string(enc2) != string(enc) {
			t.Fatalf("Java-order encoding not stable: %q vs %q (%v)", enc, enc2, err)
		}
	})
}
