package herder

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
)

// Version is what GET / reports: the Kafka Connect REST API version
// connectd is compatible with, so that clients enable the features they
// check versions for (the offsets API needs 3.6).
const Version = "3.9.0"

// Standalone is the herder of a single worker: every decision is made
// here, under one lock, and persisted before it is acted on.
type Standalone struct {
	w         *worker.Worker
	offsets   *storage.FileOffsetStore
	configs   *storage.ConfigFileStore
	log       *slog.Logger
	workerID  string
	clusterID string
	commit    string
	ready     atomic.Bool
	health    healthProbe

	configLocks configLocks
	mu          sync.Mutex // guards conns and every change of what runs
	conns       map[string]*connState

	status statusStore
	om     offsetsManager
}

type connState struct {
	name        string
	config      map[string]string
	target      TargetState
	plugin      connect.Plugin
	taskConfigs []map[string]string
	inst        *worker.Connector
	tasks       map[int]*worker.Task
}

// Options configure a standalone herder.
type Options struct {
	WorkerID  string // host:port shown as worker_id in statuses
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
}

// NewStandalone returns a herder over the given stores. Start runs the
// stored connectors.
func NewStandalone(cfg *worker.Config, bootstrap []string, offsets *storage.FileOffsetStore, configs *storage.ConfigFileStore, opts Options) *Standalone {
	h := &Standalone{
		offsets: offsets, configs: configs, log: opts.Log, workerID: opts.WorkerID,
		clusterID: opts.ClusterID, commit: opts.Commit, conns: map[string]*connState{},
		health: healthProbe{kafka: opts.KafkaPing},
	}
	h.status.init()
	h.w = worker.New(cfg, opts.Plugins, bootstrap, opts.Dial, offsets, &h.status, opts.Log, opts.Loggers)
	h.om = offsetsManager{w: h.w, store: offsets}
	return h
}

// Worker is the worker the herder runs connectors on.
func (h *Standalone) Worker() *worker.Worker { return h.w }

// Start runs the connectors kept in the connectors file, then those given
// on the command line (created, or updated when they exist), and marks
// the worker ready.
func (h *Standalone) Start(ctx context.Context, fromFiles []StoredConnector) error {
	// The REST API already serves: a connector created through it before
	// this is running, and its config is what the store now holds.
	// Adding it again would start a second instance beside the first,
	// which nothing could stop, sending its records twice.
	h.mu.Lock()
	for _, sc := range h.configs.List() {
		if _, ok := h.conns[sc.Name]; !ok {
			h.add(sc.Name, sc.Config, TargetState(sc.TargetState))
		}
	}
	h.mu.Unlock()
	for _, fc := range fromFiles {
		if cur, err := h.ConnectorConfig(ctx, fc.Name); err == nil {
			if maps.Equal(cur, withName(fc.Config, fc.Name)) {
				continue
			}
			if _, _, err := h.PutConnectorConfig(ctx, fc.Name, withName(fc.Config, fc.Name)); err != nil {
				return fmt.Errorf("connector %s: %w", fc.Name, err)
			}
			continue
		}
		if _, err := h.CreateConnector(ctx, fc.Name, withName(fc.Config, fc.Name), TargetState(fc.TargetState), nil); err != nil {
			return fmt.Errorf("connector %s: %w", fc.Name, err)
		}
	}
	h.ready.Store(true)
	return nil
}

func withName(config map[string]string, name string) map[string]string {
	out := maps.Clone(config)
	out["name"] = name
	return out
}

// StoredConnector is a connector given at start-up.
type StoredConnector = storage.StoredConnector

// Close stops every connector and task, committing their offsets.
func (h *Standalone) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cs := range h.conns {
		h.stopTasks(cs, false)
		h.stopInstance(cs)
	}
}

// add registers a validated connector and starts it as its target state
// says. The caller holds h.mu.
func (h *Standalone) add(name string, config map[string]string, target TargetState) {
	if target == "" {
		target = Started
	}
	_, p, err := worker.Instantiate(h.w.Plugins(), config["connector.class"])
	cs := &connState{name: name, config: config, target: target, plugin: p, tasks: map[int]*worker.Task{}}
	h.conns[name] = cs
	if err != nil {
		// A stored connector whose plugin is gone fails alone; the
		// others start, and this one can still be fixed or deleted.
		h.status.setConnector(name, client.StateFailed, trace(err))
		return
	}
	h.startConnector(cs)
}

func (cs *connState) ref() connectorRef {
	return connectorRef{name: cs.name, config: cs.config, typ: cs.plugin.Type}
}

