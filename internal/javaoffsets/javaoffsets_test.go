package javaoffsets

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/storage"
)

// unhex decodes hex written with spaces and newlines, plus "quoted ASCII"
// in which \" stands for a quote.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	for len(s) > 0 {
		switch c := s[0]; {
		case c == ' ' || c == '\n' || c == '\t':
			s = s[1:]
		case c == '"':
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				out = append(out, s[i])
			}
			if i >= len(s) {
				t.Fatalf("unterminated quote in %q", s)
			}
			s = s[i+1:]
		default:
			if len(s) < 2 {
				t.Fatalf("odd hex digit %q", s)
			}
			b, err := hex.DecodeString(s[:2])
			if err != nil {
				t.Fatalf("bad hex %q: %v", s[:2], err)
			}
			out = append(out, b...)
			s = s[2:]
		}
	}
	return out
}

// specExample is the 158-byte file of spec §5.4, byte for byte as a JDK 17
// ObjectOutputStream wrote it.
const specExample = `
ac ed 00 05
73
72 00 11 "java.util.HashMap"
05 07 da c1 c3 16 60 d1
03
00 02
46 00 0a "loadFactor"
49 00 09 "threshold"
78 70
3f 40 00 00
00 00 00 0c
77 08 00 00 00 10 00 00 00 01
75 72 00 02 "[B"
ac f3 17 f8 06 08 54 e0 02 00 00 78 70
00 00 00 1c "[\"src\",{\"filename\":\"a.txt\"}]"
75 71 00 7e 00 02
00 00 00 0f "{\"position\":12}"
78`

// header is the stream up to and including the HashMap's default fields
// (loadFactor 0.75, threshold given).
func header(threshold uint32) string {
	return fmt.Sprintf(`ac ed 00 05 73 72 00 11 "java.util.HashMap" 05 07 da c1 c3 16 60 d1 03 00 02
46 00 0a "loadFactor" 49 00 09 "threshold" 78 70 3f 40 00 00 %08x`, threshold)
}

const byteArrayDesc = `72 00 02 "[B" ac f3 17 f8 06 08 54 e0 02 00 00 78 70`

func specBytes(t testing.TB) []byte {
	t.Helper()
	b := unhex(t, specExample)
	if len(b) != 158 {
		t.Fatalf("spec example is %d bytes, want 158", len(b))
	}
	return b
}

var specEntries = []storage.RawOffset{{
	Key:   []byte(`["src",{"filename":"a.txt"}]`),
	Value: []byte(`{"position":12}`),
}}

