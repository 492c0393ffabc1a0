package storage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/connectd/connectd/internal/javajson"
)

// Config topic key prefixes (KafkaConfigBackingStore), in the order the
// reader tests them.
const (
	targetStatePrefix = "target-state-"
	connectorPrefix   = "connector-"
	taskPrefix        = "task-"
	commitPrefix      = "commit-"
	restartPrefix     = "restart-connector-"
	taskCountPrefix   = "tasks-fencing-"
	loggerPrefix      = "logger-cluster-"

	// SessionKeyKey is the config topic key of the session key record.
	SessionKeyKey = "session-key"
	// SessionKeyAlgorithm is the algorithm Kafka Connect's leader uses.
	SessionKeyAlgorithm = "HmacSHA256"
)

// ConnectorConfigKey is the config topic key of a connector's config.
func ConnectorConfigKey(connector string) string { return connectorPrefix + connector }

// TaskConfigKey is the config topic key of one task's config.
func TaskConfigKey(connector string, task int) string {
	return taskPrefix + connector + "-" + strconv.Itoa(task)
}

// TaskCommitKey is the config topic key of a connector's task commit.
func TaskCommitKey(connector string) string { return commitPrefix + connector }

// TargetStateKey is the config topic key of a connector's target state.
func TargetStateKey(connector string) string { return targetStatePrefix + connector }

// RestartRequestKey is the config topic key of a connector's restart request.
func RestartRequestKey(connector string) string { return restartPrefix + connector }

// TaskCountKey is the config topic key of a connector's task count record
// (KIP-618 fencing; note the "tasks-fencing-" prefix).
func TaskCountKey(connector string) string { return taskCountPrefix + connector }

// LoggerLevelKey is the config topic key of a cluster-wide logger level.
func LoggerLevelKey(namespace string) string { return loggerPrefix + namespace }

// SessionKey is the key the leader distributes for signing internal REST
// requests.
type SessionKey struct {
	Key               []byte
	Algorithm         string // "HmacSHA256"
	CreationTimestamp int64  // epoch milliseconds
}

// ValidTargetState reports whether s is STARTED, PAUSED or STOPPED.
func ValidTargetState(s string) bool {
	return s == TargetStateStarted || s == TargetStatePaused || s == TargetStateStopped
}

// EncodeConnectorConfig is the value of a connector-<c> record:
// {"properties":{...}} with the properties sorted by name. (Java writes
// the map's own iteration order; readers do not depend on it, and sorted
// is the one order a Go map can reproduce.)
func EncodeConnectorConfig(props map[string]string) []byte {
	b := append(make([]byte, 0, 64+32*len(props)), `{"properties":{`...)
	for i, k := range slices.Sorted(maps.Keys(props)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = javajson.AppendString(b, k)
		b = append(b, ':')
		b = javajson.AppendString(b, props[k])
	}
	return append(b, "}}"...)
}

// EncodeTaskConfig is the value of a task-<c>-<n> record; same shape as a
// connector config.
func EncodeTaskConfig(props map[string]string) []byte { return EncodeConnectorConfig(props) }

// EncodeTaskCommit is the value of a commit-<c> record: {"tasks":N}.
func EncodeTaskCommit(tasks int) []byte {
	return fmt.Appendf(nil, `{"tasks":%d}`, int32(tasks))
}

// EncodeTargetState is the value of a target-state-<c> record:
// {"state":..,"state.v2":..}, where the old field says PAUSED for STOPPED
// so that pre-3.5 workers degrade to pausing.
func EncodeTargetState(state string) ([]byte, error) {
	if !ValidTargetState(state) {
		return nil, fmt.Errorf("invalid target state %q (want STARTED, PAUSED or STOPPED)", state)
	}
	v0 := state
	if state == TargetStateStopped {
		v0 = TargetStatePaused
	}
	return fmt.Appendf(nil, `{"state":"%s","state.v2":"%s"}`, v0, state), nil
}

// EncodeSessionKey is the value of the session-key record. An empty
// Algorithm is written as HmacSHA256.
func EncodeSessionKey(k SessionKey) []byte {
	alg := k.Algorithm
	if alg == "" {
		alg = SessionKeyAlgorithm
	}
	b := append([]byte(nil), `{"key":`...)
	b = javajson.AppendString(b, base64.StdEncoding.EncodeToString(k.Key))
	b = append(b, `,"algorithm":`...)
	b = javajson.AppendString(b, alg)
	return fmt.Appendf(b, `,"creation-timestamp":%d}`, k.CreationTimestamp)
}

