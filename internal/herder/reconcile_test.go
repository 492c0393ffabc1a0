package herder

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/worker"
)

// planCase is a worker's state: connector a (tasks.max 2) and its task
// configs in the config topic, what is assigned here and what runs.
type planCase struct {
	config   map[string]string
	tasks    []map[string]string
	target   TargetState
	owned    bool
	owns     []int
	conn     *dconn
	running  map[int]*dtask
	regen    bool
	statuses map[int]string
}

func connA(extra ...string) map[string]string {
	c := map[string]string{"connector.class": "FileStreamSource", "tasks.max": "2"}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i]] = extra[i+1]
	}
	return c
}

func taskConfigs(n int, tag string) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = map[string]string{"task": fmt.Sprint(i), "tag": tag}
	}
	return out
}

// steady is connector a with two tasks, all running here as the config
// topic says.
func steady() planCase {
	return planCase{
		config: connA(), tasks: taskConfigs(2, "v1"), target: Started,
		owned: true, owns: []int{0, 1},
		conn: &dconn{config: connA(), target: Started, inst: &worker.Connector{}, state: client.StateRunning},
		running: map[int]*dtask{
			0: {config: taskConfigs(2, "v1")[0]},
			1: {config: taskConfigs(2, "v1")[1]},
		},
	}
}

// state returns c as a pass reads it, and the task statuses its
// taskState reads.
func (c planCase) state() (reconcileState, map[client.TaskID]string) {
	st := reconcileState{
		snap:       ClusterConfig{Connectors: map[string]map[string]string{}, Targets: map[string]TargetState{}, Tasks: map[string][]map[string]string{}},
		owned:      map[string]bool{},
		ownedTasks: map[client.TaskID]bool{},
		conns:      map[string]*dconn{},
		tasks:      map[client.TaskID]*dtask{},
		regen:      map[string]bool{},
		checkTaskCount: worker.New(&worker.Config{TasksMaxPerConnector: 4}, nil, nil, nil, nil, nil,
			slog.New(slog.DiscardHandler), nil).CheckTaskCount,
	}
	if c.config != nil {
		st.snap.Connectors["a"] = c.config
		st.snap.Targets["a"] = c.target
		if c.tasks != nil {
			st.snap.Tasks["a"] = c.tasks
		}
	}
	if c.owned {
		st.owned["a"] = true
	}
	for _, i := range c.owns {
		st.ownedTasks[client.TaskID{Connector: "a", Task: i}] = true
	}
	if c.conn != nil {
		dc := *c.conn
		st.conns["a"] = &dc
	}
	for i, dt := range c.running {
		t := *dt
		st.tasks[client.TaskID{Connector: "a", Task: i}] = &t
	}
	if c.regen {
		st.regen["a"] = true
	}
	statuses := map[client.TaskID]string{}
	for i, s := range c.statuses {
		statuses[client.TaskID{Connector: "a", Task: i}] = s
	}
	st.taskState = func(id client.TaskID) string { return statuses[id] }
	return st, statuses
}

func describe(p reconcilePlan) []string {
	var out []string
	for _, id := range p.stop {
		out = append(out, "stop "+id.String())
	}
	for _, a := range p.actions {
		switch a.kind {
		case pauseTask:
			out = append(out, "pause "+a.task.String())
		case resumeTask:
			out = append(out, "resume "+a.task.String())
		case failTask:
			out = append(out, "fail "+a.task.String())
		case startTask:
			s := fmt.Sprintf("start %s %s", a.task, a.taskConfig["tag"])
			if a.paused {
				s += " paused"
			}
			out = append(out, s)
		case dropConn:
			out = append(out, "drop "+a.conn)
		case removeConn:
			out = append(out, "remove "+a.conn)
		case reconfigure:
			out = append(out, fmt.Sprintf("reconfigure %s %v", a.conn, a.config))
		case retarget:
			out = append(out, fmt.Sprintf("retarget %s %s", a.conn, a.target))
		case reportConn:
			out = append(out, fmt.Sprintf("report %s %s", a.conn, a.state))
		case startConn:
			out = append(out, "start "+a.conn)
		case generateTasks:
			out = append(out, "generate "+a.conn)
		}
	}
	return out
}

