package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// readWriteTimeout bounds config topic writes plus the read-back when the
// caller's context has no deadline (Kafka's READ_WRITE_TOTAL_TIMEOUT_MS).
const readWriteTimeout = 30 * time.Second

// ConfigListener hears about config topic changes. Its methods are called
// on the config log's goroutine, after the record has been applied, and
// only for records read once the store first caught up (Start): history is
// not replayed through it. They must not call the ConfigTopic's write
// methods or Refresh (which wait for that goroutine); Snapshot is fine.
type ConfigListener interface {
	// ConnectorConfigUpdated: a connector's config was written or removed.
	ConnectorConfigUpdated(name string)
	// TaskConfigsUpdated: a task commit for the connector was read
	// (whether or not it made the task set consistent).
	TaskConfigsUpdated(connector string)
	// TargetStateUpdated: an existing connector's target state changed.
	TargetStateUpdated(name string)
	// SessionKeyUpdated: a new session key was read.
	SessionKeyUpdated()
	// RestartRequested: a restart request record was read.
	RestartRequested(name string, onlyFailed, includeTasks bool)
	// LoggerLevelSet: a cluster-wide logger level was read.
	LoggerLevelSet(namespace, level string)
}

// ConfigState is a snapshot of the config topic. It is shared by every
// caller until the next record changes the store (one snapshot costs as
// much as the connectors it holds, and REST answers need one each): read
// it, keep it, never modify it or the maps it holds.
type ConfigState struct {
	// Offset is the config offset exchanged in the group protocol: the
	// offset of the last record read plus one, or -1 before any.
	Offset int64
	// SessionKey is the latest session key, nil if none was read.
	SessionKey *SessionKey
	// Connectors holds every connector that has a config.
	Connectors map[string]ConnectorConfigState
}

// ConnectorConfigState is one connector in a ConfigState.
type ConnectorConfigState struct {
	Config map[string]string
	// TargetState is STARTED, PAUSED or STOPPED (STARTED when no target
	// state record exists).
	TargetState string
	// TaskCount is the count of the latest task commit (0 without one).
	TaskCount int
	// Tasks are the committed task configs, index = task id. Empty while
	// Inconsistent.
	Tasks []map[string]string
	// Inconsistent is set when the latest commit was not covered by the
	// task records before it (compaction, or a leader that died
	// mid-write); no tasks are reported until a complete commit.
	Inconsistent bool
	// AppliedConfig is the connector config as it was when the current
	// task configs were committed (nil if none were), for deciding whether
	// tasks must be regenerated after a config change.
	AppliedConfig map[string]string
	// TaskCountRecord is the latest tasks-fencing record's count (KIP-618),
	// nil if none.
	TaskCountRecord *int
	// PendingFencing is set when task configs were committed after the
	// latest task count record.
	PendingFencing bool
	// Generation counts the connector's task commits read, from 0 for the
	// first (Kafka's taskConfigGeneration): an exactly-once task started
	// for one generation must not write once another was committed.
	Generation int
}

// ConnectorNames returns the connectors' names, sorted.
func (s ConfigState) ConnectorNames() []string {
	return slices.Sorted(maps.Keys(s.Connectors))
}

// Contains reports whether the connector has a config.
func (s ConfigState) Contains(name string) bool {
	_, ok := s.Connectors[name]
	return ok
}

// ConfigTopic is the distributed worker's config store over the config
// topic (Kafka's KafkaConfigBackingStore), byte-compatible with Java
// workers on the same topic. It is safe for concurrent use; like Kafka's
// store it expects a single writer (the leader) for task configs.
type ConfigTopic struct {
	topicStore
	listener ConfigListener
	topic    string

	mu      sync.Mutex
	started bool // caught up once; from then on the listener hears updates
	offset  int64
	session *SessionKey

	connectors   map[string]map[string]string
	targets      map[string]string // may hold states of connectors without config yet
	taskCounts   map[string]int
	tasks        map[string][]map[string]string // committed
	applied      map[string]map[string]string
	inconsistent map[string]bool
	deferred     map[string]map[int]map[string]string
	countRecords map[string]int
	pendingFence map[string]bool
	generations  map[string]int

	// view is the snapshot of the state as it is, built by the first
	// Snapshot after a record changed it; nil until then.
	view *ConfigState
}

