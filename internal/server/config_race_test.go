package server

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/client"
)

// patchInParallel sends one PATCH per key at once, each through the next
// of the given workers, and fails unless every one answered 200.
func patchInParallel(t *testing.T, name string, keys []string, via ...*testWorker) {
	t.Helper()
	errs := make(chan error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		cl, err := client.New("http://" + via[i%len(via)].s.RESTAddr)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := "v-" + k
			if _, err := cl.PatchConfig(context.Background(), name, map[string]*string{k: &v}); err != nil {
				errs <- fmt.Errorf("PATCH %s: %w", k, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// configHasAll fails unless the connector's config, as w answers it,
// holds every key the patches set.
func configHasAll(t *testing.T, w *testWorker, name string, keys []string) {
	t.Helper()
	cl, err := client.New("http://" + w.s.RESTAddr)
	if err != nil {
		t.Fatal(err)
	}
	config, err := cl.Config(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, k := range keys {
		if config[k] != "v-"+k {
			lost = append(lost, k)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d patched keys lost: %v (config %v)", len(lost), len(keys), lost, config)
	}
}

func patchKeys(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s.%d", prefix, i)
	}
	return keys
}

// Every PATCH reads the config the previous one wrote: ten at once keep
// all ten keys, in the herder and in the connectors file.
func TestStandaloneParallelPatchesKeepEveryKey(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	postFileSource(w, "src", filepath.Join(dir, "in.txt"))
	keys := patchKeys("patched", 10)
	patchInParallel(t, "src", keys, w)
	configHasAll(t, w, "src", keys)

	w.close()
	w = startWorker(t, dir, w.props)
	configHasAll(t, w, "src", keys)
}

// A PUT racing a DELETE of the same connector either replaces or creates
// it: never 409 "already exists", never a 500.
func TestStandalonePutRacingDeleteNeverConflicts(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	cl, err := client.New("http://" + w.s.RESTAddr)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]string{"connector.class": "FileStreamSource", "file": filepath.Join(dir, "in.txt"), "topic": "lines", "tasks.max": "1"}
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if g%2 == 0 {
					if _, _, err := cl.PutConfig(context.Background(), "src", config); err != nil {
						errs <- fmt.Errorf("PUT: %w", err)
						return
					}
				} else if err := cl.Delete(context.Background(), "src"); err != nil && !client.IsNotFound(err) {
					errs <- fmt.Errorf("DELETE: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Kafka's PUT refuses a name that is not the connector's; a PATCH that
// would change it gets the same 400 (one that removes it, validation's),
// and the connector keeps its name.
func TestPatchChangingNameIs400(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, nil)
	postFileSource(w, "src", filepath.Join(dir, "in.txt"))
	for body, msg := range map[string]string{
		`{"name":"other"}`: "Connector name configuration (other) doesn't match connector name in the URL (src)",
		`{"name":null}`:    `Missing required configuration \"name\" which has no default value.`,
	} {
		code, got := w.do("PATCH", "/connectors/src/config", body)
		if code != 400 || !strings.Contains(got, `"error_code":400`) || !strings.Contains(got, msg) {
			t.Errorf("PATCH %s: %d %s, want 400 %q", body, code, got, msg)
		}
	}
	w.must(200, "PATCH", "/connectors/src/config", `{"name":"src","topic":"lines2"}`)
	if body := w.must(200, "GET", "/connectors/src/config", ""); !strings.Contains(body, `"name":"src"`) || !strings.Contains(body, `"topic":"lines2"`) {
		t.Fatalf("config after a PATCH naming the connector itself: %s", body)
	}
}

// In a cluster the leader applies each PATCH to the config topic's latest
// state: ten at once through each of two workers (one leads, the other
// forwards to it) keep all twenty keys, as both workers read them.
func TestDistributedParallelPatchesKeepEveryKey(t *testing.T) {
	c := startCluster(t, 2, nil)
	w0, w1 := c.healthy(0), c.healthy(1)
	postFileSource(w0, "src", filepath.Join(t.TempDir(), "in.txt"))
	via0, via1 := patchKeys("w0", 10), patchKeys("w1", 10)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); patchInParallel(t, "src", via0, w0) }()
	go func() { defer wg.Done(); patchInParallel(t, "src", via1, w1) }()
	wg.Wait()
	all := append(via0, via1...)
	for _, w := range []*testWorker{w0, w1} {
		eventually(t, "every key read by "+w.s.RESTAddr, func() bool {
			cl, _ := client.New("http://" + w.s.RESTAddr)
			config, err := cl.Config(context.Background(), "src")
			if err != nil {
				return false
			}
			for _, k := range all {
				if config[k] != "v-"+k {
					return false
				}
			}
			return true
		})
	}

	// Both workers give the leader's answers to a PATCH it refuses.
	for _, w := range []*testWorker{w0, w1} {
		code, body := w.do("PATCH", "/connectors/missing/config", `{"a":"b"}`)
		if code != 404 || !strings.Contains(body, "Connector missing not found") {
			t.Fatalf("PATCH of a missing connector: %d %s", code, body)
		}
		code, body = w.do("PATCH", "/connectors/src/config", `{"name":"other"}`)
		if code != 400 || !strings.Contains(body, "doesn't match connector name in the URL (src)") {
			t.Fatalf("PATCH renaming the connector: %d %s", code, body)
		}
	}
}