// settle records in st what applyPlanLocked leaves when every start
// succeeds and every status is written.
func settle(st *reconcileState, p reconcilePlan, statuses map[client.TaskID]string) {
	for _, id := range p.stop {
		delete(st.tasks, id)
	}
	for _, a := range p.actions {
		dc := st.conns[a.conn]
		switch a.kind {
		case pauseTask, resumeTask:
			st.tasks[a.task].paused = a.kind == pauseTask
		case failTask:
			statuses[a.task] = client.StateFailed
		case startTask:
			st.tasks[a.task] = &dtask{config: a.taskConfig, paused: a.paused}
		case dropConn, removeConn:
			delete(st.conns, a.conn)
			delete(st.regen, a.conn)
		case reconfigure, retarget:
			if dc == nil {
				dc = &dconn{}
				st.conns[a.conn] = dc
			}
			if a.kind == reconfigure {
				dc.inst, dc.failed, dc.config = nil, false, a.config
			} else {
				if a.target != Started {
					dc.inst = nil
				}
				dc.target = a.target
			}
			st.regen[a.conn] = true
		case reportConn:
			dc.state = a.state
		case startConn:
			dc.inst, dc.state = &worker.Connector{}, client.StateRunning
		case generateTasks:
			delete(st.regen, a.conn)
		}
	}
}

