package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/internal/javajson"
)

const (
	offsetsFormat = "connectd.offsets"
	offsetsFile   = "offsets file"
	// Offsets are not secret and operators read the file, so use the
	// usual mode for data files rather than 0600.
	offsetsPerm os.FileMode = 0o644
)

// PartitionOffset is one source partition and its offset. A nil Offset is
// a tombstone: it removes the partition's offset (a reset).
type PartitionOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// RawOffset is an offsets record as exact bytes, as read from an offsets
// topic or a Java worker's offsets file. A nil Value is a tombstone.
type RawOffset struct {
	Key   []byte
	Value []byte
}

// FileOffsetStore is the standalone worker's source-offset store: an
// in-memory map persisted to one JSON file, rewritten in full (atomically)
// on every change as Kafka's FileOffsetBackingStore does. It is safe for
// concurrent use.
//
// Each partition keeps exact key bytes: Put reuses the bytes a partition
// already has, PutRaw brings its own. So a key imported from a Java worker
// is written back byte-identical, while lookups go through CanonicalKey so
// field order never hides an offset.
type FileOffsetStore struct {
	path string

	mu    sync.Mutex
	conns map[string]*connectorOffsets
	// history, if kept, records each change once it is saved.
	history *OffsetHistory
	now     func() time.Time
}

// History is the history KeepHistory set, or nil.
func (s *FileOffsetStore) History() *OffsetHistory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history
}

// KeepHistory records every change from now on in h, after the offsets
// file has it.
func (s *FileOffsetStore) KeepHistory(h *OffsetHistory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history, s.now = h, time.Now
}

// connectorOffsets indexes one connector's partitions so that Offsets
// costs O(partitions of that connector), whatever else the file holds.
type connectorOffsets struct {
	byCanon map[string]*offsetEntry
	// sorted is byCanon's entries in canonical-key order, rebuilt lazily
	// after a change (nil = stale). It is replaced, never modified in
	// place, so a reader may keep using a snapshot after unlocking.
	sorted []*offsetEntry
}

// offsetEntry is immutable once stored, apart from the encoding cache:
// updates replace the pointer, which is what makes copying snapshots
// outside the lock and cheap rollback work.
type offsetEntry struct {
	connector string
	canon     string
	key       []byte
	partition map[string]any
	offset    map[string]any // never nil; tombstones remove the entry

	// encoded caches the entry's text in the file, filled in lazily by
	// the writer under the store's mutex; readers outside it never touch
	// it.
	encoded []byte
}

// OpenFileOffsetStore loads the offsets file at path. A missing file is a
// first start and gives an empty store. Any other problem is an error
// naming the file: a damaged file must never turn into an empty store,
// because that would silently reset every source connector.
func OpenFileOffsetStore(path string) (*FileOffsetStore, error) {
	s := &FileOffsetStore{path: path, conns: map[string]*connectorOffsets{}}
	if err := loadFile(path, offsetsFile, s.load); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the file the store persists to.
func (s *FileOffsetStore) Path() string { return s.path }

func (s *FileOffsetStore) load(data []byte) error {
	items, err := decodeEnvelope(data, offsetsFormat, "offsets")
	if err != nil {
		return err
	}
	for i, item := range items {
		e, err := decodeOffsetEntry(item)
		if err != nil {
			return fmt.Errorf("offsets entry %d: %v", i, err)
		}
		if s.lookup(e.connector, e.canon) != nil {
			// We never write two entries for one partition; which one
			// would be right is unknowable.
			return fmt.Errorf("offsets entry %d: duplicate entry for connector %q partition %s", i, e.connector, describe(e.partition))
		}
		s.set(e.connector, e.canon, e)
	}
	return nil
}

func decodeOffsetEntry(item any) (*offsetEntry, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want an object", jsonKind(item))
	}
	if err := checkFields(obj, "connector", "partition", "offset", "key"); err != nil {
		return nil, err
	}
	connector, ok := obj["connector"].(string)
	if !ok {
		return nil, fmt.Errorf("connector is %s, want a string", jsonKind(obj["connector"]))
	}
	partition, ok := obj["partition"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("partition is %s, want an object", jsonKind(obj["partition"]))
	}
	offset, ok := obj["offset"].(map[string]any)
	if !ok {
		// Tombstones are dropped, never saved, so null is damage too.
		return nil, fmt.Errorf("offset is %s, want an object", jsonKind(obj["offset"]))
	}
	keyStr, ok := obj["key"].(string)
	if !ok {
		return nil, fmt.Errorf("key is %s, want a string", jsonKind(obj["key"]))
	}
	key := []byte(keyStr)
	kConn, kPart, err := DecodeOffsetKey(key)
	if err != nil {
		return nil, fmt.Errorf("key %q does not decode: %v", keyStr, err)
	}
	if err := ValidatePrimitive("partition", partition); err != nil {
		return nil, err
	}
	if err := ValidatePrimitive("offset", offset); err != nil {
		return nil, err
	}
	// The readable fields exist for humans; the key is what matters to
	// Kafka. If they disagree, someone edited one and not the other and we
	// cannot tell which was meant.
	canon := CanonicalKey(connector, partition)
	if kConn != connector || CanonicalKey(kConn, kPart) != canon {
		return nil, fmt.Errorf("key %q does not match connector %q and partition %s", keyStr, connector, describe(partition))
	}
	return &offsetEntry{connector: connector, canon: canon, key: key, partition: partition, offset: offset}, nil
}

