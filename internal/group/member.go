package group

// The group member: drives JoinGroup/SyncGroup/Heartbeat/LeaveGroup for one
// worker and tells the herder (Handler) what to stop and what it owns.
//
// Goroutines:
//
//   - the Run goroutine (the caller's) does everything except heartbeating:
//     it joins and syncs, runs the assignor when it is the leader, calls the
//     Handler (Revoked, Assigned, and ConfigOffset/CatchUp/Work), and waits
//     for the next reason to rejoin;
//   - one heartbeat goroutine per completed join, started right after a
//     successful SyncGroup (so heartbeats continue while the Handler's
//     callbacks stop and start work) and stopped (cancelled and waited for)
//     before the next JoinGroup or the LeaveGroup. It only reports the error
//     that requires a rejoin, through a buffered channel.
//
// Locking: Member.mu guards the fields read by the accessors (member id,
// generation, leader, rebalancing flags). It is a leaf lock: it is never held
// while calling the Handler, doing network I/O or blocking on a channel, so
// Handler callbacks may call any Member method (accessors, RequestRejoin).
// Everything else (owned work, the last assignment, the assignor state) is
// confined to the Run goroutine and needs no lock. There is no other lock.
//
// Behaviour (see §4.6 of the reference): protocols are offered in preference
// order (sessioned: sessioned, compatible, default; compatible: compatible,
// default; eager: default); v1/v2 metadata carries the current assignment.
// With a cooperative protocol a member keeps its work across rebalances until
// it is explicitly revoked; it calls Revoked for the revoked work, then
// Assigned, and rejoins at once when something was revoked. With eager
// (protocol "default" chosen) it revokes everything before every join.
// After an assignment, a pending rejoin request stays only if this worker
// has read the config topic past the offset the leader assigned from (and
// one is made if so); the leader reads its offset before its work, so the
// offset never claims more than the work covers.
// A Delay in the assignment schedules a rejoin after it; CONFIG_MISMATCH
// rejoins after a short backoff (the Handler is expected to catch up on the
// config topic in Assigned). REBALANCE_IN_PROGRESS and ILLEGAL_GENERATION
// rejoin with the same member id, UNKNOWN_MEMBER_ID with a new one.
//
// Simplifications relative to Java's WorkerCoordinator: no static membership
// (like Java); when the coordinator cannot be reached, the whole assignment is
// revoked once no heartbeat or sync succeeded for a session timeout (the time
// after which the coordinator expels the member), where Java uses the
// heartbeat interval as coordinator discovery timeout; the heartbeat goroutine
// triggers a rejoin when no heartbeat succeeded for a session timeout; the
// leader's CatchUp is bounded by half the session timeout so that the
// SyncGroup reaches the coordinator before the followers' sessions expire.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures a Member. Zero durations take Kafka Connect's defaults
// (session 10s, rebalance 60s, heartbeat 3s); an empty Protocol means
// "sessioned". MaxDelay is scheduled.rebalance.max.delay.ms (Java default 5
// minutes); 0 reassigns departed members' work at once.
type Config struct {
	Client            *kgo.Client
	GroupID           string
	URL               string // this worker's advertised REST URL
	SessionTimeout    time.Duration
	RebalanceTimeout  time.Duration
	HeartbeatInterval time.Duration
	Protocol          string // "eager" | "compatible" | "sessioned"
	MaxDelay          time.Duration
	Log               *slog.Logger
}

// Handler is implemented by the herder.
type Handler interface {
	// ConfigOffset is this worker's position in the config topic.
	ConfigOffset() int64
	// CatchUp reads the config topic to at least offset (the leader calls it
	// with the max offset members reported); false if it could not in time.
	CatchUp(ctx context.Context, offset int64) bool
	// Work is the desired work from the leader's current config snapshot:
	// connector names and their task counts.
	Work() map[string]int
	// LastWorker is the worker (host:port) the status topic last saw run
	// a connector (task ConnectorTask) or task, "" if none.
	LastWorker(connector string, task int32) string
	// Revoked: stop these before the group moves on (called before joining
	// again).
	Revoked(revoked []ConnectorTasks)
	// Assigned: the new assignment (the full list of what this member now
	// owns, and the leader's URL, config offset, generation, whether this
	// member is the leader, and Error CONFIG_MISMATCH=1). members are the
	// URLs of the group's members when this member led the join.
	Assigned(a Assignment, owned []ConnectorTasks, generation int32, leader bool, members []string)
}

