package group

// The leader's assignor.
//
// Assign is a pure function: it takes the members' metadata, the desired work
// from the leader's config snapshot, the time and the max delay, plus the
// assignor's own state from the previous round (AssignorState, kept by the
// caller between rounds), and returns one Assignment per member and the state
// for the next round. It does no I/O and reads no clock.
//
// Protocol v1/v2 (incremental cooperative, KIP-415) follows the behaviour of
// Java's IncrementalCooperativeAssignor:
//
//   - configured work C: every connector of the snapshot (task id -1) and its
//     tasks 0..n-1; active work A: the union of what members report owning;
//     previous P: what the leader itself considered assigned after its last
//     round (only trusted when that round's generation is the leader's last
//     completed generation, as in Java);
//   - work no longer configured, and work reported by two or more members, is
//     revoked from its holders. Duplicated work is revoked from every holder
//     and assigned afresh in the next round (it is then unowned);
//   - lost work (in P, configured, owned by nobody) is reassigned at once when
//     every member of the previous round is still there (a member simply did
//     not receive its assignment); otherwise the departed members' work is
//     held back: the first such round schedules a reassignment at
//     now+MaxDelay, every member gets Delay = time left (so everybody rejoins
//     then), and once that time has passed the work is reassigned;
//   - new and reassigned work goes to the least loaded member, connectors
//     balanced by connector count and tasks by task count, independently;
//   - when no work is held back, members above their fair share (floor or
//     ceiling of configured/members, the extra units going to the most
//     loaded members) have the surplus revoked. Revoked work is not assigned
//     in the same round: the revoked members rejoin at once and the work,
//     now unowned, is assigned in that follow-up round. When two consecutive
//     rounds need balancing revocations, the second and later ones are
//     postponed with an exponential backoff capped at MaxDelay (communicated
//     through Delay);
//   - members whose config offset is behind are assigned like the others;
//     the assignment's ConfigOffset tells them how far to read first.
//
// Beyond Java, with the status topic's view of which worker (host:port) last
// ran each item (AssignInput.LastWorker):
//
//   - lost work whose worker is a member again (it restarted, with a new
//     member id) goes back to it at once, not when the delay expires: a
//     rolling restart leaves the other workers' work alone and the
//     restarted worker's waits only for its return;
//   - a leader elected since the last round (no previous view) holds back
//     the unowned work of workers that are gone, as the old leader would
//     have, instead of spreading it over the others at once;
//   - a member that still claims work the previous round revoked from it
//     (it missed that round's assignment) is told again, and the work goes
//     to no one else in this round. Java counts the claim: a zombie worker
//     that missed the revocation of a task it held twice keeps it, failed
//     (fenced out), while the other holder dropped it.
//
// Simplifications relative to Java:
//
//   - deleted work is computed from what is owned or previously assigned
//     ((A ∪ P) − C), not only from P, so a new leader (empty P) also revokes
//     work that is no longer configured;
//   - when held-back work is finally reassigned it goes through the normal
//     least-loaded placement instead of Java's preference for "candidate"
//     workers that were empty while the delay ran (in practice the same
//     workers: a returning worker is empty and hence least loaded);
//   - Java's bookkeeping of revocations that "did not take effect" is not
//     needed: work still reported as owned stays with its owner;
//   - the backoff between successive balancing revocations is
//     250ms·4^(n-1) capped at MaxDelay (Java: 1ms·40^(n-1));
//   - balancing revocations choose the highest-sorted items of a member.
//
// Protocol v0 (eager): every member has revoked everything before joining, so
// the whole configured work is assigned from scratch, balanced the same way;
// Assigned is the member's complete assignment and there is no Revoked/Delay.

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"time"
)

// MemberState is what the leader knows about one member from its JoinGroup
// metadata.
type MemberState struct {
	ID           string
	URL          string
	ConfigOffset int64
	// Owned is the member's current assignment as reported in its v1/v2
	// metadata (ignored with eager).
	Owned []ConnectorTasks
}

