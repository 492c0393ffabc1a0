// Package group implements the Kafka Connect worker group membership protocol
// (protocol type "connect") on top of Kafka's classic group APIs
// (JoinGroup/SyncGroup/Heartbeat/LeaveGroup), the way Apache Kafka Connect's
// WorkerCoordinator does, so that connectd workers form a distributed cluster
// and could share a group with Java workers.
//
// The package has three parts:
//
//   - protocol.go: the wire codecs of the member metadata (v0 "default",
//     v1 "compatible", v2 "sessioned") and of the assignments (v0/v1/v2);
//   - assignor.go: the leader's assignor, a pure function (incremental
//     cooperative, KIP-415, and eager for v0);
//   - member.go: the group member that drives the protocol for a herder.
//
// See the reference document §4.6 for the protocol description.
package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ProtocolType is the group protocol type of Kafka Connect worker groups.
const ProtocolType = "connect"

// Wire names of the sub-protocols offered in JoinGroup, and their versions.
const (
	ProtocolDefault    = "default"    // v0, connect.protocol=eager
	ProtocolCompatible = "compatible" // v1, connect.protocol=compatible
	ProtocolSessioned  = "sessioned"  // v2, connect.protocol=sessioned
)

// Protocol versions, as written in the version header of metadata and
// assignments.
const (
	VersionEager      int16 = 0
	VersionCompatible int16 = 1
	VersionSessioned  int16 = 2
)

// ConnectorTask is the sentinel task id that stands for the connector
// instance itself in a ConnectorTasks list.
const ConnectorTask int32 = -1

// Assignment error codes.
const (
	ErrNone           int16 = 0
	ErrConfigMismatch int16 = 1 // the leader could not read the config topic up to the members' max offset
)

// ProtocolVersion returns the version of the sub-protocol with the given wire
// name ("default", "compatible", "sessioned").
func ProtocolVersion(name string) (int16, bool) {
	switch name {
	case ProtocolDefault:
		return VersionEager, true
	case ProtocolCompatible:
		return VersionCompatible, true
	case ProtocolSessioned:
		return VersionSessioned, true
	}
	return 0, false
}

// ConnectorTasks is one entry of an assignment: a connector and the task ids
// of it that are assigned (or revoked). The task id ConnectorTask (-1) means
// the connector instance.
type ConnectorTasks struct {
	Connector string
	Tasks     []int32
}

// Metadata is the JoinGroup member metadata of one worker.
type Metadata struct {
	// Version is 0 ("default"), 1 ("compatible") or 2 ("sessioned").
	Version int16
	// URL is the worker's advertised REST URL.
	URL string
	// ConfigOffset is the worker's position in the config topic.
	ConfigOffset int64
	// Current is the worker's current assignment (v1+ only); nil when the
	// worker has none. It carries its own version header on the wire.
	Current *Assignment
}

// Assignment is the SyncGroup assignment the leader gives one member. With
// v0 (eager) Assigned is the member's complete assignment; with v1/v2
// (cooperative) it holds only what is new to the member, and Revoked what the
// member must stop.
type Assignment struct {
	Version      int16
	Error        int16
	Leader       string // leader member id
	LeaderURL    string // leader REST URL
	ConfigOffset int64
	Assigned     []ConnectorTasks // nil is written as a null array (v1+)
	Revoked      []ConnectorTasks // v1+; nil is written as a null array
	Delay        int32            // v1+; ms after which members should rejoin
}

// EncodeMetadata serializes member metadata. Version 0 writes
// version|url|config-offset; versions 1 and above append the current
// assignment as NULLABLE_BYTES (null when m.Current is nil).
func EncodeMetadata(m Metadata) []byte {
	var w writer
	w.int16(m.Version)
	w.string(m.URL)
	w.int64(m.ConfigOffset)
	if m.Version >= VersionCompatible {
		if m.Current == nil {
			w.int32(-1)
		} else {
			b := EncodeAssignment(*m.Current)
			w.int32(int32(len(b)))
			w.buf = append(w.buf, b...)
		}
	}
	return w.buf
}

// DecodeMetadata parses member metadata of any version >= 0. For versions 1
// and above a missing trailing allocation is tolerated (it reads as nil), as
// are trailing bytes after the known fields.
func DecodeMetadata(b []byte) (Metadata, error) {
	r := reader{buf: b}
	var m Metadata
	m.Version = r.int16()
	if r.err == nil && m.Version < 0 {
		return Metadata{}, fmt.Errorf("group: unsupported metadata version %d", m.Version)
	}
	m.URL = r.string()
	m.ConfigOffset = r.int64()
	if r.err != nil {
		return Metadata{}, fmt.Errorf("group: decoding metadata: %w", r.err)
	}
	if m.Version == VersionEager || r.remaining() == 0 {
		return m, nil
	}
	alloc, null := r.nullableBytes()
	if r.err != nil {
		return Metadata{}, fmt.Errorf("group: decoding metadata allocation: %w", r.err)
	}
	if !null {
		a, err := DecodeAssignment(alloc)
		if err != nil {
			return Metadata{}, fmt.Errorf("group: decoding metadata allocation: %w", err)
		}
		m.Current = &a
	}
	return m, nil
}

