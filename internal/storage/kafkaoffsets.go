package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/connectd/connectd/internal/javajson"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaOffsetStore is the distributed worker's source-offset store over an
// offsets topic (Kafka's KafkaOffsetBackingStore), shared with Java
// workers byte for byte.
//
// Like Java it keeps every record's exact key and value bytes (see Raw),
// malformed keys included. On top of that, well-formed keys are indexed by
// CanonicalKey, so a lookup finds an offset whatever field order its key
// was written with. Writes reuse the exact key bytes already seen for a
// partition, so they compact the original record and land in its Kafka
// partition; partitions never seen get EncodeOffsetKey's Java HashMap
// order. It is safe for concurrent use.
type KafkaOffsetStore struct {
	topicStore

	mu    sync.Mutex
	raw   map[string][]byte // key bytes → value bytes, as on the topic
	conns map[string]*kafkaConnOffsets
}

type kafkaConnOffsets struct {
	byCanon map[string]*kafkaOffsetEntry
	sorted  []string // canonical keys in order; nil = stale (rebuilt lazily)
}

// kafkaOffsetEntry is one logical partition. It is never modified once
// stored (updates replace it), so readers may use it after unlocking.
type kafkaOffsetEntry struct {
	partition map[string]any
	// live holds the key spellings of this partition whose latest record
	// has an offset, least recently written first. Usually one; more when
	// writers disagreed on field order. The last one is current.
	live []offsetVariant
}

type offsetVariant struct {
	key    string
	offset map[string]any
}

func (e *kafkaOffsetEntry) current() offsetVariant { return e.live[len(e.live)-1] }

// NewKafkaOffsetStore creates the store. cfg.OnRecord and cfg.OnCaughtUp
// must be nil.
func NewKafkaOffsetStore(cfg KafkaLogConfig) (*KafkaOffsetStore, error) {
	s := &KafkaOffsetStore{raw: map[string][]byte{}, conns: map[string]*kafkaConnOffsets{}}
	if err := s.open(cfg, s.onRecord, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// Get returns a copy of the partition's offset, matched by canonical form.
func (s *KafkaOffsetStore) Get(connector string, partition map[string]any) (map[string]any, bool) {
	canon := CanonicalKey(connector, partition)
	s.mu.Lock()
	e := s.lookupLocked(connector, canon)
	s.mu.Unlock()
	if e == nil {
		return nil, false
	}
	return maps.Clone(e.current().offset), true
}

// Raw returns the value last read for exactly these key bytes (what a Java
// worker's lookup would find), for any key, malformed ones included.
func (s *KafkaOffsetStore) Raw(key []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.raw[string(key)]
	return slices.Clone(v), ok
}

// Offsets returns every partition of the connector that has an offset, in
// canonical-key order. The maps are the store's own, shared: the caller
// must not modify them.
func (s *KafkaOffsetStore) Offsets(connector string) []PartitionOffset {
	s.mu.Lock()
	c := s.conns[connector]
	if c == nil {
		s.mu.Unlock()
		return []PartitionOffset{}
	}
	if c.sorted == nil {
		c.sorted = slices.Sorted(maps.Keys(c.byCanon))
	}
	entries := make([]*kafkaOffsetEntry, len(c.sorted))
	for i, canon := range c.sorted {
		entries[i] = c.byCanon[canon]
	}
	s.mu.Unlock()
	// Entries are immutable, so they are read outside the lock, and not
	// copied: copying 100,000 partitions took most of a GET of them.
	out := make([]PartitionOffset, len(entries))
	for i, e := range entries {
		out[i] = PartitionOffset{Partition: e.partition, Offset: e.current().offset}
	}
	return out
}

// Connectors returns the names of connectors with at least one offset,
// sorted.
func (s *KafkaOffsetStore) Connectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.conns))
}

// Put writes offsets for one connector (a nil Offset is a tombstone that
// removes the partition) with a 30 s limit; see PutContext.
func (s *KafkaOffsetStore) Put(connector string, entries []PartitionOffset) error {
	ctx, cancel := context.WithTimeout(context.Background(), readWriteTimeout)
	defer cancel()
	return s.PutContext(ctx, connector, entries)
}