// AssignInput is the input of one assignment round.
type AssignInput struct {
	// Version is the version of the sub-protocol chosen by the coordinator:
	// 0 (eager), 1 or 2 (cooperative). The assignments carry it.
	Version int16
	// Generation is the generation being assigned.
	Generation int32
	// LastCompletedGeneration is the generation of the leader's last
	// successfully synced assignment (-1 if none). The state's view of the
	// previous assignment is only used when it was computed for that
	// generation.
	LastCompletedGeneration int32
	// Error, when not ErrNone (i.e. ErrConfigMismatch), makes Assign answer
	// every member with that error and no work; the state is carried over
	// unchanged to this generation (nothing moved).
	Error        int16
	LeaderID     string
	LeaderURL    string
	ConfigOffset int64 // the config offset the assignments refer to
	// Work is the desired work: connector names and their task counts.
	Work    map[string]int
	Members []MemberState
	// Now is the current time; MaxDelay is scheduled.rebalance.max.delay.ms.
	Now      time.Time
	MaxDelay time.Duration
	// LastWorker names the worker (host:port, as in the status topic) that
	// last ran a connector (task ConnectorTask) or task, "" if none is
	// known; nil: none is. It says whose unowned work it is.
	LastWorker func(connector string, task int32) string
}

// AssignorState is the leader's memory between rounds. The zero value is the
// initial state.
type AssignorState struct {
	// Generation is the generation whose assignment this state describes.
	Generation int32
	// Previous is everything the leader considered assigned after that
	// round, including work held back for departed members.
	Previous []ConnectorTasks
	// Members are the member ids of that round, sorted.
	Members []string
	// LostDeadline is when work of departed members is reassigned; zero when
	// nothing is held back.
	LostDeadline time.Time
	// RevokeNotBefore postpones balancing revocations after successive
	// revoking rounds; zero when not postponed.
	RevokeNotBefore time.Time
	// RevokedInPrevious tells whether the previous round revoked for balance;
	// SuccessiveRevocations counts the consecutive ones for the backoff.
	RevokedInPrevious     bool
	SuccessiveRevocations int
	// Revoked is what that round revoked, by member id.
	Revoked map[string][]ConnectorTasks
}

// revocationBackoffBase is the first backoff between successive balancing
// revocations; each further one is 4 times longer, capped at MaxDelay.
const revocationBackoffBase = 250 * time.Millisecond

// item is one unit of work: a connector instance (task == ConnectorTask) or
// a task.
type item struct {
	conn string
	task int32
}

func compareItems(a, b item) int {
	if c := cmp.Compare(a.conn, b.conn); c != 0 {
		return c
	}
	return cmp.Compare(a.task, b.task)
}

type itemSet map[item]struct{}

func (s itemSet) add(i item)       { s[i] = struct{}{} }
func (s itemSet) has(i item) bool  { _, ok := s[i]; return ok }
func (s itemSet) sorted() []item   { return slices.SortedFunc(maps.Keys(s), compareItems) }
func (s itemSet) addAll(o itemSet) { maps.Copy(s, o) }
func (s itemSet) removeAll(o itemSet) {
	maps.DeleteFunc(s, func(i item, _ struct{}) bool { return o.has(i) })
}
func (s itemSet) clone() itemSet { return maps.Clone(s) }
func (s itemSet) counts() (c, t int) { // connectors, tasks
	for i := range s {
		if i.task == ConnectorTask {
			c++
		} else {
			t++
		}
	}
	return c, t
}

// toItems flattens ConnectorTasks lists into a set.
func toItems(cts []ConnectorTasks) itemSet {
	s := itemSet{}
	for _, ct := range cts {
		for _, t := range ct.Tasks {
			s.add(item{ct.Connector, t})
		}
	}
	return s
}

