package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/internal/javajson"
)

// Status states (spec §2.1). StateDestroyed is never stored: writing it
// produces a tombstone.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
	StateDestroyed  = "DESTROYED"
)

// ValidStatusState reports whether s is one of the state names above.
func ValidStatusState(s string) bool {
	switch s {
	case StateUnassigned, StateRunning, StatePaused, StateStopped, StateFailed, StateRestarting, StateDestroyed:
		return true
	}
	return false
}

const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
	topicStatusPrefix     = "status-topic-"
	topicStatusSeparator  = ":connector-"
)

// StatusRecord is a connector's or a task's status.
type StatusRecord struct {
	Connector string
	// IsTask distinguishes a task's status (task number Task) from the
	// connector's own.
	IsTask bool
	Task   int
	State  string // one of the State* constants
	// Trace is the failure's stack trace; "" is written as null.
	Trace    string
	WorkerID string // host:port of the worker's REST URL
	// Generation is the writer's group generation (0 in standalone).
	Generation int32
}

// Key returns the status topic key of the record.
func (r StatusRecord) Key() string {
	if r.IsTask {
		return TaskStatusKey(r.Connector, r.Task)
	}
	return ConnectorStatusKey(r.Connector)
}

// TopicStatus records that a connector's task used a topic (KIP-558).
type TopicStatus struct {
	Topic             string
	Connector         string
	Task              int
	DiscoverTimestamp int64 // epoch milliseconds
}

// ConnectorStatusKey is the status topic key of a connector's status.
func ConnectorStatusKey(connector string) string { return connectorStatusPrefix + connector }

// TaskStatusKey is the status topic key of a task's status.
func TaskStatusKey(connector string, task int) string {
	return taskStatusPrefix + connector + "-" + strconv.Itoa(task)
}

// TopicStatusKey is the status topic key of a connector's use of a topic.
func TopicStatusKey(topic, connector string) string {
	return topicStatusPrefix + topic + topicStatusSeparator + connector
}

// EncodeStatus is the value of a connector or task status record:
// {"state":..,"trace":..,"worker_id":..,"generation":N}. It returns nil (a
// tombstone) for DESTROYED.
func EncodeStatus(r StatusRecord) []byte {
	if r.State == StateDestroyed {
		return nil
	}
	b := append(make([]byte, 0, 96+len(r.Trace)), `{"state":`...)
	b = javajson.AppendString(b, r.State)
	b = append(b, `,"trace":`...)
	if r.Trace == "" {
		b = append(b, "null"...)
	} else {
		b = javajson.AppendString(b, r.Trace)
	}
	b = append(b, `,"worker_id":`...)
	b = javajson.AppendString(b, r.WorkerID)
	return fmt.Appendf(b, `,"generation":%d}`, r.Generation)
}

// EncodeTopicStatus is the value of a topic status record:
// {"topic":{"name":..,"connector":..,"task":N,"discoverTimestamp":ms}}.
func EncodeTopicStatus(t TopicStatus) []byte {
	b := append([]byte(nil), `{"topic":{"name":`...)
	b = javajson.AppendString(b, t.Topic)
	b = append(b, `,"connector":`...)
	b = javajson.AppendString(b, t.Connector)
	return fmt.Appendf(b, `,"task":%d,"discoverTimestamp":%d}}`, int32(t.Task), t.DiscoverTimestamp)
}

// StatusEventKind says what a status topic record is about.
type StatusEventKind int

// Status event kinds. StatusEventInvalid is a key Kafka Connect discards.
const (
	StatusEventInvalid StatusEventKind = iota
	StatusEventConnector
	StatusEventTask
	StatusEventTopic
)

// StatusEvent is one decoded status topic record.
type StatusEvent struct {
	Kind      StatusEventKind
	Connector string
	Task      int    // StatusEventTask
	Topic     string // StatusEventTopic (from the key)
	// Tombstone is set for a null value (a deleted connector or task, or a
	// reset topic).
	Tombstone   bool
	Status      StatusRecord // StatusEventConnector, StatusEventTask
	TopicStatus TopicStatus  // StatusEventTopic (from the value)
}

