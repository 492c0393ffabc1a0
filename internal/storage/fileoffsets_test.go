package storage

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func openOffsets(t testing.TB, path string) *FileOffsetStore {
	t.Helper()
	s, err := OpenFileOffsetStore(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustPut(t testing.TB, s *FileOffsetStore, connector string, entries ...PartitionOffset) {
	t.Helper()
	if err := s.Put(connector, entries); err != nil {
		t.Fatal(err)
	}
}

// nonJavaOrderKey is a JDBC key as some other writer might have produced
// it: fields not in HashMap order (Java would write protocol first).
const nonJavaOrderKey = `["jdbc-orders",{"table":"public.customers","protocol":"1"}]`

// goldenOffsets is the content of testdata/golden_offsets.json: several
// connectors, a multi-key partition, int, double, bool and null values,
// escapes and non-ASCII text, and a key kept in non-Java order.
var goldenOffsets = map[string][]PartitionOffset{
	"file-src": {
		{Partition: map[string]any{"filename": "/data/in.txt"}, Offset: map[string]any{"position": int64(1234)}},
		{Partition: map[string]any{"filename": "/data/zero.txt"}, Offset: map[string]any{"position": int64(0)}},
	},
	"jdbc-orders": {
		{Partition: map[string]any{"protocol": "1", "table": "public.customers"}, Offset: map[string]any{"incrementing": int64(5)}},
		{Partition: map[string]any{"protocol": "1", "table": "public.orders"}, Offset: map[string]any{"incrementing": int64(42), "timestamp_nanos": int64(-7)}},
	},
	"mm2": {
		{Partition: map[string]any{"cluster": "east", "partition": int64(3), "topic": "orders"}, Offset: map[string]any{"offset": int64(9007199254740993)}},
	},
	"ünïcødé \"src\"": {
		{Partition: map[string]any{"filename": "dir/naïve \"q\"\\\tfile\u2028😀.txt"}, Offset: map[string]any{
			"ratio": 1.0, "big": 1.5e10, "small": 1e-5, "done": true, "note": "ok ✓ </>", "nothing": nil,
		}},
	},
}

func buildGoldenOffsets(t *testing.T, path string) *FileOffsetStore {
	t.Helper()
	s := openOffsets(t, path)
	if err := s.PutRaw([]byte(nonJavaOrderKey), []byte(`{"incrementing":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, conn := range slices.Sorted(maps.Keys(goldenOffsets)) {
		if err := s.Put(conn, goldenOffsets[conn]); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestFileOffsetStoreGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	buildGoldenOffsets(t, path)
	checkGolden(t, "golden_offsets.json", mustReadFile(t, path))

	// Loading the golden file (not our own output) pins the reader too.
	s := openOffsets(t, filepath.Join("testdata", "golden_offsets.json"))
	for conn, want := range goldenOffsets {
		if got := s.Offsets(conn); !reflect.DeepEqual(got, want) {
			t.Errorf("Offsets(%q):\n got %#v\nwant %#v", conn, got, want)
		}
	}
	// The imported key was overwritten through Put with a Go map, yet
	// its original bytes survive in the file.
	if e := s.lookup("jdbc-orders", CanonicalKey("jdbc-orders", map[string]any{"protocol": "1", "table": "public.customers"})); e == nil || string(e.key) != nonJavaOrderKey {
		t.Errorf("imported key not preserved: %+v", e)
	}
}

func TestFileOffsetStoreExampleFormat(t *testing.T) {
	// The brief's example, compact; our writer indents it.
	path := filepath.Join(t.TempDir(), "x.offsets")
	compact := `{"format":"connectd.offsets","version":1,"offsets":[{"connector":"src","partition":{"filename":"a.txt"},"offset":{"position":12},"key":"[\"src\",{\"filename\":\"a.txt\"}]"}]}`
	if err := os.WriteFile(path, []byte(compact), 0o644); err != nil {
		t.Fatal(err)
	}
	s := openOffsets(t, path)
	mustPut(t, s, "src") // rewrite unchanged
	want := `{
  "format": "connectd.offsets",
  "version": 1,
  "offsets": [
    {
      "connector": "src",
      "partition": {
        "filename": "a.txt"
      },
      "offset": {
        "position": 12
      },
      "key": "[\"src\",{\"filename\":\"a.txt\"}]"
    }
  ]
}
`
	if got := string(mustReadFile(t, path)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	mustPut(t, s, "src", PartitionOffset{Partition: map[string]any{"filename": "a.txt"}})
	empty := "{\n  \"format\": \"connectd.offsets\",\n  \"version\": 1,\n  \"offsets\": []\n}\n"
	if got := string(mustReadFile(t, path)); got != empty {
		t.Errorf("empty store:\n%s\nwant:\n%s", got, empty)
	}
	if got := openOffsets(t, path).Offsets("src"); len(got) != 0 {
		t.Errorf("empty file loaded as %v", got)
	}
}

func TestFileOffsetStoreMissingFileIsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "connect.offsets")
	s := openOffsets(t, path)
	if got := s.Offsets("x"); len(got) != 0 {
		t.Errorf("got %v", got)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q", s.Path())
	}
}

func TestFileOffsetStoreCorruptFiles(t *testing.T) {
	golden := string(mustReadFile(t, filepath.Join("testdata", "golden_offsets.json")))
	entry := func(conn, part, off, key string) string {
		return `{"format":"connectd.offsets","version":1,"offsets":[{"connector":` + conn + `,"partition":` + part + `,"offset":` + off + `,"key":` + key + `}]}`
	}
	goodKey := `"[\"src\",{\"f\":\"a\"}]"`
	tests := map[string]string{
		"empty":                 "",
		"whitespace":            " \n",
		"truncated":             golden[:len(golden)/2],
		"truncated at end":      golden[:len(golden)-3],
		"garbage":               "\x00\x01garbage",
		"trailing garbage":      golden + "x",
		"java serialization":    "\xac\xed\x00\x05sr\x00\x11java.util.HashMap",
		"not an object":         `[1,2]`,
		"wrong format":          `{"format":"connectd.connectors","version":1,"offsets":[]}`,
		"wrong version":         `{"format":"connectd.offsets","version":2,"offsets":[]}`,
		"version as double":     `{"format":"connectd.offsets","version":1.0,"offsets":[]}`,
		"missing offsets":       `{"format":"connectd.offsets","version":1}`,
		"unknown top field":     `{"format":"connectd.offsets","version":1,"offsets":[],"extra":0}`,
		"offsets not array":     `{"format":"connectd.offsets","version":1,"offsets":{}}`,
		"entry not object":      `{"format":"connectd.offsets","version":1,"offsets":[1]}`,
		"key does not decode":   entry(`"src"`, `{"f":"a"}`, `{"p":1}`, `"[\"src\""`),
		"key is null partition": entry(`"src"`, `{"f":"a"}`, `{"p":1}`, `"[\"src\",null]"`),
		"key other connector":   entry(`"src"`, `{"f":"a"}`, `{"p":1}`, `"[\"other\",{\"f\":\"a\"}]"`),
		"key other partition":   entry(`"src"`, `{"f":"a"}`, `{"p":1}`, `"[\"src\",{\"f\":\"b\"}]"`),
		"key int vs double":     entry(`"src"`, `{"f":1.0}`, `{"p":1}`, `"[\"src\",{\"f\":1}]"`),
		"null offset":           entry(`"src"`, `{"f":"a"}`, `null`, goodKey),
		"nested offset":         entry(`"src"`, `{"f":"a"}`, `{"p":{"q":1}}`, goodKey),
		"array in partition":    entry(`"src"`, `{"f":["a"]}`, `{"p":1}`, `"[\"src\",{\"f\":[\"a\"]}]"`),
		"huge integer":          entry(`"src"`, `{"f":"a"}`, `{"p":123456789012345678901234567890}`, goodKey),
		"connector not string":  entry(`1`, `{"f":"a"}`, `{"p":1}`, goodKey),
		"missing key field":     `{"format":"connectd.offsets","version":1,"offsets":[{"connector":"src","partition":{"f":"a"},"offset":{"p":1}}]}`,
		"duplicate partition": `{"format":"connectd.offsets","version":1,"offsets":[` +
			`{"connector":"src","partition":{"a":1,"b":2},"offset":{"p":1},"key":"[\"src\",{\"a\":1,\"b\":2}]"},` +
			`{"connector":"src","partition":{"a":1,"b":2},"offset":{"p":2},"key":"[\"src\",{\"b\":2,\"a\":1}]"}]}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.offsets")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := OpenFileOffsetStore(path)
			if err == nil {
				t.Fatalf("opened a corrupt file as %d connectors", len(s.conns))
			}
			var ce *CorruptFileError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), path) || !strings.HasPrefix(err.Error(), "offsets file "+path+" is corrupted: ") {
				t.Errorf("error %q should be a *CorruptFileError naming %s", err, path)
			}
			// Opening must not have "repaired" the file.
			if got := string(mustReadFile(t, path)); got != content {
				t.Error("file was modified")
			}
		})
	}
}

func TestFileOffsetStoreUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.offsets")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := OpenFileOffsetStore(path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want an error naming %s", err, path)
	}
	// A path through a regular file is not "missing": it is a broken
	// configuration and must not start from empty offsets.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFileOffsetStore(filepath.Join(file, "x.offsets")); err == nil {
		t.Error("path below a regular file opened as empty")
	}
}

func TestFileOffsetStorePutReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	p1 := map[string]any{"filename": "a.txt"}
	p2 := map[string]any{"filename": "b.txt"}
	mustPut(t, s, "src",
		PartitionOffset{Partition: p1, Offset: map[string]any{"position": 1}},
		PartitionOffset{Partition: p2, Offset: map[string]any{"position": 2}})
	mustPut(t, s, "src", PartitionOffset{Partition: p1, Offset: map[string]any{"position": 10}})

	r := openOffsets(t, path)
	if got, ok := r.Get("src", p1); !ok || !reflect.DeepEqual(got, map[string]any{"position": int64(10)}) {
		t.Errorf("after reopen Get = %v %v", got, ok)
	}

	// A tombstone removes the partition, in memory and on disk.
	mustPut(t, s, "src", PartitionOffset{Partition: p1, Offset: nil})
	if _, ok := s.Get("src", p1); ok {
		t.Error("tombstoned partition still in memory")
	}
	r = openOffsets(t, path)
	want := []PartitionOffset{{Partition: map[string]any{"filename": "b.txt"}, Offset: map[string]any{"position": int64(2)}}}
	if got := r.Offsets("src"); !reflect.DeepEqual(got, want) {
		t.Errorf("after tombstone and reopen: %#v", got)
	}
	// Removing the last partition drops the connector entirely.
	mustPut(t, s, "src", PartitionOffset{Partition: p2})
	if len(s.conns) != 0 {
		t.Errorf("empty connector kept: %v", s.conns)
	}
	// A tombstone for an unknown partition is harmless.
	mustPut(t, s, "other", PartitionOffset{Partition: p2})
}