// Get returns a copy of the offset stored for a partition, matched by
// canonical form rather than key bytes.
func (s *FileOffsetStore) Get(connector string, partition map[string]any) (map[string]any, bool) {
	canon := CanonicalKey(connector, partition)
	s.mu.Lock()
	e := s.lookup(connector, canon)
	s.mu.Unlock()
	if e == nil {
		return nil, false
	}
	return maps.Clone(e.offset), true
}

// Offsets returns every partition of connector that has an offset, in
// canonical-key order. The maps are the store's own, shared: the caller
// must not modify them.
func (s *FileOffsetStore) Offsets(connector string) []PartitionOffset {
	s.mu.Lock()
	var sorted []*offsetEntry
	if c := s.conns[connector]; c != nil {
		sorted = c.sortedEntries()
	}
	s.mu.Unlock()
	// Entries and the sorted snapshot are never modified, only replaced,
	// so they are read outside the lock, and not copied: copying 100,000
	// partitions took most of a GET of them.
	out := make([]PartitionOffset, len(sorted))
	for i, e := range sorted {
		out[i] = PartitionOffset{Partition: e.partition, Offset: e.offset}
	}
	return out
}

// Put validates and applies offsets for one connector (a nil Offset
// removes the partition) and persists the whole file before returning. If
// the file cannot be written, the in-memory state is rolled back so the
// store never reports an offset the disk does not have.
//
// A partition already stored keeps its original key bytes; a new one gets
// the Java HashMap-order key EncodeOffsetKey produces. Validation errors
// are *PrimitiveError values carrying Kafka's exact message.
func (s *FileOffsetStore) Put(connector string, entries []PartitionOffset) error {
	// Strings inside the maps are normalized below, but the name also
	// indexes the store; rather than silently renaming it, refuse it.
	if !utf8.ValidString(connector) {
		return fmt.Errorf("connector name %q is not valid UTF-8", connector)
	}
	changes := make([]*offsetChange, 0, len(entries))
	for _, po := range entries {
		if err := ValidatePrimitive("partition", po.Partition); err != nil {
			return err
		}
		if po.Offset != nil {
			if err := ValidatePrimitive("offset", po.Offset); err != nil {
				return err
			}
		}
		key, err := EncodeOffsetKey(connector, po.Partition)
		if err != nil {
			return err
		}
		// Decoding the key we just wrote, and round-tripping the offset,
		// stores exactly what a reload of the file will produce (int64 for
		// every integer kind, float64 for float32, U+FFFD for invalid
		// UTF-8), so memory and disk can never disagree.
		_, partition, err := DecodeOffsetKey(key)
		if err != nil {
			return fmt.Errorf("internal error: re-reading offset key %s: %v", key, err)
		}
		c := &offsetChange{connector: connector, canon: CanonicalKey(connector, partition)}
		if po.Offset != nil {
			offset, err := roundTrip(po.Offset)
			if err != nil {
				return err
			}
			c.entry = &offsetEntry{connector: connector, canon: c.canon, key: key, partition: partition, offset: offset}
		}
		changes = append(changes, c)
	}
	return s.apply(changes, true)
}

