package group

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fakeConfigTopic is the config topic shared by the fake handlers: every
// handler is always caught up with it.
type fakeConfigTopic struct {
	mu     sync.Mutex
	offset int64
	work   map[string]int
}

func (c *fakeConfigTopic) set(work map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset++
	c.work = work
}

func (c *fakeConfigTopic) snapshot() (int64, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset, maps.Clone(c.work)
}

// fakeHandler records what the member tells the herder.
type fakeHandler struct {
	topic *fakeConfigTopic

	mu       sync.Mutex
	owned    itemSet
	revoked  int
	assigned int
	maxDelay int32
	errors   int
	// leads is the generations this member was told it leads.
	leads []int32
}

func (h *fakeHandler) ConfigOffset() int64 { o, _ := h.topic.snapshot(); return o }
func (h *fakeHandler) CatchUp(ctx context.Context, offset int64) bool {
	return h.ConfigOffset() >= offset
}
func (h *fakeHandler) Work() map[string]int { _, w := h.topic.snapshot(); return w }

// LastWorker: the tests of the member know no statuses.
func (h *fakeHandler) LastWorker(string, int32) string { return "" }

func (h *fakeHandler) Revoked(revoked []ConnectorTasks) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.revoked++
	h.owned.removeAll(toItems(revoked))
}

func (h *fakeHandler) Assigned(a Assignment, owned []ConnectorTasks, generation int32, leader bool, _ []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.assigned++
	h.owned = toItems(owned)
	h.maxDelay = max(h.maxDelay, a.Delay)
	if a.Error != ErrNone {
		h.errors++
	}
	if leader {
		h.leads = append(h.leads, generation)
	}
}

func (h *fakeHandler) leadGenerations() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.leads)
}

func (h *fakeHandler) stats() (maxDelay int32, errors int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.maxDelay, h.errors
}

func (h *fakeHandler) ownedItems() itemSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.owned.clone()
}

type testWorker struct {
	url    string
	h      *fakeHandler
	m      *Member
	cancel context.CancelFunc
	done   chan error
}

func startWorker(t *testing.T, addrs []string, topic *fakeConfigTopic, group, url, protocol string, log *slog.Logger) *testWorker {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	h := &fakeHandler{topic: topic, owned: itemSet{}}
	m := NewMember(Config{
		Client:            cl,
		GroupID:           group,
		URL:               url,
		SessionTimeout:    3 * time.Second,
		RebalanceTimeout:  5 * time.Second,
		HeartbeatInterval: 100 * time.Millisecond,
		Protocol:          protocol,
		MaxDelay:          500 * time.Millisecond,
		Log:               log.With("worker", url),
	}, h)
	ctx, cancel := context.WithCancel(context.Background())
	w := &testWorker{url: url, h: h, m: m, cancel: cancel, done: make(chan error, 1)}
	go func() { w.done <- m.Run(ctx) }()
	t.Cleanup(w.stop)
	return w
}

func (w *testWorker) stop() {
	w.cancel()
	<-w.done
	w.done <- nil // let later stop calls return
}

// eventually polls cond until it returns "" or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for time.Now().Before(deadline) {
		if why = cond(); why == "" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("condition not met within %v: %s", timeout, why)
}

// converged checks that every configured item is owned by exactly one of the
// workers, that they agree on the generation and the leader, that exactly
// one of them is the leader and that none is rebalancing.
func converged(topic *fakeConfigTopic, ws ...*testWorker) string {
	_, work := topic.snapshot()
	want := configuredItems(work)
	seen := map[item]string{}
	for _, w := range ws {
		for i := range w.h.ownedItems() {
			if o, ok := seen[i]; ok {
				return fmt.Sprintf("%v owned by %s and %s", i, o, w.url)
			}
			seen[i] = w.url
		}
	}
	for i := range want {
		if _, ok := seen[i]; !ok {
			return fmt.Sprintf("%v not owned", i)
		}
	}
	for i := range seen {
		if !want.has(i) {
			return fmt.Sprintf("%v owned by %s but not configured", i, seen[i])
		}
	}
	var leaders []string
	gen := ws[0].m.Generation()
	for _, w := range ws {
		if w.m.Rebalancing() {
			return w.url + " is rebalancing"
		}
		if g := w.m.Generation(); g != gen {
			return fmt.Sprintf("generations differ: %d vs %d", g, gen)
		}
		if w.m.IsLeader() {
			leaders = append(leaders, w.url)
		}
	}
	if len(leaders) != 1 {
		return fmt.Sprintf("leaders: %v", leaders)
	}
	for _, w := range ws {
		if got := w.m.LeaderURL(); got != leaders[0] {
			return fmt.Sprintf("%s thinks the leader is %q, want %q", w.url, got, leaders[0])
		}
	}
	return ""
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// oneBroker starts a one-broker cluster (closed when the test ends, or
// earlier by the test), a client on it, and a config topic holding
// connector a with one task.
func oneBroker(t *testing.T) (*kfake.Cluster, *kgo.Client, *fakeConfigTopic) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	topic := &fakeConfigTopic{}
	topic.set(map[string]int{"a": 1})
	return c, cl, topic
}

