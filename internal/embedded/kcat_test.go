package embedded

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// librdkafka's clients (kcat here) talk to the embedded broker as to any
// Kafka: produce, consume, list metadata.
func TestKcatTalksToEmbeddedBroker(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kcat is not installed; .ci/run installs it")
		}
		t.Skip("kcat is not installed")
	}
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	produce := exec.Command("kcat", "-b", b.Addr(), "-P", "-t", "kcat-test")
	produce.Stdin = strings.NewReader("one\ntwo\nthree\n")
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	out, err := exec.Command("kcat", "-b", b.Addr(), "-C", "-t", "kcat-test", "-e", "-q").Output()
	if err != nil {
		t.Fatalf("kcat -C: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "one\ntwo\nthree" {
		t.Fatalf("kcat consumed %q", got)
	}
}
