package herder

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/internal/storage"
)

// OpenOffsetTopic opens, creating it if it does not exist, the offsets
// topic a source connector names for itself (offsets.storage.topic,
// KIP-618), read to its end. A topic opened once stays open.
type OpenOffsetTopic func(ctx context.Context, topic string) (OffsetTopic, error)

// connectorOffsets are the offsets of a source connector with a topic of
// its own, as Kafka's ConnectorOffsetBackingStore keeps them: read from
// its topic, else from the worker's (where offsets written before the
// connector had a topic of its own stay); written to its topic, and to
// the worker's too, removals first there, so that a removal is never
// undone by a value left in the worker's topic.
type connectorOffsets struct {
	own, worker OffsetTopic
}

func (c connectorOffsets) Get(connector string, partition map[string]any) (map[string]any, bool) {
	if off, ok := c.own.Get(connector, partition); ok {
		return off, true
	}
	return c.worker.Get(connector, partition)
}

func (c connectorOffsets) Offsets(connector string) []storage.PartitionOffset {
	own := c.own.Offsets(connector)
	seen := make(map[string]bool, len(own))
	for _, po := range own {
		seen[partitionKey(connector, po.Partition)] = true
	}
	out := own
	for _, po := range c.worker.Offsets(connector) {
		if !seen[partitionKey(connector, po.Partition)] {
			out = append(out, po)
		}
	}
	return out
}

// partitionKey is a partition's identity, as the offsets topic keys it.
func partitionKey(connector string, partition map[string]any) string {
	key, _ := storage.EncodeOffsetKey(connector, partition)
	return string(key)
}

func (c connectorOffsets) Put(connector string, entries []storage.PartitionOffset) error {
	var removals, values []storage.PartitionOffset
	for _, e := range entries {
		if e.Offset == nil {
			removals = append(removals, e)
		} else {
			values = append(values, e)
		}
	}
	if len(removals) > 0 {
		if err := c.worker.Put(connector, removals); err != nil {
			return err
		}
	}
	if err := c.own.Put(connector, entries); err != nil {
		return err
	}
	if len(values) > 0 {
		// As in Kafka, the connector's topic is the truth: a failure to
		// copy values to the worker's topic fails nothing.
		_ = c.worker.Put(connector, values)
	}
	return nil
}

// Topic is where an exactly-once task writes the connector's offsets:
// its own topic.
func (c connectorOffsets) Topic() string { return c.own.Topic() }

// Records are the records of entries for the connector's own topic.
func (c connectorOffsets) Records(connector string, entries []storage.PartitionOffset) ([]storage.KeyValue, error) {
	return c.own.Records(connector, entries)
}

// Committed copies what an exactly-once task committed to its own topic
// to the worker's, as Put does: the connector's topic is the truth, so a
// failure fails nothing.
func (c connectorOffsets) Committed(connector string, entries []storage.PartitionOffset) {
	_ = c.worker.Put(connector, entries)
}

func (c connectorOffsets) ReadToEnd(ctx context.Context) error {
	if err := c.own.ReadToEnd(ctx); err != nil {
		return err
	}
	return c.worker.ReadToEnd(ctx)
}

// offsetsOf is where a source connector's offsets are: its own topic
// (with the worker's behind it) when its config names one other than the
// worker's, else the worker's.
func (h *Distributed) offsetsOf(config map[string]string) (OffsetTopic, error) {
	topic := strings.TrimSpace(config["offsets.storage.topic"])
	if topic == "" || topic == h.dcfg.OffsetTopic {
		return h.offsets, nil
	}
	if h.openOffsetTopic == nil {
		return nil, fmt.Errorf("this worker opens no offsets topic but its own (%s), and the connector names %s", h.dcfg.OffsetTopic, topic)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	own, err := h.openOffsetTopic(ctx, topic)
	if err != nil {
		return nil, err
	}
	return connectorOffsets{own: own, worker: h.offsets}, nil
}

// readOffsetsToEnd reads the offsets topics of a source connector to their
// ends.
func (h *Distributed) readOffsetsToEnd(ctx context.Context, config map[string]string) error {
	store, err := h.offsetsOf(config)
	if err != nil {
		return err
	}
	return store.ReadToEnd(ctx)
}
