package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The chapter's pipeline on one screen: a file source, an application's
// consumer group between it and a file sink, each with its position or
// lag.
func TestPipeline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	bootstrap := w.Broker.Addr()
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n"))
	c.ok("apply", "-f", writeFile(t, "snk.properties", "name=snk\nconnector.class=FileStreamSink\ntopics=lines\nfile="+filepath.Join(dir, "out.txt")+"\n"))
	newConsumer(t, bootstrap, "lines").until(10)
	eventually(t, "the source at 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })
	eventually(t, "the sink at 10", func() bool { return strings.Contains(offsetsJSON(t, rc, "snk"), `"kafka_offset":10`) })
	// An application that read 4 of the 10 records and stopped.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var os kadm.Offsets
	os.AddOffset("lines", 0, 4, -1)
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), "billing", os); err != nil {
		t.Fatal(err)
	}

	r := c.ok("pipeline", "--bootstrap-server", bootstrap)
	mustContain(t, "pipeline", r.stdout, "SURFACE", "POSITION / LAG",
		"source connector", `{"position":90}`, "consumer group", "billing", "lag 6", "sink connector", "snk", "lag 0")
	lines := strings.Split(r.stdout, "\n")
	if len(lines) < 4 || !strings.Contains(lines[1], "src") || !strings.Contains(lines[2], "billing") || !strings.Contains(lines[3], "snk") {
		t.Errorf("not in the order data flows (source, group, sink):\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "connect-snk") {
		t.Errorf("the sink's own group is listed as an application:\n%s", r.stdout)
	}

	r = c.ok("pipeline", "--bootstrap-server", bootstrap, "--connector", "snk", "--no-groups", "-o", "json")
	var rows []pipelineRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if len(rows) != 1 || rows[0].Surface != "sink" || rows[0].Group != "connect-snk" || rows[0].Lag == nil || *rows[0].Lag != 0 || rows[0].State != "RUNNING" {
		t.Errorf("json: %s", r.stdout)
	}
	// Without Kafka's address the connectors still show, the lag says why
	// it is missing.
	r = c.ok("pipeline")
	mustContain(t, "no Kafka", r.stdout, `{"position":90}`, "lag: pass --bootstrap-server")
	r = c.fail("pipeline", "--connector", "nope")
	mustContain(t, "unknown", r.stderr, "connector nope not found")
}
