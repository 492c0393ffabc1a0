package group

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// cluster simulates the members' side of the assignor: each member applies
// its assignment (drop revoked, add assigned) and reports the result in the
// next round, and the leader's state and last completed generation are kept.
type cluster struct {
	t        *testing.T
	version  int16
	gen      int32
	st       AssignorState
	owned    map[string]itemSet
	now      time.Time
	maxDelay time.Duration
	work     map[string]int
	last     map[string]Assignment
	// urls are the members' URLs other than "http://<id>" (a worker that
	// restarted, with a new member id); seen, when not nil, is the status
	// topic: the worker that last ran each item.
	urls map[string]string
	seen map[item]string
}

func (c *cluster) url(id string) string {
	if u, ok := c.urls[id]; ok {
		return u
	}
	return "http://" + id
}

// restart makes id leave and come back as newID, on the same URL.
func (c *cluster) restart(id, newID string) {
	if c.urls == nil {
		c.urls = map[string]string{}
	}
	c.urls[newID] = c.url(id)
	c.leave(id)
	c.join(newID)
}

func newCluster(t *testing.T, work map[string]int, members ...string) *cluster {
	c := &cluster{t: t, version: VersionSessioned, owned: map[string]itemSet{}, now: time.Unix(1000, 0),
		maxDelay: 10 * time.Second, work: work}
	for _, m := range members {
		c.owned[m] = itemSet{}
	}
	return c
}

// round runs one rebalance and applies the result to the members.
func (c *cluster) round() map[string]Assignment {
	c.t.Helper()
	in := AssignInput{
		Version: c.version, Generation: c.gen + 1, LastCompletedGeneration: c.gen,
		LeaderID: c.leader(), LeaderURL: "http://" + c.leader(), ConfigOffset: 10,
		Work: c.work, Now: c.now, MaxDelay: c.maxDelay,
	}
	if c.seen != nil {
		in.LastWorker = func(conn string, task int32) string { return c.seen[item{conn, task}] }
	}
	for _, id := range slices.Sorted(maps.Keys(c.owned)) {
		ms := MemberState{ID: id, URL: c.url(id), ConfigOffset: 10}
		if c.version >= VersionCompatible {
			ms.Owned = fromItems(c.owned[id])
		}
		in.Members = append(in.Members, ms)
	}
	out, st := Assign(c.st, in)
	c.st = st
	c.gen++
	if len(out) != len(c.owned) {
		c.t.Fatalf("got %d assignments for %d members", len(out), len(c.owned))
	}
	for id, a := range out {
		if a.Version != c.version || a.Leader != c.leader() || a.ConfigOffset != 10 {
			c.t.Fatalf("bad header for %s: %+v", id, a)
		}
		if c.version == VersionEager {
			c.owned[id] = toItems(a.Assigned)
			continue
		}
		rev := toItems(a.Revoked)
		for i := range rev {
			if !c.owned[id].has(i) {
				c.t.Fatalf("%s: revoked %v which it does not own", id, i)
			}
		}
		c.owned[id].removeAll(rev)
		for i := range toItems(a.Assigned) {
			if c.owned[id].has(i) {
				c.t.Fatalf("%s: assigned %v which it already owns", id, i)
			}
			c.owned[id].add(i)
		}
	}
	c.last = out
	if c.seen != nil {
		for id, s := range c.owned {
			for i := range s {
				c.seen[i] = workerID(c.url(id))
			}
		}
	}
	return out
}

func (c *cluster) leader() string { return slices.Sorted(maps.Keys(c.owned))[0] }

func (c *cluster) join(id string)  { c.owned[id] = itemSet{} }
func (c *cluster) leave(id string) { delete(c.owned, id) }

// anyRevoked tells whether the last round revoked something.
func (c *cluster) anyRevoked() bool {
	for _, a := range c.last {
		if len(toItems(a.Revoked)) > 0 {
			return true
		}
	}
	return false
}

// settle runs rounds until no revocation happened (a member rejoins at once
// after a revocation), at most n rounds.
func (c *cluster) settle(n int) {
	c.t.Helper()
	for range n {
		c.round()
		if !c.anyRevoked() && c.delay() == 0 {
			return
		}
		c.now = c.now.Add(time.Duration(c.delay()) * time.Millisecond)
	}
	c.t.Fatalf("did not settle in %d rounds: %s", n, c)
}