// PutContext validates the entries (errors are *PrimitiveError values with
// Kafka's text), writes one record per entry, waits for every
// acknowledgement and then until the store's own reader has applied them,
// so a following Get sees them. A partition already on the topic is
// written with its exact key bytes; a tombstone is written for every key
// spelling of the partition that holds an offset.
func (s *KafkaOffsetStore) PutContext(ctx context.Context, connector string, entries []PartitionOffset) error {
	kvs, err := s.Records(connector, entries)
	if err != nil || len(kvs) == 0 {
		return err
	}
	if err := s.log.SendAllAndRead(ctx, kvs); err != nil {
		return fmt.Errorf("writing source offsets of connector %q: %w", connector, err)
	}
	return nil
}

// Records are the records PutContext writes for entries, for a writer of
// its own to send to the store's topic (an exactly-once source task, in
// the transaction of the records whose offsets they are).
func (s *KafkaOffsetStore) Records(connector string, entries []PartitionOffset) ([]KeyValue, error) {
	if !utf8.ValidString(connector) {
		return nil, fmt.Errorf("connector name %q is not valid UTF-8", connector)
	}
	kvs := make([]KeyValue, 0, len(entries))
	for _, po := range entries {
		if err := ValidatePrimitive("partition", po.Partition); err != nil {
			return nil, err
		}
		var value []byte
		if po.Offset != nil {
			if err := ValidatePrimitive("offset", po.Offset); err != nil {
				return nil, err
			}
			v, err := javajson.Marshal(po.Offset)
			if err != nil {
				return nil, err
			}
			value = v
		}
		key, err := EncodeOffsetKey(connector, po.Partition)
		if err != nil {
			return nil, err
		}
		// Canonicalize what a reader will decode, not the Go values given.
		_, partition, err := DecodeOffsetKey(key)
		if err != nil {
			return nil, fmt.Errorf("internal error: re-reading offset key %s: %v", key, err)
		}
		canon := CanonicalKey(connector, partition)
		s.mu.Lock()
		e := s.lookupLocked(connector, canon)
		s.mu.Unlock()
		switch {
		case e == nil:
			kvs = append(kvs, KeyValue{Key: key, Value: value})
		case value != nil:
			kvs = append(kvs, KeyValue{Key: []byte(e.current().key), Value: value})
		default:
			for _, v := range e.live {
				kvs = append(kvs, KeyValue{Key: []byte(v.key)})
			}
		}
	}
	return kvs, nil
}

// Topic is the offsets topic the store reads and writes.
func (s *KafkaOffsetStore) Topic() string { return s.log.Topic() }

func (s *KafkaOffsetStore) lookupLocked(connector, canon string) *kafkaOffsetEntry {
	if c := s.conns[connector]; c != nil {
		return c.byCanon[canon]
	}
	return nil
}

func (s *KafkaOffsetStore) onRecord(r *kgo.Record) {
	key := string(r.Key)
	connector, partition, keyErr := DecodeOffsetKey(r.Key)
	var offset map[string]any
	if r.Value != nil && keyErr == nil {
		v, err := decodeInternal(r.Value)
		switch m, ok := v.(map[string]any); {
		case err != nil:
			s.logger.Warn("offset value is not valid JSON; the partition has no usable offset", "key", key, "error", err)
		case ok:
			offset = m
		case v != nil:
			s.logger.Warn("offset value is not a JSON object; the partition has no usable offset", "key", key, "type", javaClassName(v))
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Value == nil {
		delete(s.raw, key)
	} else {
		s.raw[key] = r.Value
	}
	if keyErr != nil {
		// Kept in raw like Java's store, but not a partition of anything.
		if !errors.Is(keyErr, ErrNullPartition) {
			s.logger.Warn("ignoring offsets record with a malformed key", "key", key, "error", keyErr)
		}
		return
	}
	canon := CanonicalKey(connector, partition)
	c := s.conns[connector]
	var old *kafkaOffsetEntry
	if c != nil {
		old = c.byCanon[canon]
	}
	var live []offsetVariant
	if old != nil {
		live = make([]offsetVariant, 0, len(old.live)+1)
		for _, v := range old.live {
			if v.key != key {
				live = append(live, v)
			}
		}
	}
	if offset != nil {
		live = append(live, offsetVariant{key: key, offset: offset})
	}
	if len(live) == 0 {
		if old != nil {
			delete(c.byCanon, canon)
			c.sorted = nil
			if len(c.byCanon) == 0 {
				delete(s.conns, connector)
			}
		}
		return
	}
	if c == nil {
		c = &kafkaConnOffsets{byCanon: map[string]*kafkaOffsetEntry{}}
		s.conns[connector] = c
	}
	if old == nil {
		c.sorted = nil
	}
	c.byCanon[canon] = &kafkaOffsetEntry{partition: partition, live: live}
}
