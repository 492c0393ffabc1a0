package worker

import (
	"fmt"
	"strings"
	"time"
)

// DistributedConfig holds the keys only distributed workers have.
type DistributedConfig struct {
	GroupID string

	ConfigTopic, OffsetTopic, StatusTopic string
	ConfigReplication                     int16
	OffsetReplication                     int16
	StatusReplication                     int16
	OffsetPartitions, StatusPartitions    int32
	// TopicConfigs are the extra topic settings given with the prefixes
	// offset.storage., config.storage. and status.storage.
	OffsetTopicConfigs, ConfigTopicConfigs, StatusTopicConfigs map[string]string

	Protocol                   string // eager, compatible or sessioned
	SessionTimeout             time.Duration
	HeartbeatInterval          time.Duration
	RebalanceTimeout           time.Duration
	ScheduledRebalanceMaxDelay time.Duration
	WorkerSyncTimeout          time.Duration
	KeyTTL                     time.Duration
	AdvertisedListener         string
	// ExactlyOnceSource is exactly.once.source.support, lower case.
	ExactlyOnceSource string
}

// exactly.once.source.support's values.
const (
	ExactlyOnceDisabled  = "disabled"
	ExactlyOncePreparing = "preparing"
	ExactlyOnceEnabled   = "enabled"
)

// TransactionalLeader says whether the leader writes the config topic in
// transactions, fencing out any earlier leader (preparing and enabled).
func (c *DistributedConfig) TransactionalLeader() bool {
	return c.ExactlyOnceSource != ExactlyOnceDisabled
}

// ExactlyOnceSourceEnabled says whether source tasks run exactly once.
func (c *DistributedConfig) ExactlyOnceSourceEnabled() bool {
	return c.ExactlyOnceSource == ExactlyOnceEnabled
}

// TransactionalID is the transactional id of the leader's config topic
// writes (Kafka's DistributedConfig.transactionalProducerId).
func (c *DistributedConfig) TransactionalID() string {
	return "connect-cluster-" + c.GroupID
}

// TaskTransactionalID is the transactional id of an exactly-once source
// task's producer (Kafka's Worker.taskTransactionalId).
func (c *DistributedConfig) TaskTransactionalID(connector string, task int) string {
	return fmt.Sprintf("%s-%s-%d", c.GroupID, connector, task)
}

// ParseDistributedConfig reads the distributed worker keys through their
// spec (config_spec.go), with Kafka Connect's defaults and messages.
func ParseDistributedConfig(props map[string]string) (*DistributedConfig, error) {
	// Checked first, so that a key size that is not even a number gets
	// the message saying what connectd takes.
	if err := refuseOtherSignatures(props); err != nil {
		return nil, err
	}
	pc, err := parseSpec(distributedDef, props)
	if err != nil {
		return nil, err
	}
	c := &DistributedConfig{
		GroupID:            pc.String("group.id"),
		ConfigTopic:        pc.String("config.storage.topic"),
		OffsetTopic:        pc.String("offset.storage.topic"),
		StatusTopic:        pc.String("status.storage.topic"),
		ConfigReplication:  int16(pc.Int("config.storage.replication.factor")),
		OffsetReplication:  int16(pc.Int("offset.storage.replication.factor")),
		StatusReplication:  int16(pc.Int("status.storage.replication.factor")),
		OffsetPartitions:   int32(pc.Int("offset.storage.partitions")),
		StatusPartitions:   int32(pc.Int("status.storage.partitions")),
		OffsetTopicConfigs: topicConfigs(props, "offset.storage."),
		ConfigTopicConfigs: topicConfigs(props, "config.storage."),
		StatusTopicConfigs: topicConfigs(props, "status.storage."),
		Protocol:           strings.ToLower(pc.String(keyConnectProtocol)),

		SessionTimeout:             millis(pc, "session.timeout.ms"),
		HeartbeatInterval:          millis(pc, "heartbeat.interval.ms"),
		RebalanceTimeout:           millis(pc, "rebalance.timeout.ms"),
		ScheduledRebalanceMaxDelay: millis(pc, "scheduled.rebalance.max.delay.ms"),
		WorkerSyncTimeout:          millis(pc, "worker.sync.timeout.ms"),
		KeyTTL:                     millis(pc, "inter.worker.key.ttl.ms"),
		AdvertisedListener:         strings.TrimSpace(props["rest.advertised.listener"]),
		ExactlyOnceSource:          strings.ToLower(strings.TrimSpace(pc.String("exactly.once.source.support"))),
	}
	return c, nil
}

// refuseOtherSignatures stops a worker asked to sign or check internal
// requests otherwise than connectd does (256-bit HmacSHA256 keys, Kafka's
// defaults): signing them otherwise than asked would fail open.
func refuseOtherSignatures(props map[string]string) error {
	const alg = "HmacSHA256"
	for _, k := range []string{"inter.worker.key.generation.algorithm", "inter.worker.signature.algorithm", "inter.worker.verification.algorithms"} {
		if v, ok := props[k]; ok && strings.TrimSpace(v) != alg {
			return fmt.Errorf("Invalid value %s for configuration %s: connectd signs and verifies internal requests with %s only", v, k, alg)
		}
	}
	if v, ok := props["inter.worker.key.size"]; ok && strings.TrimSpace(v) != "" && strings.TrimSpace(v) != "256" {
		return fmt.Errorf("Invalid value %s for configuration inter.worker.key.size: connectd generates 256-bit session keys only", v)
	}
	return nil
}

// topicConfigs returns the topic settings given under a storage prefix,
// leaving out the keys that are the worker's own.
func topicConfigs(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range WithPrefix(props, prefix) {
		switch k {
		case "topic", "replication.factor", "partitions", "file.filename":
			continue
		}
		out[k] = v
	}
	return out
}