// EncodeAssignment serializes an assignment with a.Version as its header.
// Version 0 writes version|error|leader|leader-url|config-offset|assignment
// (a nil Assigned is written as an empty array); versions 1 and above append
// revoked and delay, and write nil arrays as null.
func EncodeAssignment(a Assignment) []byte {
	var w writer
	w.int16(a.Version)
	w.int16(a.Error)
	w.string(a.Leader)
	w.string(a.LeaderURL)
	w.int64(a.ConfigOffset)
	if a.Version < VersionCompatible {
		w.connectorTasks(a.Assigned, false)
		return w.buf
	}
	w.connectorTasks(a.Assigned, true)
	w.connectorTasks(a.Revoked, true)
	w.int32(a.Delay)
	return w.buf
}

// DecodeAssignment parses an assignment of any version >= 0. Like Java's v1
// reader it tolerates missing trailing fields: absent assignment/revoked
// arrays read as nil and an absent delay as 0. Null arrays read as nil.
// Bytes after the known fields are ignored.
func DecodeAssignment(b []byte) (Assignment, error) {
	r := reader{buf: b}
	var a Assignment
	a.Version = r.int16()
	if r.err == nil && a.Version < 0 {
		return Assignment{}, fmt.Errorf("group: unsupported assignment version %d", a.Version)
	}
	a.Error = r.int16()
	a.Leader = r.string()
	a.LeaderURL = r.string()
	a.ConfigOffset = r.int64()
	if r.err != nil {
		return Assignment{}, fmt.Errorf("group: decoding assignment: %w", r.err)
	}
	if r.remaining() > 0 {
		a.Assigned = r.connectorTasks()
	}
	if a.Version >= VersionCompatible {
		if r.err == nil && r.remaining() > 0 {
			a.Revoked = r.connectorTasks()
		}
		if r.err == nil && r.remaining() > 0 {
			a.Delay = r.int32()
		}
	}
	if r.err != nil {
		return Assignment{}, fmt.Errorf("group: decoding assignment: %w", r.err)
	}
	return a, nil
}

// writer appends Kafka protocol primitives (big-endian).
type writer struct{ buf []byte }

func (w *writer) int16(v int16) { w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(v)) }
func (w *writer) int32(v int32) { w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v)) }
func (w *writer) int64(v int64) { w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v)) }

// string writes a STRING. Strings longer than 32767 bytes cannot be
// represented and are truncated (connector names and URLs never are).
func (w *writer) string(s string) {
	if len(s) > math.MaxInt16 {
		s = s[:math.MaxInt16]
	}
	w.int16(int16(len(s)))
	w.buf = append(w.buf, s...)
}

// connectorTasks writes ARRAY<ConnectorAssignment>; with nullable, nil is
// written as a null array (-1).
func (w *writer) connectorTasks(cts []ConnectorTasks, nullable bool) {
	if cts == nil && nullable {
		w.int32(-1)
		return
	}
	w.int32(int32(len(cts)))
	for _, ct := range cts {
		w.string(ct.Connector)
		w.int32(int32(len(ct.Tasks)))
		for _, t := range ct.Tasks {
			w.int32(t)
		}
	}
}

var errShort = errors.New("buffer too short")

// reader consumes Kafka protocol primitives; the first error sticks and all
// later reads return zero values.
type reader struct {
	buf []byte
	err error
}

func (r *reader) remaining() int { return len(r.buf) }

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf) {
		r.err = errShort
		return nil
	}
	b := r.buf[:n:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) int16() int16 {
	b := r.take(2)
	if b == nil {
		return 0
	}
	return int16(binary.BigEndian.Uint16(b))
}

func (r *reader) int32() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

func (r *reader) int64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// string reads a STRING; a null length (-1) reads as "".
func (r *reader) string() string {
	n := r.int16()
	if r.err != nil || n == -1 {
		return ""
	}
	if n < 0 {
		r.err = fmt.Errorf("invalid string length %d", n)
		return ""
	}
	return string(r.take(int(n)))
}

// nullableBytes reads NULLABLE_BYTES.
func (r *reader) nullableBytes() (b []byte, null bool) {
	n := r.int32()
	if r.err != nil {
		return nil, false
	}
	if n == -1 {
		return nil, true
	}
	if n < 0 {
		r.err = fmt.Errorf("invalid bytes length %d", n)
		return nil, false
	}
	return r.take(int(n)), false
}

// count reads an array length and checks that count elements of at least
// minSize bytes each can fit; -1 (null) is returned as is when nullable.
func (r *reader) count(minSize int, nullable bool) int {
	n := r.int32()
	if r.err != nil {
		return 0
	}
	if n == -1 && nullable {
		return -1
	}
	if n < 0 {
		r.err = fmt.Errorf("invalid array length %d", n)
		return 0
	}
	if int64(n)*int64(minSize) > int64(len(r.buf)) {
		r.err = errShort
		return 0
	}
	return int(n)
}

// connectorTasks reads a nullable ARRAY<ConnectorAssignment>.
func (r *reader) connectorTasks() []ConnectorTasks {
	n := r.count(2+4, true)
	if r.err != nil || n == -1 {
		return nil
	}
	out := make([]ConnectorTasks, 0, n)
	for range n {
		ct := ConnectorTasks{Connector: r.string()}
		nt := r.count(4, false)
		if r.err != nil {
			return nil
		}
		ct.Tasks = make([]int32, nt)
		for j := range ct.Tasks {
			ct.Tasks[j] = r.int32()
		}
		out = append(out, ct)
	}
	if r.err != nil {
		return nil
	}
	return out
}