func (c *cluster) delay() int32 {
	var d int32
	for _, a := range c.last {
		d = max(d, a.Delay)
	}
	return d
}

// checkExact asserts every configured item is owned by exactly one member.
func (c *cluster) checkExact() {
	c.t.Helper()
	seen := map[item]string{}
	for id, s := range c.owned {
		for i := range s {
			if o, dup := seen[i]; dup {
				c.t.Fatalf("%v owned by %s and %s", i, o, id)
			}
			seen[i] = id
		}
	}
	conf := configuredItems(c.work)
	for i := range conf {
		if _, ok := seen[i]; !ok {
			c.t.Fatalf("%v not owned: %s", i, c)
		}
	}
	for i := range seen {
		if !conf.has(i) {
			c.t.Fatalf("%v owned but not configured: %s", i, c)
		}
	}
}

// checkBalanced asserts connector and task counts differ by at most one.
func (c *cluster) checkBalanced() {
	c.t.Helper()
	var cs, ts []int
	for _, s := range c.owned {
		cc, tc := s.counts()
		cs, ts = append(cs, cc), append(ts, tc)
	}
	if slices.Max(cs)-slices.Min(cs) > 1 || slices.Max(ts)-slices.Min(ts) > 1 {
		c.t.Fatalf("unbalanced: %s", c)
	}
}

func (c *cluster) String() string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(c.owned)) {
		fmt.Fprintf(&b, "%s=%v ", id, fromItems(c.owned[id]))
	}
	return b.String()
}

func count(cts []ConnectorTasks) int { return len(toItems(cts)) }

func work3x2() map[string]int { return map[string]int{"a": 2, "b": 2, "c": 2} }

func TestAssignNewCluster(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	out := c.round()
	for id, a := range out {
		if count(a.Revoked) != 0 || a.Delay != 0 || a.Error != 0 {
			t.Fatalf("%s: %+v", id, a)
		}
		cc, tc := toItems(a.Assigned).counts()
		if cc != 1 || tc != 2 {
			t.Fatalf("%s: %d connectors %d tasks: %+v", id, cc, tc, a.Assigned)
		}
	}
	c.checkExact()
	// A second round with no change moves nothing.
	for id, a := range c.round() {
		if count(a.Assigned) != 0 || count(a.Revoked) != 0 || a.Delay != 0 {
			t.Fatalf("stable round moved work for %s: %+v", id, a)
		}
	}
}

func TestAssignWorkerJoinBalances(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2")
	c.round()
	c.checkExact()
	c.checkBalanced()

	c.join("m3")
	out := c.round()
	// Revoke from the overloaded members in this round, assign nothing yet
	// to the newcomer.
	if !c.anyRevoked() || count(out["m3"].Assigned) != 0 {
		t.Fatalf("join round: %+v", out)
	}
	for id, a := range out {
		if count(a.Assigned) != 0 {
			t.Fatalf("join round assigned to %s: %+v", id, a.Assigned)
		}
	}
	// The follow-up round assigns the revoked work to the newcomer.
	out = c.round()
	if c.anyRevoked() || count(out["m3"].Assigned) == 0 {
		t.Fatalf("follow-up round: %+v", out)
	}
	c.checkExact()
	c.checkBalanced()
	if cc, tc := c.owned["m3"].counts(); cc != 1 || tc != 2 {
		t.Fatalf("newcomer has %d connectors %d tasks: %s", cc, tc, c)
	}
}

