package worker

import (
	"sync"
	"testing"
)

// Every record is in exactly one chunk, chunks are numbered in record
// order, and each goroutine has a worker index of its own.
func TestInChunks(t *testing.T) {
	for _, c := range []struct{ n, goroutines, size int }{
		{0, 2, 256}, {1, 2, 256}, {256, 2, 256}, {257, 2, 256}, {2000, 2, 256}, {2000, 4, 128}, {10, 8, 3}, {1000, 1, 100},
	} {
		seen := make([]int, c.n)
		var mu sync.Mutex
		chunks := map[int][2]int{}
		inChunks(c.n, c.goroutines, c.size, func(w, chunk, from, to int) {
			if w < 0 || w >= c.goroutines {
				t.Errorf("%+v: worker %d", c, w)
			}
			mu.Lock()
			chunks[chunk] = [2]int{from, to}
			mu.Unlock()
			for i := from; i < to; i++ {
				seen[i]++ // chunks do not overlap, so no two goroutines share an index
			}
		})
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("%+v: record %d done %d times", c, i, k)
			}
		}
		for chunk, r := range chunks {
			if r[0] != chunk*c.size || r[1] != min(r[0]+c.size, c.n) {
				t.Errorf("%+v: chunk %d is [%d, %d)", c, chunk, r[0], r[1])
			}
		}
		if want := (c.n + c.size - 1) / c.size; len(chunks) != want {
			t.Errorf("%+v: %d chunks, want %d", c, len(chunks), want)
		}
	}
}
