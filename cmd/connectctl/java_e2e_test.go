package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// javaOffsetsFile serializes a java.util.HashMap<byte[],byte[]> byte for
// byte as a JDK 17 ObjectOutputStream does, from the layout in the spec
// (kafka-connect-reference.md §5.4). A nil value is a tombstone.
func javaOffsetsFile(entries [][2][]byte) []byte {
	var b bytes.Buffer
	u16 := func(n int) { binary.Write(&b, binary.BigEndian, uint16(n)) }
	u32 := func(n int) { binary.Write(&b, binary.BigEndian, uint32(n)) }
	utf := func(s string) { u16(len(s)); b.WriteString(s) }
	b.Write([]byte{0xac, 0xed, 0x00, 0x05, 0x73, 0x72})
	utf("java.util.HashMap")
	b.Write([]byte{0x05, 0x07, 0xda, 0xc1, 0xc3, 0x16, 0x60, 0xd1, 0x03})
	u16(2)
	b.WriteByte('F')
	utf("loadFactor")
	b.WriteByte('I')
	utf("threshold")
	b.Write([]byte{0x78, 0x70, 0x3f, 0x40, 0x00, 0x00})
	buckets := 16
	for len(entries) > buckets*3/4 {
		buckets *= 2
	}
	if len(entries) == 0 {
		u32(0)
	} else {
		u32(buckets * 3 / 4)
	}
	b.Write([]byte{0x77, 0x08})
	u32(buckets)
	u32(len(entries))
	first := true
	array := func(data []byte) {
		if data == nil {
			b.WriteByte(0x70)
			return
		}
		if first {
			b.Write([]byte{0x75, 0x72})
			utf("[B")
			b.Write([]byte{0xac, 0xf3, 0x17, 0xf8, 0x06, 0x08, 0x54, 0xe0, 0x02, 0x00, 0x00, 0x78, 0x70})
			first = false
		} else {
			b.Write([]byte{0x75, 0x71, 0x00, 0x7e, 0x00, 0x02})
		}
		u32(len(data))
		b.Write(data)
	}
	for _, e := range entries {
		array(e[0])
		array(e[1])
	}
	b.WriteByte(0x78)
	return b.Bytes()
}

// The spec's worked example, 158 bytes, checks the encoder above.
func TestJavaOffsetsFileEncoder(t *testing.T) {
	want := "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c770800000010000000017572000" +
		"25b42acf317f8060854e002000078700000001c" + hex.EncodeToString([]byte(`["src",{"filename":"a.txt"}]`)) +
		"7571007e00020000000f" + hex.EncodeToString([]byte(`{"position":12}`)) + "78"
	got := javaOffsetsFile([][2][]byte{{[]byte(`["src",{"filename":"a.txt"}]`), []byte(`{"position":12}`)}})
	if hex.EncodeToString(got) != want || len(got) != 158 {
		t.Fatalf("encoder writes %d bytes:\n%x\nwant\n%s", len(got), got, want)
	}
}

// Users of Apache Kafka Connect's standalone mode move over: the offsets
// file of the Java worker goes into a connectd worker through the REST
// API, and the source carries on from the Java worker's position.
func TestImportJavaStandaloneFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "test.txt")
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.json", fmt.Sprintf(`{"name":"local-file-source","config":{"connector.class":"FileStreamSource","file":%q,"topic":"lines"}}`, in)))
	topic := newConsumer(t, w.Broker.Addr(), "lines")
	topic.until(10)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "local-file-source"), `"position":90`) })

	key := func(conn, part string) []byte { return []byte(`["` + conn + `",` + part + `]`) }
	file := filepath.Join(dir, "connect.offsets")
	os.WriteFile(file, javaOffsetsFile([][2][]byte{
		{key("local-file-source", fmt.Sprintf(`{"filename":%q}`, in)), []byte(`{"position":45}`)},
		{key("local-file-source", `{"filename":"/gone.txt"}`), nil}, // a tombstone
		{key("other-source", `{"filename":"/x.txt"}`), []byte(`{"position":3}`)},
		{key("nulled", "null"), []byte(`{"position":1}`)}, // skipped, as Kafka does
	}), 0o644)

	// Every connector must exist; nothing changes otherwise.
	r := c.fail("offsets", "import", "--java-standalone-file", file, "--yes")
	mustContain(t, "missing connector", r.stderr,
		"Error: "+file+" holds offsets of connectors that do not exist on "+url+": other-source\n", "hint: create them first")
	if !strings.Contains(offsetsJSON(t, rc, "local-file-source"), `"position":90`) {
		t.Fatal("a refused import changed offsets")
	}
	// Not on a terminal, a running connector is not stopped without --yes.
	r = c.fail("offsets", "import", "--java-standalone-file", file, "--connector", "local-file-source")
	mustContain(t, "refusal", r.stderr, "Error: connector local-file-source is RUNNING; its offsets can only change while it is stopped")

	r = c.ok("offsets", "import", "--java-standalone-file", file, "--connector", "local-file-source", "--yes")
	part := fmt.Sprintf(`{"filename":%q}`, in)
	mustContain(t, "import", r.stdout, file+": offsets of 1 connector (local-file-source)",
		"- "+part+` {"position":90}`+"\n+ "+part+` {"position":45}`, "connector local-file-source stopped",
		"changed (1 partition) and verified", "connector local-file-source resumed")
	if got := topic.until(15); !slices.Equal(got[10:], lineRange(6, 10)) {
		t.Fatalf("after the import the source emitted %v", got[10:])
	}
	r = c.ok("offsets", "history", "local-file-source")
	mustContain(t, "history", r.stdout, "import")
	os.WriteFile(filepath.Join(dir, "junk"), []byte("not java"), 0o644)
	r = c.fail("offsets", "import", "--java-standalone-file", filepath.Join(dir, "junk"))
	if !strings.HasPrefix(r.stderr, "Error: ") {
		t.Errorf("a file that is not Java serialization:\n%s", r)
	}
}
