// Package javaoffsets reads and writes the offsets file of a Java Kafka
// Connect standalone worker (offset.storage.file.filename, spec §5.4).
//
// Kafka's FileOffsetBackingStore saves its offsets as a Java Object
// Serialization stream holding exactly one java.util.HashMap<byte[],
// byte[]>: each key is an offsets-topic key (the JSON text of
// ["<connector>",{partition}]) and each value the offset JSON, or null for
// a tombstone. This package is a minimal codec for exactly that shape and
// nothing else. The reader is strict: it accepts only the HashMap class
// descriptor (with its serialVersionUID and fields), the byte[] array class,
// back-references to handles it has seen, null, and the HashMap's own block
// data; anything else is an error, never a panic, and allocations are
// bounded by the size of the input. The writer produces the bytes a JDK 17
// ObjectOutputStream writes for such a map.
package javaoffsets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/connectd/connectd/internal/storage"
)

// Java Object Serialization constants (java.io.ObjectStreamConstants).
const (
	streamMagic   = 0xaced
	streamVersion = 5

	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcArray          = 0x75
	tcClass          = 0x76
	tcBlockData      = 0x77
	tcEndBlockData   = 0x78
	tcReset          = 0x79
	tcBlockDataLong  = 0x7a
	tcException      = 0x7b
	tcLongString     = 0x7c
	tcProxyClassDesc = 0x7d
	tcEnum           = 0x7e

	baseWireHandle = 0x7e0000

	scWriteMethod  = 0x01
	scSerializable = 0x02
)

const (
	hashMapClass = "java.util.HashMap"
	// hashMapSUID is java.util.HashMap's serialVersionUID.
	hashMapSUID  uint64 = 362498820763181265
	hashMapFlags        = scWriteMethod | scSerializable

	byteArrayClass = "[B"
	// byteArraySUID is the computed serialVersionUID of byte[]
	// (-5984413125824719648 as a Java long).
	byteArraySUID  uint64 = 0xacf317f8060854e0
	byteArrayFlags        = scSerializable

	// loadFactorBits is 0.75f, the only load factor Kafka's maps have.
	loadFactorBits uint32 = 0x3f400000
	// Java's HashMap never grows its table beyond this many buckets.
	maxBuckets = 1 << 30
)

// NotHashMapError is returned when the stream's top-level object is not a
// java.util.HashMap. Its text is Kafka's (FileOffsetBackingStore.load):
// "Expected HashMap but found class java.util.TreeMap".
type NotHashMapError struct {
	// Found describes what was there, as Java's Class.toString would
	// ("class java.util.TreeMap", "class [B", "class java.lang.String"),
	// or "null".
	Found string
}

func (e *NotHashMapError) Error() string { return "Expected HashMap but found " + e.Found }

// ReadFile reads a Java worker's offsets file. Every error names the file.
// Kafka treats a missing file and a truncated one (EOFException) as an
// empty store; this function instead returns an error and leaves that
// decision to the caller, who can tell the cases apart with errors.Is:
// fs.ErrNotExist for a missing file, io.EOF for an empty one and
// io.ErrUnexpectedEOF for a truncated one.
func ReadFile(path string) ([]storage.RawOffset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading Java offsets file: %w", err)
	}
	entries, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("Java offsets file %s: %w", path, err)
	}
	return entries, nil
}

// Read decodes a serialized java.util.HashMap<byte[], byte[]> from r, read
// to its end. Entries come back in file order (which Java leaves
// arbitrary), keys and values as raw bytes. A null value (a tombstone) is
// a nil Value; a zero-length array is a non-nil empty slice. A null key,
// which Java's HashMap permits but Kafka never writes, is a nil Key.
//
// Empty input is an error wrapping io.EOF, truncated input one wrapping
// io.ErrUnexpectedEOF. A top-level object of another class is a
// *NotHashMapError. Bytes after the map are an error: Kafka always writes
// the file afresh, so they can only mean damage.
func Read(r io.Reader) ([]storage.RawOffset, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading Java offsets: %w", err)
	}
	return decode(data)
}

