package herder

import (
	"fmt"
	"sync"
	"testing"
)

// Many goroutines read, change and write back the config of a few
// connectors, each under its connector's lock: no change is lost, and
// no lock is kept once nobody holds or waits for it.
func TestConfigLocksSerializeEachConnector(t *testing.T) {
	var locks configLocks
	const names, writers, rounds = 3, 16, 50
	configs := make([]map[string]string, names)
	for i := range configs {
		configs[i] = map[string]string{}
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				n := (w + r) % names
				unlock := locks.lock(fmt.Sprint("c", n))
				v := fmt.Sprint(w, "-", r)
				configs[n] = patched(configs[n], map[string]*string{v: &v})
				unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, c := range configs {
		total += len(c)
	}
	if total != writers*rounds {
		t.Fatalf("%d of %d keys kept", total, writers*rounds)
	}
	if len(locks.locks) != 0 {
		t.Fatalf("locks left behind: %v", locks.locks)
	}
}

func TestPatchedSetsAndRemoves(t *testing.T) {
	v := "2"
	cur := map[string]string{"a": "1", "b": "1"}
	got := patched(cur, map[string]*string{"a": &v, "b": nil, "c": &v})
	if len(got) != 2 || got["a"] != "2" || got["c"] != "2" {
		t.Fatalf("patched: %v", got)
	}
	if cur["a"] != "1" || cur["b"] != "1" {
		t.Fatalf("the current config was changed: %v", cur)
	}
}
