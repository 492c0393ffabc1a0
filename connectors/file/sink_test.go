package file

import (
	"bytes"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

func sinkRecords(values ...any) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(values))
	for i, v := range values {
		out[i] = connect.SinkRecord{Topic: "t", Offset: int64(i), Value: v}
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSinkWritesValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	writeFile(t, path, "existing\n")
	task := (&SinkConnector{}).NewTask()
	if err := task.Start(nil, map[string]string{"file": path, "topics": "t"}); err != nil {
		t.Fatal(err)
	}
	if err := task.Open([]connect.TopicPartition{{Topic: "t"}}); err != nil {
		t.Fatal(err)
	}
	schema := connect.StructSchema("rec",
		connect.Field{Name: "id", Schema: connect.Int32Schema},
		connect.Field{Name: "name", Schema: connect.OptionalStringSchema})
	st := connect.NewStruct(schema).Put("id", int32(7)).Put("name", "bob")
	if err := task.Put(sinkRecords("hello", nil, int32(42), st, int64(-3), 1.0, []byte("raw"))); err != nil {
		t.Fatal(err)
	}
	// Each Put reaches the file at once, as Java's PrintStream writes
	// each line; Flush adds the fsync.
	want := "existing\nhello\nnull\n42\nStruct{id=7,name=bob}\n-3\n1.0\nraw\n"
	if got := readFile(t, path); got != want {
		t.Errorf("after Put the file holds %q, want %q", got, want)
	}
	if err := task.Flush(map[connect.TopicPartition]int64{{Topic: "t"}: 7}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want {
		t.Errorf("after Flush the file holds %q, want %q", got, want)
	}

	if err := task.Put(sinkRecords("last")); err != nil {
		t.Fatal(err)
	}
	if err := task.Close([]connect.TopicPartition{{Topic: "t"}}); err != nil {
		t.Fatal(err)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != want+"last\n" {
		t.Errorf("after Stop the file holds %q", got)
	}
	if err := task.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestSinkCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.txt")
	task := &SinkTask{}
	if err := task.Start(nil, map[string]string{"file": path}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Start did not create the file: %v", err)
	}
	big := strings.Repeat("z", 200<<10) // larger than the write buffer
	if err := task.Put(sinkRecords(big, "x")); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != big+"\nx\n" {
		t.Errorf("file holds %d bytes, want %d", len(got), len(big)+4)
	}
	task.Stop()
}

func TestSinkOpenError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "out.txt")
	err := (&SinkTask{}).Start(nil, map[string]string{"file": path})
	if err == nil || !strings.HasPrefix(err.Error(), "Couldn't find or create file '"+path+"' for FileStreamSinkTask") {
		t.Errorf("Start error %v", err)
	}
}

func TestSinkStdout(t *testing.T) {
	var buf bytes.Buffer
	saved := stdout
	stdout = &buf
	defer func() { stdout = saved }()
	for _, config := range []map[string]string{{}, {"file": ""}} {
		buf.Reset()
		task := &SinkTask{}
		if err := task.Start(nil, config); err != nil {
			t.Fatal(err)
		}
		if err := task.Put(sinkRecords("a", nil)); err != nil {
			t.Fatal(err)
		}
		if err := task.Flush(nil); err != nil {
			t.Fatal(err)
		}
		if buf.String() != "a\nnull\n" {
			t.Errorf("stdout got %q", buf.String())
		}
		if err := task.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestJavaString(t *testing.T) {
	dec := &connect.Decimal{Unscaled: big.NewInt(1250), Scale: 2}
	cases := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"s", "s"},
		{true, "true"},
		{int8(-8), "-8"},
		{int16(16), "16"},
		{int32(32), "32"},
		{int64(1) << 40, "1099511627776"},
		{1.0, "1.0"},
		{-0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{0.5, "0.5"},
		{123456.789, "123456.789"},
		{1e7, "1.0E7"},
		{1.5e-4, "1.5E-4"},
		{0.001, "0.001"},
		{1e21, "1.0E21"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{float32(0.1), "0.1"},
		{float32(3), "3.0"},
		{[]byte("bytes"), "bytes"},
		{dec, "12.50"},
		{[]any{"a", int32(1), nil, 2.0}, "[a, 1, null, 2.0]"},
		{[]any{}, "[]"},
		{[]string{"x", "y"}, "[x, y]"},
		{map[string]any{}, "{}"},
		{map[string]any{"b": int64(2), "a": "x", "c": []any{1.5}}, "{a=x, b=2, c=[1.5]}"},
		{[]connect.MapEntry{{Key: int32(2), Value: "two"}, {Key: int32(1), Value: nil}}, "{2=two, 1=null}"},
		{(*connect.Struct)(nil), "null"},
	}
	for _, c := range cases {
		if got := string(appendJavaString(nil, c.v)); got != c.want {
			t.Errorf("javaString(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
