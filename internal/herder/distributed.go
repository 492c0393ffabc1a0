package herder

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
)

// Distributed is the herder of one worker in a cluster. What runs where
// is decided by the group's leader (package group); what should exist is
// in the config topic, which every worker reads; the leader alone writes
// connector configs and task configs, any worker writes target states and
// the statuses of what it runs. A single reconcile pass, run whenever the
// config topic or the assignment changed, brings the instances running
// here in line with both.
type Distributed struct {
	cfg     *worker.Config
	dcfg    *worker.DistributedConfig
	w       *worker.Worker
	om      offsetsManager
	store   ConfigStore
	status  StatusStore
	offsets OffsetTopic
	// leaderClient sends the leader what this worker's connectors and
	// tasks submit: task configs and fencing requests.
	leaderClient *http.Client
	// openOffsetTopic opens connectors' offsets topics of their own.
	openOffsetTopic OpenOffsetTopic
	member          Member
	log             *slog.Logger

	url       string // this worker's advertised REST URL
	workerID  string // host:port of url
	clusterID string
	commit    string
	ready     atomic.Bool
	health    healthProbe

	kick chan struct{} // wakes the reconcile loop

	// configLocks serializes, at the leader, the writes of each
	// connector's config against the config topic's latest state.
	configLocks configLocks

	// taskConfigsMu orders, at the leader, the task configs a running
	// connector sends with the empty set and STOPPED state a stop writes.
	taskConfigsMu sync.Mutex
	// taskWrites are the task configs waiting for putTaskConfigs's group
	// commit.
	taskWritesMu sync.Mutex
	taskWrites   []*taskConfigsWrite

	// assigned is the tasks of the latest assignment, for an exactly-once
	// task's check, on its own goroutine, that it may still run here.
	assigned atomic.Pointer[map[client.TaskID]bool]
	// fenceMu serializes the leader's rounds of zombie fencing.
	fenceMu sync.Mutex

	mu         sync.Mutex // guards everything below, and what runs here
	owned      map[string]bool
	ownedTasks map[client.TaskID]bool
	generation int32
	conns      map[string]*dconn
	tasks      map[client.TaskID]*dtask
	regen      map[string]bool // connectors that asked for new task configs
	// regenBackoff is the wait before submitting a connector's task
	// configs again after a failed submission.
	regenBackoff map[string]time.Duration
	// members are the workers (host:port) in the group as this worker
	// last led it; nil when it is not the leader.
	members map[string]bool

	// incarnations holds the latest task started here for each id, and
	// gen the group generation, for status reports from task goroutines
	// (which must not wait for mu).
	incarnations sync.Map // client.TaskID → *worker.Task
	gen          atomic.Int32

	// lead is who leads the cluster, as of the latest assignment: read
	// by requests, which must not wait for mu while a pass runs.
	lead atomic.Pointer[leadership]

	// snap is the latest snapshot() built.
	snap atomic.Pointer[ClusterConfig]

	// plugins caches connector classes (class → connect.Plugin) for REST
	// requests, which must not wait for mu while a reconcile pass starts
	// or stops what runs here.
	plugins sync.Map
}

type dconn struct {
	config map[string]string
	target TargetState
	inst   *worker.Connector
	failed bool
	state  string // last reported
}

type dtask struct {
	t      *worker.Task
	config map[string]string
	paused bool // as the herder last told the task
}

func (dt *dtask) setPaused(paused bool) {
	if paused {
		dt.t.Pause()
	} else {
		dt.t.Resume()
	}
	dt.paused = paused
}

// ConfigStore is the config topic as the distributed herder uses it,
// in the store's own terms: *storage.ConfigTopic is one.
type ConfigStore interface {
	// Snapshot is the whole state, for a reconcile pass; the others read
	// a part of it at a cost that does not grow with the cluster, for
	// REST answers.
	Snapshot() storage.ConfigState
	Connector(name string) (storage.ConnectorConfigState, bool)
	ConnectorConfig(name string) (map[string]string, bool)
	ConnectorNames() []string
	Offset() int64
	SessionKey() *storage.SessionKey
	Refresh(ctx context.Context) error
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, target *string) error
	RemoveConnector(ctx context.Context, name string) error
	PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error
	PutTaskConfigsBatch(ctx context.Context, writes []storage.TaskConfigsWrite) error
	PutTargetState(ctx context.Context, name, state string) error
	PutSessionKey(ctx context.Context, key storage.SessionKey) error
	PutRestartRequest(ctx context.Context, name string, onlyFailed, includeTasks bool) error
	PutTaskCountRecord(ctx context.Context, connector string, taskCount int) error
	// The leader's writes use a transactional producer when the cluster
	// has exactly-once source support (or prepares it): the leader claims
	// it when elected, and a worker that stops leading drops it.
	ClaimWritePrivileges(ctx context.Context) error
	RelinquishWritePrivileges()
}

var _ ConfigStore = (*storage.ConfigTopic)(nil)

// ClusterConfig is the config topic as a reconcile pass and the REST
// answers read it. A connector whose task configs are inconsistent is in
// Inconsistent and has no entry in Tasks, so that none of its tasks
// starts until a complete commit.
type ClusterConfig struct {
	Offset       int64
	Connectors   map[string]map[string]string
	Targets      map[string]TargetState
	Tasks        map[string][]map[string]string // committed task configs
	SessionKey   []byte
	KeyCreated   time.Time
	Inconsistent map[string]bool
	// Generations count each connector's task commits (KIP-618).
	Generations map[string]int
}

func clusterConfig(st storage.ConfigState) ClusterConfig {
	out := ClusterConfig{
		Offset:     st.Offset,
		Connectors: map[string]map[string]string{}, Targets: map[string]TargetState{},
		Tasks: map[string][]map[string]string{}, Inconsistent: map[string]bool{}, Generations: map[string]int{},
	}
	for name, cs := range st.Connectors {
		out.Connectors[name] = cs.Config
		out.Generations[name] = cs.Generation
		out.Targets[name] = TargetState(cs.TargetState)
		if cs.Inconsistent {
			out.Inconsistent[name] = true
		} else {
			out.Tasks[name] = cs.Tasks
		}
	}
	if st.SessionKey != nil {
		out.SessionKey = st.SessionKey.Key
		out.KeyCreated = time.UnixMilli(st.SessionKey.CreationTimestamp)
	}
	return out
}

// snapshot is the config topic as it is now. REST answers take one each
// (expand=status, one per connector): it is built once per config offset,
// every record read moving the offset, and shared, never to be modified.
func (h *Distributed) snapshot() ClusterConfig {
	st := h.store.Snapshot()
	if c := h.snap.Load(); c != nil && c.Offset == st.Offset {
		return *c
	}
	c := clusterConfig(st)
	h.snap.Store(&c)
	return c
}