// runMember runs m until the test ends.
func runMember(t *testing.T, m *Member) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// threeWorkers starts three members of a group on a fresh broker, with
// work3x2 configured.
func threeWorkers(t *testing.T, protocol string) (*fakeConfigTopic, []*testWorker) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	log := testLogger()
	topic := &fakeConfigTopic{}
	topic.set(work3x2())
	var ws []*testWorker
	for i := range 3 {
		ws = append(ws, startWorker(t, c.ListenAddrs(), topic, "connect-cluster", fmt.Sprintf("http://w%d:8083/", i), protocol, log))
	}
	return topic, ws
}

func TestMemberIntegration(t *testing.T) {
	for _, protocol := range []string{"sessioned", "eager"} {
		t.Run(protocol, func(t *testing.T) { testMemberIntegration(t, protocol) })
	}
}

func testMemberIntegration(t *testing.T, protocol string) {
	topic, ws := threeWorkers(t, protocol)
	// Cooperative balancing may take a follow-up round after every item
	// has an owner: wait for both.
	eventually(t, 10*time.Second, func() string {
		if msg := converged(topic, ws...); msg != "" {
			return msg
		}
		for _, w := range ws {
			if n := len(w.h.ownedItems()); n != 3 {
				return fmt.Sprintf("%s owns %d items, want 3 (balanced)", w.url, n)
			}
		}
		return ""
	})
	for _, w := range ws {
		if w.m.MemberID() == "" {
			t.Errorf("%s has no member id", w.url)
		}
	}

	// Stop a follower: after the max delay its work belongs to the others.
	var victim *testWorker
	var survivors []*testWorker
	for _, w := range ws {
		if victim == nil && !w.m.IsLeader() {
			victim = w
		} else {
			survivors = append(survivors, w)
		}
	}
	victim.stop()
	if victim.m.MemberID() != "" || victim.m.Generation() != -1 {
		t.Errorf("stopped member still has an id/generation: %q %d", victim.m.MemberID(), victim.m.Generation())
	}
	stopped := time.Now()
	eventually(t, 10*time.Second, func() string { return converged(topic, survivors...) })
	if protocol == "sessioned" {
		if d, _ := survivors[0].h.stats(); d <= 0 || d > 500 {
			t.Errorf("departed member's work was not held back (max delay seen %d)", d)
		}
		if e := time.Since(stopped); e < 400*time.Millisecond {
			t.Errorf("work reassigned after %v, before the max delay", e)
		}
	}

	// Change the configured work and request a rebalance from a follower:
	// the new work is spread and the deleted connector stopped.
	topic.set(map[string]int{"a": 2, "b": 1, "d": 3})
	var follower *testWorker
	for _, w := range survivors {
		if !w.m.IsLeader() {
			follower = w
		}
	}
	follower.m.RequestRejoin()
	if !follower.m.Rebalancing() {
		t.Error("Rebalancing() is false right after RequestRejoin")
	}
	eventually(t, 10*time.Second, func() string { return converged(topic, survivors...) })
	a, b := len(survivors[0].h.ownedItems()), len(survivors[1].h.ownedItems())
	if a+b != 9 || a < 3 || b < 3 {
		t.Errorf("unbalanced after the change: %d and %d items", a, b)
	}
	for _, w := range survivors {
		if _, errs := w.h.stats(); errs != 0 {
			t.Errorf("%s got CONFIG_MISMATCH", w.url)
		}
	}

	// Stop the leader: the last worker becomes leader (without the old
	// leader's view, so nothing is held back) and owns everything.
	for _, w := range survivors {
		if w != follower {
			w.stop()
		}
	}
	eventually(t, 10*time.Second, func() string { return converged(topic, follower) })
}