// PutRaw stores one record given as exact bytes, keeping the key bytes as
// they are. It exists for importing offsets written by Java workers. A nil
// value (or a JSON null) is a tombstone. Keys Kafka Connect would skip are
// refused; a null partition gives an error wrapping ErrNullPartition, which
// an importer will usually want to ignore as Kafka does.
func (s *FileOffsetStore) PutRaw(key, value []byte) error {
	return s.PutRawBatch([]RawOffset{{Key: key, Value: value}})
}

// PutRawBatch is PutRaw for many records with a single file write, so that
// importing a large offsets topic is not quadratic. Records apply in order
// (a later record for the same partition wins, as on a topic); nothing is
// applied if any record is invalid.
func (s *FileOffsetStore) PutRawBatch(records []RawOffset) error {
	changes := make([]*offsetChange, 0, len(records))
	for i, r := range records {
		c, err := rawChange(r)
		if err != nil {
			if len(records) > 1 {
				return fmt.Errorf("record %d: %w", i, err)
			}
			return err
		}
		changes = append(changes, c)
	}
	return s.apply(changes, false)
}

func rawChange(r RawOffset) (*offsetChange, error) {
	// Our file stores the key as a JSON string, which cannot hold invalid
	// UTF-8; accepting it would mean writing back different bytes.
	if !utf8.Valid(r.Key) {
		return nil, fmt.Errorf("offset key %q is not valid UTF-8", r.Key)
	}
	connector, partition, err := DecodeOffsetKey(r.Key)
	if err != nil {
		return nil, fmt.Errorf("offset key %s: %w", r.Key, err)
	}
	if err := ValidatePrimitive("partition", partition); err != nil {
		return nil, err
	}
	c := &offsetChange{connector: connector, canon: CanonicalKey(connector, partition)}
	if r.Value == nil {
		return c, nil
	}
	v, err := parseJSON(r.Value)
	if err != nil {
		return nil, fmt.Errorf("offset value for key %s is not valid JSON: %w", r.Key, err)
	}
	if v == nil {
		return c, nil
	}
	offset, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("offset value for key %s is %s, want an object", r.Key, jsonKind(v))
	}
	if err := ValidatePrimitive("offset", offset); err != nil {
		return nil, err
	}
	c.entry = &offsetEntry{connector: connector, canon: c.canon, key: slices.Clone(r.Key), partition: partition, offset: offset}
	return c, nil
}

// offsetChange sets (entry != nil) or removes one partition.
type offsetChange struct {
	connector, canon string
	entry            *offsetEntry
	prev             *offsetEntry // filled in by apply, for rollback
}

// apply makes the changes, persists, and undoes them if persisting fails.
// keepKey reuses the key bytes of a partition already stored (Put: we only
// know the partition's meaning); raw imports bring their own bytes.
func (s *FileOffsetStore) apply(changes []*offsetChange, keepKey bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		c.prev = s.lookup(c.connector, c.canon)
		if keepKey && c.entry != nil && c.prev != nil {
			e := *c.entry
			e.key, e.partition = c.prev.key, c.prev.partition
			c.entry = &e
		}
		s.set(c.connector, c.canon, c.entry)
	}
	err := s.saveLocked()
	if err != nil {
		// Reverse order, so a partition changed twice in one batch gets
		// its original entry back.
		for i := len(changes) - 1; i >= 0; i-- {
			c := changes[i]
			s.set(c.connector, c.canon, c.prev)
		}
		return err
	}
	if s.history == nil {
		return nil
	}
	commits := make([]OffsetCommit, 0, len(changes))
	for _, c := range changes {
		oc := OffsetCommit{Connector: c.connector}
		switch {
		case c.entry != nil:
			oc.Partition, oc.Offset = c.entry.partition, c.entry.offset
		case c.prev != nil:
			oc.Partition = c.prev.partition
		default:
			continue // removing what was not there changes nothing
		}
		commits = append(commits, oc)
	}
	// The offsets are saved: a history that cannot follow is reported,
	// not rolled back into.
	return s.history.Append(s.now(), commits)
}