// connector is one connector's config, target state and committed task
// configs (none while inconsistent), as ClusterConfig holds them.
func (h *Distributed) connector(name string) (connectorView, bool) {
	cs, ok := h.store.Connector(name)
	if !ok {
		return connectorView{}, false
	}
	// The store gives STARTED for no target state, and no tasks while
	// they are inconsistent.
	return connectorView{config: cs.Config, target: TargetState(cs.TargetState), tasks: cs.Tasks}, true
}

// sessionKeyBytes is a session key's bytes, nil for none.
func sessionKeyBytes(k *storage.SessionKey) []byte {
	if k == nil {
		return nil
	}
	return k.Key
}

type connectorView struct {
	config map[string]string
	target TargetState
	tasks  []map[string]string
}

func (c ClusterConfig) target(name string) TargetState {
	if t, ok := c.Targets[name]; ok && t != "" {
		return t
	}
	return Started
}

// StatusStore is the status topic as the distributed herder uses it, in
// the store's own terms: *storage.StatusTopic is one.
type StatusStore interface {
	Put(ctx context.Context, rec storage.StatusRecord) error
	PutSafe(ctx context.Context, rec storage.StatusRecord) (bool, error)
	DeleteConnector(ctx context.Context, connector string) error
	DeleteTask(ctx context.Context, connector string, task int) error
	Connector(name string) (storage.StatusRecord, bool)
	Tasks(connector string) []storage.StatusRecord
	PutTopic(ctx context.Context, ts storage.TopicStatus) error
	Topics(connector string) []string
	ResetTopics(ctx context.Context, connector string) error
}

var _ StatusStore = (*storage.StatusTopic)(nil)

// OffsetTopic is the offsets topic as the distributed herder uses it.
type OffsetTopic interface {
	worker.TransactionalOffsets
	Offsets(connector string) []storage.PartitionOffset
	ReadToEnd(ctx context.Context) error
}

// Member is this worker's membership in the cluster's group.
type Member interface {
	Run(ctx context.Context) error
	RequestRejoin()
	Rebalancing() bool
}

// DistributedOptions configure a distributed herder.
type DistributedOptions struct {
	URL       string // advertised REST URL, http://host:port/
	ClusterID string
	Commit    string
	Log       *slog.Logger
	// Loggers are the plugins' loggers by class name (nil: Log).
	Loggers func(name string) *slog.Logger
	Dial    kafkasec.DialFunc // connects the connectors' Kafka clients; nil: the network
	Plugins *connect.PluginSet
	// KafkaPing asks Kafka for its metadata, for GET /health; nil: not
	// checked.
	KafkaPing func(ctx context.Context) error
	// OpenOffsetTopic opens the offsets topics connectors name for
	// themselves.
	OpenOffsetTopic OpenOffsetTopic
}

// NewDistributed returns the herder of a cluster member. The member is
// attached with SetMember before Run, because building it needs the
// herder as its handler.
func NewDistributed(cfg *worker.Config, dcfg *worker.DistributedConfig, bootstrap []string, store ConfigStore, status StatusStore, offsets OffsetTopic, opts DistributedOptions) *Distributed {
	h := &Distributed{
		cfg: cfg, dcfg: dcfg, store: store, status: status, offsets: offsets, log: opts.Log,
		url: opts.URL, clusterID: opts.ClusterID, commit: opts.Commit, health: healthProbe{kafka: opts.KafkaPing},
		kick:  make(chan struct{}, 1),
		owned: map[string]bool{}, ownedTasks: map[client.TaskID]bool{},
		conns: map[string]*dconn{}, tasks: map[client.TaskID]*dtask{}, regen: map[string]bool{}, regenBackoff: map[string]time.Duration{},
	}
	if u, err := url.Parse(opts.URL); err == nil {
		h.workerID = u.Host
	}
	h.leaderClient = leaderClient(cfg.HTTPClient())
	h.w = worker.New(cfg, opts.Plugins, bootstrap, opts.Dial, offsets, h, opts.Log, opts.Loggers)
	h.w.ReserveTopics(dcfg.ConfigTopic, dcfg.OffsetTopic, dcfg.StatusTopic)
	h.openOffsetTopic = opts.OpenOffsetTopic
	h.om = offsetsManager{w: h.w, store: offsets, storeOf: func(config map[string]string) (sourceOffsetStore, error) { return h.offsetsOf(config) }}
	h.w.SetOffsetsOf(func(config map[string]string) (worker.OffsetStore, error) { return h.offsetsOf(config) })
	return h
}

// SetMember attaches the group membership.
func (h *Distributed) SetMember(m Member) { h.member = m }

// Worker is the worker the herder runs connectors on.
func (h *Distributed) Worker() *worker.Worker { return h.w }

// WorkerID is the host:port this worker reports in statuses.
func (h *Distributed) WorkerID() string { return h.workerID }

// Run takes part in the cluster until ctx is done, then stops everything
// running here, committing offsets.
func (h *Distributed) Run(ctx context.Context) error {
	memberDone := make(chan error, 1)
	go func() { memberDone <- h.member.Run(ctx) }()
	// The leader rotates the session key when it is older than
	// inter.worker.key.ttl.ms, as Kafka Connect's leader does.
	keyCheck := time.NewTicker(max(min(h.dcfg.KeyTTL/4, time.Minute), time.Second))
	defer keyCheck.Stop()
	// Statuses read after the last reconcile pass are swept too.
	sweep := time.NewTicker(statusSweepInterval)
	defer sweep.Stop()
	// A pass costs as much as what runs here, and in a burst of config
	// changes each asks for one: after a pass, the next waits twice as
	// long as it took, so that passes take at most a third of the time
	// whatever the cluster's size, while a lone change is acted on at once.
	var next time.Time
	var paced <-chan time.Time
	pass := func() {
		start := time.Now()
		h.reconcile(ctx)
		next = time.Now().Add(min(2*time.Since(start), time.Second))
	}
	for {
		select {
		case <-sweep.C:
			h.sweep()
		case <-keyCheck.C:
			if err := h.EnsureSessionKey(ctx); err != nil {
				h.log.Warn("rotating the session key failed", "error", err)
			}
		case <-ctx.Done():
			h.stopAll()
			return <-memberDone
		case err := <-memberDone:
			h.stopAll()
			return err
		case <-h.kick:
			if wait := time.Until(next); wait > 0 {
				if paced == nil {
					paced = time.After(wait)
				}
				continue
			}
			pass()
		case <-paced:
			paced = nil
			pass()
		}
	}
}

// statusSweepInterval is how often statuses left for tasks whose config
// is gone are looked for, besides every reconcile pass.
const statusSweepInterval = 10 * time.Second

func (h *Distributed) sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepStatusesLocked(context.Background(), h.snapshot(), nil)
}

// Kick asks for a reconcile pass; calls coalesce.
func (h *Distributed) Kick() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *Distributed) stopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	stopped := h.stopTasksLocked(func(client.TaskID) bool { return true })
	h.sweepStatusesLocked(context.Background(), h.snapshot(), stopped)
	for name, dc := range h.conns {
		h.stopConnLocked(name, dc)
	}
}

// ---- group handler -------------------------------------------------------