// NewConfigTopic creates the store. cfg.OnRecord and cfg.OnCaughtUp must be
// nil (the store sets them); listener may be nil.
func NewConfigTopic(cfg KafkaLogConfig, listener ConfigListener) (*ConfigTopic, error) {
	c := &ConfigTopic{
		listener:     listener,
		topic:        cfg.Topic,
		offset:       -1,
		connectors:   map[string]map[string]string{},
		targets:      map[string]string{},
		taskCounts:   map[string]int{},
		tasks:        map[string][]map[string]string{},
		applied:      map[string]map[string]string{},
		inconsistent: map[string]bool{},
		deferred:     map[string]map[int]map[string]string{},
		countRecords: map[string]int{},
		pendingFence: map[string]bool{},
		generations:  map[string]int{},
	}
	if err := c.open(cfg, c.onRecord, c.onCaughtUp); err != nil {
		return nil, err
	}
	return c, nil
}

// Start reads the whole topic and then checks that it has a single
// partition (a *TopicSettingsError with Kafka's message otherwise). On
// error, Close the store.
func (c *ConfigTopic) Start(ctx context.Context) error {
	if err := c.log.Start(ctx); err != nil {
		return err
	}
	if n := c.log.Partitions(); n > 1 {
		return SinglePartitionError(c.topic, ConfigStorageTopicProperty, n)
	}
	return nil
}

// Refresh reads the topic to its current end.
func (c *ConfigTopic) Refresh(ctx context.Context) error {
	return c.log.ReadToEnd(ctx)
}

// Connector is one connector's state, as Snapshot would show it, without
// building a snapshot: what a REST answer about one connector needs.
func (c *ConfigTopic) Connector(name string) (ConnectorConfigState, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.connectors[name]; !ok {
		return ConnectorConfigState{}, false
	}
	return c.connectorLocked(name), true
}

// ConnectorConfig is one connector's config alone, shared as Connector's
// is: a status answer needs its class, not the rest of its state.
func (c *ConfigTopic) ConnectorConfig(name string) (map[string]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	config, ok := c.connectors[name]
	return config, ok
}

// ConnectorNames returns the names of the connectors with a config, sorted.
func (c *ConfigTopic) ConnectorNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.connectors))
}

// Offset is the config offset of the state as it is (ConfigState.Offset).
func (c *ConfigTopic) Offset() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// SessionKey is the latest session key read, nil if none.
func (c *ConfigTopic) SessionKey() *SessionKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		return nil
	}
	k := *c.session
	return &k
}

// connectorLocked is a connector's state; it has a config. The maps and
// slices are shared: a record replaces them whole (applyLocked), never
// changes them.
func (c *ConfigTopic) connectorLocked(name string) ConnectorConfigState {
	cs := ConnectorConfigState{
		Config:         c.connectors[name],
		TargetState:    c.targets[name],
		TaskCount:      c.taskCounts[name],
		Inconsistent:   c.inconsistent[name],
		AppliedConfig:  c.applied[name],
		PendingFencing: c.pendingFence[name],
		Generation:     c.generations[name],
	}
	if cs.TargetState == "" {
		cs.TargetState = TargetStateStarted
	}
	if n, ok := c.countRecords[name]; ok {
		cs.TaskCountRecord = &n
	}
	if !cs.Inconsistent {
		cs.Tasks = c.tasks[name]
		if cs.Tasks == nil {
			cs.Tasks = []map[string]string{}
		}
	}
	return cs
}

