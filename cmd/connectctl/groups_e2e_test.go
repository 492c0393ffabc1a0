package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The groups commands against the embedded broker over TCP: a plain
// consumer group, active then stopped, moved with each of
// kafka-consumer-groups' reset specs, exported and imported as CSV,
// deleted, and undone.
func TestGroups(t *testing.T) {
	t.Parallel()
	bootstrap := startBroker(t)
	ctx := context.Background()
	// Records go to the partition the test names.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	// Ten records a partition: five three hours ago, five two hours ago.
	now := time.Now()
	old, recent := now.Add(-3*time.Hour).Truncate(time.Millisecond), now.Add(-2*time.Hour).Truncate(time.Millisecond)
	for p := range int32(3) {
		for i := range 10 {
			ts := old
			if i >= 5 {
				ts = recent
			}
			r := &kgo.Record{Topic: "orders", Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i), Timestamp: ts}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// An application's consumer group reads everything and stays.
	app, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.ClientID("billing-app"))
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	for seen := 0; seen < 30; {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := app.PollFetches(pctx)
		late := pctx.Err() != nil
		cancel()
		if late {
			t.Fatalf("the application read %d records of 30", seen)
		}
		seen += fs.NumRecords()
	}
	if err := app.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}

	c := newCLI(t, "")
	k := []string{"--bootstrap-server", bootstrap}
	run := func(args ...string) result { c.t.Helper(); return c.ok(append(args, k...)...) }
	fail := func(args ...string) result { c.t.Helper(); return c.fail(append(args, k...)...) }
	offsets := func() map[string]int64 {
		t.Helper()
		var groups []describedGroup
		if err := json.Unmarshal([]byte(run("groups", "describe", "billing", "-o", "json").stdout), &groups); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, p := range groups[0].Partitions {
			if p.Current != nil {
				out[fmt.Sprintf("%s-%d", p.Topic, p.Partition)] = *p.Current
			}
		}
		return out
	}
	want := func(what string, w map[string]int64) {
		t.Helper()
		if got := offsets(); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("%s: offsets %v, want %v", what, got, w)
		}
	}

	r := run("groups", "list")
	mustContain(t, "list", r.stdout, "GROUP", "STATE", "MEMBERS", "LAG", "billing")
	if !strings.Contains(r.stdout, "Stable") {
		t.Errorf("list: billing not Stable:\n%s", r.stdout)
	}
	r = run("groups", "describe", "billing")
	mustContain(t, "describe", r.stdout, "group billing: Stable, 1 member, lag 0",
		"CURRENT-OFFSET", "LOG-END-OFFSET", "CONSUMER-ID", "billing-app")
	want("consumed", map[string]int64{"orders-0": 10, "orders-1": 10, "orders-2": 10})

	// Active: refused, even with --force (Kafka refuses), nothing moves.
	reset := []string{"groups", "reset", "billing", "--topic", "orders", "--to-earliest"}
	r = fail(reset...)
	mustContain(t, "refusal", r.stderr, "Error: assignments can only be reset if the group 'billing' is inactive, but the current state is Stable (1 member)",
		"hint: stop the group's consumers first")
	r = run(append(reset, "--dry-run")...)
	mustContain(t, "dry run", r.stdout, "NEW-OFFSET", "the change would be refused", "dry run: nothing changed")
	r = fail(append(reset, "--force")...)
	mustContain(t, "forced", r.stderr, "warning: group billing is Stable with 1 member; trying anyway (--force)", "UNKNOWN_MEMBER_ID")
	want("after the refusals", map[string]int64{"orders-0": 10, "orders-1": 10, "orders-2": 10})

	app.Close()
	eventually(t, "billing empty", func() bool {
		return strings.Contains(run("groups", "describe", "billing").stdout, "group billing: Empty")
	})

	r = run("groups", "reset", "billing", "--topic", "orders:0,2", "--to-earliest")
	mustContain(t, "to-earliest", r.stdout, "offsets of group billing changed (2 partitions) and verified",
		"(1 partition unchanged)", "put them back with: connectctl groups undo billing")
	want("to-earliest", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 0})

	r = run("groups", "reset", "billing", "--all-topics", "--shift-by", "3")
	mustContain(t, "shift-by", r.stderr, "warning: new offset (13) is higher than latest offset for topic partition orders-1. Value will be set to 10")
	want("shift-by", map[string]int64{"orders-0": 3, "orders-1": 10, "orders-2": 3})

	run("groups", "reset", "billing", "--all-topics", "--to-datetime", recent.UTC().Format(time.RFC3339Nano))
	want("to-datetime", map[string]int64{"orders-0": 5, "orders-1": 5, "orders-2": 5})
	run("groups", "reset", "billing", "--topic", "orders", "--by-duration", "PT3H30M")
	want("by-duration", map[string]int64{"orders-0": 0, "orders-1": 0, "orders-2": 0})
	r = run("groups", "reset", "billing", "--topic", "orders:1", "--by-duration", "PT1H")
	mustContain(t, "by-duration, nothing that recent", r.stderr, "warning: partition 1 of topic orders has no record at or after")
	want("by-duration to the end", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 0})
	run("groups", "reset", "billing", "--topic", "orders:2", "--to-offset", "7")
	want("to-offset", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 7})

	// --export plans in Kafka's CSV; --from-file applies a plan.
	r = run("groups", "reset", "billing", "--all-topics", "--to-latest", "--export", "--dry-run")
	if r.stdout != "orders,0,10\norders,1,10\norders,2,10\n" {
		t.Errorf("export: %q", r.stdout)
	}
	want("after the dry run", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 7})
	plan := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(plan, []byte("billing,orders,0,4\nother,orders,1,1\nbilling,orders,1,6\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("groups", "reset", "billing", "--from-file", plan)
	want("from-file", map[string]int64{"orders-0": 4, "orders-1": 6, "orders-2": 7})
	r = run("groups", "reset", "billing", "--from-file", plan)
	mustContain(t, "again", r.stdout, "already as asked: nothing to change")

	// History and undo, one change back at a time.
	r = run("groups", "history", "billing")
	mustContain(t, "history", r.stdout, "SAVED", "reset")
	run("groups", "undo", "billing")
	want("undo", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 7})
	run("groups", "undo", "billing")
	want("undo twice", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 0})

	// The CSV round trip: export where the group stands, move it to the
	// end, and bring it back from the export.
	exported := run("groups", "reset", "billing", "--all-topics", "--to-current", "--export", "--dry-run").stdout
	if exported != "orders,0,0\norders,1,10\norders,2,0\n" {
		t.Errorf("export of the current offsets: %q", exported)
	}
	saved := filepath.Join(t.TempDir(), "saved.csv")
	if err := os.WriteFile(saved, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	run("groups", "reset", "billing", "--all-topics", "--to-latest")
	want("to-latest", map[string]int64{"orders-0": 10, "orders-1": 10, "orders-2": 10})
	run("groups", "reset", "billing", "--from-file", saved)
	want("back from the export", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 0})

	// Deleting a topic's partition offsets, then the group, and back.
	r = run("groups", "delete", "billing", "--topic", "orders:1")
	mustContain(t, "delete offsets", r.stdout, "(deleted)", "changed (1 partition) and verified")
	want("delete offsets", map[string]int64{"orders-0": 0, "orders-2": 0})
	r = run("groups", "delete", "billing")
	mustContain(t, "delete", r.stdout, "group billing deleted (2 partitions had offsets) and verified")
	r = fail("groups", "describe", "billing")
	mustContain(t, "deleted", r.stderr, "consumer group 'billing' does not exist")
	run("groups", "undo", "billing")
	want("undo delete", map[string]int64{"orders-0": 0, "orders-2": 0})
	run("groups", "undo", "billing")
	want("undo delete offsets", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 0})

	// --to-current keeps committed offsets and gives the others the end.
	run("groups", "delete", "billing", "--topic", "orders:2")
	r = run("groups", "reset", "billing", "--topic", "orders", "--to-current", "-o", "json")
	var res groupChangeResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if res.Changed != 1 || !res.Verified || res.State != "Empty" {
		t.Errorf("to-current: %+v", res)
	}
	want("to-current", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 10})

	// Mistakes are named before anything changes.
	r = fail("groups", "reset", "billing", "--topic", "nope", "--to-earliest")
	mustContain(t, "unknown topic", r.stderr, "topic nope does not exist")
	r = fail("groups", "reset", "billing", "--topic", "orders:7", "--to-earliest")
	mustContain(t, "unknown partition", r.stderr, "topic orders has no partition 7 (it has 3)")
	r = fail("groups", "reset", "billing", "--topic", "orders", "--by-duration", "PT")
	mustContain(t, "bad duration", r.stderr, `--by-duration "PT": want an ISO-8601 duration`)
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("orders,0,1\norders,x,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = fail("groups", "reset", "billing", "--from-file", bad)
	mustContain(t, "bad file", r.stderr, `line 2: partition "x" is not a partition number`)
	r = fail("groups", "reset", "billing", "--topic", "orders", "--to-earliest", "--to-latest")
	mustContain(t, "two specs", r.stderr, "give only one of --to-earliest, --to-latest")
	r = fail("groups", "reset", "billing", "--to-earliest")
	mustContain(t, "no scope", r.stderr, "say which partitions to move")
	want("after the mistakes", map[string]int64{"orders-0": 0, "orders-1": 10, "orders-2": 10})
}