func TestFileOffsetStoreNumberTypesSurvive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	part := map[string]any{"n": 1, "f": 1.0}
	mustPut(t, s, "src", PartitionOffset{Partition: part, Offset: map[string]any{
		"double": 1.0, "long": int64(1), "int": int32(2), "float": float32(0.1), "neg0": math.Copysign(0, -1), "nan": math.NaN(),
	}})
	// Memory already holds what a reload gives (Java's types: Long and
	// Double; NaN is written quoted by Jackson, so it comes back a string).
	want := map[string]any{"double": 1.0, "long": int64(1), "int": int64(2), "float": 0.1, "neg0": 0.0, "nan": "NaN"}
	for _, st := range []*FileOffsetStore{s, openOffsets(t, path)} {
		got, ok := st.Get("src", map[string]any{"f": 1.0, "n": int64(1)})
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
		if neg0, _ := got["neg0"].(float64); !math.Signbit(neg0) {
			t.Error("-0.0 lost its sign")
		}
		for k, v := range got {
			if reflect.TypeOf(v) != reflect.TypeOf(want[k]) {
				t.Errorf("%s: type %T, want %T", k, v, want[k])
			}
		}
		if _, ok := st.Get("src", map[string]any{"f": int64(1), "n": int64(1)}); ok {
			t.Error("int64 1 matched a partition stored with double 1.0")
		}
	}
	if !strings.Contains(string(mustReadFile(t, path)), `"double": 1.0`) {
		t.Errorf("double not written as 1.0:\n%s", mustReadFile(t, path))
	}
}

