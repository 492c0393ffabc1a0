package worker

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/storage"
)

// trackerRecords makes the records of a batch from words: "a3" is a record
// of source partition a at offset 3, "a" one of partition a without an
// offset, "_" one without a partition, "_3" one with an offset but no
// partition. Records of one partition share one map, as tasks usually
// hand them, unless fresh, when each has a map of its own.
func trackerRecords(t *testing.T, batch string, shared map[string]map[string]any, fresh bool) []*connect.SourceRecord {
	t.Helper()
	var recs []*connect.SourceRecord
	for _, w := range strings.Fields(batch) {
		name := strings.TrimRight(w, "0123456789")
		rec := &connect.SourceRecord{Topic: "t"}
		if digits := w[len(name):]; digits != "" {
			n, err := strconv.ParseInt(digits, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			rec.SourceOffset = map[string]any{"n": n}
		}
		if name != "_" {
			p := shared[name]
			if p == nil || fresh {
				p = map[string]any{"p": name}
				shared[name] = p
			}
			rec.SourcePartition = p
		}
		recs = append(recs, rec)
	}
	return recs
}

// committedOffsets reads entries back as partition name → offset, failing
// on a partition that appears twice.
func committedOffsets(t *testing.T, entries []storage.PartitionOffset) map[string]int64 {
	t.Helper()
	if len(entries) == 0 {
		return nil
	}
	got := map[string]int64{}
	for _, e := range entries {
		name := e.Partition["p"].(string)
		if _, dup := got[name]; dup {
			t.Fatalf("partition %s committed twice in one commit: %v", name, entries)
		}
		got[name] = e.Offset["n"].(int64)
	}
	return got
}

// The tracker never commits past a record Kafka has not acknowledged. Each
// step either sends a batch (batches are numbered from 0 in send order)
// or acknowledges some of a batch's records, then commits; a record that
// failed is one never acknowledged.
func TestOffsetTracker(t *testing.T) {
	type step struct {
		send string // a batch, as trackerRecords reads it; else:
		ack  int    // the batch of which
		n    int    // records are acknowledged

		put       map[string]int64 // what the commit after the step takes
		committed map[string]int64 // the store after that commit
		pending   int              // source partitions still holding records
	}
	type m = map[string]int64
	for _, c := range []struct {
		name  string
		fresh bool
		steps []step
	}{
		{name: "several partitions acknowledged out of order", steps: []step{
			{send: "a1 b1", pending: 2},
			{send: "a2 b2", pending: 2},
			{send: "a3", pending: 2},
			{ack: 2, n: 1, pending: 2},
			{ack: 1, n: 2, pending: 2},
			{ack: 0, n: 1, pending: 2},
			{ack: 0, n: 1, put: m{"a": 3, "b": 2}, committed: m{"a": 3, "b": 2}},
		}},
		{name: "a failed record holds back every partition of its batch", steps: []step{
			{send: "a1", pending: 1},
			{send: "a2 b1", pending: 2},
			{send: "a3 b2", pending: 2},
			{ack: 0, n: 1, put: m{"a": 1}, committed: m{"a": 1}, pending: 2},
			{ack: 1, n: 1, committed: m{"a": 1}, pending: 2},
			{ack: 2, n: 2, committed: m{"a": 1}, pending: 2},
		}},
		{name: "a partition whose records are all acknowledged is committed once and dropped", steps: []step{
			{send: "a1 a2 a3", pending: 1},
			{ack: 0, n: 3, put: m{"a": 3}, committed: m{"a": 3}},
			{send: "a4", committed: m{"a": 3}, pending: 1},
			{ack: 1, n: 1, put: m{"a": 4}, committed: m{"a": 4}},
			{send: "b1", committed: m{"a": 4}, pending: 1},
		}},
		{name: "records without a source partition or offset", steps: []step{
			{send: "_ _5"},
			{ack: 0, n: 2},
			{send: "a1", pending: 1},
			{send: "a", pending: 1},
			{send: "a3 _", pending: 1},
			{ack: 3, n: 1, pending: 1},
			{ack: 3, n: 1, pending: 1},
			{ack: 1, n: 1, put: m{"a": 1}, committed: m{"a": 1}, pending: 1},
			{ack: 2, n: 1, put: m{"a": 3}, committed: m{"a": 3}},
			{send: "a5 a", committed: m{"a": 3}, pending: 1},
			{ack: 4, n: 2, put: m{"a": 5}, committed: m{"a": 5}},
		}},
		{name: "the same partition interleaved within and across batches", steps: []step{
			{send: "a1 b1 a2 b2 a3", pending: 2},
			{send: "b3 a4 b4", pending: 2},
			{ack: 1, n: 3, pending: 2},
			{ack: 0, n: 4, pending: 2},
			{ack: 0, n: 1, put: m{"a": 4, "b": 4}, committed: m{"a": 4, "b": 4}},
		}},
		{name: "equal partitions in maps of their own are one partition", fresh: true, steps: []step{
			{send: "a1 b1 a2", pending: 2},
			{send: "a3", pending: 2},
			{ack: 1, n: 1, pending: 2},
			{ack: 0, n: 3, put: m{"a": 3, "b": 1}, committed: m{"a": 3, "b": 1}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newOffsetTracker("conn")
			shared := map[string]map[string]any{}
			var batches []*batchAck
			committed := map[string]int64{}
			for i, s := range c.steps {
				if s.send != "" {
					recs := trackerRecords(t, s.send, shared, c.fresh)
					batches = append(batches, tr.track(recs, len(recs)))
				} else {
					for range s.n {
						batches[s.ack].outstanding.Add(-1)
					}
				}
				put := committedOffsets(t, tr.takeCommittable())
				maps.Copy(committed, put)
				if !maps.Equal(put, s.put) {
					t.Errorf("step %d (%+v): commit took %v, want %v", i, s, put, s.put)
				}
				if !maps.Equal(committed, s.committed) {
					t.Errorf("step %d (%+v): committed %v, want %v", i, s, committed, s.committed)
				}
				if len(tr.pending) != s.pending {
					t.Errorf("step %d (%+v): %d partitions pending, want %d", i, s, len(tr.pending), s.pending)
				}
			}
		})
	}
}

// Acknowledgements arrive on other goroutines, in any order, while the
// task tracks and commits: a committed offset's batch and every earlier
// one were acknowledged, commits never go back, and once all is
// acknowledged the last offsets are committed.
func TestOffsetTrackerConcurrentAcks(t *testing.T) {
	const batches, perBatch = 200, 4
	tr := newOffsetTracker("conn")
	shared := map[string]map[string]any{}
	acks := make([]*batchAck, batches)
	var wg sync.WaitGroup
	ackCh := make(chan *batchAck, batches)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ackCh {
				for range perBatch {
					b.outstanding.Add(-1)
				}
			}
		}()
	}
	// Batch i has offset i+1 of partitions a and b.
	check := func(entries []storage.PartitionOffset, last map[string]int64) {
		for name, n := range committedOffsets(t, entries) {
			if n < last[name] {
				t.Fatalf("partition %s committed %d after %d", name, n, last[name])
			}
			last[name] = n
			for i := range n {
				if left := acks[i].outstanding.Load(); left != 0 {
					t.Fatalf("partition %s committed at %d while batch %d has %d records unacknowledged", name, n, i, left)
				}
			}
		}
	}
	last := map[string]int64{}
	var sent []*batchAck
	for i := range batches {
		n := strconv.Itoa(i + 1)
		recs := trackerRecords(t, "a"+n+" b"+n+" _ a"+n, shared, false)
		acks[i] = tr.track(recs, len(recs))
		sent = append(sent, acks[i])
		// Hand out, in a shuffled order, the batches already sent.
		for len(sent) > 0 && (rand.IntN(3) == 0 || i == batches-1) {
			j := rand.IntN(len(sent))
			ackCh <- sent[j]
			sent = append(sent[:j], sent[j+1:]...)
		}
		check(tr.takeCommittable(), last)
	}
	close(ackCh)
	wg.Wait()
	check(tr.takeCommittable(), last)
	if want := (map[string]int64{"a": batches, "b": batches}); !maps.Equal(last, want) {
		t.Fatalf("committed %v once all was acknowledged, want %v", last, want)
	}
	if len(tr.pending) != 0 {
		t.Fatalf("%d partitions still pending once all was committed", len(tr.pending))
	}
}