// When the leader leaves the group, the generation after has one leader:
// the member the assignments name, as Kafka's WorkerCoordinator decides.
// (kfake's JoinGroup then names every member of the generation its
// leader, and each of them took up the leader's duties.)
func TestMemberOneLeaderAfterTheLeaderLeaves(t *testing.T) {
	topic, ws := threeWorkers(t, "sessioned")
	eventually(t, 10*time.Second, func() string { return converged(topic, ws...) })
	var survivors []*testWorker
	for _, w := range ws {
		if w.m.IsLeader() {
			w.stop()
		} else {
			survivors = append(survivors, w)
		}
	}
	eventually(t, 10*time.Second, func() string { return converged(topic, survivors...) })
	led := map[int32]string{}
	for _, w := range survivors {
		for _, g := range w.h.leadGenerations() {
			if other, ok := led[g]; ok {
				t.Errorf("generation %d has two leaders: %s and %s", g, other, w.url)
			}
			led[g] = w.url
		}
	}
}

// A leader that cannot catch up answers CONFIG_MISMATCH, and the group
// recovers once it can.
type laggingHandler struct {
	*fakeHandler
	mu  sync.Mutex
	lag bool
	own int64
}

func (h *laggingHandler) ConfigOffset() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lag {
		return h.own
	}
	return h.fakeHandler.ConfigOffset()
}

func (h *laggingHandler) CatchUp(ctx context.Context, offset int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.lag
}

func TestMemberConfigMismatch(t *testing.T) {
	c, cl, topic := oneBroker(t)
	lh := &laggingHandler{fakeHandler: &fakeHandler{topic: topic, owned: itemSet{}}, lag: true, own: 0}
	m := NewMember(Config{Client: cl, GroupID: "g", URL: "http://lead/", SessionTimeout: time.Second,
		RebalanceTimeout: 2 * time.Second, HeartbeatInterval: 50 * time.Millisecond, Log: testLogger()}, lh)
	runMember(t, m)

	// m joins first and leads; a second member is ahead of it in the
	// config topic, so m cannot assign until it catches up.
	eventually(t, 10*time.Second, func() string {
		if !m.IsLeader() {
			return "m is not the leader yet"
		}
		return ""
	})
	w := startWorker(t, c.ListenAddrs(), topic, "g", "http://ahead/", "sessioned", testLogger())
	eventually(t, 10*time.Second, func() string {
		if _, errs := w.h.stats(); errs == 0 {
			return "no CONFIG_MISMATCH yet"
		}
		return ""
	})
	lh.mu.Lock()
	lh.lag = false
	lh.mu.Unlock()
	mw := &testWorker{url: "http://lead/", h: lh.fakeHandler, m: m}
	eventually(t, 10*time.Second, func() string { return converged(topic, mw, w) })
}