// Member is one worker's membership in the Connect group.
type Member struct {
	cfg      Config
	h        Handler
	log      *slog.Logger
	rejoinCh chan struct{} // capacity 1; RequestRejoin wakes Run
	running  atomic.Bool
	// lastContact is the time (UnixNano) of the last successful sync or
	// heartbeat; written by the Run and heartbeat goroutines.
	lastContact atomic.Int64

	mu              sync.Mutex // leaf lock, see the file comment
	memberID        string
	generation      int32
	leaderID        string
	leaderURL       string
	rebalancing     bool
	rejoinRequested bool
	rebalanceStart  time.Time // of the rebalance in progress, from its first join
	stats           RebalanceStats
	rejoinSeq       uint64 // RequestRejoin calls so far

	// Confined to the Run goroutine.
	owned            itemSet     // everything this member owns now
	last             *Assignment // last assignment received, nil before the first
	lastVersion      int16       // version of the protocol chosen in the last join
	appliedGen       int32       // generation of the last applied assignment
	lastCompletedGen int32       // generation of the last successful sync
	ledURLs          []string    // members' URLs in the last join this member led
	astate           AssignorState
	rejoins          rejoinBudget
}

// NewMember returns a member; call Run to join the group.
func NewMember(cfg Config, h Handler) *Member {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.RebalanceTimeout <= 0 {
		cfg.RebalanceTimeout = 60 * time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 3 * time.Second
	}
	if cfg.Protocol == "" {
		cfg.Protocol = "sessioned"
	}
	cfg.MaxDelay = max(cfg.MaxDelay, 0)
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	m := &Member{
		cfg:              cfg,
		h:                h,
		log:              log.With("group", cfg.GroupID),
		rejoinCh:         make(chan struct{}, 1),
		generation:       -1,
		rebalancing:      true,
		owned:            itemSet{},
		lastVersion:      configuredVersion(cfg.Protocol),
		appliedGen:       -1,
		lastCompletedGen: -1,
	}
	return m
}

func configuredVersion(p string) int16 {
	switch p {
	case "compatible":
		return VersionCompatible
	case "sessioned":
		return VersionSessioned
	}
	return VersionEager
}

// LeaderURL is the REST URL of the leader from the last assignment ("" before).
func (m *Member) LeaderURL() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderURL
}

// Generation is the generation of the last assignment (-1 before).
func (m *Member) Generation() int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.generation
}

// IsLeader tells whether this member led the last completed rebalance.
func (m *Member) IsLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID != "" && m.leaderID == m.memberID
}

// MemberID is the member id given by the coordinator ("" when not a member).
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// RebalanceStats are Kafka Connect's connect-worker-rebalance-metrics.
type RebalanceStats struct {
	Completed int64 // completed-rebalances-total
	Epoch     int32 // the generation of the last one
	// MaxTime and AvgTime are rebalance-max-time-ms and
	// rebalance-avg-time-ms, from the first join to the assignment.
	MaxTime, AvgTime time.Duration
	Last             time.Time // the end of the last one; zero before any
	totalTime        time.Duration
}

// RebalanceStats returns the counts and times of the rebalances so far.
func (m *Member) RebalanceStats() RebalanceStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.stats
	if st.Completed > 0 {
		st.AvgTime = st.totalTime / time.Duration(st.Completed)
	}
	return st
}

// Rebalancing is true from the moment a rebalance is needed or started until
// the next Assigned (and before the first one).
func (m *Member) Rebalancing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rebalancing
}

