package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Connector types as reported in ConnectorInfo.Type and ConnectorStatus.Type.
const (
	TypeSource  = "source"
	TypeSink    = "sink"
	TypeUnknown = "unknown"
)

// Connector and task states as reported by the status endpoints.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// Initial states accepted by CreateConnector (Kafka 3.5+, KIP-980).
const (
	InitialRunning = "RUNNING"
	InitialPaused  = "PAUSED"
	InitialStopped = "STOPPED"
)

// Logger scopes accepted by SetLogger (Kafka 3.7+, KIP-976).
const (
	ScopeWorker  = "worker"
	ScopeCluster = "cluster"
)

// ServerInfo is the answer of GET /.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// TaskID names a task: its connector and number.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// String is Kafka's text form of a task id, "<connector>-<task>".
func (id TaskID) String() string { return id.Connector + "-" + strconv.Itoa(id.Task) }

// ConnectorInfo is a connector's config and task ids.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   string            `json:"type"`
}

// State is the reported state of a connector instance.
type State struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	// Version is the connector's version (Kafka 4.1+); empty before.
	Version string `json:"version,omitempty"`
}

// TaskState is the reported state of one task.
type TaskState struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
	// Version is the task's version (Kafka 4.1+); empty before.
	Version string `json:"version,omitempty"`
}

// ConnectorStatus is the status document of a connector and its tasks.
type ConnectorStatus struct {
	Name      string      `json:"name"`
	Connector State       `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
	Type      string      `json:"type"`
}

// TaskInfo is one task's config.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// ConnectorExpanded is one entry of GET /connectors?expand=...; a field is
// nil when it was not asked for.
type ConnectorExpanded struct {
	Status *ConnectorStatus `json:"status,omitempty"`
	Info   *ConnectorInfo   `json:"info,omitempty"`
}

// ConnectorOffset is one partition and its offset. For a source connector
// both maps are the connector's own; for a sink they are
// {"kafka_topic","kafka_partition"} and {"kafka_offset"}.
//
// Decoded JSON numbers are int64 when integral and float64 otherwise (a
// number written with a fraction or exponent, such as 1.0, stays float64);
// nested objects and arrays are map[string]any and []any. When encoding,
// an integral float64 is written with a ".0" so that it reaches a Java
// worker as a double again. A nil Offset is written as null, which in an
// AlterOffsets request resets that partition.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConnectorOffsets is the body of GET and PATCH /connectors/{c}/offsets.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// UnmarshalJSON decodes the partition and offset maps, keeping numbers
// exact (see ConnectorOffset).
func (o *ConnectorOffset) UnmarshalJSON(b []byte) error {
	var raw struct {
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	p, err := normalizeMap(raw.Partition)
	if err != nil {
		return err
	}
	off, err := normalizeMap(raw.Offset)
	if err != nil {
		return err
	}
	o.Partition, o.Offset = p, off
	return nil
}

// MarshalJSON encodes the partition and offset maps, writing integral
// float64 values with a fraction (see ConnectorOffset).
func (o ConnectorOffset) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"partition":`)
	if err := encodeValue(&b, o.Partition); err != nil {
		return nil, err
	}
	b.WriteString(`,"offset":`)
	if err := encodeValue(&b, o.Offset); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// normalizeMap turns json.Number values into int64 or float64.
func normalizeMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	for k, v := range m {
		nv, err := normalize(v)
		if err != nil {
			return nil, err
		}
		m[k] = nv
	}
	return m, nil
}

func normalize(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return numberValue(x)
	case map[string]any:
		return normalizeMap(x)
	case []any:
		for i, e := range x {
			ne, err := normalize(e)
			if err != nil {
				return nil, err
			}
			x[i] = ne
		}
		return x, nil
	}
	return v, nil
}

// numberValue is int64 for a JSON integer that fits, else float64.
func numberValue(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return nil, fmt.Errorf("client: bad number %q: %w", s, err)
	}
	return f, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// encodeValue writes v as JSON, maps with sorted keys (as encoding/json
// does), integral float64 and float32 values with a trailing ".0".
func encodeValue(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case float64:
		return encodeFloat(b, x, 64)
	case float32:
		return encodeFloat(b, float64(x), 32)
	case map[string]any:
		if x == nil {
			b.WriteString("null")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := encodeValue(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		if x == nil {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(out)
	return nil
}

func encodeFloat(b *bytes.Buffer, f float64, bits int) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("client: unsupported offset value %v", f)
	}
	var out []byte
	var err error
	if bits == 32 {
		out, err = json.Marshal(float32(f))
	} else {
		out, err = json.Marshal(f)
	}
	if err != nil {
		return err
	}
	b.Write(out)
	if !bytes.ContainsAny(out, ".eE") {
		b.WriteString(".0")
	}
	return nil
}

// PluginInfo describes an installed plugin. Version is empty when the
// plugin does not report one.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// ConfigKeyInfo describes one config key of a plugin.
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

// ConfigValueInfo is one validated config value.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// ConfigInfo pairs a key's definition with its validated value; either may
// be nil.
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

// Errors returns the validation errors by key, for the keys that have any.
func (ci *ConfigInfos) Errors() map[string][]string {
	out := make(map[string][]string)
	for _, c := range ci.Configs {
		if c.Value != nil && len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

// WorkerStatus is the answer of GET /health (Kafka 3.9+).
type WorkerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// LoggerLevel is a logger's level. LastModified is the epoch-ms time of
// the last change through the REST API (Kafka 3.7+), nil if none.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// OffsetCommit is one commit of a source partition's offset, in
// connectd's GET /connectors/{c}/offsets/history: when (epoch
// milliseconds), and the partition and offset as ConnectorOffset has them
// (a null offset removed it).
type OffsetCommit struct {
	Time int64
	ConnectorOffset
}

// MarshalJSON writes {"time":..,"partition":..,"offset":..}.
func (c OffsetCommit) MarshalJSON() ([]byte, error) {
	b, err := c.ConnectorOffset.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(fmt.Appendf(nil, `{"time":%d,`, c.Time), b[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *OffsetCommit) UnmarshalJSON(b []byte) error {
	var t struct {
		Time *int64 `json:"time"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	if t.Time == nil {
		return errors.New(`an offset commit without its "time"`)
	}
	c.Time = *t.Time
	return c.ConnectorOffset.UnmarshalJSON(b)
}

// OffsetsHistory is the body of connectd's GET
// /connectors/{c}/offsets/history: a standalone worker's record of a
// source connector's commits, oldest first. Truncated says that older
// commits were dropped (the record is bounded).
type OffsetsHistory struct {
	Commits   []OffsetCommit `json:"commits"`
	Truncated bool           `json:"truncated"`
}