func TestMemberProtocolsAndDefaults(t *testing.T) {
	topic := &fakeConfigTopic{}
	topic.set(map[string]int{"a": 1}) // offset 1
	for _, tc := range []struct {
		protocol string
		names    []string
	}{
		{"", []string{ProtocolSessioned, ProtocolCompatible, ProtocolDefault}},
		{"sessioned", []string{ProtocolSessioned, ProtocolCompatible, ProtocolDefault}},
		{"compatible", []string{ProtocolCompatible, ProtocolDefault}},
		{"eager", []string{ProtocolDefault}},
	} {
		m := NewMember(Config{URL: "http://w:8083/", Protocol: tc.protocol}, &fakeHandler{topic: topic})
		if m.Generation() != -1 || !m.Rebalancing() || m.IsLeader() || m.MemberID() != "" || m.LeaderURL() != "" {
			t.Fatalf("fresh member state: gen %d rebalancing %v", m.Generation(), m.Rebalancing())
		}
		if m.cfg.SessionTimeout != 10*time.Second || m.cfg.RebalanceTimeout != time.Minute || m.cfg.HeartbeatInterval != 3*time.Second {
			t.Fatalf("defaults: %+v", m.cfg)
		}
		ps := m.protocols()
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
			md, err := DecodeMetadata(p.Metadata)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := ProtocolVersion(p.Name)
			if md.Version != v || md.URL != "http://w:8083/" || md.ConfigOffset != 1 || md.Current != nil {
				t.Fatalf("%s metadata: %+v", p.Name, md)
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(tc.names) {
			t.Fatalf("%q offers %v, want %v", tc.protocol, names, tc.names)
		}
	}

	// With an assignment, v1/v2 metadata carry the owned work.
	m := NewMember(Config{URL: "u", Protocol: "sessioned"}, &fakeHandler{topic: topic})
	m.last = &Assignment{Version: 2, Leader: "L", LeaderURL: "lu", ConfigOffset: 1}
	m.owned = toItems([]ConnectorTasks{{Connector: "a", Tasks: []int32{-1, 0}}})
	for _, p := range m.protocols() {
		md, _ := DecodeMetadata(p.Metadata)
		if p.Name == ProtocolDefault {
			if md.Current != nil {
				t.Fatal("v0 metadata carries an assignment")
			}
			continue
		}
		if md.Current == nil || md.Current.Version != 2 || fmt.Sprint(md.Current.Assigned) != "[{a [-1 0]}]" {
			t.Fatalf("%s current: %+v", p.Name, md.Current)
		}
	}

	if err := NewMember(Config{GroupID: "g"}, &fakeHandler{topic: topic}).Run(context.Background()); err == nil {
		t.Fatal("Run without a client succeeded")
	}
}

func TestMemberRequestRejoinFlags(t *testing.T) {
	m := NewMember(Config{}, &fakeHandler{topic: &fakeConfigTopic{}})
	m.mu.Lock()
	m.rebalancing = false
	m.mu.Unlock()
	m.RequestRejoin()
	m.RequestRejoin() // never blocks
	if !m.Rebalancing() {
		t.Fatal("not rebalancing after RequestRejoin")
	}
	m.beginRebalance()
	select {
	case <-m.rejoinCh:
		t.Fatal("pending request not absorbed by the join")
	default:
	}
}

// When the coordinator is gone for longer than the session timeout the
// member stops its work (the coordinator would have reassigned it).
func TestMemberRevokesWhenCoordinatorUnreachable(t *testing.T) {
	c, cl, topic := oneBroker(t)
	h := &fakeHandler{topic: topic, owned: itemSet{}}
	m := NewMember(Config{Client: cl, GroupID: "g", URL: "u", SessionTimeout: 500 * time.Millisecond,
		RebalanceTimeout: 500 * time.Millisecond, HeartbeatInterval: 50 * time.Millisecond, Log: testLogger()}, h)
	runMember(t, m)

	eventually(t, 10*time.Second, func() string {
		if len(h.ownedItems()) != 2 {
			return "work not assigned"
		}
		return ""
	})
	c.Close()
	eventually(t, 15*time.Second, func() string {
		if n := len(h.ownedItems()); n != 0 {
			return fmt.Sprintf("still owns %d items", n)
		}
		return ""
	})
}

// readingHandler reads a config record in the middle of a join, where the
// herder would: while the member builds its JoinGroup metadata (and asks to
// rejoin for it, as the herder's listener does), or while the leader takes
// its work, after it took the config offset.
type readingHandler struct {
	*fakeHandler
	m *Member

	mu       sync.Mutex
	inJoin   bool // next ConfigOffset call: read a record, ask to rejoin
	inLead   bool // next Work call: read a record
	assigned []assignedAt
}

type assignedAt struct {
	generation  int32
	offset      int64
	rebalancing bool // the member's state when the assignment was applied
}

func (h *readingHandler) ConfigOffset() int64 {
	h.mu.Lock()
	read := h.inJoin
	h.inJoin = false
	h.mu.Unlock()
	if read {
		h.topic.set(map[string]int{"a": 1, "b": 1})
		h.m.RequestRejoin()
	}
	return h.fakeHandler.ConfigOffset()
}

func (h *readingHandler) Work() map[string]int {
	h.mu.Lock()
	read := h.inLead
	h.inLead = false
	h.mu.Unlock()
	w := h.fakeHandler.Work()
	if read {
		h.topic.set(map[string]int{"a": 1, "b": 1, "c": 1})
	}
	return w
}

func (h *readingHandler) Assigned(a Assignment, owned []ConnectorTasks, generation int32, leader bool, members []string) {
	h.fakeHandler.Assigned(a, owned, generation, leader, members)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.assigned = append(h.assigned, assignedAt{generation, a.ConfigOffset, h.m.Rebalancing()})
}

func (h *readingHandler) last() assignedAt {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.assigned) == 0 {
		return assignedAt{generation: -1}
	}
	return h.assigned[len(h.assigned)-1]
}