func TestAssignWorkerLeaveHeldBackThenReassigned(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	gone := c.owned["m3"].clone()
	c.leave("m3")

	out := c.round()
	for id, a := range out {
		if count(a.Assigned) != 0 || count(a.Revoked) != 0 {
			t.Fatalf("%s got work while it should be held back: %+v", id, a)
		}
		if a.Delay != 10000 {
			t.Fatalf("%s: delay %d, want 10000", id, a.Delay)
		}
	}
	if !toItems(c.st.Previous).has(gone.sorted()[0]) {
		t.Fatalf("held-back work missing from the state: %+v", c.st.Previous)
	}

	// Halfway: still held back, the delay is what is left.
	c.now = c.now.Add(4 * time.Second)
	for id, a := range c.round() {
		if count(a.Assigned) != 0 || a.Delay != 6000 {
			t.Fatalf("%s halfway: %+v", id, a)
		}
	}

	// Expired: reassigned to the survivors, no more delay.
	c.now = c.now.Add(6 * time.Second)
	var got itemSet = itemSet{}
	for id, a := range c.round() {
		if a.Delay != 0 {
			t.Fatalf("%s: delay after expiry %d", id, a.Delay)
		}
		got.addAll(toItems(a.Assigned))
	}
	if len(got) != len(gone) {
		t.Fatalf("reassigned %v, want %v", got.sorted(), gone.sorted())
	}
	c.checkExact()
	c.checkBalanced()
}

func TestAssignWorkerReturnsWithinDelay(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	gone := c.owned["m3"].clone()
	c.leave("m3")
	c.round()
	c.now = c.now.Add(2 * time.Second)
	c.join("m3b") // the same worker restarted, with a new member id
	out := c.round()
	if d := out["m3b"].Delay; d != 8000 || count(out["m3b"].Assigned) != 0 {
		t.Fatalf("returning worker during the delay: %+v", out["m3b"])
	}
	c.now = c.now.Add(8 * time.Second)
	out = c.round()
	if got := toItems(out["m3b"].Assigned); !maps.Equal(got, gone) {
		t.Fatalf("returning worker got %v, want %v", got.sorted(), gone.sorted())
	}
	c.checkExact()
	c.checkBalanced()
}

// With the status topic's view of who ran what, a worker that restarts
// gets its work back as soon as it returns, without waiting for the delay,
// and nothing else moves; when the leader itself restarts, the new leader
// holds its work back as the old one would have.
func TestAssignRestartedWorkerGetsItsWorkBack(t *testing.T) {
	for _, restarted := range []string{"m3", "m1"} {
		c := newCluster(t, work3x2(), "m1", "m2", "m3")
		c.seen = map[item]string{}
		c.round()
		before := map[string]itemSet{}
		for id, s := range c.owned {
			before[id] = s.clone()
		}
		c.leave(restarted)
		if restarted == "m1" {
			c.st = AssignorState{} // the leader left: a new leader, with no previous round
		}
		out := c.round()
		for id, a := range out {
			if count(a.Assigned) != 0 || count(a.Revoked) != 0 || a.Delay == 0 {
				t.Fatalf("%s left: %s got %+v, want nothing and a delay", restarted, id, a)
			}
		}
		c.now = c.now.Add(time.Second)
		c.restart(restarted, restarted+"b")
		out = c.round()
		if got := toItems(out[restarted+"b"].Assigned); !maps.Equal(got, before[restarted]) {
			t.Fatalf("%s returned: got %v, want its %v", restarted, got.sorted(), before[restarted].sorted())
		}
		for id, a := range out {
			if count(a.Revoked) != 0 || a.Delay != 0 || id != restarted+"b" && count(a.Assigned) != 0 {
				t.Fatalf("%s returned: %s got %+v", restarted, id, a)
			}
		}
		c.checkExact()
		c.checkBalanced()
	}
}

func TestAssignLostWithoutDepartureReassignedAtOnce(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	// m2 missed its assignment and reports nothing, but is still a member.
	lost := c.owned["m2"].clone()
	c.owned["m2"] = itemSet{}
	out := c.round()
	got := itemSet{}
	for _, a := range out {
		if a.Delay != 0 {
			t.Fatalf("unexpected delay: %+v", a)
		}
		got.addAll(toItems(a.Assigned))
	}
	if !maps.Equal(got, lost) {
		t.Fatalf("reassigned %v, want %v", got.sorted(), lost.sorted())
	}
	c.checkExact()
}

func TestAssignMaxDelayZeroReassignsAtOnce(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.maxDelay = 0
	c.round()
	c.leave("m2")
	c.round()
	if c.delay() != 0 {
		t.Fatalf("delay %d", c.delay())
	}
	c.checkExact()
	c.checkBalanced()
}