func mustWrite(t testing.TB, entries []storage.RawOffset) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustRead(t testing.TB, data []byte) []storage.RawOffset {
	t.Helper()
	got, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWriteSpecExample(t *testing.T) {
	want := specBytes(t)
	got := mustWrite(t, specEntries)
	if !bytes.Equal(got, want) {
		t.Fatalf("Write:\n got %x\nwant %x", got, want)
	}
}

func TestReadSpecExample(t *testing.T) {
	got := mustRead(t, specBytes(t))
	if !reflect.DeepEqual(got, specEntries) {
		t.Fatalf("Read = %q, want %q", got, specEntries)
	}
}

func TestEmptyMap(t *testing.T) {
	want := unhex(t, header(0)+` 77 08 00 00 00 10 00 00 00 00 78`)
	got := mustWrite(t, nil)
	if !bytes.Equal(got, want) {
		t.Fatalf("Write(empty):\n got %x\nwant %x", got, want)
	}
	if got := mustWrite(t, []storage.RawOffset{}); !bytes.Equal(got, want) {
		t.Fatalf("Write([]) differs from Write(nil): %x", got)
	}
	entries := mustRead(t, want)
	if entries == nil || len(entries) != 0 {
		t.Fatalf("Read(empty map) = %#v, want an empty non-nil slice", entries)
	}
}

func TestTombstones(t *testing.T) {
	entries := []storage.RawOffset{
		{Key: []byte(`["src",{"filename":"a.txt"}]`)},
		{Key: []byte(`["src",{"filename":"b.txt"}]`), Value: []byte(`{"position":7}`)},
		{Key: []byte(`["src",{"filename":"c.txt"}]`), Value: []byte{}},
	}
	data := mustWrite(t, entries)
	// The first value is the single byte TC_NULL, right after the first
	// key, and the first key defines the [B descriptor.
	want := unhex(t, header(12)+` 77 08 00 00 00 10 00 00 00 03 75 `+byteArrayDesc+
		` 00 00 00 1c "[\"src\",{\"filename\":\"a.txt\"}]" 70`+
		` 75 71 00 7e 00 02 00 00 00 1c "[\"src\",{\"filename\":\"b.txt\"}]"`+
		` 75 71 00 7e 00 02 00 00 00 0e "{\"position\":7}"`+
		` 75 71 00 7e 00 02 00 00 00 1c "[\"src\",{\"filename\":\"c.txt\"}]"`+
		` 75 71 00 7e 00 02 00 00 00 00 78`)
	if !bytes.Equal(data, want) {
		t.Fatalf("Write:\n got %x\nwant %x", data, want)
	}
	got := mustRead(t, data)
	if !reflect.DeepEqual(got, entries) {
		t.Fatalf("Read = %q, want %q", got, entries)
	}
	if got[0].Value != nil || got[2].Value == nil {
		t.Fatalf("tombstone must read as nil, empty array as non-nil empty: %#v", got)
	}
}

func TestNullKey(t *testing.T) {
	entries := []storage.RawOffset{{Key: nil, Value: []byte(`{}`)}}
	got := mustRead(t, mustWrite(t, entries))
	if got[0].Key != nil || string(got[0].Value) != `{}` {
		t.Fatalf("Read = %#v", got)
	}
}

func manyEntries(n int) []storage.RawOffset {
	out := make([]storage.RawOffset, n)
	for i := range out {
		out[i].Key = fmt.Appendf(nil, `["src",{"filename":"f%d.txt"}]`, i)
		if i%5 != 3 {
			out[i].Value = fmt.Appendf(nil, `{"position":%d}`, i*1000)
		}
	}
	return out
}

func TestManyEntries(t *testing.T) {
	for _, tc := range []struct {
		n                  int
		buckets, threshold uint32
	}{
		{1, 16, 12}, {12, 16, 12}, {13, 32, 24}, {24, 32, 24}, {25, 64, 48},
		{100, 256, 192}, {1000, 2048, 1536},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			entries := manyEntries(tc.n)
			data := mustWrite(t, entries)
			// threshold, then the block: 77 08 buckets size.
			hdr := unhex(t, header(tc.threshold))
			if !bytes.HasPrefix(data, hdr) {
				t.Fatalf("header %x, want %x", data[:len(hdr)], hdr)
			}
			block := data[len(hdr):]
			if block[0] != 0x77 || block[1] != 8 ||
				binary.BigEndian.Uint32(block[2:]) != tc.buckets || binary.BigEndian.Uint32(block[6:]) != uint32(tc.n) {
				t.Fatalf("block data %x, want buckets %d size %d", block[:10], tc.buckets, tc.n)
			}
			// Only the first array defines [B; every other non-null array
			// refers back to handle 0x7e0002.
			arrays := 0
			for _, e := range entries {
				arrays++
				if e.Value != nil {
					arrays++
				}
			}
			if refs := bytes.Count(data, []byte{0x75, 0x71, 0x00, 0x7e, 0x00, 0x02}); refs != arrays-1 {
				t.Fatalf("%d back-references to [B, want %d", refs, arrays-1)
			}
			got := mustRead(t, data)
			if !reflect.DeepEqual(got, entries) {
				t.Fatal("round trip differs")
			}
		})
	}
}