// rejoin sets read (one of the flags, under h.mu), asks the member to
// rejoin and returns the first assignment after that.
func (h *readingHandler) rejoin(t *testing.T, read *bool) assignedAt {
	t.Helper()
	before := h.last()
	h.mu.Lock()
	*read = true
	h.mu.Unlock()
	h.m.RequestRejoin()
	eventually(t, 10*time.Second, func() string {
		if h.last().generation == before.generation {
			return "no new assignment yet"
		}
		return ""
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, a := range h.assigned {
		if a.generation > before.generation {
			return a
		}
	}
	return assignedAt{generation: -1}
}

// A member rejoins after an assignment exactly when it has read config
// records the leader's assignment did not cover. A record read during the
// join that the leader read as well needs no rebalance: starting one would
// leave the members already synced waiting for a heartbeat to learn of it.
func TestMemberRejoinsOnlyForConfigTheLeaderMissed(t *testing.T) {
	_, cl, topic := oneBroker(t)
	h := &readingHandler{fakeHandler: &fakeHandler{topic: topic, owned: itemSet{}}}
	m := NewMember(Config{Client: cl, GroupID: "g", URL: "http://w/", SessionTimeout: 3 * time.Second,
		RebalanceTimeout: 5 * time.Second, HeartbeatInterval: 100 * time.Millisecond, Log: testLogger()}, h)
	h.m = m
	runMember(t, m)
	w := &testWorker{url: "http://w/", h: h.fakeHandler, m: m}
	eventually(t, 10*time.Second, func() string { return converged(topic, w) })

	// Covered: the record read while joining is in the assignment.
	covered := h.rejoin(t, &h.inJoin)
	offset, _ := topic.snapshot()
	if covered.offset != offset || covered.rebalancing {
		t.Fatalf("after a record the leader read too: assignment %+v, topic at %d; want that offset and no rejoin", covered, offset)
	}
	eventually(t, 10*time.Second, func() string { return converged(topic, w) })

	// Missed: the leader took its offset, then a record came before its
	// work was read, so the work is newer than the offset it claims.
	missed := h.rejoin(t, &h.inLead)
	if offset, _ := topic.snapshot(); missed.offset != offset-1 || !missed.rebalancing {
		t.Fatalf("after a record the assignment's offset does not cover: %+v, topic at %d; want a rejoin", missed, offset)
	}
	eventually(t, 10*time.Second, func() string {
		offset, _ := topic.snapshot()
		if got := h.last(); got.offset != offset {
			return fmt.Sprintf("last assignment %+v, topic at %d", got, offset)
		}
		return converged(topic, w)
	})
}

// Requested rejoins go at once while they are few, and a burst of them is
// spaced rejoinGather apart.
func TestRejoinBudget(t *testing.T) {
	var b rejoinBudget
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		now  time.Duration
		wait time.Duration
	}{
		// A connector created alone: its config, then its task configs.
		{0, 0},
		{20 * time.Millisecond, 0},
		// A burst: the third request waits for a token, and the ones
		// after it go a gather after the one before (at 100, 200,
		// 300 ms).
		{40 * time.Millisecond, 60 * time.Millisecond},
		{130 * time.Millisecond, 70 * time.Millisecond},
		{230 * time.Millisecond, 70 * time.Millisecond},
		// Quiet for two gathers: the bucket is full again.
		{600 * time.Millisecond, 0},
		{610 * time.Millisecond, 0},
		{620 * time.Millisecond, 80 * time.Millisecond},
	}
	for i, s := range steps {
		if got := b.take(at(s.now)); got != s.wait {
			t.Fatalf("request %d at %v: waits %v, want %v", i, s.now, got, s.wait)
		}
	}
}
