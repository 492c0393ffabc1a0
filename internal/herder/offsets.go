package herder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/storage"
	"github.com/connectd/connectd/internal/worker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Sink offset keys, as Kafka Connect's SinkUtils names them.
const (
	keyTopic     = "kafka_topic"
	keyPartition = "kafka_partition"
	keyOffset    = "kafka_offset"
)

func notStopped(name string) *Error {
	return BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
}

func successMessage(handled bool, verb string) string {
	if handled {
		return "The offsets for this connector have been " + verb + " successfully"
	}
	return "The Connect framework-managed offsets for this connector have been " + verb + " successfully. However, if this connector manages offsets externally, they will need to be manually " + verb + " in the system that the connector uses."
}

// ConnectorOffsets answers GET /connectors/{c}/offsets, in any state.
func (h *Standalone) ConnectorOffsets(ctx context.Context, name string) (*client.ConnectorOffsets, error) {
	h.mu.Lock()
	cs, err := h.get(name)
	var config map[string]string
	var typ connect.PluginType
	if err == nil {
		config, typ = maps.Clone(cs.config), cs.plugin.Type
	}
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return h.om.get(ctx, connectorRef{name: name, config: config, typ: typ})
}

// OffsetsHistory answers connectd's GET /connectors/{c}/offsets/history:
// the commits of a source connector's offsets that the worker recorded
// beside its offsets file.
func (h *Standalone) OffsetsHistory(ctx context.Context, name string) (*client.OffsetsHistory, error) {
	h.mu.Lock()
	cs, err := h.get(name)
	var typ connect.PluginType
	if err == nil {
		typ = cs.plugin.Type
	}
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if typ == connect.PluginSink {
		return nil, BadRequest("Connector %s is a sink connector: its offsets are its consumer group's, whose history is the topics it reads", name)
	}
	hist := h.offsets.History()
	if hist == nil {
		return nil, NotFound("This worker keeps no offsets history")
	}
	commits, truncated, err := hist.Read(name)
	if err != nil {
		return nil, Internal("Failed to read the offsets history of connector %s: %v", name, err)
	}
	out := &client.OffsetsHistory{Commits: make([]client.OffsetCommit, 0, len(commits)), Truncated: truncated}
	for _, c := range commits {
		out.Commits = append(out.Commits, client.OffsetCommit{Time: c.Time.UnixMilli(),
			ConnectorOffset: client.ConnectorOffset{Partition: c.Partition, Offset: c.Offset}})
	}
	return out, nil
}

// offsetsManager reads and changes connectors' offsets: source offsets in
// the worker's offset store, sink offsets in the consumer groups. Both
// herders use it; they decide when a change is allowed.
type offsetsManager struct {
	w     *worker.Worker
	store sourceOffsetStore
	// storeOf, when set, says where a source connector's offsets are
	// instead (a topic of its own in distributed mode).
	storeOf func(config map[string]string) (sourceOffsetStore, error)
}

// sourceStore is where c's source offsets are.
func (m offsetsManager) sourceStore(c connectorRef) (sourceOffsetStore, error) {
	if m.storeOf == nil {
		return m.store, nil
	}
	s, err := m.storeOf(c.config)
	if err != nil {
		return nil, Internal("Failed to open the offsets topic of source connector %s: %v", c.name, err)
	}
	return s, nil
}

// sourceOffsetStore is where source offsets live: the standalone file or
// the offsets topic.
type sourceOffsetStore interface {
	Offsets(connector string) []storage.PartitionOffset
	Put(connector string, entries []storage.PartitionOffset) error
}

// connectorRef is what offsets operations need to know of a connector.
type connectorRef struct {
	name   string
	config map[string]string
	typ    connect.PluginType
}

func (m offsetsManager) get(ctx context.Context, c connectorRef) (*client.ConnectorOffsets, error) {
	if c.typ == connect.PluginSink {
		return m.sinkOffsets(ctx, c.name, c.config)
	}
	store, err := m.sourceStore(c)
	if err != nil {
		return nil, err
	}
	pos := store.Offsets(c.name)
	out := &client.ConnectorOffsets{Offsets: make([]client.ConnectorOffset, len(pos))}
	for i, po := range pos {
		out.Offsets[i] = client.ConnectorOffset{Partition: po.Partition, Offset: po.Offset}
	}
	return out, nil
}

