package herder

import (
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/worker"
)

// statusStore keeps the reported states of connectors and tasks. It has
// its own lock because task goroutines report into it while the herder,
// holding its lock, waits for them to stop.
type statusStore struct {
	mu     sync.Mutex
	conns  map[string]client.State
	byTask map[string]map[int]*taskStatus
	topics map[string]map[string]bool
}

type taskStatus struct {
	owner *worker.Task // the incarnation allowed to report; nil until started
	state string
	trace string
}

func (s *statusStore) init() {
	s.conns = map[string]client.State{}
	s.byTask = map[string]map[int]*taskStatus{}
	s.topics = map[string]map[string]bool{}
}

func (s *statusStore) setConnector(name, state, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[name] = client.State{State: state, Trace: trace}
}

func (s *statusStore) connector(name, workerID string) (client.State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.conns[name]
	st.WorkerID = workerID
	return st, ok
}

// expectTask makes room for a task about to start, so that its first
// report is kept; it shows UNASSIGNED until the task reports.
func (s *statusStore) expectTask(conn string, id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byTask[conn] == nil {
		s.byTask[conn] = map[int]*taskStatus{}
	}
	ts := s.byTask[conn][id]
	if ts == nil {
		ts = &taskStatus{state: client.StateUnassigned}
		s.byTask[conn][id] = ts
	}
	ts.owner = nil
}

// own hands the task's status to a started incarnation. A report that
// raced ahead of own (the task failed at once) is kept.
func (s *statusStore) own(conn string, id int, t *worker.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts := s.byTask[conn][id]; ts != nil && ts.owner == nil {
		ts.owner = t
	}
}

func (s *statusStore) setTask(conn string, id int, owner *worker.Task, state, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byTask[conn] == nil {
		s.byTask[conn] = map[int]*taskStatus{}
	}
	ts := s.byTask[conn][id]
	if ts == nil {
		ts = &taskStatus{}
		s.byTask[conn][id] = ts
	}
	ts.owner, ts.state, ts.trace = owner, state, trace
}

// TaskState implements worker.Listener. Reports from a task the herder
// already replaced or removed are dropped.
func (s *statusStore) TaskState(t *worker.Task, state, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.byTask[t.Connector][t.ID]
	if ts == nil || (ts.owner != nil && ts.owner != t) {
		return
	}
	ts.owner, ts.state, ts.trace = t, state, trace
}

// TopicUsed implements worker.Listener.
func (s *statusStore) TopicUsed(conn, topic string, _ int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.topics[conn] == nil {
		s.topics[conn] = map[string]bool{}
	}
	s.topics[conn][topic] = true
}

func (s *statusStore) taskStates(conn, workerID string) []client.TaskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Collect(maps.Keys(s.byTask[conn]))
	sort.Ints(ids)
	out := []client.TaskState{}
	for _, id := range ids {
		ts := s.byTask[conn][id]
		out = append(out, client.TaskState{ID: id, State: ts.state, WorkerID: workerID, Trace: ts.trace})
	}
	return out
}

func (s *statusStore) dropTasks(conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byTask, conn)
}

func (s *statusStore) dropConnector(conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byTask, conn)
	delete(s.conns, conn)
}

func (s *statusStore) topicList(conn string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Keys(s.topics[conn]))
	sort.Strings(out)
	if out == nil {
		out = []string{}
	}
	return out
}

func (s *statusStore) resetTopics(conn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.topics, conn)
}
