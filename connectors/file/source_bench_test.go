package file

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSourcePoll measures lines per second through Poll on a large
// file with the default batch size.
func BenchmarkSourcePoll(b *testing.B) {
	const lines = 200_000
	path := filepath.Join(b.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	size := 0
	for i := range lines {
		n, _ := fmt.Fprintf(w, "%08d the quick brown fox jumps over the lazy dog, a typical log line of text\n", i)
		size += n
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	config := map[string]string{FileConfig: path, TopicConfig: "t"}
	ctx := context.Background()

	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for range b.N {
		task := NewSourceTask()
		if err := task.Start(memOffsets{}, config); err != nil {
			b.Fatal(err)
		}
		n := 0
		for n < lines {
			recs, err := task.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if len(recs) == 0 {
				b.Fatalf("no records after %d lines", n)
			}
			n += len(recs)
		}
		task.Stop()
		total += n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "lines/s")
}