func TestAssignStalePreviousAfterLeaderChange(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	c.leave("m1") // the leader left: the new leader has no previous view
	c.st = AssignorState{}
	c.round()
	if c.delay() != 0 {
		t.Fatalf("delay %d", c.delay())
	}
	c.checkExact()
	c.checkBalanced()
}

func TestAssignConnectorDeleted(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	holders := map[string]bool{}
	for id, s := range c.owned {
		for i := range s {
			if i.conn == "b" {
				holders[id] = true
			}
		}
	}
	delete(c.work, "b")
	out := c.round()
	for id, a := range out {
		rev := toItems(a.Revoked)
		for i := range rev {
			if i.conn != "b" {
				t.Fatalf("%s: revoked %v", id, i)
			}
		}
		if holders[id] != (len(rev) > 0) {
			t.Fatalf("%s: revoked %v (holder %v)", id, a.Revoked, holders[id])
		}
		if count(a.Assigned) != 0 {
			t.Fatalf("%s: assigned %v", id, a.Assigned)
		}
	}
	c.checkExact()
	// The same holds for a new leader that has no previous view.
	c.work["c"] = 0
	delete(c.work, "a")
	c.st = AssignorState{}
	c.round()
	c.checkExact()
}

func TestAssignTaskCountChange(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	c.work["a"] = 5
	c.work["b"] = 1
	out := c.round()
	var assigned, revoked []item
	for _, a := range out {
		assigned = append(assigned, toItems(a.Assigned).sorted()...)
		revoked = append(revoked, toItems(a.Revoked).sorted()...)
	}
	sort.Slice(assigned, func(i, j int) bool { return compareItems(assigned[i], assigned[j]) < 0 })
	if want := []item{{"a", 2}, {"a", 3}, {"a", 4}}; !slices.Equal(assigned, want) {
		t.Fatalf("assigned %v, want %v", assigned, want)
	}
	if want := []item{{"b", 1}}; !slices.Equal(revoked, want) {
		t.Fatalf("revoked %v, want %v", revoked, want)
	}
	c.settle(5)
	c.checkExact()
	c.checkBalanced()
}

// duplicate has holder also run one of owner's tasks (a zombie after a
// partition, say), and returns it.
func (c *cluster) duplicate(owner, holder string) item {
	for i := range c.owned[owner] {
		if i.task >= 0 {
			c.owned[holder].add(i)
			return i
		}
	}
	c.t.Fatalf("%s owns no task", owner)
	return item{}
}

func TestAssignDuplicatesRevokedFromAllHolders(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	dup := c.duplicate("m2", "m1")
	out := c.round()
	for _, id := range []string{"m1", "m2"} {
		if !toItems(out[id].Revoked).has(dup) {
			t.Fatalf("%s: %v not revoked: %+v", id, dup, out[id])
		}
	}
	c.round()
	c.checkExact()
}

// A holder of duplicated work that missed the round revoking it (its sync
// failed) still claims it in the next: it is told again, and the work goes
// to no one else until it has let go. Kept by it, a zombie worker back
// from a pause would keep a task it was fenced out of, failed, while the
// worker that ran it had dropped it.
func TestAssignDuplicateRevocationMissedIsRepeated(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.round()
	dup := c.duplicate("m2", "m1")
	c.round()
	// m1 did not get that round's assignment: it still runs dup.
	c.owned["m1"].add(dup)
	out := c.round()
	if !toItems(out["m1"].Revoked).has(dup) {
		t.Fatalf("m1 still claims %v, revoked in the round it missed, and keeps it: %+v", dup, out["m1"])
	}
	for id, a := range out {
		if toItems(a.Assigned).has(dup) {
			t.Fatalf("%v assigned to %s while m1 still runs it", dup, id)
		}
	}
	c.round()
	c.checkExact()
}