// RequestRejoin asks for a rebalance (e.g. the config topic gained connectors
// or task configs). It never blocks. Note that, as in Kafka, a follower whose
// metadata (config offset, owned work) did not change is answered by the
// coordinator with the current generation without a rebalance.
func (m *Member) RequestRejoin() {
	m.mu.Lock()
	m.rejoinRequested = true
	m.rejoinSeq++
	m.rebalancing = true
	m.mu.Unlock()
	select {
	case m.rejoinCh <- struct{}{}:
	default:
	}
}

// Requested rejoins go at once while there are few of them: a connector
// created alone asks for one with its config and another with its task
// configs, and a rebalance takes milliseconds. Beyond rejoinBurst of them
// they go rejoinGather apart, each rebalance taking in every change
// made while it waited.
const (
	rejoinGather = 100 * time.Millisecond
	rejoinBurst  = 2
)

// rejoinBudget is a token bucket of rejoinBurst requested rejoins, one
// more each rejoinGather, kept as time: credit is the tokens times
// rejoinGather.
type rejoinBudget struct {
	credit time.Duration
	at     time.Time // when credit was counted; zero: a full bucket
}

// take returns how long a rejoin requested at now waits, and spends its
// token.
func (b *rejoinBudget) take(now time.Time) time.Duration {
	const full = rejoinBurst * rejoinGather
	if b.at.IsZero() {
		b.credit = full
	} else if now.After(b.at) {
		b.credit = min(full, b.credit+now.Sub(b.at))
	}
	if b.credit >= rejoinGather {
		b.credit -= rejoinGather
		b.at = now
		return 0
	}
	wait := rejoinGather - b.credit
	// The token that comes at now+wait is spent then.
	b.credit, b.at = 0, now.Add(wait)
	return wait
}

// errSessionLost is reported by the heartbeat goroutine when no heartbeat
// succeeded for a session timeout.
var errSessionLost = errors.New("group: no successful heartbeat within the session timeout")

// Run joins the group and takes part in it until ctx is done; it then sends
// LeaveGroup and returns nil. It returns an error early only for a bad
// configuration or a fatal group error (authorization, invalid session
// timeout, inconsistent protocol, group full). Run must be called once.
func (m *Member) Run(ctx context.Context) error {
	if m.cfg.Client == nil || m.cfg.GroupID == "" || m.h == nil {
		return errors.New("group: Client, GroupID and Handler are required")
	}
	switch m.cfg.Protocol {
	case "eager", "compatible", "sessioned":
	default:
		return fmt.Errorf("group: invalid connect.protocol %q", m.cfg.Protocol)
	}
	if !m.running.CompareAndSwap(false, true) {
		return errors.New("group: Run called more than once")
	}

	reason := "joining the group"
	for {
		if ctx.Err() != nil {
			m.leave(ctx)
			return nil
		}
		m.beginRebalance()
		if m.lastVersion == VersionEager && len(m.owned) > 0 {
			m.log.Info("revoking the whole assignment before rejoining (eager protocol)")
			m.h.Revoked(fromItems(m.owned))
			m.owned = itemSet{}
		}
		m.log.Info("joining the group", "reason", reason)
		res, err := m.joinAndSync(ctx, reason)
		if err != nil {
			if ctx.Err() != nil {
				m.leave(ctx)
				return nil
			}
			if fatal(err) {
				m.leave(ctx)
				return fmt.Errorf("group: %w", err)
			}
			m.log.Warn("join failed, retrying", "err", err)
			if len(m.owned) > 0 && time.Since(time.Unix(0, m.lastContact.Load())) > m.cfg.SessionTimeout {
				// The coordinator has expelled us by now and may have given
				// our work to others: stop it rather than run it twice.
				m.log.Warn("coordinator unreachable for a session timeout; revoking the whole assignment")
				m.h.Revoked(fromItems(m.owned))
				m.owned = itemSet{}
			}
			if !sleep(ctx, m.retryBackoff()) {
				m.leave(ctx)
				return nil
			}
			reason = "retrying after: " + err.Error()
			continue
		}

		hb := m.startHeartbeat(ctx, res.memberID, res.generation)
		fu := m.apply(res)
		var done bool
		reason, done = m.wait(ctx, hb, fu)
		hb.stop()
		if done {
			m.leave(ctx)
			return nil
		}
	}
}