// Snapshot returns the current state, shared (see ConfigState).
func (c *ConfigTopic) Snapshot() ConfigState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view != nil {
		return *c.view
	}
	st := ConfigState{Offset: c.offset, Connectors: make(map[string]ConnectorConfigState, len(c.connectors))}
	if c.session != nil {
		k := *c.session
		st.SessionKey = &k
	}
	for name := range c.connectors {
		st.Connectors[name] = c.connectorLocked(name)
	}
	c.view = &st
	return st
}

// PutConnectorConfig writes a connector's config, preceded by its target
// state when target is not nil (creation with initial_state), and waits
// until the store has read it back.
func (c *ConfigTopic) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string, target *string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	var kvs []KeyValue
	if target != nil {
		v, err := EncodeTargetState(*target)
		if err != nil {
			return err
		}
		kvs = append(kvs, KeyValue{Key: []byte(TargetStateKey(name)), Value: v})
	}
	kvs = append(kvs, KeyValue{Key: []byte(ConnectorConfigKey(name)), Value: EncodeConnectorConfig(cfg)})
	if err := c.log.SendPrivilegedAndRead(ctx, kvs); err != nil {
		return fmt.Errorf("writing connector configuration to Kafka: %w", err)
	}
	return nil
}

// RemoveConnector writes tombstones for the connector's config and target
// state and waits until the store has read them back.
func (c *ConfigTopic) RemoveConnector(ctx context.Context, name string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	kvs := []KeyValue{{Key: []byte(ConnectorConfigKey(name))}, {Key: []byte(TargetStateKey(name))}}
	if err := c.log.SendPrivilegedAndRead(ctx, kvs); err != nil {
		return fmt.Errorf("removing connector configuration from Kafka: %w", err)
	}
	return nil
}

// PutTaskConfigs reads the topic to its end, then writes a connector's
// task configs and their commit (PutTaskConfigsBatch).
func (c *ConfigTopic) PutTaskConfigs(ctx context.Context, connector string, configs []map[string]string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := c.log.ReadToEnd(ctx); err != nil {
		return err
	}
	return c.PutTaskConfigsBatch(ctx, []TaskConfigsWrite{{Connector: connector, Configs: configs}})
}

// TaskConfigsWrite is one connector's new task configs.
type TaskConfigsWrite struct {
	Connector string
	Configs   []map[string]string
}

// PutTaskConfigsBatch writes the task configs of several connectors, each
// set followed by its commit, in one produce, and waits until the store
// has read them back. One producer writes them in order to the topic's
// one partition, so each commit follows its task records as in Kafka.
func (c *ConfigTopic) PutTaskConfigsBatch(ctx context.Context, writes []TaskConfigsWrite) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	var kvs []KeyValue
	for _, w := range writes {
		for i, cfg := range w.Configs {
			kvs = append(kvs, KeyValue{Key: []byte(TaskConfigKey(w.Connector, i)), Value: EncodeTaskConfig(cfg)})
		}
		kvs = append(kvs, KeyValue{Key: []byte(TaskCommitKey(w.Connector)), Value: EncodeTaskCommit(len(w.Configs))})
	}
	if err := c.log.SendPrivilegedAndRead(ctx, kvs); err != nil {
		return fmt.Errorf("writing task configurations to Kafka: %w", err)
	}
	return nil
}

