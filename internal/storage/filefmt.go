package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/connectd/connectd/internal/javajson"
)

// fileVersion is the only on-disk version this build reads or writes.
// Bump it for any change an older build would misread: refusing the file
// is better than misinterpreting it.
const fileVersion = 1

// CorruptFileError reports a store file that exists but cannot be used.
// Open never falls back to an empty store in that case, since for offsets
// that would silently rewind or skip a source; the operator has to look.
type CorruptFileError struct {
	File   string // what the file is, e.g. "offsets file"
	Path   string
	Reason string
}

func (e *CorruptFileError) Error() string {
	return fmt.Sprintf("%s %s is corrupted: %s", e.File, e.Path, e.Reason)
}

// javaSerializationMagic starts every Java ObjectOutputStream, which is
// what Apache Kafka's FileOffsetBackingStore writes. Recognizing it lets us
// say what the file is instead of "invalid JSON".
var javaSerializationMagic = []byte{0xac, 0xed}

// decodeEnvelope checks the {"format":..,"version":..,<list>:[..]} wrapper
// shared by both store files and returns the list.
func decodeEnvelope(data []byte, format, list string) ([]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		// Our writer never leaves an empty file, so this is damage (or a
		// file created by something else), not a first start.
		return nil, fmt.Errorf("the file is empty")
	}
	if bytes.HasPrefix(data, javaSerializationMagic) {
		return nil, fmt.Errorf("it is a Java-serialized file (as Apache Kafka Connect writes), not the %s format; it must be converted first", format)
	}
	v, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("top level is %s, want an object", jsonKind(v))
	}
	if err := checkFields(top, "format", "version", list); err != nil {
		return nil, err
	}
	if f, _ := top["format"].(string); f != format {
		return nil, fmt.Errorf("format is %s, want %q", describe(top["format"]), format)
	}
	if ver, ok := top["version"].(int64); !ok || ver != fileVersion {
		return nil, fmt.Errorf("unsupported version %s (this build reads version %d)", describe(top["version"]), fileVersion)
	}
	items, ok := top[list].([]any)
	if !ok {
		return nil, fmt.Errorf("%q is %s, want an array", list, jsonKind(top[list]))
	}
	return items, nil
}

// parseJSON is javajson.Unmarshal, but also refusing trailing garbage:
// javajson only notices trailing data that is itself a valid JSON token,
// so `{} x` would otherwise load. For a store file that would hide damage.
func parseJSON(data []byte) (any, error) {
	if !json.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err // encoding/json says what and where
		}
		return nil, errors.New("invalid JSON")
	}
	return javajson.Unmarshal(data)
}

// checkFields requires obj to have exactly the given fields. Unknown
// fields are refused rather than ignored: a field we do not understand may
// carry meaning that dropping on the next save would lose.
func checkFields(obj map[string]any, fields ...string) error {
	for _, f := range fields {
		if _, ok := obj[f]; !ok {
			return fmt.Errorf("missing field %q", f)
		}
	}
	if len(obj) != len(fields) {
		var extra []string
		for k := range obj {
			known := false
			for _, f := range fields {
				known = known || k == f
			}
			if !known {
				extra = append(extra, fmt.Sprintf("%q", k))
			}
		}
		sort.Strings(extra)
		return fmt.Errorf("unknown field %s", strings.Join(extra, ", "))
	}
	return nil
}

// describe renders a decoded JSON value for an error message.
func describe(v any) string {
	b, err := javajson.Marshal(v)
	if err != nil || len(b) > 80 {
		return jsonKind(v)
	}
	return string(b)
}

// indentJSON pretty-prints compact JSON for humans. json.Indent copies
// tokens verbatim, so numbers keep javajson's spelling (1.0 stays a
// double) and strings keep their escaping.
func indentJSON(compact []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(compact) + len(compact)/2)
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// loadFile reads a store's file and hands its bytes to load. A missing
// file is a first start and loads nothing; a file that cannot be read or
// loaded is an error naming it.
func loadFile(path, kind string, load func([]byte) error) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s %s: %w", kind, path, err)
	}
	if err := load(data); err != nil {
		return &CorruptFileError{File: kind, Path: path, Reason: err.Error()}
	}
	return nil
}