func TestFileOffsetStoreKeepsForeignKeyBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	if err := s.PutRaw([]byte(nonJavaOrderKey), []byte(`{"incrementing":1}`)); err != nil {
		t.Fatal(err)
	}
	// A Go map (no order) finds the partition through the canonical form.
	part := map[string]any{"protocol": "1", "table": "public.customers"}
	if got, ok := s.Get("jdbc-orders", part); !ok || got["incrementing"] != int64(1) {
		t.Fatalf("Get by canonical form = %v %v", got, ok)
	}
	// Updating it through Put must keep the original bytes: a Java worker
	// compacting or looking up by bytes would otherwise see two records.
	mustPut(t, s, "jdbc-orders", PartitionOffset{Partition: part, Offset: map[string]any{"incrementing": 2}})
	r := openOffsets(t, path)
	e := r.lookup("jdbc-orders", CanonicalKey("jdbc-orders", part))
	if e == nil || string(e.key) != nonJavaOrderKey || e.offset["incrementing"] != int64(2) {
		t.Fatalf("after Put and reopen: %+v", e)
	}
	if !strings.Contains(string(mustReadFile(t, path)), `"key": "[\"jdbc-orders\",{\"table\":\"public.customers\",\"protocol\":\"1\"}]"`) {
		t.Errorf("file does not hold the original key:\n%s", mustReadFile(t, path))
	}
	// A partition never seen gets Java HashMap order.
	mustPut(t, s, "jdbc-orders", PartitionOffset{Partition: map[string]any{"table": "public.orders", "protocol": "1"}, Offset: map[string]any{"incrementing": 3}})
	e = s.lookup("jdbc-orders", CanonicalKey("jdbc-orders", map[string]any{"protocol": "1", "table": "public.orders"}))
	if e == nil || string(e.key) != `["jdbc-orders",{"protocol":"1","table":"public.orders"}]` {
		t.Errorf("new partition key: %+v", e)
	}
	// After a reset the partition is forgotten, bytes included.
	mustPut(t, s, "jdbc-orders", PartitionOffset{Partition: part})
	mustPut(t, s, "jdbc-orders", PartitionOffset{Partition: part, Offset: map[string]any{"incrementing": 1}})
	if e := s.lookup("jdbc-orders", CanonicalKey("jdbc-orders", part)); string(e.key) != `["jdbc-orders",{"protocol":"1","table":"public.customers"}]` {
		t.Errorf("key after reset and re-put: %s", e.key)
	}
}