// ConfigOffset is this worker's position in the config topic.
func (h *Distributed) ConfigOffset() int64 { return h.store.Offset() }

// CatchUp reads the config topic until it reaches offset.
func (h *Distributed) CatchUp(ctx context.Context, offset int64) bool {
	ctx, cancel := context.WithTimeout(ctx, h.dcfg.WorkerSyncTimeout)
	defer cancel()
	if err := h.store.Refresh(ctx); err != nil {
		return false
	}
	return h.store.Offset() >= offset
}

// Work is what the cluster should run: every connector with a config and
// its committed task count.
func (h *Distributed) Work() map[string]int {
	snap := h.snapshot()
	out := make(map[string]int, len(snap.Connectors))
	for name := range snap.Connectors {
		out[name] = len(snap.Tasks[name])
	}
	return out
}

// LastWorker is the worker the status topic last saw run the connector
// (task -1) or task, "" if it has no status.
func (h *Distributed) LastWorker(connector string, task int) string {
	if task < 0 {
		rec, _ := h.status.Connector(connector)
		return rec.WorkerID
	}
	for _, rec := range h.status.Tasks(connector) {
		if rec.Task == task {
			return rec.WorkerID
		}
	}
	return ""
}

// Revoked stops what the leader took away from this worker, committing
// offsets, before the group moves on.
func (h *Distributed) Revoked(connectors []string, tasks []client.TaskID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	revokedTask := map[client.TaskID]bool{}
	for _, id := range tasks {
		revokedTask[id] = true
		delete(h.ownedTasks, id)
	}
	h.assigned.Store(new(maps.Clone(h.ownedTasks)))
	stopped := h.stopTasksLocked(func(id client.TaskID) bool { return revokedTask[id] })
	h.sweepStatusesLocked(context.Background(), h.snapshot(), stopped)
	for _, name := range connectors {
		delete(h.owned, name)
		if dc := h.conns[name]; dc != nil {
			h.stopConnLocked(name, dc)
			h.putConnStatus(name, client.StateUnassigned, "")
		}
	}
}

// Assigned records the new assignment and reconciles with it.
func (h *Distributed) Assigned(connectors []string, tasks []client.TaskID, leaderURL string, configOffset int64, generation int32, leader bool, members []string) {
	h.mu.Lock()
	h.members = nil
	if leader {
		h.members = map[string]bool{}
		for _, m := range members {
			if u, err := url.Parse(m); err == nil {
				h.members[u.Host] = true
			}
		}
	}
	h.owned = map[string]bool{}
	for _, c := range connectors {
		h.owned[c] = true
	}
	h.ownedTasks = map[client.TaskID]bool{}
	for _, t := range tasks {
		h.ownedTasks[t] = true
	}
	h.assigned.Store(new(maps.Clone(h.ownedTasks)))
	h.lead.Store(&leadership{leader: leader, url: leaderURL})
	if !leader {
		h.store.RelinquishWritePrivileges()
	}
	h.generation = generation
	h.gen.Store(generation)
	h.mu.Unlock()
	if h.store.Offset() < configOffset {
		ctx, cancel := context.WithTimeout(context.Background(), h.dcfg.WorkerSyncTimeout)
		_ = h.store.Refresh(ctx)
		cancel()
	}
	h.ready.Store(true)
	h.Kick()
}

// ClaimWritePrivileges is a newly elected leader's first act: with
// exactly-once source support, or while it is being prepared, it claims
// the config topic's transactional id, so that no earlier leader writes
// there any more.
func (h *Distributed) ClaimWritePrivileges(ctx context.Context) error {
	if !h.leadership().leader {
		return nil
	}
	return h.store.ClaimWritePrivileges(ctx)
}

// ---- config topic listener -----------------------------------------------

// ConfigChanged is called for every change read from the config topic.
// Connectors appearing or disappearing, and new task configs, need a new
// assignment; any change may need instances here to follow.
func (h *Distributed) ConfigChanged(rebalance bool) {
	if rebalance && h.member != nil {
		h.member.RequestRejoin()
	}
	h.Kick()
}

// RestartRequested applies a KIP-745 restart to the instances running
// here.
func (h *Distributed) RestartRequested(name string, onlyFailed, includeTasks bool) {
	go func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if dc := h.conns[name]; dc != nil && h.owned[name] && (!onlyFailed || dc.failed) {
			h.putConnStatus(name, client.StateRestarting, "")
			h.stopConnLocked(name, dc)
			dc.failed = false
		}
		if includeTasks {
			for id, dt := range h.tasks {
				if id.Connector != name {
					continue
				}
				st := h.taskState(id)
				if onlyFailed && st != client.StateFailed {
					continue
				}
				h.putTaskStatus(id, client.StateRestarting, "", false)
				dt.t.Stop()
				delete(h.tasks, id)
			}
		}
		h.Kick()
	}()
}

func (h *Distributed) taskState(id client.TaskID) string {
	for _, ts := range h.status.Tasks(id.Connector) {
		if ts.Task == id.Task {
			return ts.State
		}
	}
	return ""
}

// ---- worker.Listener -------------------------------------------------------

// TaskState records a task's state in the status topic, unless the task
// was already replaced here.
//
// It must not take h.mu: the herder holds it while waiting for tasks to
// stop, and a stopping task reports its last state.
func (h *Distributed) TaskState(t *worker.Task, state, trace string) {
	id := client.TaskID{Connector: t.Connector, Task: t.ID}
	if !h.current(id, t) {
		return
	}
	gen := h.gen.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// As in Kafka, a failure or a shutdown does not replace what another
	// worker wrote in a newer generation: a zombie's task, fenced out
	// when it wakes up, must not report its failure over the task's new
	// incarnation.
	safe := state == client.StateUnassigned || state == client.StateFailed
	if err := h.writeTaskStatus(ctx, id, state, trace, gen, safe); err != nil {
		h.log.Warn("writing a task status failed", "task", id.String(), "error", err)
	}
}

// current reports whether t is the latest task started here for id. A
// task starting here may report before StartTask returned: it claims its
// place, unless it is an old one, told to stop.
func (h *Distributed) current(id client.TaskID, t *worker.Task) bool {
	for {
		cur, ok := h.incarnations.Load(id)
		switch {
		case !ok || cur.(*worker.Task) == t:
			return true
		case cur != startingTask || t.Stopping():
			return false
		case h.incarnations.CompareAndSwap(id, startingTask, t):
			return true
		}
		// StartTask returned between the load and the swap, and stored
		// its task (t, or a later one): look again.
	}
}

// TopicUsed records a topic a connector's task used.
func (h *Distributed) TopicUsed(connector, topic string, task int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.status.PutTopic(ctx, storage.TopicStatus{Topic: topic, Connector: connector, Task: task, DiscoverTimestamp: time.Now().UnixMilli()}); err != nil {
		h.log.Warn("writing a topic status failed", "connector", connector, "topic", topic, "error", err)
	}
}

