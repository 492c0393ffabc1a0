package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
)

// Direct mode against a distributed connectd worker's offsets topic: the
// same offsets as the REST API, changes refused while the status topic
// says the connector runs, and records written with the key bytes already
// on the topic.
func TestDirectMode(t *testing.T) {
	t.Parallel()
	bootstrap, c, rc, in := directSource(t, "")
	topic := newConsumer(t, bootstrap, "lines")
	direct := []string{"--direct", "--bootstrap-server", bootstrap}
	part := fmt.Sprintf(`{"filename":%q}`, in)

	rest := c.ok("offsets", "get", "src", "-o", "json")
	r := c.ok(append([]string{"offsets", "get", "src", "-o", "json"}, direct...)...)
	if r.stdout != rest.stdout {
		t.Errorf("direct get:\n%s\nREST get:\n%s", r.stdout, rest.stdout)
	}
	set := append([]string{"offsets", "set", "src", "--partition", part, "--offset", `{"position":45}`}, direct...)
	r = c.fail(set...)
	mustContain(t, "refusal", r.stderr, "Error: connector src is RUNNING according to connect-status: a running connector would overwrite the offsets",
		"hint: stop it first (connectctl stop src, against a worker), or pass --force if the status is stale")
	r = c.ok(append(set, "--dry-run")...)
	mustContain(t, "dry run", r.stdout, "- "+part+` {"position":90}`, "+ "+part+` {"position":45}`,
		"connector src is RUNNING according to the status topic: the change would be refused without --force", "dry run: nothing changed")

	c.ok("stop", "src")
	eventually(t, "STOPPED in the status topic", func() bool { return state(rc, "src") == "STOPPED" })
	r = c.ok(set...)
	mustContain(t, "direct set", r.stdout, "changed (1 partition) and verified", "put them back with: connectctl offsets undo src")
	// The worker sees the record written to its topic.
	eventually(t, "the worker sees position 45", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":45`) })
	c.ok("resume", "src")
	if got := topic.until(15); !slices.Equal(got[10:], lineRange(6, 10)) {
		t.Fatalf("after a direct set to 45 the source emitted %v", got[10:])
	}
	c.ok("stop", "src")
	eventually(t, "stopped at 90", func() bool {
		return state(rc, "src") == "STOPPED" && strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`)
	})
	r = c.ok(append([]string{"offsets", "history", "src"}, direct...)...)
	mustContain(t, "direct history", r.stdout, "set")
	// The history is per place: the worker's URL has none.
	r = c.ok("offsets", "history", "src")
	mustContain(t, "REST history", r.stdout, "no offsets saved for connector ")
	r = c.ok(append([]string{"offsets", "undo", "src"}, direct...)...)
	mustContain(t, "direct undo", r.stdout, "nothing to change") // back to 90, where it is
	r = c.ok(append([]string{"offsets", "reset", "src"}, direct...)...)
	mustContain(t, "direct reset", r.stdout, "- "+part+` {"position":90}`, "changed (1 partition) and verified")
	eventually(t, "the worker sees the reset", func() bool { return offsetsJSON(t, rc, "src") == `{"offsets":[]}` })

	// A record as a Java worker writes it, with a two-key partition in an
	// order of its own: read, and changed under the same key bytes.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("connect-offsets"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	key := `["legacy",{"table":"orders","protocol":"1"}]`
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Key: []byte(key), Value: []byte(`{"incrementing":1042,"timestamp":1720627800000}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r = c.ok(append([]string{"offsets", "get", "legacy"}, direct...)...)
	mustContain(t, "legacy get", r.stdout, `{"protocol":"1","table":"orders"}   {"incrementing":1042,"timestamp":1720627800000}`)
	r = c.ok(append([]string{"offsets", "set", "legacy", "--partition", `{"protocol":"1","table":"orders"}`, "--offset", `{"incrementing":500,"timestamp":1720540000000}`}, direct...)...)
	mustContain(t, "legacy set", r.stdout, "changed (1 partition) and verified")
	var keys []string
	rd, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("connect-offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !slices.Contains(keys, key+` {"incrementing":500,"timestamp":1720540000000}`) && ctx.Err() == nil {
		rd.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if strings.HasPrefix(string(r.Key), `["legacy"`) {
				keys = append(keys, string(r.Key)+" "+string(r.Value))
			}
		})
	}
	if len(keys) != 2 {
		t.Errorf("records of legacy: %q", keys)
	}
	r = c.fail(append([]string{"offsets", "get", "src", "--offsets-topic", "nope"}, direct...)...)
	mustContain(t, "missing topic", r.stderr, "hint: name the workers' offset.storage.topic with --offsets-topic")
}

// A connector with an offsets topic of its own (offsets.storage.topic):
// direct mode finds it in the workers' config topic and reads and writes
// the offsets there, as the workers do.
func TestDirectModeOwnOffsetsTopic(t *testing.T) {
	t.Parallel()
	bootstrap, c, rc, in := directSource(t, "offsets.storage.topic=src-offsets\n")
	c.ok("stop", "src")
	eventually(t, "src stopped", func() bool { return state(rc, "src") == "STOPPED" })

	r := c.ok("offsets", "get", "src", "--direct", "--bootstrap-server", bootstrap)
	mustContain(t, "offsets get --direct", r.stdout, `{"position":90}`)
	mustContain(t, "offsets get --direct", r.stderr, "connector src keeps its offsets in a topic of its own: src-offsets (offsets.storage.topic)")
	c.ok("offsets", "set", "src", "--direct", "--bootstrap-server", bootstrap, "--yes",
		"--partition", fmt.Sprintf(`{"filename":%q}`, in), "--offset", `{"position":45}`)
	eventually(t, "the worker reads the offset written in the connector's topic", func() bool {
		return strings.Contains(offsetsJSON(t, rc, "src"), `"position":45`)
	})
}

// directSource starts a broker and a distributed worker, and a
// FileStreamSource "src" (with extra properties lines) of ten lines into
// "lines", once its offset says it read them all.
func directSource(t *testing.T, extra string) (bootstrap string, c *cli, rc *client.Client, in string) {
	t.Helper()
	bootstrap = startBroker(t)
	d := distributed(t, bootstrap)
	url := "http://" + d.RESTAddr
	c, rc = newCLI(t, url), restClient(t, url)
	in = filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\n"+extra+"file="+in+"\n"))
	newConsumer(t, bootstrap, "lines").until(10)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })
	return bootstrap, c, rc, in
}