// beginRebalance marks the start of a join: Rebalancing becomes true and
// pending rejoin requests are absorbed by this join (requests arriving later
// cause another one).
func (m *Member) beginRebalance() {
	m.mu.Lock()
	if m.rebalanceStart.IsZero() {
		m.rebalanceStart = time.Now()
	}
	m.rebalancing = true
	m.rejoinRequested = false
	m.mu.Unlock()
	select {
	case <-m.rejoinCh:
	default:
	}
}

func (m *Member) retryBackoff() time.Duration {
	return min(max(m.cfg.HeartbeatInterval, 100*time.Millisecond), time.Second)
}

func fatal(err error) bool {
	for _, e := range []error{
		kerr.GroupAuthorizationFailed, kerr.InvalidSessionTimeout, kerr.InconsistentGroupProtocol,
		kerr.GroupMaxSizeReached, kerr.InvalidGroupID, kerr.FencedInstanceID,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func millis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), math.MaxInt32))
}

// joinResult is a completed JoinGroup+SyncGroup.
type joinResult struct {
	memberID   string
	generation int32
	protocol   string
	assignment []byte
}

// joinAndSync runs JoinGroup and SyncGroup until both succeed, handling the
// errors that only need another attempt. Each request is bounded by the
// rebalance plus the session timeout (the coordinator may hold a JoinGroup
// for the rebalance timeout), independently of the client's retry timeout.
func (m *Member) joinAndSync(ctx context.Context, reason string) (joinResult, error) {
	for {
		if err := ctx.Err(); err != nil {
			return joinResult{}, err
		}
		m.mu.Lock()
		memberID := m.memberID
		m.mu.Unlock()

		join := kmsg.NewPtrJoinGroupRequest()
		join.Group = m.cfg.GroupID
		join.SessionTimeoutMillis = millis(m.cfg.SessionTimeout)
		join.RebalanceTimeoutMillis = millis(m.cfg.RebalanceTimeout)
		join.MemberID = memberID
		join.ProtocolType = ProtocolType
		join.Protocols = m.protocols()
		join.Reason = kmsg.StringPtr(reason)
		m.log.Debug("joining", "member_id", memberID, "reason", reason)
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout)
		jresp, err := join.RequestWith(rctx, m.cfg.Client)
		cancel()
		if err != nil {
			return joinResult{}, err
		}
		if err := kerr.ErrorForCode(jresp.ErrorCode); err != nil {
			switch {
			case errors.Is(err, kerr.MemberIDRequired): // KIP-394: retry with the given id
				m.setMemberID(jresp.MemberID)
				continue
			case errors.Is(err, kerr.UnknownMemberID):
				m.setMemberID("")
				continue
			case errors.Is(err, kerr.RebalanceInProgress):
				if !sleep(ctx, m.retryBackoff()) {
					return joinResult{}, ctx.Err()
				}
				continue
			}
			return joinResult{}, err
		}
		m.setMemberID(jresp.MemberID)
		protocol := ""
		if jresp.Protocol != nil {
			protocol = *jresp.Protocol
		}
		if _, ok := ProtocolVersion(protocol); !ok {
			return joinResult{}, fmt.Errorf("coordinator chose unknown protocol %q", protocol)
		}

		sync := kmsg.NewPtrSyncGroupRequest()
		sync.Group = m.cfg.GroupID
		sync.Generation = jresp.Generation
		sync.MemberID = jresp.MemberID
		sync.ProtocolType = kmsg.StringPtr(ProtocolType)
		sync.Protocol = kmsg.StringPtr(protocol)
		if jresp.LeaderID == jresp.MemberID {
			sync.GroupAssignment = m.lead(ctx, jresp, protocol)
		}
		rctx, cancel = context.WithTimeout(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout)
		sresp, err := sync.RequestWith(rctx, m.cfg.Client)
		cancel()
		if err != nil {
			return joinResult{}, err
		}
		if err := kerr.ErrorForCode(sresp.ErrorCode); err != nil {
			switch {
			case errors.Is(err, kerr.RebalanceInProgress), errors.Is(err, kerr.IllegalGeneration):
				m.log.Debug("sync failed, rejoining", "err", err)
				continue
			case errors.Is(err, kerr.UnknownMemberID):
				m.setMemberID("")
				continue
			}
			return joinResult{}, err
		}
		m.lastCompletedGen = jresp.Generation
		m.lastContact.Store(time.Now().UnixNano())
		return joinResult{
			memberID:   jresp.MemberID,
			generation: jresp.Generation,
			protocol:   protocol,
			assignment: sresp.MemberAssignment,
		}, nil
	}
}

