package javajson

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestAppendDoubleMatchesJava(t *testing.T) {
	// Expected texts are Java's Double.toString output.
	cases := map[float64]string{
		1:                      "1.0",
		1.5:                    "1.5",
		100:                    "100.0",
		1e10:                   "1.0E10",
		1e7:                    "1.0E7",
		9999999:                "9999999.0",
		0.001:                  "0.001",
		0.0001:                 "1.0E-4",
		-2.5e-7:                "-2.5E-7",
		123456.75:              "123456.75",
		0:                      "0.0",
		math.Copysign(0, -1):   "-0.0",
		1.7976931348623157e308: "1.7976931348623157E308",
	}
	for f, want := range cases {
		if got := string(AppendDouble(nil, f)); got != want {
			t.Errorf("AppendDouble(%v) = %s, want %s", f, got, want)
		}
	}
	if got := string(AppendFloat(nil, 0.1)); got != "0.1" {
		t.Errorf("AppendFloat(0.1) = %s, want 0.1", got)
	}
	if got := string(AppendFloat(nil, 3e10)); got != "3.0E10" {
		t.Errorf("AppendFloat(3e10) = %s, want 3.0E10", got)
	}
}

func TestAppendStringEscapesLikeJackson(t *testing.T) {
	cases := map[string]string{
		`a"b\c`:         `"a\"b\\c"`,
		"<&>/":          `"<&>/"`,
		"tab\tnl\ncr\r": `"tab\tnl\ncr\r"`,
		"\x01\x1f\x7f":  `"\u0001\u001F` + "\x7f" + `"`,
		"\b\f":          `"\b\f"`,
		"é\u2028😀":      "\"é\u2028😀\"",
		"bad\xffutf8":   "\"bad\uFFFDutf8\"",
	}
	for in, want := range cases {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestHashMapOrder(t *testing.T) {
	// Orders checked against a JDK 17 HashMap (spec §3.10 and the
	// connector-offsets reference §0.3).
	cases := []struct{ in, want []string }{
		{[]string{"kafka_topic", "kafka_partition"}, []string{"kafka_partition", "kafka_topic"}},
		{[]string{"table", "protocol"}, []string{"protocol", "table"}},
		{[]string{"cluster", "topic", "partition"}, []string{"cluster", "partition", "topic"}},
		{[]string{"topic", "partition", "group"}, []string{"partition", "topic", "group"}},
		{[]string{"incrementing", "timestamp", "timestamp_nanos"}, []string{"timestamp_nanos", "incrementing", "timestamp"}},
		{[]string{"lsn", "txId", "ts_usec", "lsn_proc", "lsn_commit", "messageType"}, []string{"lsn_proc", "messageType", "lsn_commit", "lsn", "txId", "ts_usec"}},
	}
	for _, c := range cases {
		got := HashMapOrder(c.in)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("HashMapOrder(%v) = %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
}

// Thousands of keys (a table resized many times, many buckets shared)
// come in the order of HashMap's definition: insertion order, sorted
// stably by bucket index.
func TestHashMapOrderMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 12, 13, 3000, 10000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("connector-%d-%x", i, rng.Uint32()%64)
		}
		capacity := 16
		for float64(n) > 0.75*float64(capacity) {
			capacity *= 2
		}
		want := slices.Clone(keys)
		sort.SliceStable(want, func(i, j int) bool {
			return spread(want[i])&uint32(capacity-1) < spread(want[j])&uint32(capacity-1)
		})
		if got := HashMapOrder(keys); !slices.Equal(got, want) {
			t.Fatalf("HashMapOrder of %d keys differs from the stable sort by bucket", n)
		}
	}
}

// Maps of up to smallMap keys are ordered without allocating; the order
// must be the one HashMapOrder gives every map.
func TestSmallMapOrderIsHashMapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range smallMap + 3 {
		for range 200 {
			m := map[string]any{}
			for len(m) < n {
				// Short keys from few letters: many share a bucket.
				k := make([]byte, 1+rng.IntN(3))
				for i := range k {
					k[i] = "abcdefg_"[rng.IntN(8)]
				}
				m[string(k)] = int64(len(m))
			}
			got, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			want := []byte{'{'}
			for i, k := range HashMapOrder(sortedKeys(m)) {
				if i > 0 {
					want = append(want, ',')
				}
				want = AppendString(want, k)
				want = append(want, ':')
				want, _ = Append(want, m[k])
			}
			want = append(want, '}')
			if string(got) != string(want) {
				t.Fatalf("Marshal(%v) = %s, want %s", m, got, want)
			}
		}
	}
	m := map[string]any{"incrementing": int64(1), "timestamp": int64(2), "timestamp_nanos": int64(3)}
	buf := make([]byte, 0, 128)
	if a := testing.AllocsPerRun(100, func() { Append(buf[:0], m) }); a != 0 {
		t.Errorf("%v allocations to append a 3-key map, want none", a)
	}
}

func TestMarshalOffsetKey(t *testing.T) {
	key := []any{"jdbc-orders", map[string]any{"table": "public.orders", "protocol": "1"}}
	got, err := Marshal(key)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["jdbc-orders",{"protocol":"1","table":"public.orders"}]`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestUnmarshalTypes(t *testing.T) {
	v, err := Unmarshal([]byte(`{"a":1,"b":1.0,"c":1e2,"d":"x","e":true,"f":null,"g":[1]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if _, ok := m["a"].(int64); !ok {
		t.Errorf("a is %T, want int64", m["a"])
	}
	if _, ok := m["b"].(float64); !ok {
		t.Errorf("b is %T, want float64", m["b"])
	}
	if _, ok := m["c"].(float64); !ok {
		t.Errorf("c is %T, want float64", m["c"])
	}
	if _, err := Unmarshal([]byte(`{"a":99999999999999999999}`)); !errors.Is(err, ErrBigInteger) {
		t.Errorf("big integer: err = %v, want ErrBigInteger", err)
	}
	for _, in := range []string{`{} {}`, `{} x`, `{} ]`, `1 2`} {
		if _, err := Unmarshal([]byte(in)); err == nil {
			t.Errorf("trailing data accepted in %s", in)
		}
	}
	if _, err := Unmarshal([]byte(" {}\n ")); err != nil {
		t.Errorf("surrounding space refused: %v", err)
	}
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`["c",{"filename":"a.txt"}]`))
	f.Add([]byte(`{"position":12,"x":1.5,"y":"\u0001"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Unmarshal(data)
		if err != nil {
			return
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of decoded value: %v", err)
		}
		v2, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		out2, err := Marshal(v2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("not stable: %s vs %s (%v)", out, out2, err)
		}
	})
}
