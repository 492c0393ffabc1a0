package worker

import (
	"sync"
	"sync/atomic"
)

// inChunks calls do for the consecutive chunks of [0, n), each of size
// records but the last, on the calling goroutine (worker 0) and on
// goroutines-1 others (workers 1 and up), each taking the next chunk as
// it becomes free. It returns once every chunk is done.
//
// Chunks rather than one slice per goroutine: a goroutine started here
// waits for a processor while the caller already has one (the producer
// and the broker keep the others busy), and a caller given half the
// records finished its half and then waited as long again for the other
// (figure 8: 135 ms of its own work, then 76 ms waiting, in a pass of
// 500,000 lines). Taking chunks, the caller does what no other goroutine
// got to.
func inChunks(n, goroutines, size int, do func(worker, chunk, from, to int)) {
	chunks := (n + size - 1) / size
	var next atomic.Int64
	work := func(worker int) {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			do(worker, c, c*size, min((c+1)*size, n))
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(goroutines, chunks); w++ {
		wg.Go(func() { work(w) })
	}
	work(0)
	wg.Wait()
}
