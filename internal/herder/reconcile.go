package herder

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/connectd/connectd/client"
)

// A reconcile pass decides, then does: planReconcile reads the config
// topic, the assignment and what runs here, and returns what to do, so
// that its decisions are a function of that state alone and can be
// tested as such; applyPlanLocked only carries them out, under the same lock.

// reconcileState is what a pass decides from. The planner only reads it.
type reconcileState struct {
	snap       ClusterConfig
	owned      map[string]bool
	ownedTasks map[client.TaskID]bool
	conns      map[string]*dconn
	tasks      map[client.TaskID]*dtask
	regen      map[string]bool // connectors whose task configs are asked for
	// checkTaskCount is the worker's check of a task set's size
	// (worker.CheckTaskCount); taskState a task's state in the status
	// topic, read only for a task the check fails.
	checkTaskCount func(name string, config map[string]string, n int) error
	taskState      func(client.TaskID) string
}

// reconcilePlan is what a pass does: the tasks listed in stop stop, in
// parallel, then the actions run in order.
type reconcilePlan struct {
	stop    []client.TaskID
	actions []reconcileAction
}

type actionKind int

const (
	pauseTask     actionKind = iota
	resumeTask               // a paused task that runs on
	failTask                 // err: a task set the task count check refuses
	startTask                // config, taskConfig, paused
	dropConn                 // a connector moved away: stopped and forgotten here
	removeConn               // a connector whose config is gone: stopped, forgotten, its statuses deleted
	reconfigure              // config: the connector stops and runs on the new config
	retarget                 // target: the connector stops unless it is STARTED
	reportConn               // state: the connector's PAUSED or STOPPED status
	startConn                // a STARTED connector that neither runs nor failed
	generateTasks            // the connector, if it runs, sends its task configs to the leader
)

type reconcileAction struct {
	kind       actionKind
	task       client.TaskID // the task actions'
	conn       string        // the connector actions'
	config     map[string]string
	taskConfig map[string]string
	paused     bool
	target     TargetState
	state      string
	err        error
}