// PutTargetState writes a connector's target state and waits for the
// acknowledgement (not for the read-back, like Kafka).
func (c *ConfigTopic) PutTargetState(ctx context.Context, name, state string) error {
	v, err := EncodeTargetState(state)
	if err != nil {
		return err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := c.log.Send(ctx, []byte(TargetStateKey(name)), v); err != nil {
		return fmt.Errorf("writing target state to Kafka: %w", err)
	}
	return nil
}

// PutSessionKey writes a session key and reads the topic to the end.
func (c *ConfigTopic) PutSessionKey(ctx context.Context, key SessionKey) error {
	return c.sendAndRead(ctx, SessionKeyKey, EncodeSessionKey(key), "session key")
}

// PutRestartRequest writes a restart request and reads the topic to the
// end.
func (c *ConfigTopic) PutRestartRequest(ctx context.Context, name string, onlyFailed, includeTasks bool) error {
	return c.sendAndRead(ctx, RestartRequestKey(name), EncodeRestartRequest(onlyFailed, includeTasks), "restart request")
}

// PutTaskCountRecord writes a task count (fencing) record and reads the
// topic to the end.
func (c *ConfigTopic) PutTaskCountRecord(ctx context.Context, connector string, taskCount int) error {
	return c.sendAndRead(ctx, TaskCountKey(connector), EncodeTaskCount(taskCount), "task count record")
}

// PutLoggerLevel writes a cluster-wide logger level and waits for the
// acknowledgement.
func (c *ConfigTopic) PutLoggerLevel(ctx context.Context, namespace, level string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := c.log.Send(ctx, []byte(LoggerLevelKey(namespace)), EncodeLoggerLevel(level)); err != nil {
		return fmt.Errorf("writing logger level to Kafka: %w", err)
	}
	return nil
}

// sendAndRead writes one of the leader's records and waits until the
// store has read it back, and with it everything before it.
func (c *ConfigTopic) sendAndRead(ctx context.Context, key string, value []byte, what string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := c.log.SendPrivilegedAndRead(ctx, []KeyValue{{Key: []byte(key), Value: value}}); err != nil {
		return fmt.Errorf("writing %s to Kafka: %w", what, err)
	}
	return nil
}

// ClaimWritePrivileges claims, for a new leader, the transactional id its
// writes use when the store has one (exactly.once.source.support preparing
// or enabled), fencing out the writes of any earlier leader.
func (c *ConfigTopic) ClaimWritePrivileges(ctx context.Context) error { return c.log.ClaimWrites(ctx) }

// RelinquishWritePrivileges drops them, for a worker no longer leading.
func (c *ConfigTopic) RelinquishWritePrivileges() { c.log.ReleaseWrites() }

func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, readWriteTimeout)
}

func (c *ConfigTopic) onCaughtUp() {
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()
}

func (c *ConfigTopic) onRecord(r *kgo.Record) {
	rec, err := DecodeConfigRecord(r.Key, r.Value)
	if errors.Is(err, ErrInvalidJSON) {
		// The converter fails before the store sees the record, so
		// Kafka does not count it in the config offset either.
		c.logger.Error("failed to convert config data to Kafka Connect format", "key", string(r.Key), "offset", r.Offset, "error", err)
		return
	}
	c.mu.Lock()
	c.offset = r.Offset + 1
	c.view = nil
	notify := c.applyLocked(rec, err)
	started := c.started
	c.mu.Unlock()
	if started && notify != nil && c.listener != nil {
		notify(c.listener)
	}
}

