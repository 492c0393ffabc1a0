package gcpace

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, runway  uint64
		ceiling, want int
	}{
		{0, 64 * mb, 400, 400},        // nothing live yet
		{10 * mb, 64 * mb, 400, 400},  // 4×10 MB is within the runway
		{16 * mb, 64 * mb, 400, 400},  // exactly
		{32 * mb, 64 * mb, 400, 200},  // 64 MB past 32
		{40 * mb, 64 * mb, 400, 160},  // a JDBC source's producer buffer
		{64 * mb, 64 * mb, 400, 100},  // Go's default from here on
		{500 * mb, 64 * mb, 400, 100}, // never less than the default
		{500 * mb, 64 * mb, 50, 50},   // nor more than the ceiling
	} {
		if got := percent(c.live, c.runway, c.ceiling); got != c.want {
			t.Errorf("percent(%d MB, %d MB, %d) = %d, want %d", c.live/mb, c.runway/mb, c.ceiling, got, c.want)
		}
	}
}

// gogc reads the collector's current target.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// waitGOGC collects until the pacer has set want, or fails after 10 s.
func waitGOGC(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for gogc() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC is %d, want %d", what, gogc(), want)
		}
		// The cleanup that adjusts GOGC runs after a collection, on a
		// goroutine of its own.
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestStartFollowsTheLiveHeap(t *testing.T) {
	const runway = 8 << 20
	start(runway, 400)
	waitGOGC(t, 400, "small live heap")

	// 32 MB live: a runway of 8 MB would be 25%, so Go's default.
	live := make([][]byte, 32)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	waitGOGC(t, 100, "32 MB live")

	// About 5 MB live: 8 MB is 160% of it, give or take the test's own.
	clear(live[5:])
	live = live[:5]
	runtime.GC()
	deadline := time.Now().Add(10 * time.Second)
	for p := gogc(); p <= 100 || p >= 400; p = gogc() {
		if time.Now().After(deadline) {
			t.Fatalf("5 MB live: GOGC is %d, want between 100 and 400", p)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(live)

	live = nil
	waitGOGC(t, 400, "live heap freed")
}