func (h *Standalone) get(name string) (*connState, error) {
	cs, ok := h.conns[name]
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	return cs, nil
}

func (h *Standalone) persist(cs *connState) error {
	err := h.configs.Put(storage.StoredConnector{Name: cs.name, Config: cs.config, TargetState: string(cs.target)})
	if err != nil {
		return Internal("Failed to persist connector %s: %v", cs.name, err)
	}
	return nil
}

// startConnector brings a connector instance to its target state and, when
// STARTED, generates and starts its tasks.
func (h *Standalone) startConnector(cs *connState) {
	switch cs.target {
	case Paused:
		h.status.setConnector(cs.name, client.StatePaused, "")
		return
	case Stopped:
		h.status.setConnector(cs.name, client.StateStopped, "")
		return
	}
	name := cs.name
	inst, err := h.w.StartConnector(name, cs.config,
		func() { go h.reconfigure(name) },
		func(err error) { h.status.setConnector(name, client.StateFailed, trace(err)) })
	if err != nil {
		h.log.Error("connector failed to start", "connector", name, "error", err)
		h.status.setConnector(name, client.StateFailed, trace(err))
		return
	}
	cs.inst = inst
	h.status.setConnector(name, client.StateRunning, "")
	h.updateTasks(cs)
}

// updateTasks asks the running connector for task configs and restarts the
// tasks when they changed.
func (h *Standalone) updateTasks(cs *connState) {
	if cs.inst == nil || cs.target != Started {
		return
	}
	cfgs, err := cs.inst.TaskConfigs(cs.config)
	if err != nil {
		h.log.Error("connector failed to generate task configs", "connector", cs.name, "error", err)
		h.status.setConnector(cs.name, client.StateFailed, trace(err))
		return
	}
	if len(cs.tasks) == len(cfgs) && slices.EqualFunc(cs.taskConfigs, cfgs, maps.Equal) {
		return
	}
	h.stopTasks(cs, true)
	cs.taskConfigs = cfgs
	for i := range cfgs {
		h.startTask(cs, i)
	}
}

func (h *Standalone) startTask(cs *connState, id int) {
	h.status.expectTask(cs.name, id)
	t, err := h.w.StartTask(cs.name, id, cs.config, cs.taskConfigs[id], cs.target == Paused, nil)
	if err != nil {
		h.status.setTask(cs.name, id, nil, client.StateFailed, trace(err))
		return
	}
	h.status.own(cs.name, id, t)
	cs.tasks[id] = t
}

// stopTasks stops every task of the connector, waiting for their offsets
// to be committed; forget also drops their statuses and configs.
func (h *Standalone) stopTasks(cs *connState, forget bool) {
	var wg sync.WaitGroup
	for id, t := range cs.tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Stop()
		}()
		delete(cs.tasks, id)
	}
	wg.Wait()
	if forget {
		h.status.dropTasks(cs.name)
		cs.taskConfigs = nil
	}
}

func (h *Standalone) stopInstance(cs *connState) {
	if cs.inst == nil {
		return
	}
	if err := cs.inst.Stop(); err != nil {
		h.log.Warn("connector stop failed", "connector", cs.name, "error", err)
	}
	cs.inst = nil
}

func (h *Standalone) reconfigure(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cs, ok := h.conns[name]; ok {
		h.updateTasks(cs)
	}
}

func trace(err error) string {
	return "org.apache.kafka.connect.errors.ConnectException: " + err.Error()
}

// ServerInfo answers GET /.
func (h *Standalone) ServerInfo() client.ServerInfo {
	return client.ServerInfo{Version: Version, Commit: h.commit, KafkaClusterID: h.clusterID}
}

// Health answers GET /health.
func (h *Standalone) Health(ctx context.Context) (int, client.WorkerStatus) {
	return h.health.check(ctx, h.ready.Load(), &h.mu)
}

// Connectors lists connector names.
func (h *Standalone) Connectors(ctx context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := slices.Collect(maps.Keys(h.conns))
	sort.Strings(names)
	return names, nil
}

func (h *Standalone) info(cs *connState) *client.ConnectorInfo {
	tasks := make([]client.TaskID, len(cs.taskConfigs))
	for i := range tasks {
		tasks[i] = client.TaskID{Connector: cs.name, Task: i}
	}
	return &client.ConnectorInfo{Name: cs.name, Config: maps.Clone(cs.config), Tasks: tasks, Type: connType(cs.plugin)}
}

func connType(p connect.Plugin) string {
	switch p.Type {
	case connect.PluginSource:
		return client.TypeSource
	case connect.PluginSink:
		return client.TypeSink
	}
	return client.TypeUnknown
}

