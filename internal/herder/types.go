package herder

import (
	"encoding/json"
	"fmt"
)

// ConnectorType is "source", "sink" or "unknown".
type ConnectorType string

// The connector types.
const (
	TypeSource  ConnectorType = "source"
	TypeSink    ConnectorType = "sink"
	TypeUnknown ConnectorType = "unknown"
)

// TargetState is the state the user asked a connector to be in.
type TargetState string

// The target states. STARTED is called RUNNING in the REST API.
const (
	Started TargetState = "STARTED"
	Paused  TargetState = "PAUSED"
	Stopped TargetState = "STOPPED"
)

// Reported states of connectors and tasks.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// ParseInitialState maps the REST initial_state (RUNNING, PAUSED,
// STOPPED, any case) to a target state.
func ParseInitialState(s string) (TargetState, error) {
	switch {
	case equalFold(s, "RUNNING"):
		return Started, nil
	case equalFold(s, "PAUSED"):
		return Paused, nil
	case equalFold(s, "STOPPED"):
		return Stopped, nil
	}
	return "", BadRequest("Invalid initial state %s; valid values are RUNNING, PAUSED, STOPPED", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// ConnectorInfo is the REST ConnectorInfo entity.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   ConnectorType     `json:"type"`
}

// TaskID names a task: its connector and number.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// State is the reported state of a connector instance.
type State struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is the reported state of a task.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// ConnectorStateInfo is the REST status document.
type ConnectorStateInfo struct {
	Name      string        `json:"name"`
	Connector State         `json:"connector"`
	Tasks     []TaskState   `json:"tasks"`
	Type      ConnectorType `json:"type"`
}

// TaskInfo is one task's config.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// ConnectorOffset is one partition and its offset. For a source connector
// both are the connector's own maps; for a sink they are
// {"kafka_topic","kafka_partition"} and {"kafka_offset"}. A nil Offset in
// a request removes the partition's offset.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConnectorOffsets is the body of GET and PATCH /connectors/{c}/offsets.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// PluginInfo describes an installed plugin.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// ConfigKeyInfo is the REST form of a config key declaration.
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Order         int      `json:"order"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is the REST form of one validated value.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a key's declaration with its validated value.
type ConfigInfo struct {
	Definition *ConfigKeyInfo   `json:"definition"`
	Value      *ConfigValueInfo `json:"value"`
}

// ConfigInfos is the answer of the validate endpoint.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ServerInfo is the answer of GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Error is a failure meant for the client: an HTTP status and Kafka
// Connect's message for it.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// MarshalJSON writes Kafka Connect's error body.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}{e.Status, e.Message})
}

func newError(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400: the client asked for something invalid.
func BadRequest(format string, args ...any) *Error { return newError(400, format, args...) }

// NotFound is a 404.
func NotFound(format string, args ...any) *Error { return newError(404, format, args...) }

// Conflict is a 409.
func Conflict(format string, args ...any) *Error { return newError(409, format, args...) }

// Internal is a 500: the worker failed, not the client.
func Internal(format string, args ...any) *Error { return newError(500, format, args...) }

// WorkerStatus is the body of GET /health.
type WorkerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Forbidden is a 403.
func Forbidden(format string, args ...any) *Error { return newError(403, format, args...) }