// applyLocked applies one decoded record (decodeErr is DecodeConfigRecord's
// error) and returns the listener call it warrants, if any.
func (c *ConfigTopic) applyLocked(rec ConfigRecord, decodeErr error) func(ConfigListener) {
	name := rec.Name
	switch rec.Type {
	case ConfigRecordInvalid:
		c.logger.Error("discarding config update record with invalid key", "error", decodeErr)
		return nil

	case ConfigRecordTargetState:
		if decodeErr != nil {
			c.logger.Error("ignoring target state record", "connector", name, "error", decodeErr)
			return nil
		}
		if rec.Tombstone {
			delete(c.targets, name)
			// A config without a target state is STARTED. The connector's
			// own removal notifies the listener, so this does not.
			if _, ok := c.connectors[name]; ok {
				c.targets[name] = TargetStateStarted
			}
			return nil
		}
		prev := c.targets[name]
		c.targets[name] = rec.TargetState
		// A target state written before its connector (initial_state)
		// is not news until the connector exists.
		if _, ok := c.connectors[name]; ok && prev != rec.TargetState {
			return func(l ConfigListener) { l.TargetStateUpdated(name) }
		}
		return nil

	case ConfigRecordConnector:
		if decodeErr != nil {
			c.logger.Error("ignoring connector configuration record", "connector", name, "error", decodeErr)
			return nil
		}
		if rec.Tombstone {
			c.logger.Info("processed removal of connector", "connector", name)
			delete(c.connectors, name)
			c.removeTasksLocked(name)
		} else {
			c.connectors[name] = rec.Properties
			if _, ok := c.targets[name]; !ok {
				c.targets[name] = TargetStateStarted
			}
		}
		return func(l ConfigListener) { l.ConnectorConfigUpdated(name) }

	case ConfigRecordTask:
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("task configuration is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring task configuration record", "connector", name, "task", rec.Task, "error", decodeErr)
			return nil
		}
		d := c.deferred[name]
		if d == nil {
			d = map[int]map[string]string{}
			c.deferred[name] = d
		}
		d[rec.Task] = rec.Properties
		return nil

	case ConfigRecordCommit:
		cfg, ok := c.connectors[name]
		if !ok {
			// Deleted, and compaction removed the tombstone: these task
			// configs belong to no connector (KAFKA-16838).
			c.removeTasksLocked(name)
			c.logger.Debug("ignoring task configs of a connector that appears to have been deleted", "connector", name)
			return nil
		}
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("task commit is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring task commit record", "connector", name, "error", decodeErr)
			return nil
		}
		n := rec.TaskCount
		d := c.deferred[name]
		complete := true
		for i := 0; i < n; i++ {
			if _, ok := d[i]; !ok {
				complete = false
				break
			}
		}
		if complete {
			committed := make([]map[string]string, max(n, 0))
			for i := range committed {
				committed[i] = d[i]
			}
			c.tasks[name] = committed
			c.applied[name] = cfg
			delete(c.inconsistent, name)
		} else {
			c.logger.Debug("incomplete set of task configs, probably due to compaction; not applying them", "connector", name, "tasks", n)
			c.inconsistent[name] = true
		}
		// Cleared even when not applied: after an incomplete commit only
		// a completely fresh set may be used.
		delete(c.deferred, name)
		c.taskCounts[name] = n
		c.pendingFence[name] = true
		g, seen := c.generations[name]
		if seen {
			g++
		}
		c.generations[name] = g
		return func(l ConfigListener) { l.TaskConfigsUpdated(name) }

	case ConfigRecordRestart:
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("restart request is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring restart request", "connector", name, "error", decodeErr)
			return nil
		}
		onlyFailed, includeTasks := rec.OnlyFailed, rec.IncludeTasks
		return func(l ConfigListener) { l.RestartRequested(name, onlyFailed, includeTasks) }

	case ConfigRecordTaskCount:
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("task count record is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring task count record", "connector", name, "error", decodeErr)
			return nil
		}
		c.countRecords[name] = rec.TaskCount
		delete(c.pendingFence, name)
		return nil

	case ConfigRecordSessionKey:
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("session key is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring session key", "error", decodeErr)
			return nil
		}
		k := rec.SessionKey
		c.session = &k
		return func(l ConfigListener) { l.SessionKeyUpdated() }

	case ConfigRecordLoggerLevel:
		if decodeErr == nil && rec.Tombstone {
			decodeErr = errors.New("logging level is unexpectedly null")
		}
		if decodeErr != nil {
			c.logger.Error("ignoring logging level", "namespace", name, "error", decodeErr)
			return nil
		}
		level := rec.Level
		return func(l ConfigListener) { l.LoggerLevelSet(name, level) }
	}
	return nil
}

// removeTasksLocked forgets a connector's tasks (Java's connector removal
// processing). Target states, inconsistency marks and task count records
// are left alone, as in Kafka.
func (c *ConfigTopic) removeTasksLocked(name string) {
	delete(c.taskCounts, name)
	delete(c.tasks, name)
	delete(c.deferred, name)
	delete(c.applied, name)
}
