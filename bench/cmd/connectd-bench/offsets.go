package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/connectd/connectd/internal/storage"
)

const offsetsConnector = "offsets-source"

// offsetsResult holds every request of figure 3.
type offsetsResult struct {
	partitions int
	gets       []time.Duration
	bodyBytes  int
	prepare    time.Duration
}

// benchOffsets runs figure 3: an offsets file holding partitions source
// partitions for one connector, a worker reading it, the connector created
// STOPPED, and gets timed GET /connectors/{name}/offsets requests.
func benchOffsets(bin, work string, partitions, gets int) (res *offsetsResult, err error) {
	res = &offsetsResult{partitions: partitions}
	dir := filepath.Join(work, "offsets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	offsetsPath := filepath.Join(dir, "connect.offsets")
	t0 := time.Now()
	if err := writeOffsets(offsetsPath, partitions); err != nil {
		return nil, err
	}
	res.prepare = time.Since(t0)
	logf("offsets: wrote %d source partitions for %s in %v", partitions, offsetsConnector, res.prepare.Round(time.Millisecond))

	p, err := startWorker(bin, dir, map[string]string{"offset.storage.file.filename": offsetsPath})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := p.stop(); err == nil {
			err = serr
		}
	}()
	if _, err := p.waitReady(60 * time.Second); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	create, _ := json.Marshal(map[string]any{
		"name": offsetsConnector,
		"config": map[string]string{
			"connector.class": "FileStreamSource",
			"file":            "/data/file-0.txt",
			"topic":           "offsets-bench",
		},
		"initial_state": "STOPPED",
	})
	if _, err := p.must(ctx, 201, "POST", "/connectors", string(create)); err != nil {
		return nil, err
	}
	url := p.rest + "/connectors/" + offsetsConnector + "/offsets"
	var bodies [][]byte
	for i := 1; i <= gets; i++ {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		// Read into a buffer of the body's length, as a client that
		// keeps the body does, rather than one grown as it fills.
		var body bytes.Buffer
		if resp.ContentLength > 0 {
			body.Grow(int(resp.ContentLength))
		}
		_, err = io.Copy(&body, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: status %d: %.500s", url, resp.StatusCode, body.Bytes())
		}
		res.gets = append(res.gets, d)
		res.bodyBytes = body.Len()
		bodies = append(bodies, body.Bytes())
		logf("offsets GET %d: %s (%s body)", i, ms(d), mb(int64(body.Len())))
	}
	// Checked after the timed requests, so that decoding 7 MB of JSON
	// here does not leave garbage to collect during the next request.
	for i, b := range bodies {
		if err := checkOffsets(b, partitions); err != nil {
			return nil, fmt.Errorf("GET %d: %w", i+1, err)
		}
	}
	logf("offsets: every body lists the %d partitions with their positions", partitions)
	return res, nil
}

// writeOffsets stores n partitions {"filename":"/data/file-<i>.txt"} →
// {"position": i} for offsetsConnector in one Put.
func writeOffsets(path string, n int) error {
	store, err := storage.OpenFileOffsetStore(path)
	if err != nil {
		return err
	}
	entries := make([]storage.PartitionOffset, n)
	for i := range entries {
		entries[i] = storage.PartitionOffset{
			Partition: map[string]any{"filename": fmt.Sprintf("/data/file-%d.txt", i)},
			Offset:    map[string]any{"position": int64(i)},
		}
	}
	return store.Put(offsetsConnector, entries)
}

// checkOffsets checks that the body lists want distinct partitions, each
// with the position its file name says.
func checkOffsets(body []byte, want int) error {
	var got struct {
		Offsets []struct {
			Partition struct {
				Filename string `json:"filename"`
			} `json:"partition"`
			Offset struct {
				Position int64 `json:"position"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Errorf("offsets body: %w", err)
	}
	if len(got.Offsets) != want {
		return fmt.Errorf("offsets body has %d entries, want %d", len(got.Offsets), want)
	}
	seen := make(map[string]bool, want)
	for _, o := range got.Offsets {
		if o.Partition.Filename != fmt.Sprintf("/data/file-%d.txt", o.Offset.Position) || seen[o.Partition.Filename] {
			return fmt.Errorf("unexpected offsets entry %s → %d", o.Partition.Filename, o.Offset.Position)
		}
		seen[o.Partition.Filename] = true
	}
	return nil
}
