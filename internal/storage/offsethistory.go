package storage

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/javajson"
)

// The offsets history is what a standalone worker keeps of its source
// offset commits, beside the offsets file, so that "where was this
// connector at 14:30?" has an answer there too (a distributed worker's
// answer is the offsets topic's records). It is JSON lines: a header, then
// one commit per line, appended after the offsets file is saved:
//
//	{"format":"connectd.offsets.history","version":1,"truncated":false}
//	{"time":1720621752000,"connector":"src","partition":{"filename":"in.txt"},"offset":{"position":90}}
//
// A null offset is a reset. The history is bounded: past MaxRecords lines
// the oldest half is dropped (the file is rewritten, and "truncated" says
// so), as compaction drops an offsets topic's old records.

const (
	historyFormat = "connectd.offsets.history"
	historyFile   = "offsets history"
	// DefaultHistoryRecords bounds a standalone worker's offsets history.
	DefaultHistoryRecords = 10000
)

// OffsetCommit is one commit of a source partition's offset; a nil Offset
// removed it.
type OffsetCommit struct {
	Time      time.Time
	Connector string
	Partition map[string]any
	Offset    map[string]any
}

// OffsetHistory is the standalone worker's offsets history file. It is
// safe for concurrent use.
type OffsetHistory struct {
	path string
	max  int

	mu        sync.Mutex
	count     int
	truncated bool
}

