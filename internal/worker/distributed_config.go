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
}

// ParseDistributedConfig reads the distributed worker keys, with Kafka
// Connect's defaults and messages.
func ParseDistributedConfig(props map[string]string) (*DistributedConfig, error) {
	c := &DistributedConfig{}
	required := func(k string) (string, error) {
		v := strings.TrimSpace(props[k])
		if _, ok := props[k]; !ok {
			return "", fmt.Errorf("Missing required configuration %q which has no default value.", k)
		}
		if v == "" {
			return "", fmt.Errorf("Invalid value  for configuration %s: String must be non-empty", k)
		}
		return v, nil
	}
	var err error
	if c.GroupID, err = required("group.id"); err != nil {
		return nil, err
	}
	if c.ConfigTopic, err = required("config.storage.topic"); err != nil {
		return nil, err
	}
	if c.OffsetTopic, err = required("offset.storage.topic"); err != nil {
		return nil, err
	}
	if c.StatusTopic, err = required("status.storage.topic"); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		key string
		def int
		dst any
	}{
		{"config.storage.replication.factor", 3, &c.ConfigReplication},
		{"offset.storage.replication.factor", 3, &c.OffsetReplication},
		{"status.storage.replication.factor", 3, &c.StatusReplication},
		{"offset.storage.partitions", 25, &c.OffsetPartitions},
		{"status.storage.partitions", 5, &c.StatusPartitions},
	} {
		n, err := intProp(props, x.key, x.def)
		if err != nil {
			return nil, err
		}
		if n == 0 || n < -1 {
			return nil, fmt.Errorf("Invalid value %d for configuration %s: must be positive, or -1 for the broker's default", n, x.key)
		}
		switch d := x.dst.(type) {
		case *int16:
			*d = int16(n)
		case *int32:
			*d = int32(n)
		}
	}
	c.OffsetTopicConfigs = topicConfigs(props, "offset.storage.")
	c.ConfigTopicConfigs = topicConfigs(props, "config.storage.")
	c.StatusTopicConfigs = topicConfigs(props, "status.storage.")
	c.Protocol = strings.ToLower(strings.TrimSpace(props["connect.protocol"]))
	if c.Protocol == "" {
		c.Protocol = "sessioned"
	}
	if c.Protocol != "eager" && c.Protocol != "compatible" && c.Protocol != "sessioned" {
		return nil, fmt.Errorf("Invalid value %s for configuration connect.protocol: String must be one of: eager, compatible, sessioned", props["connect.protocol"])
	}
	for _, x := range []struct {
		key string
		def int64
		dst *time.Duration
	}{
		{"session.timeout.ms", 10000, &c.SessionTimeout},
		{"heartbeat.interval.ms", 3000, &c.HeartbeatInterval},
		{"rebalance.timeout.ms", 60000, &c.RebalanceTimeout},
		{"scheduled.rebalance.max.delay.ms", 300000, &c.ScheduledRebalanceMaxDelay},
		{"worker.sync.timeout.ms", 3000, &c.WorkerSyncTimeout},
		{"inter.worker.key.ttl.ms", 3600000, &c.KeyTTL},
	} {
		if *x.dst, err = msProp(props, x.key, x.def); err != nil {
			return nil, err
		}
	}
	c.AdvertisedListener = strings.TrimSpace(props["rest.advertised.listener"])
	if err := refuseOtherSignatures(props); err != nil {
		return nil, err
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
