package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Deleting a connector keeps its offsets unless --reset-offsets, which
// deletes them first and keeps them, with the config, for undo: a source
// created again after a plain delete resumes silently; after a reset it
// starts over; after undo it is back where it was, running.
func TestDeleteResetOffsets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := standalone(t, dir, nil)
	url := "http://" + w.RESTAddr
	c := newCLI(t, url)
	rc := restClient(t, url)
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, lineRange(1, 10)...)
	src := writeFile(t, "src.properties", "name=src\nconnector.class=FileStreamSource\ntopic=lines\nfile="+in+"\n")
	c.ok("apply", "-f", src)
	topic := newConsumer(t, w.Broker.Addr(), "lines")
	topic.until(10)
	part := fmt.Sprintf(`{"filename":%q}`, in)
	eventually(t, "offset 90", func() bool { return strings.Contains(offsetsJSON(t, rc, "src"), `"position":90`) })

	// A plain delete: the offsets stay, and connectctl says so.
	r := c.ok("delete", "src")
	mustContain(t, "plain delete", r.stderr, "warning: the offsets of src stay (1 partition): a connector created again as src resumes from them",
		"hint: remove them with: connectctl offsets reset src --direct; next time, connectctl delete src --reset-offsets deletes both")
	c.ok("apply", "-f", src)
	eventually(t, "src running again", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })
	if got := offsetsJSON(t, rc, "src"); !strings.Contains(got, `"position":90`) {
		t.Fatalf("the connector created again has offsets %s", got)
	}

	// --reset-offsets: refused without a terminal or --yes, shown by
	// --dry-run, then done.
	r = c.fail("connectors", "delete", "src", "--reset-offsets")
	mustContain(t, "no --yes", r.stderr, "Error: connector src is RUNNING; its offsets can only be deleted once it is stopped", "hint: pass --yes")
	r = c.ok("delete", "src", "--reset-offsets", "--dry-run")
	mustContain(t, "dry run", r.stdout, "- "+part+` {"position":90}`, "connector src is RUNNING: it would be stopped first",
		"connector src (source) would be deleted", "dry run: nothing changed")
	if state(rc, "src") != "RUNNING/RUNNING" {
		t.Fatalf("the dry run changed the connector: %s", state(rc, "src"))
	}
	r = c.ok("connectors", "delete", "src", "--reset-offsets", "--yes")
	mustContain(t, "delete --reset-offsets", r.stdout, "connector src stopped", "offsets of src deleted (1 partition) and verified",
		"connector src deleted", "create it again as it was with: connectctl offsets undo src")
	r = c.fail("describe", "src")
	mustContain(t, "deleted", r.stderr, "Connector src not found")

	// Undo: created again with its config, its offsets and RUNNING; it
	// resumes after line 10, so nothing is read twice.
	r = c.ok("offsets", "undo", "src", "--dry-run")
	mustContain(t, "undo dry run", r.stdout, "connector src would be created again with its saved config, given its 1 saved offset and left resumed")
	r = c.ok("offsets", "undo", "src")
	mustContain(t, "undo", r.stdout, "connector src created again, STOPPED, with its saved config",
		"+ "+part+` {"position":90}`, "connector src resumed")
	eventually(t, "src running after undo", func() bool { return state(rc, "src") == "RUNNING/RUNNING" })
	writeLines(t, in, lineRange(11, 12)...)
	if got := topic.until(12); !slices.Equal(got, lineRange(1, 12)) {
		t.Fatalf("after undo the topic holds %v", got)
	}
	if got := topic.quiet(500 * time.Millisecond); len(got) != 12 {
		t.Fatalf("after undo the source read lines again: %v", got)
	}

	// A sink's offsets are its consumer group's: gone with it, back with
	// undo.
	out := filepath.Join(dir, "out.txt")
	c.ok("apply", "-f", writeFile(t, "snk.properties", "name=snk\nconnector.class=FileStreamSink\ntopics=lines\nfile="+out+"\n"))
	eventually(t, "the sink at 12", func() bool { return strings.Contains(offsetsJSON(t, rc, "snk"), `"kafka_offset":12`) })
	r = c.ok("delete", "snk", "--reset-offsets", "--yes")
	mustContain(t, "sink delete --reset-offsets", r.stdout, `- {"kafka_partition":0,"kafka_topic":"lines"} {"kafka_offset":12}`, "connector snk deleted")
	k := []string{"--bootstrap-server", w.Broker.Addr()}
	r = c.fail(append([]string{"groups", "describe", "connect-snk"}, k...)...)
	mustContain(t, "the sink's group", r.stderr, "consumer group 'connect-snk' does not exist")
	c.ok("offsets", "undo", "snk")
	eventually(t, "the sink back at 12", func() bool {
		return state(rc, "snk") == "RUNNING/RUNNING" && strings.Contains(offsetsJSON(t, rc, "snk"), `"kafka_offset":12`)
	})

	// After a reset and a new connector of the same name, it starts over.
	c.ok("delete", "src", "--reset-offsets", "--yes")
	c.ok("apply", "-f", src)
	if got := topic.until(24); !slices.Equal(got[12:], lineRange(1, 12)) {
		t.Fatalf("a new src after --reset-offsets emitted %v", got[12:])
	}
}
