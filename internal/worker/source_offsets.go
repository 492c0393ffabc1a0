package worker

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/storage"
)

// offsetTracker keeps a source task's offsets from the moment its records
// are sent until they can be committed. An offset may be committed once
// it and every earlier record of its partition were acknowledged:
// committing past an unacknowledged record could lose it in a crash.
type offsetTracker struct {
	connector string

	mu sync.Mutex
	// pending holds, per source partition, the offsets of records sent
	// but not yet committed, in send order.
	pending map[string]*partitionQueue

	// keys is track's (its goroutine only, under mu).
	keys partitionKeys
}

func newOffsetTracker(connector string) offsetTracker {
	return offsetTracker{connector: connector, pending: map[string]*partitionQueue{}, keys: partitionKeys{connector: connector}}
}

type partitionQueue struct {
	partition map[string]any
	records   []*pendingRecord
}

// pendingRecord is the newest offset of one source partition within one
// batch of records. It is acknowledged when every record of the batch is.
type pendingRecord struct {
	offset map[string]any
	batch  *batchAck
}

// batchAck counts the records of a batch that Kafka has not acknowledged
// yet. Acknowledging per batch, not per record, keeps the bookkeeping to
// a few allocations a batch; commits are as fine-grained as the task's
// batches.
type batchAck struct {
	outstanding atomic.Int64
}

func (p *pendingRecord) acked() bool { return p.batch.outstanding.Load() == 0 }

// track queues, per source partition in the batch, the batch's newest
// offset behind those of earlier batches, under one lock; sent is how many
// of the batch's records go to Kafka (the others were dropped by a
// transform or skipped), each of which must be acknowledged. A partition
// whose records in this batch carry no offset still gets an entry: it
// holds back later offsets of the partition until the batch is
// acknowledged.
func (t *offsetTracker) track(recs []*connect.SourceRecord, sent int) *batchAck {
	batch := &batchAck{}
	batch.outstanding.Store(int64(sent))
	t.mu.Lock()
	defer t.mu.Unlock()
	var last *pendingRecord
	var lastKey string
	for _, rec := range recs {
		if rec.SourcePartition == nil {
			continue
		}
		key := t.keys.of(rec.SourcePartition)
		if last == nil || key != lastKey {
			last, lastKey = t.entryFor(key, rec.SourcePartition, batch), key
		}
		if rec.SourceOffset != nil {
			last.offset = rec.SourceOffset
		}
	}
	return batch
}

// entryFor returns the batch's entry in a partition's queue, adding it
// when the partition has none for this batch yet.
func (t *offsetTracker) entryFor(key string, partition map[string]any, batch *batchAck) *pendingRecord {
	q := t.pending[key]
	if q == nil {
		q = &partitionQueue{partition: partition}
		t.pending[key] = q
	}
	if n := len(q.records); n > 0 && q.records[n-1].batch == batch {
		return q.records[n-1]
	}
	pr := &pendingRecord{batch: batch}
	q.records = append(q.records, pr)
	return pr
}

// partitionKeys gives the canonical keys of a connector's source
// partitions. Tasks usually hand the same partition map with every
// record; computing the key once per map, not once per record, keeps it
// off the hot path (it was a third of an exactly-once task's work). One
// goroutine uses it.
type partitionKeys struct {
	connector string
	last      unsafe.Pointer // the last partition map seen
	key       string         // its canonical key
}

func (k *partitionKeys) of(p map[string]any) string {
	// A map value is a pointer to the runtime's map, the one
	// reflect.Value.UnsafePointer returns; read here, it costs no call
	// per record.
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	if ptr != k.last || k.key == "" {
		k.last, k.key = ptr, storage.CanonicalKey(k.connector, p)
	}
	return k.key
}

// takeCommittable returns, per source partition, the newest offset whose
// record and all earlier ones were acknowledged, and forgets those
// records: the caller is to commit them.
func (t *offsetTracker) takeCommittable() []storage.PartitionOffset {
	t.mu.Lock()
	defer t.mu.Unlock()
	var entries []storage.PartitionOffset
	for key, q := range t.pending {
		n := 0
		var newest map[string]any
		for n < len(q.records) && q.records[n].acked() {
			if off := q.records[n].offset; off != nil {
				newest = off
			}
			n++
		}
		q.records = q.records[n:]
		if newest != nil {
			entries = append(entries, storage.PartitionOffset{Partition: q.partition, Offset: newest})
		}
		if len(q.records) == 0 {
			delete(t.pending, key)
		}
	}
	return entries
}
