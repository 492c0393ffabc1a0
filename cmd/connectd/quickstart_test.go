package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/properties"
	"github.com/connectd/connectd/internal/servertest"
	"github.com/connectd/connectd/internal/worker"
)

// TestMain lets a test run this binary as connectd itself: with
// CONNECTD_TEST_MAIN=1 it is main() with the arguments after "--".
func TestMain(m *testing.M) {
	if os.Getenv("CONNECTD_TEST_MAIN") == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"connectd"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The two examples of the README run on one machine one after the other:
// they must not share offsets, connectors or broker data, and nothing they
// write may be a tracked file.
func TestExamplesKeepTheirStateApart(t *testing.T) {
	root := filepath.Join("..", "..", "examples")
	seen := map[string]string{}
	for _, ex := range []string{"quickstart", "jdbc", "shipping"} {
		props, err := properties.ParseFile(filepath.Join(root, ex, "worker.properties"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := worker.ParseConfig(props)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{cfg.OffsetFile, cfg.ConnectorsFile, cfg.EmbeddedDataDir} {
			if other, ok := seen[p]; ok {
				t.Errorf("%s and %s both keep state in %s", other, ex, p)
			}
			seen[p] = ex
			if !strings.HasPrefix(p, "connectd-data/"+ex+"/") {
				t.Errorf("%s keeps state in %s, outside connectd-data/%s/", ex, p, ex)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.json"))
	more, _ := filepath.Glob(filepath.Join(root, "*", "*.properties"))
	for _, f := range append(files, more...) {
		if filepath.Base(f) == "worker.properties" || strings.Contains(f, "cluster") {
			continue
		}
		_, cfg, _, err := properties.LoadConnectorConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"file", "connection.url"} {
			v, ok := cfg[k]
			if k == "connection.url" && !strings.HasPrefix(v, "jdbc:sqlite:") {
				continue // a database server's, not a file of the checkout
			}
			if ok && !strings.HasPrefix(strings.TrimPrefix(v, "jdbc:sqlite:"), "connectd-data/") {
				t.Errorf("%s: %s=%s is not under connectd-data/, which git ignores", f, k, v)
			}
		}
	}
}

// The quickstart as the README runs it, from a copy of the examples on
// free ports: the input's lines reach the sink's file, a line appended
// to the copied input follows, and a SIGTERM is logged as the stop it is.
func TestQuickstartPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the worker as a process")
	}
	dir := t.TempDir()
	qs := filepath.Join(dir, "examples", "quickstart")
	if err := os.MkdirAll(qs, 0o755); err != nil {
		t.Fatal(err)
	}
	restPort, kafkaPort := servertest.FreePort(t), servertest.FreePort(t)
	for _, name := range []string{"worker.properties", "file-source.properties", "file-sink.json", "input.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.ReplaceAll(string(b), "listeners=http://:8083", fmt.Sprintf("listeners=http://127.0.0.1:%d", restPort))
		s = strings.ReplaceAll(s, "embedded.kafka.listeners=127.0.0.1:9092", fmt.Sprintf("embedded.kafka.listeners=127.0.0.1:%d", kafkaPort))
		if err := os.WriteFile(filepath.Join(qs, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What run.sh does before starting the worker.
	in := filepath.Join(dir, "connectd-data", "quickstart", "input.txt")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		t.Fatal(err)
	}
	original, _ := os.ReadFile(filepath.Join(qs, "input.txt"))
	if err := os.WriteFile(in, original, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "standalone",
		"examples/quickstart/worker.properties", "examples/quickstart/file-source.properties", "examples/quickstart/file-sink.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONNECTD_TEST_MAIN=1")
	proc := servertest.StartProcess(t, cmd)

	out := filepath.Join(dir, "connectd-data", "quickstart", "output.txt")
	want := strings.Split(strings.TrimSpace(string(original)), "\n")
	servertest.Eventually(t, "the input's lines in output.txt", 30*time.Second, func() bool {
		return len(servertest.ReadLines(out)) == len(want)
	})
	servertest.WriteLines(t, in, "order-1004,gizmo,7")
	servertest.Eventually(t, "the appended line in output.txt", 30*time.Second, func() bool {
		got := servertest.ReadLines(out)
		return len(got) == len(want)+1 && got[len(want)] == "order-1004,gizmo,7"
	})
	if after, _ := os.ReadFile(filepath.Join(qs, "input.txt")); !bytes.Equal(after, original) {
		t.Error("the quickstart changed examples/quickstart/input.txt")
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/connectors", restPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	proc.Stop(t, syscall.SIGTERM, 30*time.Second)
	for _, line := range []string{`msg="Kafka Connect stopping" cause="terminated signal received"`, `msg="Kafka Connect stopped"`} {
		if !strings.Contains(proc.Logs.String(), line) {
			t.Errorf("the log lacks %s", line)
		}
	}
}