func (m *Member) setMemberID(id string) {
	m.mu.Lock()
	m.memberID = id
	m.mu.Unlock()
}

// protocols builds the JoinGroup protocols in preference order.
func (m *Member) protocols() []kmsg.JoinGroupRequestProtocol {
	offset := m.h.ConfigOffset()
	var cur *Assignment
	if m.last != nil {
		c := *m.last
		c.Version = max(c.Version, VersionCompatible)
		c.Assigned = fromItems(m.owned)
		c.Revoked = []ConnectorTasks{}
		cur = &c
	}
	proto := func(name string, v int16) kmsg.JoinGroupRequestProtocol {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = name
		p.Metadata = EncodeMetadata(Metadata{Version: v, URL: m.cfg.URL, ConfigOffset: offset, Current: cur})
		return p
	}
	var ps []kmsg.JoinGroupRequestProtocol
	switch m.cfg.Protocol {
	case "sessioned":
		ps = append(ps, proto(ProtocolSessioned, VersionSessioned))
		fallthrough
	case "compatible":
		ps = append(ps, proto(ProtocolCompatible, VersionCompatible))
	}
	return append(ps, proto(ProtocolDefault, VersionEager))
}

// lead computes the assignments as the leader.
func (m *Member) lead(ctx context.Context, jresp *kmsg.JoinGroupResponse, protocol string) []kmsg.SyncGroupRequestGroupAssignment {
	version, _ := ProtocolVersion(protocol)
	in := AssignInput{
		Version:                 version,
		Generation:              jresp.Generation,
		LastCompletedGeneration: m.lastCompletedGen,
		LeaderID:                jresp.MemberID,
		LeaderURL:               m.cfg.URL,
		MaxDelay:                m.cfg.MaxDelay,
		LastWorker:              m.h.LastWorker,
	}
	maxOffset := int64(math.MinInt64)
	m.ledURLs = m.ledURLs[:0]
	for _, jm := range jresp.Members {
		md, err := DecodeMetadata(jm.ProtocolMetadata)
		if err != nil {
			m.log.Warn("cannot decode member metadata; treating the member as empty", "member_id", jm.MemberID, "err", err)
			md = Metadata{ConfigOffset: -1}
		}
		st := MemberState{ID: jm.MemberID, URL: md.URL, ConfigOffset: md.ConfigOffset}
		if md.Current != nil && version >= VersionCompatible {
			st.Owned = md.Current.Assigned
		}
		in.Members = append(in.Members, st)
		m.ledURLs = append(m.ledURLs, md.URL)
		maxOffset = max(maxOffset, md.ConfigOffset)
	}

	// The offset is read before the work, so that the assignment never
	// claims more of the config topic than its work comes from: members
	// that read no further take it as covering what they read.
	offset := m.h.ConfigOffset()
	work := m.h.Work()
	if offset < maxOffset {
		cctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout/2)
		ok := m.h.CatchUp(cctx, maxOffset)
		cancel()
		offset = m.h.ConfigOffset()
		work = m.h.Work()
		if !ok || offset < maxOffset {
			m.log.Warn("leader cannot read the config topic up to the members' offset; answering CONFIG_MISMATCH",
				"leader_offset", offset, "max_offset", maxOffset)
			in.Error = ErrConfigMismatch
			offset = maxOffset
		}
	}
	in.ConfigOffset = offset
	if in.Error == ErrNone {
		in.Work = work
	}
	in.Now = time.Now()
	out, ns := Assign(m.astate, in)
	m.astate = ns

	plan := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(out))
	for _, st := range in.Members {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = st.ID
		a.MemberAssignment = EncodeAssignment(out[st.ID])
		plan = append(plan, a)
	}
	m.log.Debug("leader computed assignments", "generation", jresp.Generation, "protocol", protocol, "members", len(plan))
	return plan
}