// OpenOffsetHistory checks the history file at path (a missing one is
// empty) and opens it for appending, at most max commits. A last line
// without its newline is a write the worker did not finish before it
// died, and is dropped; any other damage is an error naming the file.
func OpenOffsetHistory(path string, max int) (*OffsetHistory, error) {
	h := &OffsetHistory{path: path, max: max}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", historyFile, path, err)
	}
	commits, truncated, torn, err := parseHistory(data)
	if err != nil {
		return nil, &CorruptFileError{File: historyFile, Path: path, Reason: err.Error()}
	}
	h.count, h.truncated = len(commits), truncated
	if torn {
		if err := h.rewrite(commits); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Path is the history's file.
func (h *OffsetHistory) Path() string { return h.path }

// Append records commits made at t.
func (h *OffsetHistory) Append(t time.Time, commits []OffsetCommit) error {
	if len(commits) == 0 {
		return nil
	}
	var b []byte
	for _, c := range commits {
		c.Time = t
		line, err := encodeCommit(c)
		if err != nil {
			return fmt.Errorf("%s %s: %w", historyFile, h.path, err)
		}
		b = append(b, line...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.count+len(commits) > h.max {
		all, err := h.readLocked()
		if err != nil {
			return err
		}
		for _, c := range commits {
			c.Time = t
			all = append(all, c)
		}
		// Keep the newest half, so that rewriting stays rare: linear in
		// the commits recorded.
		h.truncated = true
		return h.rewrite(all[len(all)-h.max/2:])
	}
	if h.count == 0 && !h.truncated {
		if _, err := os.Stat(h.path); errors.Is(err, fs.ErrNotExist) {
			b = append(historyHeader(false), b...)
		}
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, offsetsPerm)
	if err != nil {
		return fmt.Errorf("%s: %w", historyFile, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", historyFile, h.path, err)
	}
	h.count += len(commits)
	return nil
}

// Read returns the connector's commits, oldest first, and whether older
// ones were dropped.
func (h *OffsetHistory) Read(connector string) ([]OffsetCommit, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	all, err := h.readLocked()
	if err != nil {
		return nil, false, err
	}
	var out []OffsetCommit
	for _, c := range all {
		if c.Connector == connector {
			out = append(out, c)
		}
	}
	return out, h.truncated, nil
}

func (h *OffsetHistory) readLocked() ([]OffsetCommit, error) {
	data, err := os.ReadFile(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", historyFile, h.path, err)
	}
	commits, _, _, err := parseHistory(data)
	if err != nil {
		return nil, &CorruptFileError{File: historyFile, Path: h.path, Reason: err.Error()}
	}
	return commits, nil
}

// rewrite replaces the file with commits, atomically.
func (h *OffsetHistory) rewrite(commits []OffsetCommit) error {
	b := historyHeader(h.truncated)
	for _, c := range commits {
		line, err := encodeCommit(c)
		if err != nil {
			return fmt.Errorf("%s %s: %w", historyFile, h.path, err)
		}
		b = append(b, line...)
	}
	if err := WriteFileAtomic(h.path, b, offsetsPerm); err != nil {
		return err
	}
	h.count = len(commits)
	return nil
}

func historyHeader(truncated bool) []byte {
	return fmt.Appendf(nil, "{\"format\":\"%s\",\"version\":%d,\"truncated\":%t}\n", historyFormat, fileVersion, truncated)
}

// encodeCommit is one line: the maps as javajson writes them, so that a
// Java Long and a Double read back as they were.
func encodeCommit(c OffsetCommit) ([]byte, error) {
	name, err := javajson.Marshal(c.Connector)
	if err != nil {
		return nil, err
	}
	partition, err := javajson.Marshal(c.Partition)
	if err != nil {
		return nil, err
	}
	offset := []byte("null")
	if c.Offset != nil {
		if offset, err = javajson.Marshal(c.Offset); err != nil {
			return nil, err
		}
	}
	b := fmt.Appendf(nil, `{"time":%d,"connector":%s,"partition":%s,"offset":%s}`, c.Time.UnixMilli(), name, partition, offset)
	return append(b, '\n'), nil
}

// parseHistory reads a history file: its commits, whether it was
// truncated, and whether its last line was torn (and dropped).
func parseHistory(data []byte) (commits []OffsetCommit, truncated, torn bool, err error) {
	lines := bytes.Split(data, []byte("\n"))
	if last := lines[len(lines)-1]; len(last) > 0 {
		// No newline after it: the write did not finish.
		torn = true
	}
	lines = lines[:len(lines)-1]
	if len(lines) == 0 {
		if torn {
			return nil, false, true, nil // only a torn header: nothing was recorded
		}
		return nil, false, false, errors.New("the file is empty")
	}
	head, err := parseJSON(lines[0])
	if err != nil {
		return nil, false, false, fmt.Errorf("line 1: not valid JSON: %v", err)
	}
	top, ok := head.(map[string]any)
	if !ok {
		return nil, false, false, fmt.Errorf("line 1 is %s, want the header object", jsonKind(head))
	}
	if err := checkFields(top, "format", "version", "truncated"); err != nil {
		return nil, false, false, fmt.Errorf("line 1: %v", err)
	}
	if f, _ := top["format"].(string); f != historyFormat {
		return nil, false, false, fmt.Errorf("format is %s, want %q", describe(top["format"]), historyFormat)
	}
	if ver, ok := top["version"].(int64); !ok || ver != fileVersion {
		return nil, false, false, fmt.Errorf("unsupported version %s (this build reads version %d)", describe(top["version"]), fileVersion)
	}
	if truncated, ok = top["truncated"].(bool); !ok {
		return nil, false, false, fmt.Errorf("line 1: truncated is %s, want true or false", jsonKind(top["truncated"]))
	}
	for i, line := range lines[1:] {
		c, err := decodeCommit(line)
		if err != nil {
			return nil, false, false, fmt.Errorf("line %d: %v", i+2, err)
		}
		commits = append(commits, c)
	}
	return commits, truncated, torn, nil
}

func decodeCommit(line []byte) (OffsetCommit, error) {
	v, err := parseJSON(line)
	if err != nil {
		return OffsetCommit{}, fmt.Errorf("not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return OffsetCommit{}, fmt.Errorf("%s, want a commit object", jsonKind(v))
	}
	if err := checkFields(obj, "time", "connector", "partition", "offset"); err != nil {
		return OffsetCommit{}, err
	}
	ms, ok := obj["time"].(int64)
	if !ok {
		return OffsetCommit{}, fmt.Errorf("time is %s, want milliseconds", describe(obj["time"]))
	}
	c := OffsetCommit{Time: time.UnixMilli(ms)}
	if c.Connector, ok = obj["connector"].(string); !ok {
		return OffsetCommit{}, fmt.Errorf("connector is %s, want a string", jsonKind(obj["connector"]))
	}
	if c.Partition, ok = obj["partition"].(map[string]any); !ok {
		return OffsetCommit{}, fmt.Errorf("partition is %s, want an object", jsonKind(obj["partition"]))
	}
	if obj["offset"] != nil {
		if c.Offset, ok = obj["offset"].(map[string]any); !ok {
			return OffsetCommit{}, fmt.Errorf("offset is %s, want an object or null", jsonKind(obj["offset"]))
		}
	}
	return c, nil
}
