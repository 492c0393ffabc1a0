package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/servertest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The example as its README runs it: built with go build, started on the
// embedded broker, its connector created through REST; its records reach
// Kafka and its offset is the REST API's.
func TestCustomConnectorRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example as a process")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "custom-connector")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	restPort, kafkaPort := servertest.FreePort(t), servertest.FreePort(t)
	props := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(props, fmt.Appendf(nil, `listeners=http://127.0.0.1:%d
embedded.kafka.listeners=127.0.0.1:%d
embedded.kafka.data.dir=%s
offset.storage.file.filename=%s
offset.flush.interval.ms=100
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
`, restPort, kafkaPort, filepath.Join(dir, "kafka"), filepath.Join(dir, "connect.offsets")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "standalone", props)
	proc := servertest.StartProcess(t, cmd)

	addr := fmt.Sprintf("127.0.0.1:%d", restPort)
	servertest.Eventually(t, "the REST API answering", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/connectors")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	rest := servertest.REST{T: t, Addr: addr}
	rest.Must(201, "POST", "/connectors", `{"name":"x","config":{"connector.class":"CounterSource","topic":"counts","count":"5"}}`)

	cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", kafkaPort)), kgo.ConsumeTopics("counts"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(got) < 5 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if want := []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Fatalf("records %q, want %q", got, want)
	}

	want := `{"offsets":[{"partition":{"counter":"x"},"offset":{"n":5}}]}`
	servertest.Eventually(t, "the offset "+want, 30*time.Second, func() bool {
		return rest.Must(200, "GET", "/connectors/x/offsets", "") == want
	})

	proc.Stop(t, syscall.SIGTERM, 30*time.Second)
}