func TestFileOffsetStorePutRaw(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	key := []byte(`["src",{"filename":"a.txt"}]`)
	if err := s.PutRaw(key, []byte(`{"position":7}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get("src", map[string]any{"filename": "a.txt"}); got["position"] != int64(7) {
		t.Errorf("got %v", got)
	}
	// A later record for the same partition with other bytes replaces it
	// (last write wins, as on the topic) and brings its own bytes.
	spaced := []byte(`[ "src", {"filename": "a.txt"} ]`)
	if err := s.PutRaw(spaced, []byte(`{"position":8}`)); err != nil {
		t.Fatal(err)
	}
	if e := openOffsets(t, path).lookup("src", CanonicalKey("src", map[string]any{"filename": "a.txt"})); string(e.key) != string(spaced) || e.offset["position"] != int64(8) {
		t.Errorf("after reopen: key %s offset %v", e.key, e.offset)
	}
	// JSON null and a nil value are both tombstones.
	if err := s.PutRaw(key, []byte(`null`)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("src", map[string]any{"filename": "a.txt"}); ok {
		t.Error("JSON null value did not remove the offset")
	}
	if err := s.PutRaw(key, []byte(`{"position":9}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRaw(key, nil); err != nil {
		t.Fatal(err)
	}
	if got := openOffsets(t, path).Offsets("src"); len(got) != 0 {
		t.Errorf("nil value did not remove the offset: %v", got)
	}

	if err := s.PutRaw([]byte(`["src",null]`), []byte(`{"p":1}`)); !errors.Is(err, ErrNullPartition) {
		t.Errorf("null partition: %v, want ErrNullPartition", err)
	}
	for name, rec := range map[string][2]string{
		"bad key":         {`["src"]`, `{"p":1}`},
		"invalid utf8":    {"[\"src\",{\"f\":\"\xff\"}]", `{"p":1}`},
		"nested key":      {`["src",{"f":{"g":1}}]`, `{"p":1}`},
		"value not json":  {`["src",{}]`, `{"p":`},
		"value array":     {`["src",{}]`, `[1]`},
		"value nested":    {`["src",{}]`, `{"p":[1]}`},
		"value huge":      {`["src",{}]`, `{"p":99999999999999999999}`},
		"value trailing":  {`["src",{}]`, `{"p":1} x`},
		"key trailing":    {`["src",{}] x`, `{"p":1}`},
		"value is string": {`["src",{}]`, `"x"`},
	} {
		if err := s.PutRaw([]byte(rec[0]), []byte(rec[1])); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(s.conns) != 0 {
		t.Errorf("rejected records changed the store: %v", s.conns)
	}

	// A batch is all or nothing.
	err := s.PutRawBatch([]RawOffset{{Key: key, Value: []byte(`{"p":1}`)}, {Key: []byte(`nope`), Value: []byte(`{}`)}})
	if err == nil || !strings.Contains(err.Error(), "record 1") {
		t.Errorf("bad batch: %v", err)
	}
	if len(s.conns) != 0 {
		t.Error("half a batch was applied")
	}
}

func TestFileOffsetStoreValidation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	err := s.Put("src", []PartitionOffset{
		{Partition: map[string]any{"f": "ok"}, Offset: map[string]any{"p": 1}},
		{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"nested": map[string]any{"x": 1}}},
	})
	var pe *PrimitiveError
	if !errors.As(err, &pe) || pe.Kind != "offset" ||
		err.Error() != "Offsets may only contain primitive types as values, but field nested contains MAP" {
		t.Fatalf("got %v", err)
	}
	err = s.Put("src", []PartitionOffset{{Partition: map[string]any{"f": []any{1}}, Offset: map[string]any{"p": 1}}})
	if !errors.As(err, &pe) || pe.Kind != "partition" ||
		err.Error() != "Offsets may only contain primitive types as values, but field f contains ARRAY" {
		t.Fatalf("got %v", err)
	}
	if err := s.Put("bad\xff", []PartitionOffset{{Partition: map[string]any{}, Offset: map[string]any{}}}); err == nil {
		t.Error("connector name with invalid UTF-8 accepted")
	}
	// Nothing was applied or written.
	if len(s.Offsets("src")) != 0 || len(s.conns) != 0 {
		t.Error("part of a rejected Put was applied")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("rejected Put wrote the file: %v", err)
	}

	// Invalid UTF-8 inside the maps is stored as it will read back.
	mustPut(t, s, "utf", PartitionOffset{Partition: map[string]any{"f": "a\xffb"}, Offset: map[string]any{"p": "c\xfe"}})
	for _, st := range []*FileOffsetStore{s, openOffsets(t, path)} {
		if got, ok := st.Get("utf", map[string]any{"f": "a\uFFFDb"}); !ok || got["p"] != "c\uFFFD" {
			t.Errorf("invalid UTF-8 not normalized: %q %v", got, ok)
		}
	}
}

// Put keeps copies of its maps and Get returns one (tasks hold on to
// theirs); Offsets shares the store's own, read-only.
func TestFileOffsetStoreCopiesInAndOut(t *testing.T) {
	s := openOffsets(t, filepath.Join(t.TempDir(), "connect.offsets"))
	part := map[string]any{"f": "a"}
	off := map[string]any{"p": 1}
	mustPut(t, s, "src", PartitionOffset{Partition: part, Offset: off})
	part["f"], off["p"] = "mutated", 99

	got, _ := s.Get("src", map[string]any{"f": "a"})
	got["p"] = "changed"

	want := []PartitionOffset{{Partition: map[string]any{"f": "a"}, Offset: map[string]any{"p": int64(1)}}}
	if again := s.Offsets("src"); !reflect.DeepEqual(again, want) {
		t.Errorf("store changed through a caller's map: %#v", again)
	}
}

// TestFileOffsetStoreRollbackWhenDirectoryGone covers the disk going away
// under the worker: the Put must fail and memory must not claim the offset.
func TestFileOffsetStoreRollbackWhenDirectoryGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := openOffsets(t, filepath.Join(dir, "connect.offsets"))
	p := map[string]any{"f": "a"}
	mustPut(t, s, "src", PartitionOffset{Partition: p, Offset: map[string]any{"p": 1}})
	before := s.Offsets("src")

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err := s.Put("src", []PartitionOffset{
		{Partition: p, Offset: map[string]any{"p": 2}},
		{Partition: p, Offset: map[string]any{"p": 3}}, // same partition twice in one batch
		{Partition: map[string]any{"f": "b"}, Offset: map[string]any{"p": 1}},
	})
	if err == nil {
		t.Fatal("Put succeeded with its directory gone")
	}
	if got := s.Offsets("src"); !reflect.DeepEqual(got, before) {
		t.Errorf("memory changed by a failed Put: %#v, want %#v", got, before)
	}
	if err := s.Put("src", []PartitionOffset{{Partition: p}}); err == nil {
		t.Fatal("tombstone Put succeeded with its directory gone")
	}
	if got, ok := s.Get("src", p); !ok || got["p"] != int64(1) {
		t.Errorf("failed tombstone removed the offset: %v %v", got, ok)
	}
	if err := s.PutRaw([]byte(`["other",{}]`), []byte(`{"p":1}`)); err == nil {
		t.Fatal("PutRaw succeeded with its directory gone")
	}
	if len(s.Offsets("other")) != 0 {
		t.Error("failed PutRaw left an entry")
	}
}

