package storage

import "testing"

// BenchmarkOffsets100k measures listing one connector's 100k partitions
// while another connector of the same size shares the store.
func BenchmarkOffsets100k(b *testing.B) {
	s := populated100k(b)
	b.ReportAllocs()
	for b.Loop() {
		if got := s.Offsets("big"); len(got) != 100_000 {
			b.Fatalf("got %d partitions", len(got))
		}
	}
}
