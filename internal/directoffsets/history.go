package directoffsets

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/storage"
)

// Commit is one record of a connector's source partition on the offsets
// topic: the offset a worker committed, at the record's time.
type Commit struct {
	// Partition and Offset are decoded as Read decodes them; Offset is nil
	// for a tombstone (the offset was removed: a reset), or when the value
	// is not a JSON object (Invalid says so).
	Partition, Offset map[string]any
	Invalid           bool
	// Time is the record's timestamp: when the worker wrote it.
	Time time.Time
	// KafkaPartition and KafkaOffset are where the record sits.
	KafkaPartition int32
	KafkaOffset    int64
}

// History is what the offsets topic still holds of a connector's commits.
type History struct {
	// Commits are oldest first, by record time, then by position.
	Commits []Commit
	// Compacted says that records were removed from the topic before the
	// last of these commits, by compaction or retention: a Kafka
	// partition starts after offset 0 or skips offsets (more than the one
	// a transaction's commit marker takes). Older commits of a partition
	// may then be gone; the earliest one kept is where its known history
	// starts.
	Compacted bool
}

// ReadHistory reads the topic to its end and returns every record of the
// connector still there, so that what the offsets were at a given time
// can be looked up (At). Keys are grouped by canonical form, as Read
// groups them.
func ReadHistory(ctx context.Context, cfg Config, connector string) (*History, error) {
	var mu sync.Mutex
	h := &History{}
	next := map[int32]int64{} // per Kafka partition, the offset after the last record seen
	onRecord := func(r *kgo.Record) {
		mu.Lock()
		defer mu.Unlock()
		// Only gaps before a record of this connector matter, but a gap
		// anywhere before it may have held one of its commits.
		want, seen := next[r.Partition]
		if !seen && r.Offset > 0 || seen && r.Offset > want+1 {
			h.Compacted = true
		}
		next[r.Partition] = r.Offset + 1
		name, partition, err := storage.DecodeOffsetKey(r.Key)
		if err != nil || name != connector {
			return
		}
		c := Commit{Partition: partition, Time: r.Timestamp, KafkaPartition: r.Partition, KafkaOffset: r.Offset}
		if r.Value != nil {
			v, err := javajson.Unmarshal(r.Value)
			if o, ok := v.(map[string]any); err == nil && ok {
				c.Offset = o
			} else {
				c.Invalid = true
			}
		}
		h.Commits = append(h.Commits, c)
	}
	l, err := open(ctx, cfg, onRecord)
	if err != nil {
		return nil, err
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	slices.SortStableFunc(h.Commits, func(a, b Commit) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.KafkaPartition, b.KafkaPartition), cmp.Compare(a.KafkaOffset, b.KafkaOffset))
	})
	return h, nil
}

// Point is a source partition's offset at a point in time.
type Point struct {
	Partition map[string]any
	// Offset is the last offset committed at or before the time; nil when
	// the last record then was a tombstone, or when there was none
	// (Known is false then).
	Offset map[string]any
	// Known: a record at or before the time was found. Without one, the
	// partition had no offset then, unless Compacted removed it.
	Known bool
	// Earliest is the time of the first commit kept.
	Earliest time.Time
}

// At returns, for every source partition with a commit in the history,
// its offset at t, ordered by storage.CanonicalKey.
func (h *History) At(connector string, t time.Time) []Point {
	byCanon := map[string]*Point{}
	for _, c := range h.Commits {
		canon := storage.CanonicalKey(connector, c.Partition)
		p := byCanon[canon]
		if p == nil {
			p = &Point{Partition: c.Partition, Earliest: c.Time}
			byCanon[canon] = p
		}
		if c.Time.After(t) || c.Invalid {
			continue
		}
		p.Offset, p.Known = c.Offset, true
	}
	out := make([]Point, 0, len(byCanon))
	for _, canon := range slices.Sorted(maps.Keys(byCanon)) {
		out = append(out, *byCanon[canon])
	}
	return out
}
