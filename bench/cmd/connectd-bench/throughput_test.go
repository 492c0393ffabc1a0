package main

import (
	"testing"
	"time"
)

func TestPollGap(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		end, n int64
		since  time.Duration
		want   time.Duration
	}{
		{0, 1_000_000, 0, 5 * ms},                // nothing yet
		{10_000, 1_000_000, 0, 5 * ms},           // the first poll that saw records
		{500_000, 1_000_000, 500 * ms, 100 * ms}, // 250 ms left at most
		{900_000, 1_000_000, 900 * ms, 50 * ms},  // half of the 100 ms left
		{999_000, 1_000_000, 999 * ms, 5 * ms},   // never below 5 ms
	} {
		if got := pollGap(c.end, c.n, c.since); got != c.want {
			t.Errorf("pollGap(%d, %d, %v) = %v, want %v", c.end, c.n, c.since, got, c.want)
		}
	}
}