func (h *Distributed) putConnStatus(name, state, trace string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := storage.StatusRecord{Connector: name, State: state, Trace: trace, WorkerID: h.workerID, Generation: h.generation}
	if err := h.status.Put(ctx, rec); err != nil {
		h.log.Warn("writing a connector status failed", "connector", name, "error", err)
	}
	if dc := h.conns[name]; dc != nil {
		dc.state = state
	}
}

func (h *Distributed) putTaskStatus(id client.TaskID, state, trace string, safe bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.writeTaskStatus(ctx, id, state, trace, h.generation, safe); err != nil {
		h.log.Warn("writing a task status failed", "task", id.String(), "error", err)
	}
}

// writeTaskStatus writes a task's state as this worker's in generation
// gen; a safe write does not replace the status another worker wrote in
// a newer generation.
func (h *Distributed) writeTaskStatus(ctx context.Context, id client.TaskID, state, trace string, gen int32, safe bool) error {
	rec := storage.StatusRecord{Connector: id.Connector, IsTask: true, Task: id.Task, State: state, Trace: trace, WorkerID: h.workerID, Generation: gen}
	if safe {
		_, err := h.status.PutSafe(ctx, rec)
		return err
	}
	return h.status.Put(ctx, rec)
}

// ---- reconcile -------------------------------------------------------------

func (h *Distributed) startConnLocked(name string, dc *dconn) {
	inst, err := h.w.StartConnector(name, dc.config,
		func() {
			h.mu.Lock()
			h.regen[name] = true
			h.mu.Unlock()
			h.Kick()
		},
		func(err error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			if dc := h.conns[name]; dc != nil {
				dc.failed = true
			}
			h.putConnStatus(name, client.StateFailed, trace(err))
		})
	if err != nil {
		h.log.Error("connector failed to start", "connector", name, "error", err)
		dc.failed = true
		h.putConnStatus(name, client.StateFailed, trace(err))
		return
	}
	dc.inst = inst
	h.putConnStatus(name, client.StateRunning, "")
}

func (h *Distributed) stopConnLocked(name string, dc *dconn) {
	if dc.inst == nil {
		return
	}
	if err := dc.inst.Stop(); err != nil {
		h.log.Warn("connector stop failed", "connector", name, "error", err)
	}
	dc.inst = nil
}

// generateTaskConfigs asks a running connector for its task configs and,
// when they differ from the committed ones, has the leader write them.
func (h *Distributed) generateTaskConfigs(name string, dc *dconn, snap ClusterConfig) {
	cfgs, err := dc.inst.TaskConfigs(dc.config)
	if err != nil {
		dc.failed = true
		h.putConnStatus(name, client.StateFailed, trace(err))
		return
	}
	if slices.EqualFunc(cfgs, snap.Tasks[name], maps.Equal) && !snap.Inconsistent[name] {
		delete(h.regenBackoff, name)
		return
	}
	lead := h.leadership()
	leader, leaderURL := lead.leader, lead.url
	key := snap.SessionKey
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var err error
		if leader {
			err = h.putTaskConfigs(ctx, name, cfgs)
		} else {
			err = postTaskConfigs(ctx, h.leaderClient, leaderURL, name, cfgs, key)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if err == nil {
			delete(h.regenBackoff, name)
			return
		}
		// Tried again after a backoff, as Kafka Connect's herder does
		// (250 ms doubling up to 60 s): nothing else may come to ask for
		// it, and a connector without task configs runs no task. The pass
		// it kicks generates them again only if the connector still runs
		// here, started: so a stop or a deletion the leader saw first
		// (400 or 404) ends the retries once this worker reads it too.
		backoff := min(max(2*h.regenBackoff[name], 250*time.Millisecond), 60*time.Second)
		h.regenBackoff[name] = backoff
		var herr *Error
		if errors.As(err, &herr) && (herr.Status == http.StatusBadRequest || herr.Status == http.StatusNotFound) {
			h.log.Debug("task configs not submitted", "connector", name, "reason", err, "retry_in", backoff)
		} else {
			h.log.Warn("submitting task configs failed", "connector", name, "error", err, "retry_in", backoff)
		}
		time.AfterFunc(backoff, func() {
			h.mu.Lock()
			h.regen[name] = true
			h.mu.Unlock()
			h.Kick()
		})
	}()
}

// startingTask stands in incarnations for a task being started, until
// StartTask returns it or its first report claims the place.
var startingTask = new(worker.Task)

func (h *Distributed) startTaskLocked(id client.TaskID, connConfig, taskConfig map[string]string, paused bool, generation int) {
	h.incarnations.Store(id, startingTask)
	t, err := h.w.StartTask(id.Connector, id.Task, connConfig, taskConfig, paused, h.exactlyOnceFor(id, connConfig, generation))
	if err != nil {
		h.putTaskStatus(id, client.StateFailed, trace(err), false)
		return
	}
	h.tasks[id] = &dtask{t: t, config: taskConfig, paused: paused}
	h.incarnations.Store(id, t)
}

// stopTasksLocked stops, in parallel, the tasks running here that match;
// each reports its last state before it returns them.
func (h *Distributed) stopTasksLocked(match func(client.TaskID) bool) []client.TaskID {
	var wg sync.WaitGroup
	var stopped []client.TaskID
	for id, dt := range h.tasks {
		if !match(id) {
			continue
		}
		delete(h.tasks, id)
		stopped = append(stopped, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			dt.t.Stop()
		}()
	}
	wg.Wait()
	return stopped
}

// sweepStatusesLocked deletes the statuses of tasks whose config is gone,
// as Kafka Connect's leader deletes those of deleted tasks after a
// rebalance, where nobody else will: those of the tasks just stopped
// here (after their last report, so that nothing brings them back), those
// this worker's tasks left behind (a task stopped by a revocation before
// this worker read that its config is gone), and, at the leader, those of
// workers no longer in the group (they died running the task, leaving
// RUNNING for good).
func (h *Distributed) sweepStatusesLocked(ctx context.Context, snap ClusterConfig, stopped []client.TaskID) {
	gone := func(id client.TaskID) bool { return id.Task >= len(snap.Tasks[id.Connector]) }
	forget := map[client.TaskID]bool{}
	for _, id := range stopped {
		if gone(id) {
			forget[id] = true
		}
	}
	for name := range snap.Connectors {
		for _, ts := range h.status.Tasks(name) {
			id := client.TaskID{Connector: name, Task: ts.Task}
			if gone(id) && h.tasks[id] == nil && (ts.WorkerID == h.workerID || h.members != nil && !h.members[ts.WorkerID]) {
				forget[id] = true
			}
		}
	}
	for id := range forget {
		h.deleteTaskStatus(ctx, id)
	}
}

func (h *Distributed) deleteTaskStatus(ctx context.Context, id client.TaskID) {
	if err := h.status.DeleteTask(ctx, id.Connector, id.Task); err != nil {
		h.log.Warn("deleting a task status failed", "task", id.String(), "error", err)
	}
}