func (m offsetsManager) sinkOffsets(ctx context.Context, name string, config map[string]string) (*client.ConnectorOffsets, error) {
	adm, closeAdm, err := m.w.Admin(name, config)
	if err != nil {
		return nil, Internal("Failed to retrieve consumer group offsets for sink connector %s: %v", name, err)
	}
	defer closeAdm()
	resp, err := adm.FetchOffsets(ctx, m.w.SinkGroupID(name, config))
	if err == nil {
		err = resp.Error()
	}
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, Internal("Failed to retrieve consumer group offsets for sink connector %s: %v", name, err)
	}
	out := &client.ConnectorOffsets{Offsets: []client.ConnectorOffset{}}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		out.Offsets = append(out.Offsets, client.ConnectorOffset{
			Partition: map[string]any{keyTopic: o.Topic, keyPartition: int64(o.Partition)},
			Offset:    map[string]any{keyOffset: o.At},
		})
	})
	sort.Slice(out.Offsets, func(i, j int) bool {
		a, b := out.Offsets[i].Partition, out.Offsets[j].Partition
		if a[keyTopic] != b[keyTopic] {
			return a[keyTopic].(string) < b[keyTopic].(string)
		}
		return a[keyPartition].(int64) < b[keyPartition].(int64)
	})
	return out, nil
}

// AlterConnectorOffsets answers PATCH /connectors/{c}/offsets.
func (h *Standalone) AlterConnectorOffsets(ctx context.Context, name string, offsets []client.ConnectorOffset) (string, error) {
	if len(offsets) == 0 {
		return "", BadRequest("Partitions / offsets need to be provided for an alter offsets request")
	}
	return h.changeOffsets(ctx, name, offsets, false)
}

// ResetConnectorOffsets answers DELETE /connectors/{c}/offsets.
func (h *Standalone) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	return h.changeOffsets(ctx, name, nil, true)
}

// changeOffsets runs an alter or reset once the connector is known to be
// STOPPED with no task left, and words the answer as Kafka Connect does.
func (h *Standalone) changeOffsets(ctx context.Context, name string, offsets []client.ConnectorOffset, reset bool) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cs, err := h.get(name)
	if err != nil {
		return "", err
	}
	if cs.target != Stopped || len(cs.tasks) > 0 || len(cs.taskConfigs) > 0 {
		return "", notStopped(name)
	}
	handled, err := h.om.modifyOffsets(ctx, cs.ref(), offsets, reset)
	if err != nil {
		return "", err
	}
	verb := "altered"
	if reset {
		verb = "reset"
	}
	return successMessage(handled, verb), nil
}

// modifyOffsets alters (or, with reset, removes) a connector's offsets
// after its offsets hook agreed. The caller made sure the connector is
// STOPPED and has no task left.
func (m offsetsManager) modifyOffsets(ctx context.Context, c connectorRef, offsets []client.ConnectorOffset, reset bool) (bool, error) {
	if c.typ == connect.PluginSink {
		return m.modifySinkOffsets(ctx, c, offsets, reset)
	}
	return m.modifySourceOffsets(c, offsets, reset)
}

func (m offsetsManager) modifySourceOffsets(c connectorRef, offsets []client.ConnectorOffset, reset bool) (bool, error) {
	store, err := m.sourceStore(c)
	if err != nil {
		return false, err
	}
	var entries []storage.PartitionOffset
	if reset {
		for _, po := range store.Offsets(c.name) {
			entries = append(entries, storage.PartitionOffset{Partition: po.Partition})
		}
	} else {
		for _, o := range offsets {
			if o.Partition == nil {
				return false, BadRequest("The partition for a source connector offset cannot be null or missing")
			}
			p, err := normalizeSourceMap("partition", o.Partition)
			if err != nil {
				return false, err
			}
			off, err := normalizeSourceMap("offset", o.Offset)
			if err != nil {
				return false, err
			}
			entries = append(entries, storage.PartitionOffset{Partition: p, Offset: off})
		}
	}
	handled := false
	conn, _, err := workerInstantiate(m.w.Plugins(), c.config)
	if err != nil {
		return false, err
	}
	if alt, ok := conn.(connect.SourceOffsetAlterer); ok {
		req := make([]connect.SourceOffset, len(entries))
		for i, e := range entries {
			req[i] = connect.SourceOffset{Partition: maps.Clone(e.Partition), Offset: maps.Clone(e.Offset)}
		}
		if handled, err = callAlterer(c.name, func() (bool, error) { return alt.AlterOffsets(maps.Clone(c.config), req) }); err != nil {
			return false, err
		}
	}
	if len(entries) == 0 {
		return handled, nil
	}
	if err := store.Put(c.name, entries); err != nil {
		return false, Internal("Failed to modify offsets for source connector %s: %v", c.name, err)
	}
	return handled, nil
}