func (s *FileOffsetStore) lookup(connector, canon string) *offsetEntry {
	if c := s.conns[connector]; c != nil {
		return c.byCanon[canon]
	}
	return nil
}

// set stores e, or removes the partition when e is nil.
func (s *FileOffsetStore) set(connector, canon string, e *offsetEntry) {
	c := s.conns[connector]
	if e == nil {
		if c == nil {
			return
		}
		if _, ok := c.byCanon[canon]; !ok {
			return
		}
		delete(c.byCanon, canon)
		c.sorted = nil
		if len(c.byCanon) == 0 {
			delete(s.conns, connector)
		}
		return
	}
	if c == nil {
		c = &connectorOffsets{byCanon: map[string]*offsetEntry{}}
		s.conns[connector] = c
	}
	c.byCanon[canon] = e
	c.sorted = nil
}

func (c *connectorOffsets) sortedEntries() []*offsetEntry {
	if c.sorted == nil {
		sorted := make([]*offsetEntry, 0, len(c.byCanon))
		for _, e := range c.byCanon {
			sorted = append(sorted, e)
		}
		slices.SortFunc(sorted, func(a, b *offsetEntry) int { return strings.Compare(a.canon, b.canon) })
		c.sorted = sorted
	}
	return c.sorted
}

func (s *FileOffsetStore) saveLocked() error {
	data, err := s.encodeLocked()
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", offsetsFile, s.path, err)
	}
	return WriteFileAtomic(s.path, data, offsetsPerm)
}

// encodeLocked renders the file, sorted by connector then canonical key so
// that the same offsets always give the same bytes (diffable, testable).
// It produces exactly what json.Indent would make of the compact document
// (the golden test holds it to that), but from per-entry fragments cached
// on the entries, so that a commit touching one partition of a large store
// does not re-encode every other one.
func (s *FileOffsetStore) encodeLocked() ([]byte, error) {
	names := slices.Sorted(maps.Keys(s.conns))
	size := 128
	for _, name := range names {
		for _, e := range s.conns[name].sortedEntries() {
			if e.encoded == nil {
				enc, err := encodeOffsetEntry(e)
				if err != nil {
					return nil, err
				}
				e.encoded = enc
			}
			size += len(e.encoded) + 8
		}
	}
	b := make([]byte, 0, size)
	b = fmt.Appendf(b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"offsets\": [", offsetsFormat, fileVersion)
	n := 0
	for _, name := range names {
		for _, e := range s.conns[name].sortedEntries() {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			b = append(b, e.encoded...)
			n++
		}
	}
	if n > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "]\n}\n"...), nil
}

// encodeOffsetEntry renders one entry as it appears inside the "offsets"
// array. Partition and offset objects go through javajson so every double
// keeps a '.' or exponent and reloads as a double, not an integer.
func encodeOffsetEntry(e *offsetEntry) ([]byte, error) {
	b := append(make([]byte, 0, 64+2*len(e.key)), `{"connector":`...)
	b = javajson.AppendString(b, e.connector)
	b = append(b, `,"partition":`...)
	var err error
	if b, err = javajson.Append(b, e.partition); err != nil {
		return nil, err
	}
	b = append(b, `,"offset":`...)
	if b, err = javajson.Append(b, e.offset); err != nil {
		return nil, err
	}
	b = append(b, `,"key":`...)
	b = javajson.AppendString(b, string(e.key))
	b = append(b, '}')
	var out bytes.Buffer
	out.Grow(len(b) + len(b)/2)
	if err := json.Indent(&out, b, "    ", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// roundTrip returns m as it will read back from the file.
func roundTrip(m map[string]any) (map[string]any, error) {
	b, err := javajson.Marshal(m)
	if err != nil {
		return nil, err
	}
	v, err := javajson.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