// ConnectorInfo answers GET /connectors/{c}.
func (h *Standalone) ConnectorInfo(ctx context.Context, name string) (*client.ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return h.info(cs), nil
}

// ConnectorConfig answers GET /connectors/{c}/config.
func (h *Standalone) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	info, err := h.ConnectorInfo(ctx, name)
	if err != nil {
		return nil, err
	}
	return info.Config, nil
}

// ConnectorStatus answers GET /connectors/{c}/status.
func (h *Standalone) ConnectorStatus(ctx context.Context, name string) (*client.ConnectorStatus, error) {
	h.mu.Lock()
	cs, ok := h.conns[name]
	h.mu.Unlock()
	st, found := h.status.connector(name, h.workerID)
	if !found {
		return nil, NotFound("No status found for connector %s", name)
	}
	typ := client.TypeUnknown
	if ok {
		typ = connType(cs.plugin)
	}
	return &client.ConnectorStatus{Name: name, Connector: st, Tasks: h.status.taskStates(name, h.workerID), Type: typ}, nil
}

// TaskStatus answers GET /connectors/{c}/tasks/{t}/status.
func (h *Standalone) TaskStatus(ctx context.Context, name string, task int) (*client.TaskState, error) {
	for _, ts := range h.status.taskStates(name, h.workerID) {
		if ts.ID == task {
			return &ts, nil
		}
	}
	return nil, NotFound("No status found for task %s-%d", name, task)
}

// TaskConfigs answers GET /connectors/{c}/tasks.
func (h *Standalone) TaskConfigs(ctx context.Context, name string) ([]client.TaskInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return nil, err
	}
	out := make([]client.TaskInfo, len(cs.taskConfigs))
	for i, c := range cs.taskConfigs {
		out[i] = client.TaskInfo{ID: client.TaskID{Connector: name, Task: i}, Config: maps.Clone(c)}
	}
	return out, nil
}

// ValidateConfig answers PUT /connector-plugins/{plugin}/config/validate.
func (h *Standalone) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (*client.ConfigInfos, error) {
	infos, err := validate(h.w.Plugins(), h.w.Config().Providers, config, h.w.Config().TasksMaxPerConnector, h.w.Config().TopicCreation)
	if err != nil {
		return nil, err
	}
	checkExactlyOnce(h.w.Plugins(), config, infos, "")
	return infos, nil
}

func (h *Standalone) validateForWrite(config map[string]string) error {
	infos, err := h.ValidateConfig(context.Background(), "", config)
	if err != nil {
		return err
	}
	if infos.ErrorCount > 0 {
		return validationError(infos)
	}
	return nil
}

// CreateConnector answers POST /connectors. initialOffsets (KIP-995) are
// written before the connector first runs, so it starts where they say.
func (h *Standalone) CreateConnector(ctx context.Context, name string, config map[string]string, initial TargetState, initialOffsets []client.ConnectorOffset) (*client.ConnectorInfo, error) {
	defer h.configLocks.lock(name)()
	if err := h.validateForWrite(config); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.conns[name]; ok {
		return nil, Conflict("Connector %s already exists", name)
	}
	return h.create(ctx, name, config, initial, initialOffsets)
}

// create adds a validated connector that does not exist. The caller holds
// the connector's config lock and h.mu.
func (h *Standalone) create(ctx context.Context, name string, config map[string]string, initial TargetState, initialOffsets []client.ConnectorOffset) (*client.ConnectorInfo, error) {
	if initial == "" {
		initial = Started
	}
	_, p, _ := worker.Instantiate(h.w.Plugins(), config["connector.class"])
	cs := &connState{name: name, config: maps.Clone(config), target: initial, plugin: p, tasks: map[int]*worker.Task{}}
	if len(initialOffsets) > 0 {
		// KIP-995: offsets left by an earlier connector of the same name
		// are replaced, not merged, so the new one starts exactly where
		// the request says.
		if _, err := h.om.modifyOffsets(ctx, cs.ref(), nil, true); err != nil {
			return nil, err
		}
		if _, err := h.om.modifyOffsets(ctx, cs.ref(), initialOffsets, false); err != nil {
			return nil, err
		}
	}
	if err := h.persist(cs); err != nil {
		return nil, err
	}
	h.conns[name] = cs
	h.startConnector(cs)
	return h.info(cs), nil
}