// fromItems groups a set by connector, connectors sorted, the connector
// instance (-1) first and tasks ascending. An empty set gives an empty,
// non-nil list (written as an empty array, as Java does).
func fromItems(s itemSet) []ConnectorTasks {
	out := []ConnectorTasks{}
	for _, i := range s.sorted() {
		if n := len(out); n > 0 && out[n-1].Connector == i.conn {
			out[n-1].Tasks = append(out[n-1].Tasks, i.task)
			continue
		}
		out = append(out, ConnectorTasks{Connector: i.conn, Tasks: []int32{i.task}})
	}
	return out
}

// configuredItems expands the desired work into items.
func configuredItems(work map[string]int) itemSet {
	s := itemSet{}
	for c, n := range work {
		s.add(item{c, ConnectorTask})
		for t := range max(n, 0) {
			s.add(item{c, int32(t)})
		}
	}
	return s
}

// Assign computes one round of assignments; see the comment at the top of
// this file. The result has one entry per member of in.Members.
func Assign(st AssignorState, in AssignInput) (map[string]Assignment, AssignorState) {
	members := slices.Clone(in.Members)
	slices.SortFunc(members, func(a, b MemberState) int { return cmp.Compare(a.ID, b.ID) })
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}

	base := Assignment{
		Version:      in.Version,
		Error:        in.Error,
		Leader:       in.LeaderID,
		LeaderURL:    in.LeaderURL,
		ConfigOffset: in.ConfigOffset,
	}
	out := make(map[string]Assignment, len(members))
	if in.Error != ErrNone {
		for _, id := range ids {
			a := base
			a.Assigned = []ConnectorTasks{}
			if in.Version >= VersionCompatible {
				a.Revoked = []ConnectorTasks{}
			}
			out[id] = a
		}
		if st.Generation > 0 && st.Generation == in.LastCompletedGeneration {
			st.Generation = in.Generation
		}
		return out, st
	}

	configured := configuredItems(in.Work)

	if in.Version < VersionCompatible {
		// Eager: everything was revoked before the join; assign from scratch.
		next := make(map[string]itemSet, len(ids))
		for _, id := range ids {
			next[id] = itemSet{}
		}
		place(next, ids, configured.sorted())
		all := itemSet{}
		for _, id := range ids {
			a := base
			a.Assigned = fromItems(next[id])
			out[id] = a
			all.addAll(next[id])
		}
		return out, AssignorState{Generation: in.Generation, Previous: fromItems(all), Members: ids}
	}

	// Base sets.
	owned := make(map[string]itemSet, len(ids))
	holders := map[item]int{}
	active := itemSet{}
	for _, m := range members {
		s := toItems(m.Owned)
		owned[m.ID] = s
		for i := range s {
			holders[i]++
		}
		active.addAll(s)
	}
	previous := itemSet{}
	prevMembersPresent := true
	if st.Generation > 0 && st.Generation == in.LastCompletedGeneration {
		previous = toItems(st.Previous)
		for _, id := range st.Members {
			if _, ok := owned[id]; !ok {
				prevMembersPresent = false
				break
			}
		}
	} else {
		// The view of the previous round is stale (another leader, or the
		// last sync failed): nothing is known to be lost, and no earlier
		// revocation round counts.
		st = AssignorState{}
	}

	// A member that still claims work the previous round revoked from it
	// did not get that round's assignment (its sync failed): it is told
	// again, and the work, which it may still run, goes to no one else in
	// this round. Counted as its, work revoked from two holders would stay
	// with the one that missed the revocation, while the other dropped it
	// (a zombie worker back from a pause keeping a task it was fenced out
	// of, failed).
	missed := map[string]itemSet{}
	pending := itemSet{}
	for id, revoked := range st.Revoked {
		for i := range toItems(revoked) {
			if !owned[id].has(i) {
				continue
			}
			if missed[id] == nil {
				missed[id] = itemSet{}
			}
			missed[id].add(i)
			pending.add(i)
			delete(owned[id], i)
			if holders[i]--; holders[i] == 0 {
				delete(active, i)
			}
		}
	}

	// Revoke deleted and duplicated work from its holders.
	toRevoke := itemSet{}
	for i := range active {
		if !configured.has(i) || holders[i] > 1 {
			toRevoke.add(i)
		}
	}
	revoke := make(map[string]itemSet, len(ids))
	next := make(map[string]itemSet, len(ids))
	for _, id := range ids {
		revoke[id] = itemSet{}
		revoke[id].addAll(missed[id])
		next[id] = itemSet{}
		for i := range owned[id] {
			if toRevoke.has(i) {
				revoke[id].add(i)
			} else {
				next[id].add(i)
			}
		}
	}

	lost := itemSet{}
	for i := range previous {
		if configured.has(i) && !active.has(i) {
			lost.add(i)
		}
	}
	toAssign := itemSet{}
	for i := range configured {
		if !previous.has(i) && !active.has(i) && !pending.has(i) {
			toAssign.add(i)
		}
	}
	// Work that a member ran before it restarted goes back to it at once,
	// and work whose worker is gone counts as lost even when this leader
	// has no previous round to tell (it was elected since): so a rolling
	// restart moves nothing but the restarting worker's work, whoever
	// leads.
	returned := map[string][]item{}
	if in.LastWorker != nil {
		byWorker := make(map[string]string, len(members))
		for _, m := range members {
			byWorker[workerID(m.URL)] = m.ID
		}
		unowned := lost.clone()
		if len(previous) == 0 {
			unowned.addAll(toAssign)
		}
		for _, i := range unowned.sorted() {
			w := in.LastWorker(i.conn, i.task)
			switch id, member := byWorker[w]; {
			case w == "":
			case member:
				returned[id] = append(returned[id], i)
				delete(lost, i)
				delete(toAssign, i)
			case len(previous) == 0 && in.MaxDelay > 0:
				// The round that would have held it back is lost with
				// the old leader: this one does.
				delete(toAssign, i)
				lost.add(i)
				prevMembersPresent = false
			}
		}
	}

	ns := AssignorState{
		Generation:            in.Generation,
		Members:               ids,
		RevokeNotBefore:       st.RevokeNotBefore,
		RevokedInPrevious:     st.RevokedInPrevious,
		SuccessiveRevocations: st.SuccessiveRevocations,
	}
	var delay time.Duration
	heldBack := itemSet{}
	switch {
	case len(lost) == 0:
	case st.LostDeadline.IsZero() && prevMembersPresent, in.MaxDelay <= 0:
		// Nobody left (a member missed its assignment), or delays are off.
		toAssign.addAll(lost)
	case !st.LostDeadline.IsZero() && !in.Now.Before(st.LostDeadline):
		// The delay has expired: the departed members did not come back.
		toAssign.addAll(lost)
	default:
		ns.LostDeadline = st.LostDeadline
		if ns.LostDeadline.IsZero() {
			ns.LostDeadline = in.Now.Add(in.MaxDelay)
		}
		delay = min(ns.LostDeadline.Sub(in.Now), in.MaxDelay)
		heldBack = lost
	}

	if delay > 0 {
		// No balancing while work is held back.
		ns.RevokedInPrevious, ns.SuccessiveRevocations, ns.RevokeNotBefore = false, 0, time.Time{}
	} else {
		cc, tc := configured.counts()
		balance := balancingRevocations(next, ids, cc, tc)
		switch {
		case len(balance) == 0:
			ns.RevokedInPrevious, ns.SuccessiveRevocations, ns.RevokeNotBefore = false, 0, time.Time{}
		case !st.RevokeNotBefore.IsZero() && in.Now.Before(st.RevokeNotBefore):
			delay = st.RevokeNotBefore.Sub(in.Now)
		case st.RevokedInPrevious && st.RevokeNotBefore.IsZero() && in.MaxDelay > 0:
			ns.SuccessiveRevocations++
			b := revocationBackoff(ns.SuccessiveRevocations, in.MaxDelay)
			ns.RevokeNotBefore = in.Now.Add(b)
			delay = b
		default:
			for id, s := range balance {
				revoke[id].addAll(s)
				next[id].removeAll(s)
			}
			ns.RevokedInPrevious, ns.RevokeNotBefore = true, time.Time{}
		}
	}

	for id, items := range returned {
		for _, i := range items {
			next[id].add(i)
		}
	}
	place(next, ids, toAssign.sorted())

	all := heldBack.clone()
	for _, id := range ids {
		a := base
		added := next[id].clone()
		added.removeAll(owned[id])
		a.Assigned = fromItems(added)
		a.Revoked = fromItems(revoke[id])
		a.Delay = delayMillis(delay)
		out[id] = a
		all.addAll(next[id])
		if len(revoke[id]) > 0 {
			if ns.Revoked == nil {
				ns.Revoked = map[string][]ConnectorTasks{}
			}
			ns.Revoked[id] = a.Revoked
		}
	}
	ns.Previous = fromItems(all)
	return out, ns
}

