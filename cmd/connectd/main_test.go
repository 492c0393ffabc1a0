package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCgroupMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		content string
		want    int64
		ok      bool
	}{
		{"536870912\n", 536870912, true},
		{"max\n", 0, false},
		{"", 0, false},
	} {
		path := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := cgroupMemoryLimit(path); got != c.want || ok != c.ok {
			t.Errorf("memory.max %q: %d, %v; want %d, %v", c.content, got, ok, c.want, c.ok)
		}
	}
	if _, ok := cgroupMemoryLimit(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file gave a limit")
	}
}