func (h *Distributed) forgetStatuses(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ts := range h.status.Tasks(name) {
		_ = h.status.DeleteTask(ctx, name, ts.Task)
	}
	_ = h.status.DeleteConnector(ctx, name)
}

// ---- REST ------------------------------------------------------------------

func (h *Distributed) plugin(class string) connect.Plugin {
	if p, ok := h.plugins.Load(class); ok {
		return p.(connect.Plugin)
	}
	_, p, _ := worker.Instantiate(h.w.Plugins(), class)
	h.plugins.Store(class, p)
	return p
}

// atLeader runs local when this worker leads the cluster, and otherwise
// names the leader for the REST layer to forward the request to. It first
// waits for a rebalance in progress to end: what local does (an offsets
// change, a stop) depends on what runs where.
func (h *Distributed) atLeader(ctx context.Context, local func() error) error {
	if err := h.awaitRebalance(ctx); err != nil {
		return err
	}
	return h.atLeaderNow(local)
}

// atLeaderNow is atLeader for the writes of connector configs, which do
// not depend on the assignment: the next rebalance takes them in. Kafka
// answers them 409 while its worker has read config changes not yet
// rebalanced; waiting instead made every create of a burst wait for the
// rebalance the previous one caused.
func (h *Distributed) atLeaderNow(local func() error) error {
	lead := h.leadership()
	if lead.leader {
		return local()
	}
	return &RequestTargetError{URL: lead.url}
}

type leadership struct {
	leader bool   // this worker leads
	url    string // the leader's REST URL
}

// leadership is who leads, as of the latest assignment (none before it).
func (h *Distributed) leadership() leadership {
	if l := h.lead.Load(); l != nil {
		return *l
	}
	return leadership{}
}

// awaitRebalance waits a little for a rebalance in progress to finish
// before answering 409 as Kafka Connect does at once: a stop is followed
// by a rebalance, and the offsets change a user sends right after the
// stop should not fail for it.
func (h *Distributed) awaitRebalance(ctx context.Context) error {
	if h.member == nil {
		return nil
	}
	deadline := time.Now().Add(rebalanceWait)
	for h.member.Rebalancing() {
		if time.Now().After(deadline) {
			return Conflict(msgStaleConfig)
		}
		select {
		case <-ctx.Done():
			return Conflict(msgStaleConfig)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// rebalanceWait bounds how long a request waits for a rebalance.
const rebalanceWait = 10 * time.Second

// ServerInfo answers GET /.
func (h *Distributed) ServerInfo() client.ServerInfo {
	return client.ServerInfo{Version: Version, Commit: h.commit, KafkaClusterID: h.clusterID}
}

// Health answers GET /health: ready once the worker joined the cluster.
func (h *Distributed) Health(ctx context.Context) (int, client.WorkerStatus) {
	return h.health.check(ctx, h.ready.Load(), &h.mu)
}

// Connectors lists the connectors of the cluster.
func (h *Distributed) Connectors(ctx context.Context) ([]string, error) {
	return h.store.ConnectorNames(), nil
}

func (h *Distributed) info(name string) (*client.ConnectorInfo, error) {
	conn, ok := h.connector(name)
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	config := conn.config
	tasks := make([]client.TaskID, len(conn.tasks))
	for i := range tasks {
		tasks[i] = client.TaskID{Connector: name, Task: i}
	}
	return &client.ConnectorInfo{Name: name, Config: maps.Clone(config), Tasks: tasks, Type: connType(h.plugin(config["connector.class"]))}, nil
}

// ConnectorInfo answers GET /connectors/{c}.
func (h *Distributed) ConnectorInfo(ctx context.Context, name string) (*client.ConnectorInfo, error) {
	return h.info(name)
}

// ConnectorConfig answers GET /connectors/{c}/config.
func (h *Distributed) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	info, err := h.ConnectorInfo(ctx, name)
	if err != nil {
		return nil, err
	}
	return info.Config, nil
}

// ConnectorStatus answers GET /connectors/{c}/status from the status topic.
func (h *Distributed) ConnectorStatus(ctx context.Context, name string) (*client.ConnectorStatus, error) {
	rec, ok := h.status.Connector(name)
	if !ok {
		return nil, NotFound("No status found for connector %s", name)
	}
	st := client.State{State: rec.State, WorkerID: rec.WorkerID, Trace: rec.Trace}
	typ := client.TypeUnknown
	if config, ok := h.store.ConnectorConfig(name); ok {
		typ = connType(h.plugin(config["connector.class"]))
	}
	tasks := taskStates(h.status.Tasks(name))
	if tasks == nil {
		tasks = []client.TaskState{}
	}
	return &client.ConnectorStatus{Name: name, Connector: st, Tasks: tasks, Type: typ}, nil
}

// taskStates are the status topic's task records as the REST API shows
// them; nil when there are none.
func taskStates(recs []storage.StatusRecord) []client.TaskState {
	var out []client.TaskState
	for _, r := range recs {
		out = append(out, client.TaskState{ID: r.Task, State: r.State, WorkerID: r.WorkerID, Trace: r.Trace})
	}
	return out
}

// TaskStatus answers GET /connectors/{c}/tasks/{t}/status.
func (h *Distributed) TaskStatus(ctx context.Context, name string, task int) (*client.TaskState, error) {
	for _, ts := range taskStates(h.status.Tasks(name)) {
		if ts.ID == task {
			return &ts, nil
		}
	}
	return nil, NotFound("No status found for task %s-%d", name, task)
}

// TaskConfigs answers GET /connectors/{c}/tasks.
func (h *Distributed) TaskConfigs(ctx context.Context, name string) ([]client.TaskInfo, error) {
	conn, ok := h.connector(name)
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	out := make([]client.TaskInfo, len(conn.tasks))
	for i, c := range conn.tasks {
		out[i] = client.TaskInfo{ID: client.TaskID{Connector: name, Task: i}, Config: maps.Clone(c)}
	}
	return out, nil
}

// ValidateConfig answers the validate endpoint, on this worker.
func (h *Distributed) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (*client.ConfigInfos, error) {
	infos, err := validate(h.w.Plugins(), h.w.Config().Providers, config, h.cfg.TasksMaxPerConnector, h.cfg.TopicCreation)
	if err != nil {
		return nil, err
	}
	h.checkSinkGroup(config, infos)
	checkExactlyOnce(h.w.Plugins(), config, infos, h.dcfg.ExactlyOnceSource)
	return infos, nil
}

// checkSinkGroup refuses a sink whose consumer group is the cluster's own
// group, as Kafka Connect does.
func (h *Distributed) checkSinkGroup(config map[string]string, infos *client.ConfigInfos) {
	if h.plugin(config["connector.class"]).Type != connect.PluginSink {
		return
	}
	if h.w.SinkGroupID(config["name"], config) != h.dcfg.GroupID {
		return
	}
	msg := fmt.Sprintf("Consumer group for sink connector named %s conflicts with Connect worker group %s", config["name"], h.dcfg.GroupID)
	if g, ok := config["consumer.override.group.id"]; ok {
		msg = fmt.Sprintf("Consumer group %s conflicts with Connect worker group %s", g, h.dcfg.GroupID)
	}
	for _, c := range infos.Configs {
		if c.Value != nil && c.Value.Name == "name" {
			c.Value.Errors = append(c.Value.Errors, msg)
			infos.ErrorCount++
		}
	}
}

func (h *Distributed) validateForWrite(config map[string]string) error {
	infos, err := h.ValidateConfig(context.Background(), "", config)
	if err != nil {
		return err
	}
	if infos.ErrorCount > 0 {
		return validationError(infos)
	}
	return nil
}

// CreateConnector answers POST /connectors, at the leader.
func (h *Distributed) CreateConnector(ctx context.Context, name string, config map[string]string, initial TargetState, initialOffsets []client.ConnectorOffset) (*client.ConnectorInfo, error) {
	if err := h.validateForWrite(config); err != nil {
		return nil, err
	}
	var info *client.ConnectorInfo
	err := h.atLeaderNow(func() error {
		defer h.configLocks.lock(name)()
		// No read to the end first, as in Kafka: connector configs are
		// written by the leader alone, which reads each of its writes
		// back before answering, and caught up with every member when it
		// was elected. The round trip was most of a create's time.
		if _, ok := h.connector(name); ok {
			return Conflict("Connector %s already exists", name)
		}
		if len(initialOffsets) > 0 {
			ref := connectorRef{name: name, config: config, typ: h.plugin(config["connector.class"]).Type}
			if err := h.readOffsetsToEnd(ctx, config); err != nil {
				return Internal("Failed to read the offsets topic: %v", err)
			}
			if _, err := h.om.modifyOffsets(ctx, ref, nil, true); err != nil {
				return err
			}
			if _, err := h.om.modifyOffsets(ctx, ref, initialOffsets, false); err != nil {
				return err
			}
		}
		var target *string
		if initial != "" {
			s := string(initial)
			target = &s
		}
		if err := h.store.PutConnectorConfig(ctx, name, config, target); err != nil {
			return Internal("Failed to write connector %s: %v", name, err)
		}
		var err error
		info, err = h.info(name)
		return err
	})
	return info, err
}

// PutConnectorConfig answers PUT /connectors/{c}/config, at the leader.
func (h *Distributed) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error) {
	if err := h.validateForWrite(config); err != nil {
		return nil, false, err
	}
	var info *client.ConnectorInfo
	var created bool
	err := h.atLeaderNow(func() error {
		defer h.configLocks.lock(name)()
		if err := h.store.Refresh(ctx); err != nil {
			return Internal("Failed to read to end of config topic: %v", err)
		}
		_, existed := h.connector(name)
		if err := h.store.PutConnectorConfig(ctx, name, config, nil); err != nil {
			return Internal("Failed to write connector %s: %v", name, err)
		}
		created = !existed
		var err error
		info, err = h.info(name)
		return err
	})
	return info, created, err
}

// PatchConnectorConfig answers PATCH /connectors/{c}/config, at the
// leader, as Kafka does: the patch applies to the config topic's latest
// state, under the connector's config lock, so that concurrent patches
// through any worker all keep their keys.
func (h *Distributed) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*client.ConnectorInfo, error) {
	var info *client.ConnectorInfo
	err := h.atLeaderNow(func() error {
		defer h.configLocks.lock(name)()
		if err := h.store.Refresh(ctx); err != nil {
			return Internal("Failed to read to end of config topic: %v", err)
		}
		conn, ok := h.connector(name)
		current := conn.config
		if !ok {
			return NotFound("Connector %s not found", name)
		}
		config := patched(current, patch)
		if err := h.validateForWrite(config); err != nil {
			return err
		}
		if err := h.store.PutConnectorConfig(ctx, name, config, nil); err != nil {
			return Internal("Failed to write connector %s: %v", name, err)
		}
		var err error
		info, err = h.info(name)
		return err
	})
	return info, err
}