// workerID is the host:port of a member's URL, as the status topic names
// the worker that runs a connector or task.
func workerID(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

// delayMillis converts a delay to whole milliseconds, rounding up so that a
// positive delay never becomes 0.
func delayMillis(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return int32(min(int64(ms), int64(1<<31-1)))
}

// revocationBackoff is the postponement of the n-th successive balancing
// revocation (n >= 1).
func revocationBackoff(n int, maxDelay time.Duration) time.Duration {
	d := revocationBackoffBase
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 4
	}
	return min(d, maxDelay)
}

// balancingRevocations returns, per member, the surplus above its fair share
// of connectors and of tasks, given the loads in next (which excludes work
// already being revoked) and the configured totals.
func balancingRevocations(next map[string]itemSet, ids []string, totalConnectors, totalTasks int) map[string]itemSet {
	out := map[string]itemSet{}
	if len(ids) == 0 {
		return out
	}
	for _, connectors := range []bool{true, false} {
		total := totalTasks
		if connectors {
			total = totalConnectors
		}
		load := func(id string) []item {
			var l []item
			for i := range next[id] {
				if (i.task == ConnectorTask) == connectors {
					l = append(l, i)
				}
			}
			slices.SortFunc(l, compareItems)
			return l
		}
		loads := make(map[string][]item, len(ids))
		order := slices.Clone(ids)
		for _, id := range ids {
			loads[id] = load(id)
		}
		// The most loaded members keep the extra units.
		slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(len(loads[b]), len(loads[a])) })
		floor, extra := total/len(ids), total%len(ids)
		for _, id := range order {
			l := loads[id]
			limit := floor
			if extra > 0 && len(l) > floor {
				extra--
				limit = floor + 1
			}
			if len(l) <= limit {
				continue
			}
			if out[id] == nil {
				out[id] = itemSet{}
			}
			for _, i := range l[limit:] {
				out[id].add(i)
			}
		}
	}
	return out
}

// place assigns items (connectors first, then tasks, in the given order) to
// the least loaded member: connectors by connector count, tasks by task
// count, ties broken by the other count and then by member id.
func place(next map[string]itemSet, ids []string, items []item) {
	if len(ids) == 0 {
		return
	}
	conns := make(map[string]int, len(ids))
	tasks := make(map[string]int, len(ids))
	for _, id := range ids {
		conns[id], tasks[id] = next[id].counts()
	}
	pick := func(primary, secondary map[string]int) string {
		best := ids[0]
		for _, id := range ids[1:] {
			if primary[id] < primary[best] || primary[id] == primary[best] && secondary[id] < secondary[best] {
				best = id
			}
		}
		return best
	}
	for _, connectorPass := range []bool{true, false} {
		for _, i := range items {
			if (i.task == ConnectorTask) != connectorPass {
				continue
			}
			var id string
			if connectorPass {
				id = pick(conns, tasks)
				conns[id]++
			} else {
				id = pick(tasks, conns)
				tasks[id]++
			}
			next[id].add(i)
		}
	}
}