// EncodeRestartRequest is the value of a restart-connector-<c> record.
func EncodeRestartRequest(onlyFailed, includeTasks bool) []byte {
	return fmt.Appendf(nil, `{"include-tasks":%t,"only-failed":%t}`, includeTasks, onlyFailed)
}

// EncodeTaskCount is the value of a tasks-fencing-<c> record.
func EncodeTaskCount(taskCount int) []byte {
	return fmt.Appendf(nil, `{"task-count":%d}`, int32(taskCount))
}

// EncodeLoggerLevel is the value of a logger-cluster-<namespace> record.
func EncodeLoggerLevel(level string) []byte {
	return append(javajson.AppendString(append([]byte(nil), `{"level":`...), level), '}')
}

// ConfigRecordType says what a config topic record is.
type ConfigRecordType int

// Config record types. ConfigRecordInvalid is a key Kafka Connect discards.
const (
	ConfigRecordInvalid ConfigRecordType = iota
	ConfigRecordTargetState
	ConfigRecordConnector
	ConfigRecordTask
	ConfigRecordCommit
	ConfigRecordRestart
	ConfigRecordTaskCount
	ConfigRecordSessionKey
	ConfigRecordLoggerLevel
)

var configRecordTypeNames = [...]string{"invalid", "target-state", "connector", "task", "commit", "restart", "task-count", "session-key", "logger-level"}

func (t ConfigRecordType) String() string {
	if t >= 0 && int(t) < len(configRecordTypeNames) {
		return configRecordTypeNames[t]
	}
	return "ConfigRecordType(" + strconv.Itoa(int(t)) + ")"
}

// ConfigRecord is one decoded config topic record.
type ConfigRecord struct {
	Type ConfigRecordType
	// Name is the connector name, or the logger namespace for
	// ConfigRecordLoggerLevel.
	Name string
	// Task is the task number of a ConfigRecordTask.
	Task int
	// Tombstone is set for a null value; no other field but Type and
	// Name (and Task) is then meaningful.
	Tombstone bool

	Properties   map[string]string // Connector, Task
	TargetState  string            // TargetState: STARTED, PAUSED or STOPPED
	TaskCount    int               // Commit ("tasks"), TaskCount ("task-count")
	OnlyFailed   bool              // Restart
	IncludeTasks bool              // Restart
	SessionKey   SessionKey        // SessionKey
	Level        string            // LoggerLevel
}