// Write serializes entries as the java.util.HashMap<byte[], byte[]> a JDK
// ObjectOutputStream writes for Kafka's FileOffsetBackingStore, in the
// order given (Java's own order is arbitrary, since byte[] hashes by
// identity). A nil Value is written as null (a tombstone, which Kafka
// keeps in the file); a nil Key as a null key. Entries are not merged:
// the caller should not pass the same key twice.
//
// The map's header follows the spec's rules (§5.4): loadFactor 0.75,
// buckets the smallest power of two ≥ 16 holding the entries at that load
// factor, threshold 3/4 of buckets, or 0 for an empty map.
func Write(w io.Writer, entries []storage.RawOffset) error {
	data, err := encode(entries)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func encode(entries []storage.RawOffset) ([]byte, error) {
	if len(entries) > math.MaxInt32 {
		return nil, fmt.Errorf("javaoffsets: %d entries are more than a Java HashMap can hold", len(entries))
	}
	size := 84 // header and trailer
	for i, e := range entries {
		for _, b := range [][]byte{e.Key, e.Value} {
			if len(b) > math.MaxInt32 {
				return nil, fmt.Errorf("javaoffsets: entry %d: %d bytes are more than a Java array can hold", i, len(b))
			}
			size += 14 + len(b)
		}
	}
	buf := make([]byte, 0, size)
	buf = binary.BigEndian.AppendUint16(buf, streamMagic)
	buf = binary.BigEndian.AppendUint16(buf, streamVersion)

	// The HashMap object and its class descriptor (handles 0 and 1).
	buf = append(buf, tcObject, tcClassDesc)
	buf = appendUTF(buf, hashMapClass)
	buf = binary.BigEndian.AppendUint64(buf, hashMapSUID)
	buf = append(buf, hashMapFlags)
	buf = binary.BigEndian.AppendUint16(buf, 2)
	buf = append(buf, 'F')
	buf = appendUTF(buf, "loadFactor")
	buf = append(buf, 'I')
	buf = appendUTF(buf, "threshold")
	buf = append(buf, tcEndBlockData, tcNull)

	// Default fields, then HashMap.writeObject's block data.
	buckets, threshold := tableSize(len(entries))
	buf = binary.BigEndian.AppendUint32(buf, loadFactorBits)
	buf = binary.BigEndian.AppendUint32(buf, uint32(threshold))
	buf = append(buf, tcBlockData, 8)
	buf = binary.BigEndian.AppendUint32(buf, uint32(buckets))
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(entries)))

	haveArrayDesc := false
	appendArray := func(b []byte) {
		if b == nil {
			buf = append(buf, tcNull)
			return
		}
		buf = append(buf, tcArray)
		if haveArrayDesc {
			buf = append(buf, tcReference)
			buf = binary.BigEndian.AppendUint32(buf, baseWireHandle+2)
		} else {
			// The first array defines the [B descriptor, handle 2.
			haveArrayDesc = true
			buf = append(buf, tcClassDesc)
			buf = appendUTF(buf, byteArrayClass)
			buf = binary.BigEndian.AppendUint64(buf, byteArraySUID)
			buf = append(buf, byteArrayFlags, 0, 0, tcEndBlockData, tcNull)
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(b)))
		buf = append(buf, b...)
	}
	for _, e := range entries {
		appendArray(e.Key)
		appendArray(e.Value)
	}
	return append(buf, tcEndBlockData), nil
}

// tableSize returns the bucket count and threshold Java's HashMap has
// after n puts into a new HashMap() (spec §5.4).
func tableSize(n int) (buckets, threshold int32) {
	if n == 0 {
		return 16, 0
	}
	b := int64(16)
	for int64(n)*4 > b*3 && b < maxBuckets {
		b *= 2
	}
	if b >= maxBuckets {
		return maxBuckets, math.MaxInt32
	}
	return int32(b), int32(b / 4 * 3)
}

// appendUTF appends a string in DataOutput.writeUTF form. Only the
// package's own ASCII class and field names are written this way.
func appendUTF(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
	return append(buf, s...)
}

// handle kinds.
const (
	hClassHashMap = iota
	hClassByteArray
	hHashMap
	hArray
)

type handle struct {
	kind int
	data []byte // hArray: the array's contents (nil never: arrays are non-null)
}

type decoder struct {
	data    []byte
	pos     int
	handles []handle
}

// syntaxError reports malformed input at a byte offset.
type syntaxError struct {
	pos int
	msg string
	err error // wrapped, e.g. io.ErrUnexpectedEOF
}

