package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/client"
)

// A FileStreamSource moves from one connectd worker (with its own broker)
// to another while lines keep arriving: after the old one is stopped and
// the connector copied, the new one carries on exactly where the old one
// stopped: no line missing, none twice.
func TestCopyMigratesSource(t *testing.T) {
	t.Parallel()
	old := standalone(t, t.TempDir(), nil)
	neu := standalone(t, t.TempDir(), nil)
	oldURL, newURL := "http://"+old.RESTAddr, "http://"+neu.RESTAddr
	c := newCLI(t, "")
	oldC, newC := restClient(t, oldURL), restClient(t, newURL)
	in := filepath.Join(t.TempDir(), "events.txt")
	writeLines(t, in, lineRange(1, 5)...)
	conf := filepath.Join(t.TempDir(), "events.json")
	os.WriteFile(conf, []byte(fmt.Sprintf(`{"name":"events","connector.class":"FileStreamSource","file":%q,"topic":"events"}`, in)), 0o644)
	c.ok("--url", oldURL, "apply", "-f", conf)
	oldTopic := newConsumer(t, old.Broker.Addr(), "events")
	oldTopic.until(5)

	// Lines keep coming while the connector moves.
	const total = 150
	done := make(chan error, 1)
	go func() {
		for i := 6; i <= total; i++ {
			f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				done <- err
				return
			}
			_, err = fmt.Fprintf(f, "line-%03d\n", i)
			f.Close()
			if err != nil {
				done <- err
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		done <- nil
	}()
	oldTopic.until(20)

	// Copying a running connector and starting it too would run it twice.
	r := c.fail("connectors", "copy", "events", "--from", oldURL, "--to", newURL, "--resume")
	mustContain(t, "refusal", r.stderr, "Error: connector events is RUNNING on "+oldURL+": running it on both clusters would process its data twice",
		"hint: stop it there first (connectctl --url "+oldURL+" stop events), or pass --stop-old")
	if names, _ := newC.Connectors(t.Context()); len(names) != 0 {
		t.Fatalf("the refused copy created %v", names)
	}
	c.ok("--url", oldURL, "stop", "events")
	r = c.ok("connectors", "copy", "events", "--from", oldURL, "--to", newURL, "--resume")
	mustContain(t, "copy", r.stdout, "copied events (source, 1 offset) from "+oldURL+" to "+newURL+": resumed\n")
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// The old connector's last position says how many lines it sent.
	var pos int64
	if o, err := oldC.Offsets(t.Context(), "events"); err != nil || len(o) != 1 {
		t.Fatalf("old offsets: %v %v", o, err)
	} else {
		pos, _ = intValue(o[0].Offset["position"])
	}
	sent := int(pos / 9)
	oldTopic.until(sent)
	newTopic := newConsumer(t, neu.Broker.Addr(), "events")
	newTopic.until(total - sent)
	// Then nothing more on either side.
	fromOld, fromNew := oldTopic.quiet(200*time.Millisecond), newTopic.quiet(200*time.Millisecond)
	if all := append(slices.Clone(fromOld), fromNew...); !slices.Equal(all, lineRange(1, total)) {
		t.Fatalf("old cluster sent %d lines, new %d; together %v", len(fromOld), len(fromNew), all)
	}
	if len(fromOld) < 20 || len(fromNew) == 0 {
		t.Fatalf("the hand-over was not in the middle: %d then %d", len(fromOld), len(fromNew))
	}

	// Copying onto an existing connector fails and says so.
	r = c.fail("connectors", "copy", "events", "--from", oldURL, "--to", newURL)
	mustContain(t, "copy onto existing", r.stderr, "Error: connector events already exists on "+newURL)

	// Export the (stopped) connector, delete it on the new cluster, and
	// import it back: created STOPPED with the exported offsets.
	export := filepath.Join(t.TempDir(), "export.json")
	c.ok("--url", oldURL, "offsets", "export", "events", "--to-file", export)
	var doc exportDoc
	data, _ := os.ReadFile(export)
	if err := json.Unmarshal(data, &doc); err != nil || doc.Cluster != oldURL || len(doc.Connectors) != 1 ||
		doc.Connectors[0].Config["file"] != in || doc.Connectors[0].State != "STOPPED" ||
		mapText(doc.Connectors[0].Offsets[0].Offset) != fmt.Sprintf(`{"position":%d}`, pos) {
		t.Fatalf("export: %v\n%s", err, data)
	}
	c.ok("--url", newURL, "delete", "events")
	r = c.ok("--url", newURL, "offsets", "import", "-f", export)
	mustContain(t, "import", r.stdout, "connector events created with 1 offset: STOPPED\n")
	if got, want := offsetsJSON(t, newC, "events"), offsetsJSON(t, oldC, "events"); got != want {
		t.Errorf("imported offsets %s, want %s", got, want)
	}
	r = c.ok("--url", newURL, "offsets", "import", "-f", export)
	mustContain(t, "import again", r.stdout, "the offsets of events are already as asked: nothing to change")
	// Existing connectors get the exported offsets by the safe change.
	doc.Connectors[0].Offsets[0].Offset["position"] = int64(9)
	data, _ = json.Marshal(doc)
	os.WriteFile(export, data, 0o644)
	r = c.ok("--url", newURL, "offsets", "import", "-f", export, "--dry-run")
	mustContain(t, "import dry run", r.stdout, fmt.Sprintf(`- {"filename":%q} {"position":%d}`, in, pos), fmt.Sprintf(`+ {"filename":%q} {"position":9}`, in), "dry run: nothing changed")
	c.ok("--url", newURL, "offsets", "import", "-f", export)
	if got := offsetsJSON(t, newC, "events"); !strings.Contains(got, `"position":9}`) {
		t.Errorf("after importing position 9: %s", got)
	}

	// --all copies every connector (here: the one left) in one go.
	c.ok("--url", newURL, "delete", "events")
	r = c.ok("connectors", "copy", "--all", "--from", oldURL, "--to", newURL, "-o", "json")
	var results []copyResult
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 1 || results[0].State != "STOPPED" || results[0].Offsets != 1 {
		t.Errorf("copy --all -o json: %v\n%s", err, r)
	}
}

// Between two clusters with exactly-once source support on one Kafka, a
// copy says so and, given Kafka's address, checks what the new connector
// writes against what the topic held: nothing repeated. A copy from
// offsets older than the records (rewound on the old cluster) is caught.
func TestCopyExactlyOnceVerified(t *testing.T) {
	t.Parallel()
	bootstrap := startBroker(t)
	cluster := func(name string) (*client.Client, string) {
		d := distributedWith(t, bootstrap, map[string]string{
			"group.id": name, "config.storage.topic": name + "-configs", "offset.storage.topic": name + "-offsets",
			"status.storage.topic": name + "-status", "exactly.once.source.support": "enabled",
		})
		url := "http://" + d.RESTAddr
		return restClient(t, url), url
	}
	oldC, oldURL := cluster("old")
	_, newURL := cluster("new")
	c := newCLI(t, oldURL)
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lineRange(1, 10)...)
	c.ok("apply", "-f", writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nexactly.once.support=required\nfile="+in+"\n"))
	newConsumer(t, bootstrap, "lines").until(10)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, oldC, "src"), `"position":90`) })
	if r := c.ok("get", "connectors"); !strings.Contains(r.stdout, "source   yes (required)") {
		t.Errorf("get connectors:\n%s", r.stdout)
	}

	// Five more lines once the old connector stopped: the new one writes
	// them.
	c.ok("stop", "src")
	eventually(t, "src stopped", func() bool { return state(oldC, "src") == "STOPPED" })
	writeLines(t, in, lineRange(11, 15)...)
	r := c.ok("connectors", "copy", "src", "--to", newURL, "--resume", "--bootstrap-server", bootstrap)
	mustContain(t, "copy", r.stdout, "src: both clusters run source connectors exactly once",
		"src: verified: the 5 records written since the copy repeat none of the 10 before it")
	if got := newConsumer(t, bootstrap, "lines").until(15); !slices.Equal(got, lineRange(1, 15)) {
		t.Fatalf("the topic holds %v", got)
	}

	// Copied from a rewound position, the connector writes lines again.
	c.ok("--url", newURL, "stop", "src")
	eventually(t, "src stopped", func() bool { return state(restClient(t, newURL), "src") == "STOPPED" })
	c.ok("--url", newURL, "offsets", "set", "src", "--yes", "--partition", fmt.Sprintf(`{"filename":%q}`, in), "--offset", `{"position":0}`)
	c.ok("delete", "src")
	r = c.fail("connectors", "copy", "src", "--from", newURL, "--to", oldURL, "--resume", "--bootstrap-server", bootstrap)
	mustContain(t, "copy from a rewound position", r.stderr, "connector src wrote a record again after the copy: lines[0]@")
}
