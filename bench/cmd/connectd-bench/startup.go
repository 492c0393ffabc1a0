package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// startupResult holds every run of figure 2.
type startupResult struct {
	ready []time.Duration // exec to first 200 from GET /
	rss   []int64         // VmRSS after the idle wait, bytes
	idle  time.Duration
}

// benchStartup runs figure 2: runs times, exec the binary with a fresh
// data directory and free ports, time the first 200 from GET /, let it
// idle, read its VmRSS, stop it.
func benchStartup(bin, work string, runs int, idle time.Duration) (*startupResult, error) {
	res := &startupResult{idle: idle}
	for i := 1; i <= runs; i++ {
		if err := startupRun(bin, filepath.Join(work, fmt.Sprintf("startup-%d", i)), i, res); err != nil {
			return nil, fmt.Errorf("startup run %d: %w", i, err)
		}
	}
	return res, nil
}

func startupRun(bin, dir string, i int, res *startupResult) (err error) {
	p, err := startWorker(bin, dir, nil)
	if err != nil {
		return err
	}
	defer func() {
		if serr := p.stop(); err == nil {
			err = serr
		}
		os.RemoveAll(dir)
	}()
	ready, err := p.waitReady(30 * time.Second)
	if err != nil {
		return err
	}
	d := ready.Sub(p.started)
	time.Sleep(res.idle)
	rss, err := p.rssBytes()
	if err != nil {
		return err
	}
	res.ready = append(res.ready, d)
	res.rss = append(res.rss, rss)
	logf("startup run %d: first 200 from GET / after %s, VmRSS after %v idle %s", i, ms(d), res.idle, mb(rss))
	return nil
}