// DecodeConfigRecord decodes a config topic record by Kafka Connect's read
// rules (spec §4.3): key prefixes are tested in Java's order; a task key's
// last '-'-separated part is the task number and the parts before it form
// the connector name; a target state prefers state.v2 over state; a
// restart request's missing or non-boolean flags are false.
//
// An error means Kafka Connect would ignore the record. Type and Name (and
// Task) are still filled in when the key was understood, since a commit
// for an unknown connector matters even if its value is bad. An error
// wrapping ErrInvalidJSON means the value is not JSON at all.
func DecodeConfigRecord(key, value []byte) (ConfigRecord, error) {
	var rec ConfigRecord
	if key == nil {
		return rec, errors.New("config record has a null key")
	}
	k := string(key)
	switch {
	case strings.HasPrefix(k, targetStatePrefix):
		rec.Type, rec.Name = ConfigRecordTargetState, k[len(targetStatePrefix):]
	case strings.HasPrefix(k, connectorPrefix):
		rec.Type, rec.Name = ConfigRecordConnector, k[len(connectorPrefix):]
	case strings.HasPrefix(k, taskPrefix):
		parts := splitJavaDash(k)
		if len(parts) < 3 {
			return rec, fmt.Errorf("%q couldn't be parsed as a task config key", k)
		}
		n, ok := parseJavaInt(parts[len(parts)-1])
		if !ok {
			return rec, fmt.Errorf("%q couldn't be parsed as a task config key", k)
		}
		rec.Type, rec.Name, rec.Task = ConfigRecordTask, strings.Join(parts[1:len(parts)-1], "-"), n
	case strings.HasPrefix(k, commitPrefix):
		rec.Type, rec.Name = ConfigRecordCommit, k[len(commitPrefix):]
	case strings.HasPrefix(k, restartPrefix):
		rec.Type, rec.Name = ConfigRecordRestart, k[len(restartPrefix):]
	case strings.HasPrefix(k, taskCountPrefix):
		rec.Type, rec.Name = ConfigRecordTaskCount, k[len(taskCountPrefix):]
	case k == SessionKeyKey:
		rec.Type = ConfigRecordSessionKey
	case strings.HasPrefix(k, loggerPrefix):
		rec.Type, rec.Name = ConfigRecordLoggerLevel, k[len(loggerPrefix):]
	default:
		return rec, fmt.Errorf("invalid config record key %q", k)
	}

	v, err := decodeInternal(value)
	if err != nil {
		return rec, err
	}
	if v == nil {
		rec.Tombstone = true
		return rec, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return rec, fmt.Errorf("%s record %q is in the wrong format: %s", rec.Type, k, javaClassName(v))
	}
	switch rec.Type {
	case ConfigRecordTargetState:
		state, ok := obj["state.v2"].(string)
		if !ok {
			// Written by a pre-3.5 worker, or state.v2 is damaged: the old
			// field still says STARTED or PAUSED.
			if state, ok = obj["state"].(string); !ok {
				return rec, fmt.Errorf("invalid target state for connector %q: 'state' field should be a String but is %s", rec.Name, javaClassName(obj["state"]))
			}
		}
		if !ValidTargetState(state) {
			return rec, fmt.Errorf("invalid target state for connector %q: %s", rec.Name, state)
		}
		rec.TargetState = state
	case ConfigRecordConnector, ConfigRecordTask:
		props, err := decodeProperties(obj["properties"])
		if err != nil {
			return rec, fmt.Errorf("invalid data for %s %q: %v", rec.Type, k, err)
		}
		rec.Properties = props
	case ConfigRecordCommit:
		n, err := javaIntValue(obj["tasks"])
		if err != nil {
			return rec, fmt.Errorf("invalid task commit for connector %q: 'tasks' %v", rec.Name, err)
		}
		rec.TaskCount = n
	case ConfigRecordTaskCount:
		n, err := javaIntValue(obj["task-count"])
		if err != nil {
			return rec, fmt.Errorf("invalid task count record for connector %q: 'task-count' %v", rec.Name, err)
		}
		rec.TaskCount = n
	case ConfigRecordRestart:
		rec.OnlyFailed, _ = obj["only-failed"].(bool)
		rec.IncludeTasks, _ = obj["include-tasks"].(bool)
	case ConfigRecordSessionKey:
		enc, ok := obj["key"].(string)
		if !ok {
			return rec, fmt.Errorf("invalid session key: 'key' field should be a String but is %s", javaClassName(obj["key"]))
		}
		raw, err := decodeJavaBase64(enc)
		if err != nil {
			return rec, fmt.Errorf("invalid session key: 'key' is not base64: %v", err)
		}
		alg, ok := obj["algorithm"].(string)
		if !ok {
			return rec, fmt.Errorf("invalid session key: 'algorithm' field should be a String but is %s", javaClassName(obj["algorithm"]))
		}
		ts, ok := obj["creation-timestamp"].(int64)
		if !ok {
			return rec, fmt.Errorf("invalid session key: 'creation-timestamp' field should be a long but is %s", javaClassName(obj["creation-timestamp"]))
		}
		rec.SessionKey = SessionKey{Key: raw, Algorithm: alg, CreationTimestamp: ts}
	case ConfigRecordLoggerLevel:
		level, ok := obj["level"].(string)
		if !ok {
			return rec, fmt.Errorf("invalid logging level for namespace %q: 'level' should be a String but is %s", rec.Name, javaClassName(obj["level"]))
		}
		rec.Level = level
	}
	return rec, nil
}

// decodeProperties reads a {"properties":{...}} map. The schema allows
// null values; they are dropped (a Go map cannot hold them and Kafka
// Connect treats a null config value like an absent one). Other primitive
// values, which a Java worker would only trip over later, are kept in
// their JSON spelling; nested values are refused.
func decodeProperties(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("'properties' field should be a Map but is %s", javaClassName(v))
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		switch x := e.(type) {
		case nil:
		case string:
			out[k] = x
		case bool, int64, float64:
			b, err := javajson.Marshal(x)
			if err != nil {
				return nil, fmt.Errorf("property %q: %v", k, err)
			}
			out[k] = string(b)
		default:
			return nil, fmt.Errorf("property %q is %s, want a String", k, javaClassName(e))
		}
	}
	return out, nil
}

// javaIntValue is KafkaConfigBackingStore.intValue: a Long truncated to
// an int.
func javaIntValue(v any) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("should be an integer but is %s", javaClassName(v))
	}
	return int(int32(n)), nil
}

// decodeJavaBase64 accepts what java.util.Base64.getDecoder() does:
// standard alphabet, padding optional.
func decodeJavaBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}
