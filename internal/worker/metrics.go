package worker

import (
	"sync"
	"sync/atomic"
)

// TaskMetrics are a task's counters, Kafka Connect's source-task,
// sink-task and task-error metrics: the task's goroutines add to them as
// they work, and the metrics endpoint reads them when it is scraped, so
// that counting costs the data plane an uncontended atomic add.
type TaskMetrics struct {
	// Source tasks: records polled (before transforms), and written
	// (acknowledged by Kafka).
	Polled, Written atomic.Int64
	// Sink tasks: records read (before transforms), and put.
	Read, Sent atomic.Int64
	// task-error-metrics.
	RecordFailures, RecordErrors, RecordsSkipped, ErrorsLogged, DLQRequests atomic.Int64
	// Offset commits that succeeded and failed.
	CommitsSucceeded, CommitsFailed atomic.Int64
	// TransactionSizes are the records of each committed transaction of
	// an exactly-once source task (transaction-size-min/max/avg).
	TransactionSizes SizeStats
}

// SizeStats are the min, max and mean of observed sizes.
type SizeStats struct {
	mu                   sync.Mutex
	count, sum, min, max int64
}

func (s *SizeStats) observe(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count == 0 || n < s.min {
		s.min = n
	}
	if n > s.max {
		s.max = n
	}
	s.count++
	s.sum += n
}

// Stats returns how many sizes were observed, and their min, max and
// mean (all 0 before the first).
func (s *SizeStats) Stats() (count, min, max int64, avg float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count == 0 {
		return 0, 0, 0, 0
	}
	return s.count, s.min, s.max, float64(s.sum) / float64(s.count)
}

// StartupMetrics count connector and task starts (connect-worker-metrics'
// connector-startup-* and task-startup-*).
type StartupMetrics struct {
	ConnectorAttempts, ConnectorSuccesses, ConnectorFailures atomic.Int64
	TaskAttempts, TaskSuccesses, TaskFailures                atomic.Int64
}

// taskRegistry holds the tasks whose metrics are shown: from their start
// until they are stopped (a failed task's stay, as its status does).
type taskRegistry struct {
	mu    sync.Mutex
	tasks map[*Task]struct{}
}

func (r *taskRegistry) add(t *Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tasks == nil {
		r.tasks = map[*Task]struct{}{}
	}
	r.tasks[t] = struct{}{}
}

func (r *taskRegistry) remove(t *Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tasks, t)
}

// EachTask calls fn for each task the worker runs (or that failed and was
// not stopped since), with its counters; typ is "source" or "sink".
func (w *Worker) EachTask(fn func(connector string, id int, typ string, m *TaskMetrics)) {
	w.registry.mu.Lock()
	tasks := make([]*Task, 0, len(w.registry.tasks))
	for t := range w.registry.tasks {
		tasks = append(tasks, t)
	}
	w.registry.mu.Unlock()
	for _, t := range tasks {
		fn(t.Connector, t.ID, t.typ, &t.Metrics)
	}
}

// Startups returns the worker's start counters.
func (w *Worker) Startups() *StartupMetrics { return &w.startups }

// countCommit counts an offset commit, failed or not.
func (t *Task) countCommit(err error) {
	if err != nil {
		t.Metrics.CommitsFailed.Add(1)
	} else {
		t.Metrics.CommitsSucceeded.Add(1)
	}
}