// DeleteConnector answers DELETE /connectors/{c}, at the leader. Offsets
// are kept, as in Kafka Connect.
func (h *Distributed) DeleteConnector(ctx context.Context, name string) error {
	return h.atLeaderNow(func() error {
		defer h.configLocks.lock(name)()
		if err := h.store.Refresh(ctx); err != nil {
			return Internal("Failed to read to end of config topic: %v", err)
		}
		if _, ok := h.connector(name); !ok {
			return NotFound("Connector %s not found", name)
		}
		if err := h.store.RemoveConnector(ctx, name); err != nil {
			return Internal("Failed to delete connector %s: %v", name, err)
		}
		return nil
	})
}

func (h *Distributed) exists(name string) bool {
	_, ok := h.connector(name)
	return ok
}

// PauseConnector answers PUT /connectors/{c}/pause: any worker writes the
// target state.
func (h *Distributed) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, Paused)
}

// ResumeConnector answers PUT /connectors/{c}/resume.
func (h *Distributed) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, Started)
}

func (h *Distributed) setTarget(ctx context.Context, name string, target TargetState) error {
	if !h.exists(name) {
		return NotFound("Unknown connector %s", name)
	}
	if err := h.store.PutTargetState(ctx, name, string(target)); err != nil {
		return Internal("Failed to write the target state of %s: %v", name, err)
	}
	return nil
}

// StopConnector answers PUT /connectors/{c}/stop, at the leader: it writes
// an empty set of task configs, then the STOPPED target state (in that
// order, so a STOPPED connector never has tasks), and waits until no
// worker runs a task of the connector any more.
func (h *Distributed) StopConnector(ctx context.Context, name string) error {
	return h.atLeader(ctx, func() error {
		if err := h.store.Refresh(ctx); err != nil {
			return Internal("Failed to read to end of config topic: %v", err)
		}
		if !h.exists(name) {
			return NotFound("Unknown connector %s", name)
		}
		if err := h.writeStop(ctx, name); err != nil {
			return err
		}
		return h.waitTasksGone(ctx, name)
	})
}

func (h *Distributed) writeStop(ctx context.Context, name string) error {
	h.taskConfigsMu.Lock()
	defer h.taskConfigsMu.Unlock()
	if err := h.store.PutTaskConfigs(ctx, name, nil); err != nil {
		return Internal("Failed to write the task configs of %s: %v", name, err)
	}
	if err := h.store.PutTargetState(ctx, name, string(Stopped)); err != nil {
		return Internal("Failed to write the target state of %s: %v", name, err)
	}
	return nil
}

// activeTasks lists the tasks the status topic still shows as running
// somewhere.
func (h *Distributed) activeTasks(name string) []client.TaskState {
	var out []client.TaskState
	for _, ts := range taskStates(h.status.Tasks(name)) {
		switch ts.State {
		case client.StateRunning, client.StatePaused, client.StateRestarting:
			out = append(out, ts)
		}
	}
	return out
}