// The tracker's work per batch on the source task's hot path: a batch of
// one partition, as a FileStreamSource polls it, tracked, acknowledged
// and committed.
func BenchmarkOffsetTracker(b *testing.B) {
	const perBatch = 2048
	tr := newOffsetTracker("conn")
	partition := map[string]any{"filename": "/tmp/in.txt"}
	recs := make([]*connect.SourceRecord, perBatch)
	for i := range recs {
		recs[i] = &connect.SourceRecord{Topic: "t", SourcePartition: partition, SourceOffset: map[string]any{"position": int64(i)}}
	}
	b.ReportAllocs()
	for b.Loop() {
		ack := tr.track(recs, len(recs))
		ack.outstanding.Add(-perBatch)
		if len(tr.takeCommittable()) != 1 {
			b.Fatal("nothing committed")
		}
	}
}

// Records a transform dropped are not sent, yet their offsets commit with
// the batch's: a batch whose records were all dropped commits at once, and
// one with some dropped waits only for those sent.
func TestTrackerCommitsOffsetsOfDroppedRecords(t *testing.T) {
	tr := newOffsetTracker("conn")
	shared := map[string]map[string]any{}
	tr.track(trackerRecords(t, "a1 a2", shared, false), 0)
	if got := committedOffsets(t, tr.takeCommittable()); !maps.Equal(got, map[string]int64{"a": 2}) {
		t.Fatalf("all dropped: committed %v, want a=2", got)
	}
	ack := tr.track(trackerRecords(t, "a3 b1 a4", shared, false), 1)
	if got := committedOffsets(t, tr.takeCommittable()); len(got) != 0 {
		t.Fatalf("before the one sent record's ack: committed %v", got)
	}
	ack.outstanding.Add(-1)
	if got := committedOffsets(t, tr.takeCommittable()); !maps.Equal(got, map[string]int64{"a": 4, "b": 1}) {
		t.Fatalf("after it: committed %v, want a=4 b=1", got)
	}
}
