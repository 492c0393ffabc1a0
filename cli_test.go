package connectd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// --cpuprofile writes its profile however the command ends, here with an
// error.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.pprof")
	cmd, stop := Command(Builtin())
	cmd.SetArgs([]string{"standalone", "--cpuprofile", path, filepath.Join(dir, "missing.properties")})
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err == nil {
		t.Fatal("a missing worker.properties was accepted")
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is gzipped protobuf.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s is not a pprof profile: % x", path, b[:min(len(b), 8)])
	}
}

// execute runs the command line with args and returns what it printed
// on its standard output, and its error.
func execute(args ...string) (string, error) {
	cmd, stop := Command(Builtin())
	defer stop()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersionFlag(t *testing.T) {
	got, err := execute("--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "connectd version ") || !strings.Contains(got, "go1.") {
		t.Errorf("--version printed %q", got)
	}
}