// DecodeStatusRecord decodes a status topic record by Kafka Connect's read
// rules: task keys are split on '-' like config task keys (so connector
// names may contain '-'); a topic key is status-topic-<topic>:connector-<c>
// split at the first ':'. An error means Kafka Connect would discard the
// record; Kind, Connector and Task are still set when the key was
// understood.
func DecodeStatusRecord(key, value []byte) (StatusEvent, error) {
	var ev StatusEvent
	if key == nil {
		return ev, errors.New("status record has a null key")
	}
	k := string(key)
	switch {
	case strings.HasPrefix(k, connectorStatusPrefix):
		ev.Connector = k[len(connectorStatusPrefix):]
		if ev.Connector == "" {
			return ev, fmt.Errorf("invalid connector status key %q", k)
		}
		ev.Kind = StatusEventConnector
	case strings.HasPrefix(k, taskStatusPrefix):
		parts := splitJavaDash(k)
		if len(parts) < 4 {
			return ev, fmt.Errorf("invalid task status key %q", k)
		}
		n, ok := parseJavaInt(parts[len(parts)-1])
		if !ok {
			return ev, fmt.Errorf("invalid task status key %q", k)
		}
		ev.Kind, ev.Connector, ev.Task = StatusEventTask, strings.Join(parts[2:len(parts)-1], "-"), n
	case strings.HasPrefix(k, topicStatusPrefix):
		colon := strings.IndexByte(k, ':')
		if colon < len(topicStatusPrefix) {
			return ev, fmt.Errorf("invalid topic status key %q", k)
		}
		topic := k[len(topicStatusPrefix):colon]
		if topic == "" {
			return ev, fmt.Errorf("invalid topic status key containing empty topic %q", k)
		}
		// Like Kafka, the separator's text is skipped, not checked.
		begin := colon + len(topicStatusSeparator)
		if begin > len(k) {
			return ev, fmt.Errorf("invalid topic status key %q", k)
		}
		connector := k[begin:]
		if connector == "" {
			return ev, fmt.Errorf("invalid topic status key containing empty connector %q", k)
		}
		ev.Kind, ev.Topic, ev.Connector = StatusEventTopic, topic, connector
	default:
		return ev, fmt.Errorf("invalid status record key %q", k)
	}
	if value == nil {
		ev.Tombstone = true
		return ev, nil
	}
	v, err := decodeInternal(value)
	if err != nil {
		return ev, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ev, fmt.Errorf("invalid status value type %s for key %q", javaClassName(v), k)
	}
	if ev.Kind == StatusEventTopic {
		ts, err := decodeTopicStatus(obj)
		if err != nil {
			return ev, fmt.Errorf("failed to parse topic status with key %q: %v", k, err)
		}
		ev.TopicStatus = ts
		return ev, nil
	}
	st, err := decodeStatus(obj)
	if err != nil {
		return ev, fmt.Errorf("failed to parse status with key %q: %v", k, err)
	}
	st.Connector, st.IsTask, st.Task = ev.Connector, ev.Kind == StatusEventTask, ev.Task
	ev.Status = st
	return ev, nil
}

func decodeStatus(obj map[string]any) (StatusRecord, error) {
	var st StatusRecord
	state, ok := obj["state"].(string)
	if !ok || !ValidStatusState(state) {
		return st, fmt.Errorf("invalid state %s", describeValue(obj["state"]))
	}
	st.State = state
	switch t := obj["trace"].(type) {
	case nil:
	case string:
		st.Trace = t
	default:
		return st, fmt.Errorf("trace is %s, want a String", javaClassName(t))
	}
	switch w := obj["worker_id"].(type) {
	case nil:
	case string:
		st.WorkerID = w
	default:
		return st, fmt.Errorf("worker_id is %s, want a String", javaClassName(w))
	}
	gen, ok := obj["generation"].(int64)
	if !ok {
		return st, fmt.Errorf("generation is %s, want a Long", javaClassName(obj["generation"]))
	}
	st.Generation = int32(gen)
	return st, nil
}

func decodeTopicStatus(obj map[string]any) (TopicStatus, error) {
	var ts TopicStatus
	inner, ok := obj["topic"].(map[string]any)
	if !ok {
		return ts, fmt.Errorf("field topic is %s, want a Map", javaClassName(obj["topic"]))
	}
	if ts.Topic, ok = inner["name"].(string); !ok {
		return ts, fmt.Errorf("name is %s, want a String", javaClassName(inner["name"]))
	}
	if ts.Connector, ok = inner["connector"].(string); !ok {
		return ts, fmt.Errorf("connector is %s, want a String", javaClassName(inner["connector"]))
	}
	task, ok := inner["task"].(int64)
	if !ok {
		return ts, fmt.Errorf("task is %s, want a Long", javaClassName(inner["task"]))
	}
	ts.Task = int(int32(task))
	if ts.DiscoverTimestamp, ok = inner["discoverTimestamp"].(int64); !ok {
		return ts, fmt.Errorf("discoverTimestamp is %s, want a Long", javaClassName(inner["discoverTimestamp"]))
	}
	return ts, nil
}

func describeValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return javaClassName(v)
}