// Java writes a reference instead of a second copy when the same array
// object appears twice; the reader resolves it.
func TestReadArrayReference(t *testing.T) {
	data := unhex(t, header(12)+` 77 08 00 00 00 10 00 00 00 02 75 `+byteArrayDesc+
		` 00 00 00 03 "k-1" 75 71 00 7e 00 02 00 00 00 02 "v1"`+ // handles 3 and 4
		` 75 71 00 7e 00 02 00 00 00 03 "k-2" 71 00 7e 00 04 78`) // value = handle 4
	got := mustRead(t, data)
	want := []storage.RawOffset{{Key: []byte("k-1"), Value: []byte("v1")}, {Key: []byte("k-2"), Value: []byte("v1")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read = %q, want %q", got, want)
	}
	got[1].Value[0] = 'X'
	if string(got[0].Value) != "v1" {
		t.Fatal("a referenced array aliases the original")
	}
}

func TestReadSplitBlockData(t *testing.T) {
	data := unhex(t, header(0)+` 77 04 00 00 00 10 77 04 00 00 00 00 78`)
	if got := mustRead(t, data); len(got) != 0 {
		t.Fatalf("Read = %q", got)
	}
}

func TestReadErrors(t *testing.T) {
	spec := specBytes(t)
	one := header(12) + ` 77 08 00 00 00 10 00 00 00 01 `
	for _, tc := range []struct {
		name string
		data []byte
		want string // substring of the error
		is   error
	}{
		{"empty", nil, "no data", io.EOF},
		{"bad magic", unhex(t, `ac ed 00 06 73`), "not a Java serialization stream", nil},
		{"not serialization", []byte(`{"connectd.offsets":1}`), "not a Java serialization stream", nil},
		{"other class", unhex(t, `ac ed 00 05 73 72 00 11 "java.util.TreeMap" 0c c1 f6 3e 2d 25 6a e6 03 00 01 4c 00 0a "comparator"`),
			"Expected HashMap but found class java.util.TreeMap", nil},
		{"linked hash map", unhex(t, `ac ed 00 05 73 72 00 17 "java.util.LinkedHashMap" 34 c0 4e 5c 10 6c c0 fb 02 00 01 5a 00 0b "accessOrder"`),
			"Expected HashMap but found class java.util.LinkedHashMap", nil},
		{"top-level string", unhex(t, `ac ed 00 05 74 00 02 "hi"`), "Expected HashMap but found class java.lang.String", nil},
		{"top-level long string", unhex(t, `ac ed 00 05 7c 00 00 00 00 00 00 00 02 "hi"`), "Expected HashMap but found class java.lang.String", nil},
		{"top-level array", unhex(t, `ac ed 00 05 75 `+byteArrayDesc+` 00 00 00 00`), "Expected HashMap but found class [B", nil},
		{"top-level null", unhex(t, `ac ed 00 05 70`), "Expected HashMap but found null", nil},
		{"top-level reset", unhex(t, `ac ed 00 05 79`), "TC_RESET", nil},
		{"wrong suid", bytes.Replace(spec, unhex(t, `05 07 da c1 c3 16 60 d1`), unhex(t, `05 07 da c1 c3 16 60 d2`), 1),
			"serialVersionUID 362498820763181266, want 362498820763181265", nil},
		{"wrong flags", bytes.Replace(spec, unhex(t, `60 d1 03`), unhex(t, `60 d1 02`), 1), "class flags 0x02", nil},
		{"wrong field", bytes.Replace(spec, []byte("threshold"), []byte("threshole"), 1), `field I "threshole"`, nil},
		{"class annotation", bytes.Replace(spec, unhex(t, `"threshold" 78 70`), unhex(t, `"threshold" 70 70`), 1), "TC_ENDBLOCKDATA", nil},
		{"superclass", bytes.Replace(spec, unhex(t, `"threshold" 78 70`), unhex(t, `"threshold" 78 71 00 7e 00 00`), 1), "superclass", nil},
		{"zero load factor", unhex(t, strings.Replace(header(12), "3f 40 00 00", "00 00 00 00", 1)+` 77 08 00 00 00 10 00 00 00 00 78`), "illegal HashMap load factor", nil},
		{"NaN load factor", unhex(t, strings.Replace(header(12), "3f 40 00 00", "7f c0 00 00", 1)+` 77 08 00 00 00 10 00 00 00 00 78`), "illegal HashMap load factor", nil},
		{"block data long", unhex(t, header(0)+` 7a 00 00 00 08 00 00 00 10 00 00 00 00 78`), "TC_BLOCKDATALONG", nil},
		{"block too long", unhex(t, header(0)+` 77 09 00 00 00 10 00 00 00 00 00 78`), "block data of 9 bytes", nil},
		{"negative size", unhex(t, header(0)+` 77 08 00 00 00 10 ff ff ff ff 78`), "illegal HashMap mappings count -1", nil},
		{"huge size", unhex(t, header(0)+` 77 08 00 00 00 10 7f ff ff ff 70 70 78`), "HashMap of 2147483647 mappings", io.ErrUnexpectedEOF},
		{"huge array", unhex(t, one+`75 `+byteArrayDesc+` 7f ff ff ff "abc"`), "byte[2147483647]", io.ErrUnexpectedEOF},
		{"negative array", unhex(t, one+`75 `+byteArrayDesc+` ff ff ff fe 70 78`), "negative array length -2", nil},
		{"string key", unhex(t, one+`74 00 01 "k" 70 78`), "key of mapping 0: expected byte[] or null but found TC_STRING", nil},
		{"long string value", unhex(t, one+`70 7c 00 00 00 00 00 00 00 01 "v" 78`), "value of mapping 0: expected byte[] or null but found TC_LONGSTRING", nil},
		{"object key", unhex(t, one+`73 71 00 7e 00 00 70 78`), "expected byte[] or null but found TC_OBJECT", nil},
		{"int array", unhex(t, one+`75 72 00 02 "[I" 4d ba 60 26 76 ea b2 a5 02 00 00 78 70 00 00 00 00 70 78`), "array of class [I", nil},
		{"wrong [B suid", unhex(t, one+`75 72 00 02 "[B" ac f3 17 f8 06 08 54 e1 02 00 00 78 70 00 00 00 00 70 78`), "byte[] has serialVersionUID", nil},
		{"unknown handle", unhex(t, one+`71 00 7e 00 09 70 78`), "unknown handle 0x7e0009", nil},
		{"handle below base", unhex(t, one+`71 00 00 00 00 70 78`), "unknown handle 0x0", nil},
		{"reference to map", unhex(t, one+`71 00 7e 00 01 70 78`), "reference to the HashMap itself", nil},
		{"reference to class as value", unhex(t, one+`75 `+byteArrayDesc+` 00 00 00 00 71 00 7e 00 02 78`), "reference to the byte[] class", nil},
		{"array of HashMap class", unhex(t, one+`75 71 00 7e 00 00 00 00 00 00 70 78`), "expected the byte[] class but found a reference to the java.util.HashMap class", nil},
		{"missing end", spec[:len(spec)-1], "truncated", io.ErrUnexpectedEOF},
		{"extra object before end", append(spec[:len(spec)-1:len(spec)-1], 0x70, 0x78), "end of HashMap data", nil},
		{"trailing bytes", append(bytes.Clone(spec), 0), "1 unexpected bytes after the HashMap", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(bytes.NewReader(tc.data))
			if err == nil {
				t.Fatalf("Read succeeded: %q", got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %q is not %v", err, tc.is)
			}
		})
	}
}

func TestNotHashMapErrorIsTyped(t *testing.T) {
	_, err := Read(bytes.NewReader(unhex(t, `ac ed 00 05 74 00 02 "hi"`)))
	var nh *NotHashMapError
	if !errors.As(err, &nh) || err.Error() != "Expected HashMap but found class java.lang.String" {
		t.Fatalf("err = %v (%T)", err, err)
	}
}

// Every proper prefix of a valid file is a truncation error, never a
// panic and never a silently shorter map.
func TestReadTruncated(t *testing.T) {
	data := mustWrite(t, manyEntries(20))
	for n := 1; n < len(data); n++ {
		_, err := Read(bytes.NewReader(data[:n]))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("prefix of %d bytes: err = %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}

// A few bytes claiming a 2 GiB array or 2^31 mappings must not allocate
// accordingly.
func TestReadBoundedAllocation(t *testing.T) {
	one := header(12) + ` 77 08 00 00 00 10 00 00 00 01 `
	inputs := [][]byte{
		unhex(t, one+`75 `+byteArrayDesc+` 7f ff ff ff "abc"`),
		unhex(t, header(0)+` 77 08 00 00 00 10 7f ff ff ff 70 70 78`),
		append(unhex(t, header(0)+` 77 08 00 00 00 10 7f ff ff ff`), bytes.Repeat([]byte{0x70}, 4096)...),
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Read(bytes.NewReader(in)); err == nil {
			t.Fatalf("input %d: no error", i)
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
			t.Fatalf("input %d: allocated %d bytes for %d bytes of input", i, d, len(in))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	cases := [][]storage.RawOffset{
		nil,
		specEntries,
		{{Key: []byte{}, Value: []byte{}}},
		{{Key: []byte("k"), Value: nil}, {Key: nil, Value: nil}},
		{{Key: bytes.Repeat([]byte{0xff}, 70000), Value: []byte("\x00\x01é")}},
		manyEntries(300),
	}
	for i, entries := range cases {
		got := mustRead(t, mustWrite(t, entries))
		if len(entries) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, entries) {
			t.Fatalf("case %d: round trip differs", i)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()

	missing := filepath.Join(dir, "missing.offsets")
	_, err := ReadFile(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing file: err = %v", err)
	}

	empty := filepath.Join(dir, "empty.offsets")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(empty)
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), empty) {
		t.Fatalf("empty file: err = %v", err)
	}

	truncated := filepath.Join(dir, "truncated.offsets")
	if err := os.WriteFile(truncated, specBytes(t)[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(truncated)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), truncated) {
		t.Fatalf("truncated file: err = %v", err)
	}

	other := filepath.Join(dir, "other.offsets")
	if err := os.WriteFile(other, unhex(t, `ac ed 00 05 74 00 02 "hi"`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(other)
	var nh *NotHashMapError
	if !errors.As(err, &nh) || !strings.Contains(err.Error(), other) ||
		!strings.HasSuffix(err.Error(), "Expected HashMap but found class java.lang.String") {
		t.Fatalf("other class: err = %v", err)
	}

	good := filepath.Join(dir, "good.offsets")
	if err := os.WriteFile(good, specBytes(t), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(good)
	if err != nil || !reflect.DeepEqual(got, specEntries) {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	if err := Write(failWriter{}, specEntries); err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(specBytes(f))
	f.Add(mustWrite(f, nil))
	f.Add(mustWrite(f, manyEntries(15)))
	f.Add(mustWrite(f, []storage.RawOffset{{Key: nil, Value: []byte{}}}))
	f.Add(unhex(f, header(12)+` 77 08 00 00 00 10 00 00 00 02 75 `+byteArrayDesc+
		` 00 00 00 03 "k-1" 75 71 00 7e 00 02 00 00 00 02 "v1"`+
		` 75 71 00 7e 00 02 00 00 00 03 "k-2" 71 00 7e 00 04 78`))
	f.Add(unhex(f, header(0)+` 77 04 00 00 00 10 77 04 00 00 00 00 78`))
	f.Add(unhex(f, `ac ed 00 05 73 72 00 11 "java.util.TreeMap" 0c c1 f6 3e 2d 25 6a e6 03 00 01`))
	f.Add(unhex(f, `ac ed 00 05 74 00 02 "hi"`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Read(bytes.NewReader(data))
		if err != nil {
			if entries != nil {
				t.Fatal("entries returned with an error")
			}
			return
		}
		// Whatever reads must survive a round trip unchanged.
		again := mustRead(t, mustWrite(t, entries))
		if len(entries) != len(again) {
			t.Fatalf("round trip: %d entries, then %d", len(entries), len(again))
		}
		for i := range entries {
			a, b := entries[i], again[i]
			if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) ||
				(a.Key == nil) != (b.Key == nil) || (a.Value == nil) != (b.Value == nil) {
				t.Fatalf("round trip: entry %d %q, then %q", i, a, b)
			}
		}
	})
}