// TestFileOffsetStoreRollbackWhenRenameFails makes the final rename fail
// (a non-empty directory sits at the target path; permissions cannot be
// used because tests may run as root).
func TestFileOffsetStoreRollbackWhenRenameFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "connect.offsets")
	s := openOffsets(t, path)
	p := map[string]any{"f": "a"}
	mustPut(t, s, "src", PartitionOffset{Partition: p, Offset: map[string]any{"p": 1}})

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("src", []PartitionOffset{{Partition: p, Offset: map[string]any{"p": 2}}}); err == nil {
		t.Fatal("Put succeeded although the rename cannot")
	}
	if got, _ := s.Get("src", p); got["p"] != int64(1) {
		t.Errorf("memory changed by a failed Put: %v", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("temp file left behind: %v", entries)
	}
	// Once the obstacle is gone the store works again and writes what
	// memory holds.
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "src", PartitionOffset{Partition: map[string]any{"f": "b"}, Offset: map[string]any{"p": 5}})
	if got := openOffsets(t, path).Offsets("src"); len(got) != 2 || got[0].Offset["p"] != int64(1) {
		t.Errorf("after recovery: %#v", got)
	}
}

func TestFileOffsetStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.offsets")
	s := openOffsets(t, path)
	const writers, perWriter = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				part := map[string]any{"w": w, "i": i}
				if err := s.Put(fmt.Sprintf("c%d", w%2), []PartitionOffset{{Partition: part, Offset: map[string]any{"p": i}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range perWriter {
				for _, po := range s.Offsets(fmt.Sprintf("c%d", w%2)) {
					// Shared, never modified in place: reading races
					// with no Put.
					if _, ok := po.Offset["p"]; !ok {
						t.Errorf("offset without its position: %v", po.Offset)
					}
				}
			}
		}()
	}
	wg.Wait()
	r := openOffsets(t, path)
	if n := len(r.Offsets("c0")) + len(r.Offsets("c1")); n != writers*perWriter {
		t.Errorf("after reopen %d partitions, want %d", n, writers*perWriter)
	}
}

func TestFileOffsetStoreOrderIsDeterministic(t *testing.T) {
	s := openOffsets(t, filepath.Join(t.TempDir(), "connect.offsets"))
	var entries []PartitionOffset
	for i := range 50 {
		entries = append(entries, PartitionOffset{Partition: map[string]any{"f": fmt.Sprintf("file-%02d", 49-i)}, Offset: map[string]any{"p": i}})
	}
	mustPut(t, s, "src", entries...)
	got := s.Offsets("src")
	for i := range got {
		if want := fmt.Sprintf("file-%02d", i); got[i].Partition["f"] != want {
			t.Fatalf("entry %d is %v, want %s", i, got[i].Partition, want)
		}
	}
}