// PutConnectorConfig answers PUT /connectors/{c}/config: create or replace.
// The target state is kept.
func (h *Standalone) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (*client.ConnectorInfo, bool, error) {
	defer h.configLocks.lock(name)()
	if err := h.validateForWrite(config); err != nil {
		return nil, false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, ok := h.conns[name]
	if !ok {
		info, err := h.create(ctx, name, config, "", nil)
		return info, err == nil, err
	}
	return h.replaceConfig(cs, config)
}

func (h *Standalone) replaceConfig(cs *connState, config map[string]string) (*client.ConnectorInfo, bool, error) {
	_, p, _ := worker.Instantiate(h.w.Plugins(), config["connector.class"])
	old := cs.config
	cs.config = maps.Clone(config)
	if err := h.persist(cs); err != nil {
		cs.config = old
		return nil, false, err
	}
	h.stopTasks(cs, true)
	h.stopInstance(cs)
	cs.plugin = p
	h.startConnector(cs)
	return h.info(cs), false, nil
}

// PatchConnectorConfig answers PATCH /connectors/{c}/config: nil values
// remove keys. The config lock keeps the connector and its config as
// they were read until the patched config replaces them.
func (h *Standalone) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*client.ConnectorInfo, error) {
	defer h.configLocks.lock(name)()
	h.mu.Lock()
	cs, err := h.get(name)
	var config map[string]string
	if err == nil {
		config = patched(cs.config, patch)
	}
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := h.validateForWrite(config); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	info, _, err := h.replaceConfig(cs, config)
	return info, err
}

// DeleteConnector answers DELETE /connectors/{c}. Offsets are kept:
// re-creating the connector resumes from them, as in Kafka Connect.
func (h *Standalone) DeleteConnector(ctx context.Context, name string) error {
	defer h.configLocks.lock(name)()
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return err
	}
	if err := h.configs.Delete(name); err != nil {
		return Internal("Failed to delete connector %s: %v", name, err)
	}
	h.stopTasks(cs, true)
	h.stopInstance(cs)
	delete(h.conns, name)
	h.status.dropConnector(name)
	return nil
}

// PauseConnector answers PUT /connectors/{c}/pause.
func (h *Standalone) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(name, Paused, func(cs *connState) {
		h.stopInstance(cs)
		h.status.setConnector(name, client.StatePaused, "")
		for _, t := range cs.tasks {
			t.Pause()
		}
	})
}

// ResumeConnector answers PUT /connectors/{c}/resume; it also starts a
// STOPPED connector.
func (h *Standalone) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(name, Started, func(cs *connState) {
		for _, t := range cs.tasks {
			t.Resume()
		}
		if cs.inst == nil {
			h.startConnector(cs)
		}
	})
}

// setTarget persists a new target state, then applies it. Asking for the
// state a connector already has changes nothing.
func (h *Standalone) setTarget(name string, target TargetState, apply func(*connState)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, ok := h.conns[name]
	if !ok {
		return NotFound("Unknown connector %s", name)
	}
	if cs.target == target {
		return nil
	}
	prev := cs.target
	cs.target = target
	if err := h.persist(cs); err != nil {
		cs.target = prev
		return err
	}
	apply(cs)
	return nil
}

// StopConnector answers PUT /connectors/{c}/stop: tasks are stopped (their
// offsets committed) and removed, then the connector instance.
func (h *Standalone) StopConnector(ctx context.Context, name string) error {
	return h.setTarget(name, Stopped, func(cs *connState) {
		h.stopTasks(cs, true)
		h.stopInstance(cs)
		h.status.setConnector(name, client.StateStopped, "")
	})
}

// RestartConnector answers POST /connectors/{c}/restart without
// parameters: the connector instance alone restarts.
func (h *Standalone) RestartConnector(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return err
	}
	h.restartInstance(cs)
	return nil
}

func (h *Standalone) restartInstance(cs *connState) {
	h.stopInstance(cs)
	if cs.target != Started {
		h.startConnector(cs)
		return
	}
	name := cs.name
	inst, err := h.w.StartConnector(name, cs.config,
		func() { go h.reconfigure(name) },
		func(err error) { h.status.setConnector(name, client.StateFailed, trace(err)) })
	if err != nil {
		h.status.setConnector(name, client.StateFailed, trace(err))
		return
	}
	cs.inst = inst
	h.status.setConnector(name, client.StateRunning, "")
	if len(cs.tasks) == 0 {
		h.updateTasks(cs)
	}
}