// normalizeSourceMap checks that a partition or offset holds only
// primitives and gives its values the types a task reading them back
// sees (int64, float64), as Kafka Connect's round trip through the
// JsonConverter does.
func normalizeSourceMap(kind string, m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	if err := storage.ValidatePrimitive(kind, m); err != nil {
		return nil, BadRequest("%s", err.Error())
	}
	b, err := javajson.Marshal(m)
	if err != nil {
		return nil, BadRequest("Invalid %s: %v", kind, err)
	}
	v, err := javajson.Unmarshal(b)
	if err != nil {
		return nil, BadRequest("Invalid %s: %v", kind, err)
	}
	return v.(map[string]any), nil
}

func workerInstantiate(plugins *connect.PluginSet, config map[string]string) (connect.Connector, connect.Plugin, error) {
	conn, p, err := worker.Instantiate(plugins, config["connector.class"])
	if err != nil {
		return nil, p, Internal("%v", err)
	}
	return conn, p, nil
}

// callAlterer runs a connector's offsets hook. Its refusals are the
// client's problem (400, where Kafka Connect answers 500): the request
// asked for offsets the connector cannot take.
func callAlterer(name string, fn func() (bool, error)) (handled bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			handled, err = false, Internal("Failed to modify offsets for connector %s: %v", name, r)
		}
	}()
	handled, err = fn()
	switch {
	case errors.Is(err, connect.ErrOffsetsUnsupported):
		return false, BadRequest("Failed to modify offsets for connector %s because it doesn't support external modification of offsets", name)
	case err != nil:
		var he *Error
		if errors.As(err, &he) {
			return false, he
		}
		return false, BadRequest("%s", err.Error())
	}
	return handled, nil
}

func (m offsetsManager) modifySinkOffsets(ctx context.Context, c connectorRef, offsets []client.ConnectorOffset, reset bool) (bool, error) {
	group := m.w.SinkGroupID(c.name, c.config)
	adm, closeAdm, err := m.w.Admin(c.name, c.config)
	if err != nil {
		return false, Internal("Failed to modify offsets for sink connector %s: %v", c.name, err)
	}
	defer closeAdm()
	tps := map[connect.TopicPartition]*int64{}
	if reset {
		resp, err := adm.FetchOffsets(ctx, group)
		if err == nil {
			err = resp.Error()
		}
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return false, Internal("Failed to list offsets prior to resetting offsets for sink connector %s", c.name)
		}
		resp.Each(func(o kadm.OffsetResponse) { tps[connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = nil })
	} else {
		for _, o := range offsets {
			tp, off, err := parseSinkOffset(o)
			if err != nil {
				return false, err
			}
			tps[tp] = off
		}
	}
	handled := false
	conn, _, err := workerInstantiate(m.w.Plugins(), c.config)
	if err != nil {
		return false, err
	}
	if alt, ok := conn.(connect.SinkOffsetAlterer); ok {
		if handled, err = callAlterer(c.name, func() (bool, error) { return alt.AlterOffsets(maps.Clone(c.config), maps.Clone(tps)) }); err != nil {
			return false, err
		}
	}
	if reset {
		resp, err := adm.DeleteGroup(ctx, group)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil, errors.Is(err, kerr.GroupIDNotFound):
		case errors.Is(err, kerr.NonEmptyGroup):
			return false, Internal("Failed to reset consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to reset its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", c.name)
		default:
			return false, Internal("Failed to reset consumer group offsets for sink connector %s: %v", c.name, err)
		}
		return handled, nil
	}
	commit := kadm.Offsets{}
	del := kadm.TopicsSet{}
	for tp, off := range tps {
		if off == nil {
			del.Add(tp.Topic, tp.Partition)
			continue
		}
		commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: *off, LeaderEpoch: -1})
	}
	if len(commit) > 0 {
		resp, err := adm.CommitOffsets(ctx, group, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			if bad := unknownPartition(ctx, adm, c.name, resp); bad != nil {
				return false, bad
			}
			return false, sinkAlterError(c.name, err)
		}
	}
	if len(del) > 0 {
		resp, err := adm.DeleteOffsets(ctx, group, del)
		if err == nil {
			err = resp.Error()
		}
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return false, sinkAlterError(c.name, err)
		}
	}
	return handled, nil
}

