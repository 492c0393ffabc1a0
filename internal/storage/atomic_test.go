package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFileAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := string(mustReadFile(t, path)); got != "two" {
		t.Errorf("content %q", got)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("stray files: %v", entries)
	}
}

func TestWriteFileAtomicRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := WriteFileAtomic("rel", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := string(mustReadFile(t, "rel")); got != "x" {
		t.Errorf("content %q", got)
	}
}

func TestWriteFileAtomicFailureKeepsOldContentAndCleansUp(t *testing.T) {
	dir := t.TempDir()
	// Renaming a file over a non-empty directory fails for every user,
	// root included.
	path := filepath.Join(dir, "f")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(path, []byte("new"), 0o644)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want an error naming %s", err, path)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "f" {
		t.Errorf("temp file not cleaned up: %v", entries)
	}

	missing := filepath.Join(dir, "no-such-dir", "f")
	if err := WriteFileAtomic(missing, []byte("x"), 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}
