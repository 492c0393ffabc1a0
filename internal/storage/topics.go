package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/connectd/connectd/internal/javajson"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Worker properties naming the internal topics, and the purposes Kafka
// Connect names them by in its errors (spec §4.5).
const (
	OffsetStorageTopicProperty = "offset.storage.topic"
	ConfigStorageTopicProperty = "config.storage.topic"
	StatusStorageTopicProperty = "status.storage.topic"

	OffsetsTopicPurpose = "source connector offsets"
	ConfigsTopicPurpose = "connector configurations"
	StatusTopicPurpose  = "connector and task statuses"
)

// TopicSpec describes an internal topic for EnsureTopic.
type TopicSpec struct {
	Name     string
	Property string // worker property that named it, e.g. "offset.storage.topic"
	Purpose  string // e.g. "source connector offsets"
	// Partitions and ReplicationFactor are used when the topic is created;
	// -1 means the broker default. Partitions is ignored (1 is used) when
	// RequireSinglePartition is set.
	Partitions        int32
	ReplicationFactor int16
	// Configs are extra topic configs for creation. cleanup.policy is
	// always compact; a different value here is ignored with a warning.
	Configs map[string]string
	// RequireSinglePartition refuses an existing topic with more than one
	// partition (the config topic).
	RequireSinglePartition bool
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
}

// TopicSettingsError reports an existing internal topic whose settings
// would lose data. Error returns Kafka Connect's message verbatim.
type TopicSettingsError struct {
	Topic    string
	Property string
	msg      string
}

func (e *TopicSettingsError) Error() string { return e.msg }

// SinglePartitionError returns the error Kafka Connect gives for a config
// topic with more than one partition.
func SinglePartitionError(topic, property string, partitions int) *TopicSettingsError {
	return &TopicSettingsError{Topic: topic, Property: property, msg: fmt.Sprintf(
		"Topic '%s' supplied via the '%s' property is required to have a single partition in order to guarantee consistency of connector configurations, but found %d partitions.",
		topic, property, partitions)}
}

func cleanupPolicyError(topic, property, purpose, found string) *TopicSettingsError {
	return &TopicSettingsError{Topic: topic, Property: property, msg: fmt.Sprintf(
		"Topic '%s' supplied via the '%s' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of %s, but found the topic currently has 'cleanup.policy=%s'. Continuing would likely result in eventually losing %s and problems restarting this Connect cluster in the future. Change the '%s' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'.",
		topic, property, purpose, found, purpose, property)}
}

// EnsureTopic creates an internal topic if it is missing (always with
// cleanup.policy=compact) and otherwise checks that it is usable, as Kafka
// Connect does at startup: its cleanup policy must be exactly compact, and
// with RequireSinglePartition it must have one partition. Both refusals are
// *TopicSettingsError values with Kafka's exact text. If the topic's
// configs cannot be described (ACLs, old brokers), that is logged and the
// policy check skipped. Several workers starting at once are fine: losing
// the creation race counts as the topic existing.
func EnsureTopic(ctx context.Context, adm *kadm.Client, spec TopicSpec) error {
	logger := spec.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("topic", spec.Name)
	if spec.Name == "" {
		return errors.New("storage: TopicSpec.Name is empty")
	}
	if spec.Partitions == 0 || spec.Partitions < -1 {
		return fmt.Errorf("storage: topic %q: partitions must be positive or -1, got %d", spec.Name, spec.Partitions)
	}
	if spec.ReplicationFactor == 0 || spec.ReplicationFactor < -1 {
		return fmt.Errorf("storage: topic %q: replication factor must be positive or -1, got %d", spec.Name, spec.ReplicationFactor)
	}
	configs := map[string]*string{}
	for k, v := range spec.Configs {
		if k == "cleanup.policy" {
			if v != "compact" {
				logger.Warn("ignoring configured cleanup.policy for an internal topic; compaction is always enforced",
					"property", spec.Property, "value", v)
			}
			continue
		}
		configs[k] = kadm.StringPtr(v)
	}
	configs["cleanup.policy"] = kadm.StringPtr("compact")
	partitions := spec.Partitions
	if spec.RequireSinglePartition {
		partitions = 1
	}

	created, err := createTopic(ctx, adm, spec.Name, partitions, spec.ReplicationFactor, configs, logger)
	if err != nil {
		return err
	}
	if created {
		logger.Info("created internal topic", "partitions", partitions, "replication_factor", spec.ReplicationFactor)
		return nil
	}
	if err := checkCleanupPolicy(ctx, adm, spec, logger); err != nil {
		return err
	}
	if spec.RequireSinglePartition {
		n, err := partitionCount(ctx, adm, spec.Name)
		if err != nil {
			// The config store checks the count again once it has read
			// the topic, so this is not the last line of defence.
			logger.Warn("could not check the internal topic's partition count", "error", err)
		} else if n > 1 {
			return SinglePartitionError(spec.Name, spec.Property, n)
		}
	}
	return nil
}