// TestOffsetsLargeConnectorIsFast pins the requirement that listing 100k
// partitions (e.g. for GET /connectors/x/offsets) stays well under 100 ms,
// with another large connector present that must not be scanned.
func TestOffsetsLargeConnectorIsFast(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test")
	}
	s := populated100k(t)
	best := time.Hour
	for range 5 {
		start := time.Now()
		got := s.Offsets("big")
		if d := time.Since(start); d < best {
			best = d
		}
		if len(got) != 100_000 {
			t.Fatalf("got %d partitions", len(got))
		}
	}
	if best > 100*time.Millisecond {
		t.Errorf("Offsets of 100k partitions took %v, want well under 100ms", best)
	}
	t.Logf("Offsets(100k): %v", best)
}

// populated100k returns a store with 100k partitions for "big" and as many
// for "other", built with one Put each so setup does not rewrite the file
// 100k times.
func populated100k(t testing.TB) *FileOffsetStore {
	t.Helper()
	s := openOffsets(t, filepath.Join(t.TempDir(), "connect.offsets"))
	for _, conn := range []string{"big", "other"} {
		entries := make([]PartitionOffset, 100_000)
		for i := range entries {
			entries[i] = PartitionOffset{
				Partition: map[string]any{"filename": fmt.Sprintf("/data/file-%06d.txt", i)},
				Offset:    map[string]any{"position": int64(i)},
			}
		}
		mustPut(t, s, conn, entries...)
	}
	return s
}

func FuzzOpenFileOffsetStore(f *testing.F) {
	f.Add(mustReadFile(f, filepath.Join("testdata", "golden_offsets.json")))
	for _, s := range []string{
		``, `{}`, `garbage`, "\xac\xed\x00\x05",
		`{"format":"connectd.offsets","version":1,"offsets":[]}`,
		`{"format":"connectd.offsets","version":1,"offsets":[{"connector":"src","partition":{"filename":"a.txt"},"offset":{"position":12},"key":"[\"src\",{\"filename\":\"a.txt\"}]"}]}`,
		`{"format":"connectd.offsets","version":1,"offsets":[{"connector":"s","partition":{"b":2,"a":1.5},"offset":{"x":1e5,"y":null,"z":"\u2028"},"key":"[ \"s\" , {\"a\":1.5,\"b\":2} ]"}]}`,
		`{"format":"connectd.offsets","version":1,"offsets":[{"connector":"s","partition":{"a":1},"offset":{},"key":"[\"s\",{\"a\":1,\"a\":1}]"}]}`,
		`{"format":"connectd.offsets","version":1,"offsets":[{"connector":"s","partition":{},"offset":{"p":-0.0},"key":"[\"s\",{}]"},{"connector":"t","partition":{},"offset":{"p":1},"key":"[\"t\",{}]"}]}`,
	} {
		f.Add([]byte(s))
	}
	// One directory per fuzzing process: calls within a process run one
	// at a time, and a fresh t.TempDir per call costs more than the test.
	path := filepath.Join(f.TempDir(), "x.offsets")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenFileOffsetStore(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		s.mu.Lock()
		err = s.saveLocked()
		s.mu.Unlock()
		if err != nil {
			t.Fatalf("cannot save what was loaded: %v", err)
		}
		r, err := OpenFileOffsetStore(path)
		if err != nil {
			t.Fatalf("cannot reopen what was saved: %v\n%s", err, mustReadFile(t, path))
		}
		if len(r.conns) != len(s.conns) {
			t.Fatalf("connectors: %d after save, %d before", len(r.conns), len(s.conns))
		}
		for conn, c := range s.conns {
			if got, want := r.Offsets(conn), s.Offsets(conn); !reflect.DeepEqual(got, want) {
				t.Fatalf("Offsets(%q) changed across save:\n got %#v\nwant %#v", conn, got, want)
			}
			for canon, e := range c.byCanon {
				if re := r.lookup(conn, canon); re == nil || string(re.key) != string(e.key) {
					t.Fatalf("key bytes changed across save: %q", e.key)
				}
			}
		}
	})
}