func (h *Distributed) waitTasksGone(ctx context.Context, name string) error {
	for {
		if len(h.activeTasks(name)) == 0 {
			return nil
		}
		// A worker that died running a task will never report it
		// stopped, and its status may have been read since the last
		// sweep.
		h.sweep()
		select {
		case <-ctx.Done():
			return Internal("Timed out waiting for the tasks of %s to stop", name)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// RestartConnector answers a plain restart, on the worker running the
// connector.
func (h *Distributed) RestartConnector(ctx context.Context, name string) error {
	if !h.exists(name) {
		return NotFound("Unknown connector: %s", name)
	}
	h.mu.Lock()
	dc, here := h.conns[name], h.owned[name]
	if here && dc != nil {
		h.stopConnLocked(name, dc)
		dc.failed = false
		h.regen[name] = true
		h.mu.Unlock()
		h.Kick()
		return nil
	}
	h.mu.Unlock()
	st, ok := h.status.Connector(name)
	if !ok {
		return NotFound("Status for connector %s not found", name)
	}
	return &RequestTargetError{URL: "http://" + st.WorkerID}
}

// RestartConnectorAndTasks answers a KIP-745 restart: the leader writes a
// restart request that every worker applies to what it runs.
func (h *Distributed) RestartConnectorAndTasks(ctx context.Context, name string, includeTasks, onlyFailed bool) (*client.ConnectorStatus, error) {
	var answer *client.ConnectorStatus
	err := h.atLeader(ctx, func() error {
		if !h.exists(name) {
			return NotFound("Unknown connector: %s", name)
		}
		st, err := h.ConnectorStatus(ctx, name)
		if err != nil {
			return NotFound("Status for connector %s not found", name)
		}
		if !onlyFailed || st.Connector.State == client.StateFailed {
			st.Connector.State, st.Connector.Trace = client.StateRestarting, ""
		}
		for i, ts := range st.Tasks {
			if includeTasks && (!onlyFailed || ts.State == client.StateFailed) {
				st.Tasks[i].State, st.Tasks[i].Trace = client.StateRestarting, ""
			}
		}
		if err := h.store.PutRestartRequest(ctx, name, onlyFailed, includeTasks); err != nil {
			return Internal("Failed to write the restart request of %s: %v", name, err)
		}
		answer = st
		return nil
	})
	return answer, err
}

// RestartTask answers POST /connectors/{c}/tasks/{t}/restart, on the
// worker running the task.
func (h *Distributed) RestartTask(ctx context.Context, name string, task int) error {
	if !h.exists(name) {
		return NotFound("Unknown connector: %s", name)
	}
	id := client.TaskID{Connector: name, Task: task}
	h.mu.Lock()
	if dt, ok := h.tasks[id]; ok {
		dt.t.Stop()
		delete(h.tasks, id)
		h.mu.Unlock()
		h.Kick()
		return nil
	}
	h.mu.Unlock()
	ts, err := h.TaskStatus(ctx, name, task)
	if err != nil {
		return NotFound("Unknown task: %s", id)
	}
	return &RequestTargetError{URL: "http://" + ts.WorkerID}
}

// ConnectorTopics answers GET /connectors/{c}/topics.
func (h *Distributed) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	if !h.cfg.TopicTracking {
		return nil, Forbidden("Topic tracking is disabled.")
	}
	t := h.status.Topics(name)
	if t == nil {
		t = []string{}
	}
	return t, nil
}

// ResetConnectorTopics answers PUT /connectors/{c}/topics/reset.
func (h *Distributed) ResetConnectorTopics(ctx context.Context, name string) error {
	if !h.cfg.TopicTracking {
		return Forbidden("Topic tracking is disabled.")
	}
	if !h.cfg.TopicTrackingReset {
		return Forbidden("Topic tracking reset is disabled.")
	}
	return h.status.ResetTopics(ctx, name)
}

// ConnectorOffsets answers GET /connectors/{c}/offsets on any worker.
func (h *Distributed) ConnectorOffsets(ctx context.Context, name string) (*client.ConnectorOffsets, error) {
	conn, ok := h.connector(name)
	config := conn.config
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	typ := h.plugin(config["connector.class"]).Type
	if typ != connect.PluginSink {
		if err := h.readOffsetsToEnd(ctx, config); err != nil {
			return nil, Internal("Failed to retrieve offsets for source connector %s: %v", name, err)
		}
	}
	return h.om.get(ctx, connectorRef{name: name, config: config, typ: typ})
}

// OffsetsHistory answers connectd's GET /connectors/{c}/offsets/history:
// a distributed worker's history is its offsets topic, which clients read
// themselves.
func (h *Distributed) OffsetsHistory(_ context.Context, name string) (*client.OffsetsHistory, error) {
	if _, ok := h.connector(name); !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	return nil, NotFound("A distributed worker's offsets history is its offsets topic: read it with connectctl offsets history %s --from-topic", name)
}

// AlterConnectorOffsets answers PATCH /connectors/{c}/offsets, at the
// leader.
func (h *Distributed) AlterConnectorOffsets(ctx context.Context, name string, offsets []client.ConnectorOffset) (string, error) {
	if len(offsets) == 0 {
		return "", BadRequest("Partitions / offsets need to be provided for an alter offsets request")
	}
	var msg string
	err := h.atLeader(ctx, func() (err error) {
		msg, err = h.changeOffsets(ctx, name, offsets, false)
		return err
	})
	return msg, err
}

// ResetConnectorOffsets answers DELETE /connectors/{c}/offsets, at the
// leader.
func (h *Distributed) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	var msg string
	err := h.atLeader(ctx, func() (err error) {
		msg, err = h.changeOffsets(ctx, name, nil, true)
		return err
	})
	return msg, err
}

// changeOffsets is the leader's part of an offsets change: the connector
// must be STOPPED with no task configs, as in Kafka Connect, and no worker
// may still run one of its tasks.
func (h *Distributed) changeOffsets(ctx context.Context, name string, offsets []client.ConnectorOffset, reset bool) (string, error) {
	if err := h.store.Refresh(ctx); err != nil {
		return "", Internal("Failed to read to end of config topic before modifying connector offsets")
	}
	conn, ok := h.connector(name)
	config := conn.config
	if !ok {
		return "", NotFound("Connector %s not found", name)
	}
	if conn.target != Stopped || len(conn.tasks) > 0 {
		return "", notStopped(name)
	}
	if active := h.activeTasks(name); len(active) > 0 {
		return "", Conflict("Task %s-%d of connector %s is still %s on worker %s; offsets can be changed once it has stopped", name, active[0].ID, name, active[0].State, active[0].WorkerID)
	}
	typ := h.plugin(config["connector.class"]).Type
	if typ != connect.PluginSink {
		if err := h.readOffsetsToEnd(ctx, config); err != nil {
			return "", Internal("Timed out while trying to read to the end of the offsets topic prior to modifying offsets for source connector %s", name)
		}
	}
	handled, err := h.om.modifyOffsets(ctx, connectorRef{name: name, config: config, typ: typ}, offsets, reset)
	if err != nil {
		return "", err
	}
	verb := "altered"
	if reset {
		verb = "reset"
	}
	return successMessage(handled, verb), nil
}

// SubmitTaskConfigs takes a member's new task configs (the internal,
// signed endpoint) and writes them, at the leader.
func (h *Distributed) SubmitTaskConfigs(ctx context.Context, name string, body []byte, header http.Header) error {
	if err := verifySignature(sessionKeyBytes(h.store.SessionKey()), body, header); err != nil {
		return err
	}
	var cfgs []map[string]string
	if err := json.Unmarshal(body, &cfgs); err != nil {
		return BadRequest("Invalid task configs: %v", err)
	}
	if !h.leadership().leader {
		return ConflictingOperation()
	}
	return h.putTaskConfigs(ctx, name, cfgs)
}

// putTaskConfigs writes, at the leader, the task configs a connector
// generated, unless it was deleted or stopped by then: a stop's empty set
// must stay (Kafka Connect's leader does not reconfigure a connector that
// is not running).
func (h *Distributed) putTaskConfigs(ctx context.Context, name string, cfgs []map[string]string) error {
	w := &taskConfigsWrite{TaskConfigsWrite: storage.TaskConfigsWrite{Connector: name, Configs: cfgs}, done: make(chan error, 1)}
	h.taskWritesMu.Lock()
	h.taskWrites = append(h.taskWrites, w)
	h.taskWritesMu.Unlock()
	// Group commit: whoever holds the lock writes every set queued so far
	// in one produce and one read-back; a burst of connectors, each
	// sending its task configs, costs a few writes, not one each.
	h.taskConfigsMu.Lock()
	h.taskWritesMu.Lock()
	batch := h.taskWrites
	h.taskWrites = nil
	h.taskWritesMu.Unlock()
	if len(batch) > 0 {
		h.writeTaskConfigsLocked(batch)
	}
	h.taskConfigsMu.Unlock()
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return Internal("Failed to write the task configs of %s: %v", name, ctx.Err())
	}
}