// createTopic returns whether this call created the topic; false with a
// nil error means it already existed (or we may not create topics, in
// which case, like Kafka, we assume it exists or will be auto-created).
func createTopic(ctx context.Context, adm *kadm.Client, name string, partitions int32, rf int16, configs map[string]*string, logger *slog.Logger) (bool, error) {
	backoff := 50 * time.Millisecond
	for {
		_, err := adm.CreateTopic(ctx, partitions, rf, configs, name)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, kerr.TopicAlreadyExists):
			logger.Debug("found existing internal topic")
			return false, nil
		case errors.Is(err, kerr.UnsupportedVersion),
			errors.Is(err, kerr.ClusterAuthorizationFailed),
			errors.Is(err, kerr.TopicAuthorizationFailed):
			logger.Debug("cannot create internal topic; assuming it exists or will be auto-created", "error", err)
			return false, nil
		case errors.Is(err, kerr.InvalidConfig), errors.Is(err, kerr.InvalidReplicationFactor),
			errors.Is(err, kerr.InvalidPartitions), errors.Is(err, kerr.InvalidTopicException),
			errors.Is(err, kerr.PolicyViolation), errors.Is(err, kerr.InvalidReplicaAssignment):
			return false, fmt.Errorf("Unable to create topic(s) '%s': %w", name, err)
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("Timed out while checking for or creating topic(s) '%s': %w (last error: %v)", name, ctx.Err(), err)
		}
		if !kerr.IsRetriable(err) && isKafkaProtocolError(err) {
			return false, fmt.Errorf("Error while attempting to create/find topic(s) '%s': %w", name, err)
		}
		logger.Debug("retrying internal topic creation", "error", err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		backoff = min(backoff*2, time.Second)
	}
}

func isKafkaProtocolError(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

func checkCleanupPolicy(ctx context.Context, adm *kadm.Client, spec TopicSpec, logger *slog.Logger) error {
	policies, err := topicCleanupPolicies(ctx, adm, spec.Name)
	if err != nil || len(policies) == 0 {
		logger.Info("Unable to use admin client to verify the cleanup policy of '"+spec.Name+
			"' topic is 'compact', either because the broker is an older version or because the Kafka principal used for Connect internal topics does not have the required permission to describe topic configurations.",
			"error", err)
		return nil
	}
	if len(policies) == 1 && policies[0] == "compact" {
		return nil
	}
	// Java joins a HashSet of the policies, so report them in that order.
	return cleanupPolicyError(spec.Name, spec.Property, spec.Purpose, strings.Join(javajson.HashMapOrder(policies), ","))
}

// topicCleanupPolicies returns the topic's cleanup.policy as Kafka's
// TopicAdmin reads it: split on ',', trimmed, lower-cased, de-duplicated,
// empty entries dropped.
func topicCleanupPolicies(ctx context.Context, adm *kadm.Client, topic string) ([]string, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		return nil, rc.Err
	}
	for _, c := range rc.Configs {
		if c.Key != "cleanup.policy" || c.Value == nil {
			continue
		}
		var out []string
		seen := map[string]bool{}
		for _, p := range strings.Split(*c.Value, ",") {
			p = strings.ToLower(strings.TrimSpace(p))
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		return out, nil
	}
	return nil, nil
}

func partitionCount(ctx context.Context, adm *kadm.Client, topic string) (int, error) {
	tds, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, err
	}
	td, ok := tds[topic]
	if !ok {
		return 0, kerr.UnknownTopicOrPartition
	}
	if td.Err != nil {
		return 0, td.Err
	}
	return len(td.Partitions), nil
}