// planReconcile decides what brings the instances running here in line
// with the config topic and the assignment. Applied as planned, with
// every start succeeding, it leaves a state whose plan is empty.
func planReconcile(st reconcileState) reconcilePlan {
	var p reconcilePlan
	snap := st.snap

	// Tasks first: those no longer owned or configured stop before their
	// connector might.
	stopping := map[client.TaskID]bool{}
	for _, id := range sortedTaskIDs(st.tasks) {
		cfgs := snap.Tasks[id.Connector]
		if !st.ownedTasks[id] || id.Task >= len(cfgs) || !maps.Equal(st.tasks[id].config, cfgs[id.Task]) {
			p.stop = append(p.stop, id)
			stopping[id] = true
		}
	}
	for _, id := range sortedTaskIDs(st.ownedTasks) {
		cfgs, ok := snap.Tasks[id.Connector]
		config, exists := snap.Connectors[id.Connector]
		if !exists || !ok || id.Task >= len(cfgs) {
			continue
		}
		target := snap.target(id.Connector)
		paused := target == Paused
		if dt := st.tasks[id]; dt != nil && !stopping[id] {
			switch {
			case paused && !dt.paused:
				p.actions = append(p.actions, reconcileAction{kind: pauseTask, task: id})
			case !paused && dt.paused:
				p.actions = append(p.actions, reconcileAction{kind: resumeTask, task: id})
			}
			continue
		}
		if target == Stopped {
			continue
		}
		// Task sets written by another worker (an older or Java one, or
		// before tasks.max was lowered) are checked as Kafka Connect
		// checks them at each task's start.
		if err := st.checkTaskCount(id.Connector, config, len(cfgs)); err != nil {
			if st.taskState(id) != client.StateFailed {
				p.actions = append(p.actions, reconcileAction{kind: failTask, task: id, err: err})
			}
			continue
		}
		p.actions = append(p.actions, reconcileAction{kind: startTask, task: id, config: config, taskConfig: cfgs[id.Task], paused: paused})
	}

	for _, name := range slices.Sorted(maps.Keys(st.conns)) {
		if !st.owned[name] {
			p.actions = append(p.actions, reconcileAction{kind: dropConn, conn: name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.owned)) {
		config, exists := snap.Connectors[name]
		dc := st.conns[name]
		if !exists {
			if dc != nil {
				p.actions = append(p.actions, reconcileAction{kind: removeConn, conn: name})
			}
			continue
		}
		// What the connector's record will be as the actions before the
		// next one leave it.
		var cur dconn
		if dc != nil {
			cur = *dc
		}
		running, regen := cur.inst != nil, st.regen[name]
		if !maps.Equal(cur.config, config) {
			p.actions = append(p.actions, reconcileAction{kind: reconfigure, conn: name, config: config})
			running, cur.failed, regen = false, false, true
		}
		target := snap.target(name)
		if cur.target != target {
			p.actions = append(p.actions, reconcileAction{kind: retarget, conn: name, target: target})
			running = running && target == Started
			regen = true
		}
		switch target {
		case Paused, Stopped:
			state := client.StatePaused
			if target == Stopped {
				state = client.StateStopped
			}
			if cur.state != state {
				p.actions = append(p.actions, reconcileAction{kind: reportConn, conn: name, state: state})
			}
		default:
			if !running && !cur.failed {
				p.actions = append(p.actions, reconcileAction{kind: startConn, conn: name})
				running = true
			}
			if running && regen {
				p.actions = append(p.actions, reconcileAction{kind: generateTasks, conn: name})
			}
		}
	}
	return p
}

func sortedTaskIDs[V any](m map[client.TaskID]V) []client.TaskID {
	return slices.SortedFunc(maps.Keys(m), func(a, b client.TaskID) int {
		return cmp.Or(cmp.Compare(a.Connector, b.Connector), cmp.Compare(a.Task, b.Task))
	})
}

// reconcile makes what runs here match the assignment and the config
// topic: connectors and tasks start, stop, pause, resume or restart with
// new configs, and connectors whose task configs changed send them to the
// leader.
func (h *Distributed) reconcile(ctx context.Context) {
	snap := h.snapshot()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applyPlanLocked(ctx, snap, planReconcile(reconcileState{
		snap: snap, owned: h.owned, ownedTasks: h.ownedTasks,
		conns: h.conns, tasks: h.tasks, regen: h.regen,
		checkTaskCount: h.w.CheckTaskCount, taskState: h.taskState,
	}))
}

// applyPlanLocked carries out a plan. A start may fail, so a connector's
// task configs are asked for only if it runs; the statuses of tasks whose
// config is gone are swept at every pass.
func (h *Distributed) applyPlanLocked(ctx context.Context, snap ClusterConfig, p reconcilePlan) {
	stop := map[client.TaskID]bool{}
	for _, id := range p.stop {
		stop[id] = true
	}
	stopped := h.stopTasksLocked(func(id client.TaskID) bool { return stop[id] })
	h.sweepStatusesLocked(ctx, snap, stopped)
	for _, a := range p.actions {
		switch a.kind {
		case pauseTask:
			h.tasks[a.task].setPaused(true)
		case resumeTask:
			h.tasks[a.task].setPaused(false)
		case failTask:
			// A task this pass stopped may have reported FAILED since
			// the plan was made: that report stays.
			if h.taskState(a.task) != client.StateFailed {
				h.putTaskStatus(a.task, client.StateFailed, trace(a.err), false)
			}
		case startTask:
			h.startTaskLocked(a.task, a.config, a.taskConfig, a.paused, snap.Generations[a.task.Connector])
		case dropConn:
			h.stopConnLocked(a.conn, h.conns[a.conn])
			delete(h.conns, a.conn)
		case removeConn:
			h.stopConnLocked(a.conn, h.conns[a.conn])
			delete(h.conns, a.conn)
			delete(h.regen, a.conn)
			delete(h.regenBackoff, a.conn)
			h.forgetStatuses(a.conn)
		case reconfigure:
			dc := h.connLocked(a.conn)
			h.stopConnLocked(a.conn, dc)
			dc.failed = false
			dc.config = a.config
			h.regen[a.conn] = true
		case retarget:
			dc := h.connLocked(a.conn)
			if a.target != Started {
				h.stopConnLocked(a.conn, dc)
			}
			dc.target = a.target
			h.regen[a.conn] = true
		case reportConn:
			h.putConnStatus(a.conn, a.state, "")
		case startConn:
			h.startConnLocked(a.conn, h.conns[a.conn])
		case generateTasks:
			if dc := h.conns[a.conn]; dc.inst != nil {
				delete(h.regen, a.conn)
				h.generateTaskConfigs(a.conn, dc, snap)
			}
		}
	}
}

// connLocked returns the record of a connector assigned here, made on
// its first reconcile.
func (h *Distributed) connLocked(name string) *dconn {
	dc := h.conns[name]
	if dc == nil {
		dc = &dconn{}
		h.conns[name] = dc
	}
	return dc
}
