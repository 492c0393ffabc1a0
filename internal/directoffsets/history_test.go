package directoffsets

import (
	"fmt"
	"testing"
	"time"
)

// At takes, per source partition, the last commit at or before the time:
// a tombstone then means no offset, a value that is not an offset is
// passed over, and key field order does not split a partition.
func TestHistoryAt(t *testing.T) {
	t0 := time.Date(2026, 7, 10, 14, 0, 0, 0, time.UTC)
	a := map[string]any{"table": "a", "protocol": "1"}
	aOther := map[string]any{"protocol": "1", "table": "a"}
	b := map[string]any{"table": "b"}
	h := &History{Commits: []Commit{
		{Partition: a, Offset: map[string]any{"id": int64(1)}, Time: t0},
		{Partition: b, Offset: map[string]any{"id": int64(7)}, Time: t0.Add(time.Minute)},
		{Partition: aOther, Offset: map[string]any{"id": int64(2)}, Time: t0.Add(2 * time.Minute)},
		{Partition: a, Invalid: true, Time: t0.Add(3 * time.Minute)},
		{Partition: b, Time: t0.Add(4 * time.Minute)}, // a reset
	}}
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{
		{-time.Second, "[{a <nil> false 0} {b <nil> false 60}]"},
		{0, "[{a 1 true 0} {b <nil> false 60}]"},
		{90 * time.Second, "[{a 1 true 0} {b 7 true 60}]"},
		{2 * time.Minute, "[{a 2 true 0} {b 7 true 60}]"},
		{3 * time.Minute, "[{a 2 true 0} {b 7 true 60}]"},
		{time.Hour, "[{a 2 true 0} {b <nil> true 60}]"},
	} {
		var got []string
		for _, p := range h.At("src", t0.Add(tc.at)) {
			off := "<nil>"
			if p.Offset != nil {
				off = fmt.Sprint(p.Offset["id"])
			}
			got = append(got, fmt.Sprintf("{%v %s %v %v}", p.Partition["table"], off, p.Known, p.Earliest.Sub(t0).Seconds()))
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("At(t0%+v) = %v, want %s", tc.at, got, tc.want)
		}
	}
}