// RestartConnectorAndTasks answers POST /connectors/{c}/restart with
// includeTasks or onlyFailed (KIP-745).
func (h *Standalone) RestartConnectorAndTasks(ctx context.Context, name string, includeTasks, onlyFailed bool) (*client.ConnectorStatus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, ok := h.conns[name]
	if !ok {
		return nil, NotFound("Unknown connector: %s", name)
	}
	st, found := h.status.connector(name, h.workerID)
	if !found {
		return nil, NotFound("Status for connector %s not found", name)
	}
	answer := &client.ConnectorStatus{Name: name, Connector: st, Tasks: h.status.taskStates(name, h.workerID), Type: connType(cs.plugin)}
	restartConn := !onlyFailed || st.State == client.StateFailed
	var restartTasks []int
	for i, ts := range answer.Tasks {
		if includeTasks && (!onlyFailed || ts.State == client.StateFailed) {
			restartTasks = append(restartTasks, ts.ID)
			answer.Tasks[i].State = client.StateRestarting
			answer.Tasks[i].Trace = ""
		}
	}
	if restartConn {
		answer.Connector.State = client.StateRestarting
		answer.Connector.Trace = ""
		h.status.setConnector(name, client.StateRestarting, "")
		h.restartInstance(cs)
	}
	for _, id := range restartTasks {
		h.restartTask(cs, id)
	}
	return answer, nil
}

// RestartTask answers POST /connectors/{c}/tasks/{t}/restart.
func (h *Standalone) RestartTask(ctx context.Context, name string, task int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return err
	}
	if task < 0 || task >= len(cs.taskConfigs) {
		return NotFound("Task %s-%d not found", name, task)
	}
	h.restartTask(cs, task)
	return nil
}

func (h *Standalone) restartTask(cs *connState, id int) {
	if t, ok := cs.tasks[id]; ok {
		t.Stop()
		delete(cs.tasks, id)
	}
	h.status.setTask(cs.name, id, nil, client.StateRestarting, "")
	h.startTask(cs, id)
}

// ConnectorTopics answers GET /connectors/{c}/topics.
func (h *Standalone) ConnectorTopics(ctx context.Context, name string) ([]string, error) {
	if !h.w.Config().TopicTracking {
		return nil, Forbidden("Topic tracking is disabled.")
	}
	return h.status.topicList(name), nil
}

// ResetConnectorTopics answers PUT /connectors/{c}/topics/reset.
func (h *Standalone) ResetConnectorTopics(ctx context.Context, name string) error {
	if !h.w.Config().TopicTracking {
		return Forbidden("Topic tracking is disabled.")
	}
	if !h.w.Config().TopicTrackingReset {
		return Forbidden("Topic tracking reset is disabled.")
	}
	h.status.resetTopics(name)
	return nil
}

// Plugins answers GET /connector-plugins.
func (h *Standalone) Plugins(connectorsOnly bool) []client.PluginInfo {
	return plugins(h.w.Plugins(), connectorsOnly)
}

// PluginConfig answers GET /connector-plugins/{plugin}/config.
func (h *Standalone) PluginConfig(plugin string) ([]client.ConfigKeyInfo, error) {
	return pluginConfig(h.w.Plugins(), plugin)
}

// plugins lists the worker's plugins: sinks, sources, then (when not
// connectorsOnly) the other kinds, as Kafka Connect orders them.
func plugins(set *connect.PluginSet, connectorsOnly bool) []client.PluginInfo {
	order := []connect.PluginType{connect.PluginSink, connect.PluginSource}
	if !connectorsOnly {
		order = append(order, connect.PluginTransformation, connect.PluginPredicate, connect.PluginConverter, connect.PluginHeaderConverter)
	}
	var out []client.PluginInfo
	all := set.Plugins()
	for _, typ := range order {
		for _, p := range all {
			if p.Type == typ {
				out = append(out, client.PluginInfo{Class: p.Class, Type: string(p.Type), Version: p.Version})
			}
		}
	}
	return out
}

// pluginConfig lists a plugin's config keys: its own, then the
// framework's it does not define.
func pluginConfig(plugins *connect.PluginSet, plugin string) ([]client.ConfigKeyInfo, error) {
	p, err := plugins.Lookup(plugin)
	if err != nil {
		return nil, NotFound("Unknown plugin %s.", plugin)
	}
	var def *connect.ConfigDef
	switch p.Type {
	case connect.PluginSource:
		def = p.New().(connect.Connector).Config().Merge(sourceDef(plugins))
	case connect.PluginSink:
		def = p.New().(connect.Connector).Config().Merge(sinkDef(plugins))
	default:
		def = connect.NewConfigDef()
		if c, ok := p.New().(interface{ Config() *connect.ConfigDef }); ok {
			def = c.Config()
		}
	}
	out := []client.ConfigKeyInfo{}
	for _, k := range def.Keys() {
		out = append(out, keyInfo(k))
	}
	return out, nil
}