func (e *syntaxError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("invalid Java serialization stream at byte %d: %s: %v", e.pos, e.msg, e.err)
	}
	return fmt.Sprintf("invalid Java serialization stream at byte %d: %s", e.pos, e.msg)
}

func (e *syntaxError) Unwrap() error { return e.err }

func (d *decoder) fail(format string, args ...any) error {
	return &syntaxError{pos: d.pos, msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) truncated(what string) error {
	return &syntaxError{pos: len(d.data), msg: "truncated while reading " + what, err: io.ErrUnexpectedEOF}
}

func (d *decoder) remaining() int { return len(d.data) - d.pos }

func (d *decoder) bytes(n int, what string) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, d.truncated(what)
	}
	b := d.data[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

func (d *decoder) u8(what string) (byte, error) {
	b, err := d.bytes(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *decoder) u16(what string) (uint16, error) {
	b, err := d.bytes(2, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint16(b), nil
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.bytes(4, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.bytes(8, what)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

func (d *decoder) utf(what string) (string, error) {
	n, err := d.u16(what)
	if err != nil {
		return "", err
	}
	b, err := d.bytes(int(n), what)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// expect reads one byte that must be want.
func (d *decoder) expect(want byte, what string) error {
	at := d.pos
	b, err := d.u8(what)
	if err != nil {
		return err
	}
	if b != want {
		d.pos = at
		return d.fail("expected %s (0x%02x) but found %s", what, want, typeCodeName(b))
	}
	return nil
}

func (d *decoder) assign(h handle) {
	d.handles = append(d.handles, h)
}

// lookup reads a TC_REFERENCE's handle (the type code already consumed).
func (d *decoder) lookup() (handle, error) {
	at := d.pos
	v, err := d.u32("reference handle")
	if err != nil {
		return handle{}, err
	}
	i := int64(v) - baseWireHandle
	if i < 0 || i >= int64(len(d.handles)) {
		d.pos = at
		return handle{}, d.fail("reference to unknown handle 0x%x", v)
	}
	return d.handles[i], nil
}

func decode(data []byte) ([]storage.RawOffset, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("no data: %w", io.EOF)
	}
	d := &decoder{data: data}
	magic, err := d.u16("stream header")
	if err != nil {
		return nil, err
	}
	version, err := d.u16("stream header")
	if err != nil {
		return nil, err
	}
	if magic != streamMagic || version != streamVersion {
		return nil, &syntaxError{pos: 0, msg: fmt.Sprintf("not a Java serialization stream (header %04x %04x, want aced 0005)", magic, version)}
	}
	entries, err := d.hashMap()
	if err != nil {
		return nil, err
	}
	if d.remaining() > 0 {
		return nil, d.fail("%d unexpected bytes after the HashMap", d.remaining())
	}
	return entries, nil
}

// hashMap reads the top-level object, which must be a HashMap.
func (d *decoder) hashMap() ([]storage.RawOffset, error) {
	at := d.pos
	tc, err := d.u8("top-level object")
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcObject:
	case tcNull:
		return nil, &NotHashMapError{Found: "null"}
	case tcString, tcLongString:
		return nil, &NotHashMapError{Found: "class java.lang.String"}
	case tcArray, tcEnum:
		name, err := d.className()
		if err != nil {
			return nil, err
		}
		return nil, &NotHashMapError{Found: "class " + name}
	case tcClass, tcClassDesc, tcProxyClassDesc:
		return nil, &NotHashMapError{Found: "class java.lang.Class"}
	default:
		d.pos = at
		return nil, d.fail("expected an object but found %s", typeCodeName(tc))
	}

	// The class descriptor.
	name, err := d.className()
	if err != nil {
		return nil, err
	}
	if name != hashMapClass {
		return nil, &NotHashMapError{Found: "class " + name}
	}
	if err := d.classDescBody(hashMapClass, hashMapSUID, hashMapFlags, []field{{'F', "loadFactor"}, {'I', "threshold"}}); err != nil {
		return nil, err
	}
	d.assign(handle{kind: hClassHashMap})
	if err := d.expect(tcEndBlockData, "end of HashMap class annotations (TC_ENDBLOCKDATA)"); err != nil {
		return nil, err
	}
	if err := d.expect(tcNull, "HashMap superclass descriptor (TC_NULL)"); err != nil {
		return nil, err
	}
	d.assign(handle{kind: hHashMap})

	// Default fields, in the order of the descriptor.
	at = d.pos
	lf, err := d.u32("HashMap.loadFactor")
	if err != nil {
		return nil, err
	}
	if f := math.Float32frombits(lf); !(f > 0) {
		d.pos = at
		return nil, d.fail("illegal HashMap load factor %v", f)
	}
	if _, err := d.u32("HashMap.threshold"); err != nil {
		return nil, err
	}

	// writeObject's block data: bucket count (ignored, as Java does) and
	// the number of mappings.
	block, err := d.blockData(8)
	if err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(block[4:]))
	if size < 0 {
		return nil, d.fail("illegal HashMap mappings count %d", size)
	}
	// Every mapping takes at least two bytes (two TC_NULLs), so a count
	// the input cannot hold is truncation, found before allocating for it.
	if int64(size)*2 > int64(d.remaining()) {
		return nil, d.truncated(fmt.Sprintf("HashMap of %d mappings", size))
	}
	// Preallocation is capped as well: tiny mappings (two nulls) would
	// otherwise cost far more memory than input.
	entries := make([]storage.RawOffset, 0, min(int(size), 1024))
	for i := range int(size) {
		k, err := d.byteArray(fmt.Sprintf("key of mapping %d", i))
		if err != nil {
			return nil, err
		}
		v, err := d.byteArray(fmt.Sprintf("value of mapping %d", i))
		if err != nil {
			return nil, err
		}
		entries = append(entries, storage.RawOffset{Key: k, Value: v})
	}
	if err := d.expect(tcEndBlockData, "end of HashMap data (TC_ENDBLOCKDATA)"); err != nil {
		return nil, err
	}
	return entries, nil
}

// blockData reads n bytes of block data, which may come in several
// TC_BLOCKDATA segments but must not run past n.
func (d *decoder) blockData(n int) ([]byte, error) {
	out := make([]byte, 0, n)
	for len(out) < n {
		at := d.pos
		tc, err := d.u8("HashMap block data")
		if err != nil {
			return nil, err
		}
		if tc != tcBlockData {
			d.pos = at
			return nil, d.fail("expected HashMap block data (TC_BLOCKDATA) but found %s", typeCodeName(tc))
		}
		l, err := d.u8("block data length")
		if err != nil {
			return nil, err
		}
		if int(l) > n-len(out) {
			d.pos = at
			return nil, d.fail("HashMap block data of %d bytes, want %d", len(out)+int(l), n)
		}
		b, err := d.bytes(int(l), "block data")
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

// className reads a new TC_CLASSDESC's name (for error messages and the
// HashMap check); the type code is read here. A reference or proxy
// descriptor is an error.
func (d *decoder) className() (string, error) {
	at := d.pos
	tc, err := d.u8("class descriptor")
	if err != nil {
		return "", err
	}
	if tc != tcClassDesc {
		d.pos = at
		return "", d.fail("expected a class descriptor (TC_CLASSDESC) but found %s", typeCodeName(tc))
	}
	return d.utf("class name")
}

type field struct {
	typeCode byte
	name     string
}

// classDescBody reads a class descriptor after its name and checks it is
// exactly the one Java writes for the class.
func (d *decoder) classDescBody(class string, suid uint64, flags byte, fields []field) error {
	at := d.pos
	got, err := d.u64(class + " serialVersionUID")
	if err != nil {
		return err
	}
	if got != suid {
		d.pos = at
		return d.fail("%s has serialVersionUID %d, want %d", class, int64(got), int64(suid))
	}
	at = d.pos
	f, err := d.u8(class + " class flags")
	if err != nil {
		return err
	}
	if f != flags {
		d.pos = at
		return d.fail("%s has class flags 0x%02x, want 0x%02x", class, f, flags)
	}
	at = d.pos
	n, err := d.u16(class + " field count")
	if err != nil {
		return err
	}
	if int(n) != len(fields) {
		d.pos = at
		return d.fail("%s has %d serialized fields, want %d", class, n, len(fields))
	}
	for _, want := range fields {
		at = d.pos
		tc, err := d.u8(class + " field type")
		if err != nil {
			return err
		}
		name, err := d.utf(class + " field name")
		if err != nil {
			return err
		}
		if tc != want.typeCode || name != want.name {
			d.pos = at
			return d.fail("%s has field %c %q, want %c %q", class, tc, name, want.typeCode, want.name)
		}
	}
	return nil
}

// byteArray reads a HashMap key or value: a byte[], a reference to one
// read before, or null (nil).
func (d *decoder) byteArray(what string) ([]byte, error) {
	at := d.pos
	tc, err := d.u8(what)
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcNull:
		return nil, nil
	case tcReference:
		h, err := d.lookup()
		if err != nil {
			return nil, err
		}
		if h.kind != hArray {
			d.pos = at
			return nil, d.fail("%s: expected byte[] but found a reference to %s", what, handleKindName(h.kind))
		}
		return bytes.Clone(h.data), nil
	case tcArray:
	default:
		d.pos = at
		return nil, d.fail("%s: expected byte[] or null but found %s", what, typeCodeName(tc))
	}

	// The array's class: a new [B descriptor or a reference to one.
	at = d.pos
	tc, err = d.u8("array class descriptor")
	if err != nil {
		return nil, err
	}
	switch tc {
	case tcReference:
		h, err := d.lookup()
		if err != nil {
			return nil, err
		}
		if h.kind != hClassByteArray {
			d.pos = at
			return nil, d.fail("%s: expected the byte[] class but found a reference to %s", what, handleKindName(h.kind))
		}
	case tcClassDesc:
		name, err := d.utf("class name")
		if err != nil {
			return nil, err
		}
		if name != byteArrayClass {
			d.pos = at
			return nil, d.fail("%s: expected byte[] but found an array of class %s", what, name)
		}
		if err := d.classDescBody("byte[]", byteArraySUID, byteArrayFlags, nil); err != nil {
			return nil, err
		}
		d.assign(handle{kind: hClassByteArray})
		if err := d.expect(tcEndBlockData, "end of byte[] class annotations (TC_ENDBLOCKDATA)"); err != nil {
			return nil, err
		}
		if err := d.expect(tcNull, "byte[] superclass descriptor (TC_NULL)"); err != nil {
			return nil, err
		}
	default:
		d.pos = at
		return nil, d.fail("%s: expected the byte[] class descriptor but found %s", what, typeCodeName(tc))
	}

	at = d.pos
	n, err := d.u32("array length")
	if err != nil {
		return nil, err
	}
	if int32(n) < 0 {
		d.pos = at
		return nil, d.fail("%s: negative array length %d", what, int32(n))
	}
	// bytes checks n against what is left before anything is allocated.
	b, err := d.bytes(int(n), fmt.Sprintf("%s (byte[%d])", what, n))
	if err != nil {
		return nil, err
	}
	b = bytes.Clone(b)
	if b == nil {
		b = []byte{}
	}
	d.assign(handle{kind: hArray, data: b})
	return b, nil
}

func handleKindName(k int) string {
	switch k {
	case hClassHashMap:
		return "the java.util.HashMap class"
	case hClassByteArray:
		return "the byte[] class"
	case hHashMap:
		return "the HashMap itself"
	}
	return "a byte[]"
}

func typeCodeName(tc byte) string {
	names := map[byte]string{
		tcNull:           "TC_NULL",
		tcReference:      "TC_REFERENCE",
		tcClassDesc:      "TC_CLASSDESC",
		tcObject:         "TC_OBJECT",
		tcString:         "TC_STRING",
		tcArray:          "TC_ARRAY",
		tcClass:          "TC_CLASS",
		tcBlockData:      "TC_BLOCKDATA",
		tcEndBlockData:   "TC_ENDBLOCKDATA",
		tcReset:          "TC_RESET",
		tcBlockDataLong:  "TC_BLOCKDATALONG",
		tcException:      "TC_EXCEPTION",
		tcLongString:     "TC_LONGSTRING",
		tcProxyClassDesc: "TC_PROXYCLASSDESC",
		tcEnum:           "TC_ENUM",
	}
	if n, ok := names[tc]; ok {
		return fmt.Sprintf("%s (0x%02x)", n, tc)
	}
	return fmt.Sprintf("unknown type code 0x%02x", tc)
}