// followUp says when to rejoin after an assignment.
type followUp struct {
	immediate bool
	after     time.Duration // 0: only on demand
	reason    string
}

// apply applies a sync result: revocations, then the new assignment.
func (m *Member) apply(res joinResult) followUp {
	version, _ := ProtocolVersion(res.protocol)
	a, err := DecodeAssignment(res.assignment)
	if err == nil && len(res.assignment) == 0 {
		err = errors.New("empty assignment")
	}
	if err != nil {
		m.log.Warn("invalid assignment from the leader; rejoining", "err", err)
		return followUp{after: m.retryBackoff(), reason: "invalid assignment"}
	}
	if version >= VersionCompatible && res.generation == m.appliedGen {
		// The coordinator answered a rejoin with the current generation (no
		// rebalance happened): this assignment was applied already.
		m.mu.Lock()
		m.rebalancing = m.rejoinRequested
		m.mu.Unlock()
		return followUp{}
	}

	if version == VersionEager {
		// Normally nothing is owned here (revoked before the join); a switch
		// from a cooperative protocol to eager can leave work behind.
		stale := m.owned.clone()
		stale.removeAll(toItems(a.Assigned))
		if len(stale) > 0 {
			m.h.Revoked(fromItems(stale))
		}
		m.owned = toItems(a.Assigned)
	} else {
		revoked := toItems(a.Revoked)
		if len(revoked) > 0 {
			m.h.Revoked(a.Revoked)
		}
		m.owned.removeAll(revoked)
		m.owned.addAll(toItems(a.Assigned))
	}
	m.last = &a
	m.lastVersion = version
	m.appliedGen = res.generation
	m.mu.Lock()
	took := time.Since(m.rebalanceStart)
	m.stats.Completed++
	m.stats.Epoch = res.generation
	m.stats.MaxTime = max(m.stats.MaxTime, took)
	m.stats.totalTime += took
	m.stats.Last = time.Now()
	m.rebalanceStart = time.Time{}
	m.mu.Unlock()

	var fu followUp
	switch {
	case a.Error != ErrNone:
		fu = followUp{after: m.retryBackoff(), reason: "config mismatch"}
	case version >= VersionCompatible && len(a.Revoked) > 0:
		fu = followUp{immediate: true, reason: "work was revoked"}
	case a.Delay > 0:
		fu = followUp{after: time.Duration(a.Delay) * time.Millisecond, reason: "scheduled rebalance"}
	}
	// The leader is the member the assignment names, as for Kafka's
	// WorkerCoordinator, not whoever JoinGroup called the leader: when
	// the leader has left, kfake's JoinGroup names every member of the
	// next generation its leader, and only the last one's assignments
	// are kept. A member that only computed assignments forgets the
	// state it computed them with, which describes no real assignment.
	leader := a.Leader == res.memberID
	if !leader {
		m.astate = AssignorState{}
	}
	if a.Error == ErrNone {
		m.settleRejoin(a.ConfigOffset)
	}
	m.mu.Lock()
	m.generation = res.generation
	m.leaderID = a.Leader
	m.leaderURL = a.LeaderURL
	m.rebalancing = m.rejoinRequested || fu.immediate || a.Error != ErrNone
	m.mu.Unlock()

	owned := fromItems(m.owned)
	m.log.Info("assignment received", "generation", res.generation, "protocol", res.protocol, "leader", leader,
		"error", a.Error, "assigned", len(toItems(a.Assigned)), "revoked", len(toItems(a.Revoked)),
		"owned", len(m.owned), "delay_ms", a.Delay)
	var members []string
	if leader {
		members = slices.Clone(m.ledURLs)
	}
	m.h.Assigned(a, owned, res.generation, leader, members)
	return fu
}