// taskConfigsWrite is a set of task configs waiting for its group commit.
type taskConfigsWrite struct {
	storage.TaskConfigsWrite
	done chan error // capacity 1: the write's outcome
}

// writeTaskConfigsLocked writes the sets of a group commit that the
// config topic, read to its end, allows, and tells each its outcome.
// h.taskConfigsMu is held.
func (h *Distributed) writeTaskConfigsLocked(batch []*taskConfigsWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.store.Refresh(ctx); err != nil {
		for _, w := range batch {
			w.done <- Internal("Failed to read to end of config topic: %v", err)
		}
		return
	}
	var ok []*taskConfigsWrite
	for _, w := range batch {
		name, cfgs := w.Connector, w.Configs
		switch conn, exists := h.connector(name); {
		case !exists:
			w.done <- NotFound("Connector %s not found", name)
		case conn.target == Stopped && len(cfgs) > 0:
			w.done <- BadRequest("Cannot submit non-empty set of task configs for stopped connector %s", name)
		case len(cfgs) > h.cfg.TasksMaxPerConnector:
			// The leader's limit holds for the cluster, even when the
			// member that generated the set has a larger one.
			w.done <- BadRequest("Cannot submit %d task configs for connector %s: this worker runs at most %d tasks per connector (%s)", len(cfgs), name, h.cfg.TasksMaxPerConnector, worker.TasksMaxPerConnectorConfig)
		default:
			ok = append(ok, w)
		}
	}
	if len(ok) == 0 {
		return
	}
	writes := make([]storage.TaskConfigsWrite, len(ok))
	for i, w := range ok {
		writes[i] = w.TaskConfigsWrite
	}
	err := h.store.PutTaskConfigsBatch(ctx, writes)
	for _, w := range ok {
		if err != nil {
			w.done <- Internal("Failed to write the task configs of %s: %v", w.Connector, err)
		} else {
			w.done <- nil
		}
	}
}

// Plugins answers GET /connector-plugins.
func (h *Distributed) Plugins(connectorsOnly bool) []client.PluginInfo {
	return plugins(h.w.Plugins(), connectorsOnly)
}

// PluginConfig answers GET /connector-plugins/{plugin}/config.
func (h *Distributed) PluginConfig(plugin string) ([]client.ConfigKeyInfo, error) {
	return pluginConfig(h.w.Plugins(), plugin)
}

// EnsureSessionKey makes the leader write a new session key when there is
// none or it is older than inter.worker.key.ttl.ms.
func (h *Distributed) EnsureSessionKey(ctx context.Context) error {
	leader := h.leadership().leader
	current := h.store.SessionKey()
	if !leader || (current != nil && time.Since(time.UnixMilli(current.CreationTimestamp)) < h.dcfg.KeyTTL) {
		return nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return h.store.PutSessionKey(ctx, storage.SessionKey{Key: key, Algorithm: storage.SessionKeyAlgorithm, CreationTimestamp: time.Now().UnixMilli()})
}

// AdvertisedURL builds a worker's REST URL from Kafka Connect's
// rest.advertised.* keys and the address its listener bound.
func AdvertisedURL(cfg *worker.Config, restAddr string) string {
	host, port, _ := net.SplitHostPort(restAddr)
	if cfg.AdvertisedHost != "" {
		host = cfg.AdvertisedHost
	} else if host == "" || host == "::" || host == "0.0.0.0" {
		host = "localhost"
	}
	if cfg.AdvertisedPort != 0 {
		port = strconv.Itoa(cfg.AdvertisedPort)
	}
	scheme := "http://"
	if cfg.AdvertiseHTTPS {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port) + "/"
}

// submissionsAtOnce bounds the requests a worker has in flight to the
// leader for its connectors and tasks. Each holds one of the leader's
// connections until the leader's group commit of task configs, and the
// leader serves at most rest.max.connections (64 unless set): unbounded,
// the submissions of the hundreds of connectors a large assignment starts
// took them all, and the users' requests forwarded to the leader waited
// in its backlog behind them, for up to half a second at 3,000 connectors
// (docs/performance.md). Kafka's herder sends them one at a time; 16 at
// once keep the leader's group commits full.
const submissionsAtOnce = 16

// submissionsIdle is how long a connection to the leader is kept for the
// next submission: long enough for a burst, short enough that the idle
// ones do not hold the leader's connections for its 30 s idle timeout.
const submissionsIdle = 5 * time.Second

// leaderClient is base with a pool of its own: at most submissionsAtOnce
// connections to each worker (a request beyond waits for one), kept open
// submissionsIdle between requests.
func leaderClient(base *http.Client) *http.Client {
	tr, ok := base.Transport.(*http.Transport)
	if !ok {
		tr = http.DefaultTransport.(*http.Transport)
	}
	tr = tr.Clone()
	tr.MaxConnsPerHost = submissionsAtOnce
	tr.MaxIdleConnsPerHost = submissionsAtOnce
	tr.IdleConnTimeout = submissionsIdle
	c := *base
	c.Transport = tr
	return &c
}