func TestAssignMembersBehindStillAssigned(t *testing.T) {
	in := AssignInput{
		Version: 2, Generation: 1, LastCompletedGeneration: -1, LeaderID: "m1", LeaderURL: "u1",
		ConfigOffset: 50, Work: map[string]int{"a": 1, "b": 1}, Now: time.Unix(0, 0), MaxDelay: time.Minute,
		Members: []MemberState{{ID: "m1", ConfigOffset: 50}, {ID: "m2", ConfigOffset: 3}},
	}
	out, _ := Assign(AssignorState{}, in)
	if count(out["m2"].Assigned) != 2 || out["m2"].ConfigOffset != 50 {
		t.Fatalf("member behind: %+v", out["m2"])
	}
}

func TestAssignConfigMismatch(t *testing.T) {
	prev := AssignorState{Generation: 4, Previous: []ConnectorTasks{{Connector: "a", Tasks: []int32{-1}}}, Members: []string{"m1"}}
	in := AssignInput{
		Version: 2, Generation: 5, LastCompletedGeneration: 4, Error: ErrConfigMismatch, LeaderID: "m1",
		LeaderURL: "u1", ConfigOffset: 77, Work: map[string]int{"a": 1},
		Members: []MemberState{{ID: "m1"}, {ID: "m2"}},
	}
	out, st := Assign(prev, in)
	for id, a := range out {
		if a.Error != ErrConfigMismatch || a.ConfigOffset != 77 || count(a.Assigned) != 0 || count(a.Revoked) != 0 {
			t.Fatalf("%s: %+v", id, a)
		}
	}
	if st.Generation != 5 || !slices.EqualFunc(st.Previous, prev.Previous, func(a, b ConnectorTasks) bool {
		return a.Connector == b.Connector && slices.Equal(a.Tasks, b.Tasks)
	}) {
		t.Fatalf("state not carried over: %+v", st)
	}
}

func TestAssignEager(t *testing.T) {
	c := newCluster(t, work3x2(), "m1", "m2", "m3")
	c.version = VersionEager
	out := c.round()
	for id, a := range out {
		if a.Revoked != nil || a.Delay != 0 {
			t.Fatalf("%s: %+v", id, a)
		}
	}
	c.checkExact()
	c.checkBalanced()
	// Every round hands out the complete assignment again (members revoked
	// everything before joining), including after a member leaves.
	c.leave("m3")
	out = c.round()
	total := 0
	for _, a := range out {
		total += count(a.Assigned)
	}
	if total != 9 || c.delay() != 0 {
		t.Fatalf("eager after leave: %+v", out)
	}
	c.checkExact()
	c.checkBalanced()
	// Encoded as v0: no revoked/delay on the wire.
	b := EncodeAssignment(out["m1"])
	if dec, err := DecodeAssignment(b); err != nil || dec.Version != 0 || count(dec.Assigned) != count(out["m1"].Assigned) {
		t.Fatalf("v0 round trip: %+v %v", dec, err)
	}
}

func TestAssignSuccessiveRevocationsBackOff(t *testing.T) {
	c := newCluster(t, map[string]int{"a": 6}, "m1")
	c.round()
	c.join("m2")
	c.round() // revokes from m1
	if !c.anyRevoked() {
		t.Fatal("expected a balancing revocation")
	}
	c.join("m3") // joins during the follow-up round: balancing is needed again
	c.round()
	if c.anyRevoked() || c.delay() != 250 {
		t.Fatalf("second successive revocation not postponed: delay %d, %s", c.delay(), c)
	}
	c.now = c.now.Add(250 * time.Millisecond)
	c.round()
	if !c.anyRevoked() {
		t.Fatalf("revocation not performed after the backoff: %s", c)
	}
	c.settle(6)
	c.checkExact()
	c.checkBalanced()
}

func TestAssignManyMembersConverges(t *testing.T) {
	work := map[string]int{}
	for i := range 7 {
		work[fmt.Sprintf("conn-%d", i)] = i
	}
	c := newCluster(t, work, "w0")
	c.maxDelay = time.Second
	for i := 1; i < 6; i++ {
		c.join(fmt.Sprintf("w%d", i))
		c.settle(12)
		c.checkExact()
		c.checkBalanced()
	}
	c.leave("w2")
	c.leave("w4")
	c.settle(12)
	c.checkExact()
	c.checkBalanced()
}
