// Package gcpace bounds the garbage collector's runway: the heap it lets
// the process allocate past the live heap before it collects again.
//
// GOGC sets the runway in proportion to the live heap. Moving records
// allocates steadily while little stays live, so a high GOGC saves a lot
// of collector CPU when the live heap is small; but the same proportion
// lets a worker whose live heap is large grow several times over, and
// every page a heap grows into costs a page fault the first time it is
// touched. The pacer keeps GOGC at its maximum while the runway that
// gives stays under a fixed size, and lowers it, down to Go's default
// (100), as the live heap grows past that.
package gcpace

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// percent is the GOGC that gives a live heap of live bytes a runway of
// at most runway bytes, between 100 (Go's default) and ceiling.
func percent(live, runway uint64, ceiling int) int {
	if live == 0 {
		return ceiling
	}
	p := runway * 100 / live
	switch {
	case p >= uint64(ceiling):
		return ceiling
	case p <= 100:
		return min(100, ceiling)
	}
	return int(p)
}

// connectd's pacing: maxPercent while the live heap is at most 16 MiB,
// then a runway of runwayBytes, down to Go's default from a 64 MiB live
// heap on. Moving records allocates steadily while the live heap stays small,
// so Go's default collects very often: 400 spends a fifth less CPU per
// record on the JDBC and file pipelines. But a worker whose live heap is
// 40 MB (a source task's producer buffers 50,000 records) would grow to
// 200 MB at 400: with the runway, a fresh worker's JDBC source spends
// about a tenth less CPU in its first million rows, and the heap stays
// at about 100 MB.
const (
	maxPercent  = 400
	runwayBytes = 64 << 20
)

// Start paces the collector with maxPercent and runwayBytes (see start).
func Start() { start(runwayBytes, maxPercent) }

var once sync.Once

// start sets GOGC to ceiling and then, after every collection, to
// percent(live heap, runway, ceiling). Calls after the first do nothing.
func start(runway uint64, ceiling int) {
	once.Do(func() {
		p := &pacer{runway: runway, ceiling: ceiling, current: ceiling}
		p.sample[0].Name = "/gc/heap/live:bytes"
		debug.SetGCPercent(ceiling)
		p.arm()
	})
}

type pacer struct {
	runway  uint64
	ceiling int
	current int // the GOGC last set; only the cleanup goroutine writes it
	sample  [1]metrics.Sample
}

// sentinel is allocated for each cycle: the collection that finds it
// unreachable runs its cleanup. It holds a pointer so that it is not
// batched with other small allocations, whose cleanups may never run.
type sentinel struct{ _ *byte }

func (p *pacer) arm() {
	runtime.AddCleanup(new(sentinel), func(p *pacer) { p.adjust() }, p)
}

func (p *pacer) adjust() {
	metrics.Read(p.sample[:])
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		if want := percent(p.sample[0].Value.Uint64(), p.runway, p.ceiling); want != p.current {
			debug.SetGCPercent(want)
			p.current = want
		}
	}
	p.arm()
}