// settleRejoin keeps a request to rejoin only while this worker has read
// config records past offset, the config topic position the leader assigned
// from. Records read during a join ask for a rejoin, though the leader may
// have read them as well before assigning: rejoining then would start a
// rebalance that the members already synced learn of only from a heartbeat,
// up to a second later. And a member whose join took up its request while
// the leader had not read that far asks again.
func (m *Member) settleRejoin(offset int64) {
	m.mu.Lock()
	seq := m.rejoinSeq
	m.mu.Unlock()
	// Read without the lock (the Handler is never called under it). A
	// request made from now on may be for a record this read missed, so
	// only those made before are dropped.
	if m.h.ConfigOffset() > offset {
		m.RequestRejoin()
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rejoinSeq == seq {
		m.rejoinRequested = false
		select {
		case <-m.rejoinCh:
		default:
		}
	}
}

// wait blocks until the next reason to rejoin; done means ctx is over.
func (m *Member) wait(ctx context.Context, hb *heartbeater, fu followUp) (reason string, done bool) {
	if fu.immediate {
		return fu.reason, ctx.Err() != nil
	}
	var timer <-chan time.Time
	if fu.after > 0 {
		t := time.NewTimer(fu.after)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return "", true
	case <-m.rejoinCh:
		// A burst of config changes (connectors created one after the
		// other, each with its task configs) asks for a rejoin with
		// each: in a burst they are gathered, to make one rebalance,
		// whose cost grows with the cluster, instead of one each.
		if d := m.rejoins.take(time.Now()); d > 0 && !sleep(ctx, d) {
			return "", true
		}
		return "rejoin requested", false
	case <-timer:
		return fu.reason, false
	case err := <-hb.errc:
		if errors.Is(err, kerr.UnknownMemberID) {
			m.setMemberID("")
		}
		m.mu.Lock()
		m.rebalancing = true
		m.mu.Unlock()
		m.log.Info("rejoining after heartbeat error", "err", err)
		return "heartbeat: " + err.Error(), false
	}
}

// heartbeater is the heartbeat goroutine of one generation.
type heartbeater struct {
	cancel context.CancelFunc
	done   chan struct{}
	errc   chan error // capacity 1: the error that requires a rejoin
}

func (m *Member) startHeartbeat(ctx context.Context, memberID string, generation int32) *heartbeater {
	ctx, cancel := context.WithCancel(ctx)
	hb := &heartbeater{cancel: cancel, done: make(chan struct{}), errc: make(chan error, 1)}
	go func() {
		defer close(hb.done)
		t := time.NewTicker(m.cfg.HeartbeatInterval)
		defer t.Stop()
		lastOK := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			req := kmsg.NewPtrHeartbeatRequest()
			req.Group = m.cfg.GroupID
			req.Generation = generation
			req.MemberID = memberID
			rctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
			resp, err := req.RequestWith(rctx, m.cfg.Client)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
				if err == nil {
					lastOK = time.Now()
					m.lastContact.Store(lastOK.UnixNano())
					continue
				}
			} else if time.Since(lastOK) < m.cfg.SessionTimeout {
				m.log.Debug("heartbeat failed", "err", err)
				continue
			} else {
				err = errSessionLost
			}
			hb.errc <- err
			return
		}
	}()
	return hb
}

func (hb *heartbeater) stop() {
	hb.cancel()
	<-hb.done
}

// leave sends LeaveGroup (with a fresh deadline: ctx is usually done) and
// forgets the membership.
func (m *Member) leave(ctx context.Context) {
	m.mu.Lock()
	id := m.memberID
	m.memberID = ""
	m.generation = -1
	m.leaderID, m.leaderURL = "", ""
	m.rebalancing = true
	m.mu.Unlock()
	if id == "" {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(m.cfg.SessionTimeout, 5*time.Second))
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = id
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = id
	lm.Reason = kmsg.StringPtr("the worker is stopping")
	req.Members = []kmsg.LeaveGroupRequestMember{lm}
	resp, err := req.RequestWith(lctx, m.cfg.Client)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		m.log.Warn("leaving the group failed", "member_id", id, "err", err)
		return
	}
	m.log.Info("left the group", "member_id", id)
}
