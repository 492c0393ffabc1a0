package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/secrets"
)

// Task is a running task. Its goroutine owns the plugin's task instance;
// the methods here only signal it.
type Task struct {
	Connector string
	ID        int
	// Metrics are the task's counters.
	Metrics TaskMetrics
	typ     string        // source or sink
	secrets secrets.Hider // hidden in its failures' traces and log lines
	log     *slog.Logger  // the worker's lines about the task
	// pluginLog is the task's own logger (Logger), by its class.
	pluginLog *slog.Logger

	w      *Worker
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	paused  bool
	wake    chan struct{} // closed and replaced when paused changes
	stopped bool
}

func (t *Task) init(w *Worker, paused bool) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.w, t.cancel, t.done = w, cancel, make(chan struct{})
	t.paused, t.wake = paused, make(chan struct{})
	return ctx
}

// Pause makes the task stop polling (source) or consuming (sink) while
// keeping its resources, as a PAUSED target state asks.
func (t *Task) Pause() { t.setPaused(true) }

// Resume undoes Pause.
func (t *Task) Resume() { t.setPaused(false) }

func (t *Task) setPaused(p bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused != p {
		t.paused = p
		close(t.wake)
		t.wake = make(chan struct{})
	}
}

func (t *Task) pauseState() (bool, chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paused, t.wake
}

// waitWhilePaused blocks while the task is paused, reporting PAUSED and
// then RUNNING again. It returns false when the task is being stopped.
func (t *Task) waitWhilePaused(ctx context.Context, beforeWait func()) bool {
	paused, wake := t.pauseState()
	if !paused {
		return ctx.Err() == nil
	}
	t.report("PAUSED", "")
	if beforeWait != nil {
		beforeWait()
	}
	for paused {
		select {
		case <-ctx.Done():
			return false
		case <-wake:
		}
		paused, wake = t.pauseState()
	}
	t.report("RUNNING", "")
	return true
}

// Stop stops the task and waits for it to commit its offsets and release
// its resources, for at most the worker's task.shutdown.graceful.timeout.ms.
// It reports whether the task finished in time; a task that did not is
// abandoned, as Kafka Connect abandons it.
func (t *Task) Stop() bool {
	t.w.registry.remove(t)
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.cancel()
	select {
	case <-t.done:
		return true
	case <-time.After(t.w.cfg.ShutdownTimeout):
		t.log.Warn("task did not stop in time; abandoning it")
		return false
	}
}

// Stopping reports whether the task was told to stop.
func (t *Task) Stopping() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

// Logger implements connect.SourceTaskContext and SinkTaskContext.
func (t *Task) Logger() *slog.Logger { return t.pluginLog }

// Done is closed when the task's goroutine has finished.
func (t *Task) Done() <-chan struct{} { return t.done }

func (t *Task) report(state, trace string) {
	t.w.listener.TaskState(t, state, trace)
}

func (t *Task) fail(err error) {
	err = t.secrets.Err(err)
	t.log.Error("task failed", "error", err)
	t.report("FAILED", taskTrace(err))
}

// StartTask starts a task of the given connector class with its task
// config. The task reports RUNNING (or PAUSED) once its Start returned.
// Both configs' placeholders are resolved here, as StartConnector does.
// A source task given eos runs exactly once (nil: at least once).
func (w *Worker) StartTask(connector string, id int, connConfig, taskConfig map[string]string, paused bool, eos *ExactlyOnce) (*Task, error) {
	w.startups.TaskAttempts.Add(1)
	t, err := w.startTask(connector, id, connConfig, taskConfig, paused, eos)
	if err != nil {
		w.startups.TaskFailures.Add(1)
		return nil, err
	}
	w.startups.TaskSuccesses.Add(1)
	return t, nil
}

func (w *Worker) startTask(connector string, id int, connConfig, taskConfig map[string]string, paused bool, eos *ExactlyOnce) (*Task, error) {
	connConfig, connSecret, err := w.resolveSecrets(connConfig)
	if err != nil {
		return nil, err
	}
	taskConfig, taskSecret, err := w.resolveSecrets(taskConfig)
	if err != nil {
		return nil, err
	}
	conn, p, err := Instantiate(w.plugins, connConfig["connector.class"])
	if err != nil {
		return nil, err
	}
	def := conn.Config()
	t := &Task{Connector: connector, ID: id, secrets: secrets.Of(def, connConfig, connSecret).Merge(secrets.Of(def, taskConfig, taskSecret))}
	t.log = t.secrets.Logger(w.log, "connector", connector, "task", id)
	class := taskConfig["task.class"]
	if class == "" {
		class = conn.TaskClass()
	}
	t.pluginLog = t.secrets.Logger(w.loggers(class), "connector", connector, "task", id)
	ctx := t.init(w, paused)
	switch p.Type {
	case connect.PluginSource:
		st, err := w.newSourceTask(t, conn.(connect.SourceConnector).NewTask(), connConfig, taskConfig, eos)
		if err != nil {
			return nil, t.secrets.Err(err)
		}
		t.typ = "source"
		w.registry.add(t)
		go st.run(ctx)
	case connect.PluginSink:
		st, err := w.newSinkTask(t, conn.(connect.SinkConnector).NewTask(), connConfig, taskConfig)
		if err != nil {
			return nil, t.secrets.Err(err)
		}
		t.typ = "sink"
		w.registry.add(t)
		go st.run(ctx)
	default:
		return nil, fmt.Errorf("%s is not a connector", p.Class)
	}
	return t, nil
}