func TestPlanReconcile(t *testing.T) {
	cases := []struct {
		name string
		c    func() planCase
		want []string
	}{
		{"nothing to do", steady, nil},
		{"a new connector assigned here", func() planCase {
			c := steady()
			c.conn, c.running = nil, nil
			return c
		}, []string{
			"start a-0 v1", "start a-1 v1",
			"reconfigure a map[connector.class:FileStreamSource tasks.max:2]",
			"retarget a STARTED", "start a", "generate a",
		}},
		{"a new connector with no task configs yet", func() planCase {
			c := steady()
			c.tasks, c.owns, c.conn, c.running = nil, nil, nil, nil
			return c
		}, []string{
			"reconfigure a map[connector.class:FileStreamSource tasks.max:2]",
			"retarget a STARTED", "start a", "generate a",
		}},
		{"a connector and its tasks moved away", func() planCase {
			c := steady()
			c.owned, c.owns = false, nil
			return c
		}, []string{"stop a-0", "stop a-1", "drop a"}},
		{"one task moved away", func() planCase {
			c := steady()
			c.owns = []int{0}
			return c
		}, []string{"stop a-1"}},
		{"a task moved here", func() planCase {
			c := steady()
			delete(c.running, 1)
			return c
		}, []string{"start a-1 v1"}},
		{"a deleted connector", func() planCase {
			c := steady()
			c.config, c.tasks = nil, nil
			return c
		}, []string{"stop a-0", "stop a-1", "remove a"}},
		{"paused", func() planCase {
			c := steady()
			c.target = Paused
			return c
		}, []string{"pause a-0", "pause a-1", "retarget a PAUSED", "report a PAUSED"}},
		{"a task starting paused", func() planCase {
			c := steady()
			c.target = Paused
			c.conn.target, c.conn.inst, c.conn.state = Paused, nil, client.StatePaused
			c.running[0].paused = true
			delete(c.running, 1)
			return c
		}, []string{"start a-1 v1 paused"}},
		{"resumed", func() planCase {
			c := steady()
			c.conn.target, c.conn.inst, c.conn.state = Paused, nil, client.StatePaused
			c.running[0].paused, c.running[1].paused = true, true
			return c
		}, []string{"resume a-0", "resume a-1", "retarget a STARTED", "start a", "generate a"}},
		{"stopped: an empty task set, then STOPPED", func() planCase {
			c := steady()
			c.tasks, c.target = []map[string]string{}, Stopped
			return c
		}, []string{"stop a-0", "stop a-1", "retarget a STOPPED", "report a STOPPED"}},
		{"STOPPED read before the empty task set: no task starts", func() planCase {
			c := steady()
			c.target = Stopped
			c.conn.target, c.conn.inst, c.conn.state = Stopped, nil, client.StateStopped
			c.running = nil
			return c
		}, nil},
		{"changed task configs", func() planCase {
			c := steady()
			c.tasks = taskConfigs(2, "v2")
			return c
		}, []string{"stop a-0", "stop a-1", "start a-0 v2", "start a-1 v2"}},
		{"a changed connector config", func() planCase {
			c := steady()
			c.config = connA("file", "/tmp/x")
			return c
		}, []string{
			"reconfigure a map[connector.class:FileStreamSource file:/tmp/x tasks.max:2]",
			"start a", "generate a",
		}},
		{"a changed config of a failed connector restarts it", func() planCase {
			c := steady()
			c.config = connA("file", "/tmp/x")
			c.conn.inst, c.conn.failed, c.conn.state = nil, true, client.StateFailed
			return c
		}, []string{
			"reconfigure a map[connector.class:FileStreamSource file:/tmp/x tasks.max:2]",
			"start a", "generate a",
		}},
		{"a task whose config is gone", func() planCase {
			c := steady()
			c.tasks = taskConfigs(1, "v1")
			return c
		}, []string{"stop a-1"}},
		{"a connector asking for task configs", func() planCase {
			c := steady()
			c.regen = true
			return c
		}, []string{"generate a"}},
		{"a restart request stopped the connector and a task", func() planCase {
			c := steady()
			c.conn.inst, c.conn.state = nil, client.StateRestarting
			delete(c.running, 1)
			c.regen = true
			return c
		}, []string{"start a-1 v1", "start a", "generate a"}},
		{"a failed connector stays failed", func() planCase {
			c := steady()
			c.conn.inst, c.conn.failed, c.conn.state = nil, true, client.StateFailed
			c.regen = true
			return c
		}, nil},
		{"more tasks than tasks.max", func() planCase {
			c := steady()
			c.tasks, c.owns, c.running = taskConfigs(3, "v1"), []int{0, 1, 2}, nil
			c.statuses = map[int]string{1: client.StateFailed}
			return c
		}, []string{"fail a-0", "fail a-2"}},
		{"more tasks than tasks.max, not enforced", func() planCase {
			c := steady()
			c.config = connA("tasks.max.enforce", "false")
			c.conn.config = c.config
			c.tasks, c.owns, c.running = taskConfigs(3, "v1"), []int{2}, nil
			return c
		}, []string{"start a-2 v1"}},
		{"more tasks than tasks.max.per.connector, which no setting lifts", func() planCase {
			c := steady()
			c.config = connA("tasks.max", "10", "tasks.max.enforce", "false")
			c.conn.config = c.config
			c.tasks, c.owns, c.running = taskConfigs(5, "v1"), []int{4}, nil
			return c
		}, []string{"fail a-4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, statuses := tc.c().state()
			p := planReconcile(st)
			if got := describe(p); !slices.Equal(got, tc.want) {
				t.Fatalf("plan:\n%q\nwant:\n%q", got, tc.want)
			}
			settle(&st, p, statuses)
			if again := planReconcile(st); len(again.stop)+len(again.actions) > 0 {
				t.Fatalf("the state the plan leaves plans again: %q", describe(again))
			}
		})
	}
}

// The plan hands a task its config from the config topic, and the
// connector's with it.
func TestPlanReconcileStartsTasksWithTheirConfigs(t *testing.T) {
	c := steady()
	c.tasks = taskConfigs(2, "v2")
	st, _ := c.state()
	p := planReconcile(st)
	var starts int
	for _, a := range p.actions {
		if a.kind != startTask {
			continue
		}
		starts++
		if !maps.Equal(a.taskConfig, c.tasks[a.task.Task]) || !maps.Equal(a.config, c.config) {
			t.Errorf("%s starts with %v and %v, want %v and %v", a.task, a.taskConfig, a.config, c.tasks[a.task.Task], c.config)
		}
	}
	if starts != 2 {
		t.Fatalf("%d tasks start, want 2: %q", starts, describe(p))
	}
}