// unknownPartition is the 400 for a commit the broker refused because a
// topic or partition of the request does not exist (which Kafka answers
// with a 500 saying UNKNOWN_TOPIC_OR_PARTITION): the client named it, so
// the answer names it too.
func unknownPartition(ctx context.Context, adm *kadm.Client, name string, resp kadm.OffsetResponses) *Error {
	for _, o := range resp.Sorted() {
		if !errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			continue
		}
		if topics, err := adm.ListTopics(ctx, o.Topic); err == nil && topics.Has(o.Topic) {
			return BadRequest("Failed to alter consumer group offsets for connector %s: partition %d of topic '%s' does not exist", name, o.Partition, o.Topic)
		}
		return BadRequest("Failed to alter consumer group offsets for connector %s: topic '%s' does not exist", name, o.Topic)
	}
	return nil
}

func sinkAlterError(name string, err error) *Error {
	if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.GroupSubscribedToTopic) {
		return Internal("Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name)
	}
	return Internal("Failed to alter consumer group offsets for connector %s: %v", name, err)
}

// parseSinkOffset reads one sink entry as Kafka Connect's SinkUtils does,
// with its messages. The shorter {"topic","partition"} → {"offset"} form
// is accepted too, as an alias, when the Kafka keys are absent.
func parseSinkOffset(o client.ConnectorOffset) (connect.TopicPartition, *int64, error) {
	var tp connect.TopicPartition
	if o.Partition == nil {
		return tp, nil, BadRequest("The partition for a sink connector offset cannot be null or missing")
	}
	part := alias(o.Partition, map[string]string{"topic": keyTopic, "partition": keyPartition})
	t, hasT := part[keyTopic]
	p, hasP := part[keyPartition]
	if !hasT || !hasP {
		return tp, nil, BadRequest("The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'")
	}
	if t == nil {
		return tp, nil, BadRequest("Kafka topic names must be valid strings and may not be null")
	}
	if p == nil {
		return tp, nil, BadRequest("Kafka partitions must be valid numbers and may not be null")
	}
	tp.Topic = javaText(t)
	pn, err := strconv.ParseInt(javaText(p), 10, 32)
	if err != nil || pn < 0 {
		return tp, nil, BadRequest("Failed to parse the following Kafka partition value in the provided offsets: '%s'. Partition values for sink connectors need to be integers.", javaText(p))
	}
	tp.Partition = int32(pn)
	if o.Offset == nil {
		return tp, nil, nil
	}
	off := alias(o.Offset, map[string]string{"offset": keyOffset})
	v, ok := off[keyOffset]
	if !ok {
		return tp, nil, BadRequest("The offset for a sink connector should either be null or contain the key 'kafka_offset'")
	}
	if v == nil {
		return tp, nil, nil
	}
	n, err := strconv.ParseInt(javaText(v), 10, 64)
	if err != nil {
		return tp, nil, BadRequest("Failed to parse the following Kafka offset value in the provided offsets: '%s'. Offset values for sink connectors need to be integers.", javaText(v))
	}
	if n < 0 {
		// Kafka Connect passes a negative offset to the broker; it can
		// only mean a mistake, so say so.
		return tp, nil, BadRequest("Kafka offset values must not be negative, but %s[%d] has %d", tp.Topic, tp.Partition, n)
	}
	return tp, &n, nil
}

// alias renames the seed's short keys to Kafka's when Kafka's are absent.
func alias(m map[string]any, names map[string]string) map[string]any {
	out := maps.Clone(m)
	for short, long := range names {
		if _, hasLong := out[long]; hasLong {
			continue
		}
		if v, ok := out[short]; ok {
			out[long] = v
			delete(out, short)
		}
	}
	return out
}

// javaText is String.valueOf of a JSON value as Jackson bound it.
func javaText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return string(javajson.AppendDouble(nil, x))
	}
	return fmt.Sprint(v)
}
