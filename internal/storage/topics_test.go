package storage

import (
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
)

func topicConfig(t *testing.T, adm *kadm.Client, topic, key string) string {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return ""
}

func offsetsSpec(name string) TopicSpec {
	return TopicSpec{
		Name: name, Property: OffsetStorageTopicProperty, Purpose: OffsetsTopicPurpose,
		Partitions: 25, ReplicationFactor: -1, Logger: discardLogger(),
	}
}

func configsSpec(name string) TopicSpec {
	return TopicSpec{
		Name: name, Property: ConfigStorageTopicProperty, Purpose: ConfigsTopicPurpose,
		Partitions: 1, ReplicationFactor: -1, RequireSinglePartition: true, Logger: discardLogger(),
	}
}

func TestEnsureTopicCreatesCompactedTopic(t *testing.T) {
	c := newCluster(t)
	adm := kadm.NewClient(rawClient(t, c))
	ctx := testCtx(t)

	spec := offsetsSpec("connect-offsets")
	spec.Configs = map[string]string{"cleanup.policy": "delete", "retention.ms": "604800000"}
	if err := EnsureTopic(ctx, adm, spec); err != nil {
		t.Fatal(err)
	}
	if got := topicConfig(t, adm, "connect-offsets", "cleanup.policy"); got != "compact" {
		t.Errorf("cleanup.policy = %q, want compact (a configured policy must not win)", got)
	}
	if got := topicConfig(t, adm, "connect-offsets", "retention.ms"); got != "604800000" {
		t.Errorf("retention.ms = %q, want the configured 604800000", got)
	}
	if n, err := partitionCount(ctx, adm, "connect-offsets"); err != nil || n != 25 {
		t.Errorf("partitions = %d (%v), want 25", n, err)
	}
	// Existing and compacted: fine.
	if err := EnsureTopic(ctx, adm, spec); err != nil {
		t.Fatalf("second EnsureTopic: %v", err)
	}

	// The config topic is created with one partition whatever was asked.
	cs := configsSpec("connect-configs")
	cs.Partitions = 5
	if err := EnsureTopic(ctx, adm, cs); err != nil {
		t.Fatal(err)
	}
	if n, err := partitionCount(ctx, adm, "connect-configs"); err != nil || n != 1 {
		t.Errorf("config topic partitions = %d (%v), want 1", n, err)
	}
}

func TestEnsureTopicRefusesNonCompactTopic(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(25, "connect-offsets")) // cleanup.policy=delete
	adm := kadm.NewClient(rawClient(t, c))
	err := EnsureTopic(testCtx(t), adm, offsetsSpec("connect-offsets"))
	const want = "Topic 'connect-offsets' supplied via the 'offset.storage.topic' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of source connector offsets, but found the topic currently has 'cleanup.policy=delete'. Continuing would likely result in eventually losing source connector offsets and problems restarting this Connect cluster in the future. Change the 'offset.storage.topic' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'."
	var tse *TopicSettingsError
	if !errors.As(err, &tse) || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}

	// "compact,delete" is not "only compact"; Java reports the policies
	// as a HashSet iterates them.
	if err := c.CreateTopic("connect-status", 5, map[string]string{"cleanup.policy": "delete, Compact"}); err != nil {
		t.Fatal(err)
	}
	err = EnsureTopic(testCtx(t), adm, TopicSpec{Name: "connect-status", Property: StatusStorageTopicProperty,
		Purpose: StatusTopicPurpose, Partitions: 5, ReplicationFactor: -1, Logger: discardLogger()})
	const want2 = "Topic 'connect-status' supplied via the 'status.storage.topic' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of connector and task statuses, but found the topic currently has 'cleanup.policy=compact,delete'. Continuing would likely result in eventually losing connector and task statuses and problems restarting this Connect cluster in the future. Change the 'status.storage.topic' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'."
	if err == nil || err.Error() != want2 {
		t.Fatalf("got %v\nwant %s", err, want2)
	}

	// Spelled loosely but only compact: accepted, as in Java.
	if err := c.CreateTopic("loose", 1, map[string]string{"cleanup.policy": " COMPACT ,compact"}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureTopic(testCtx(t), adm, offsetsSpec("loose")); err != nil {
		t.Fatalf("only-compact policy refused: %v", err)
	}
}

func TestEnsureTopicRefusesMultiPartitionConfigTopic(t *testing.T) {
	c := newCluster(t)
	if err := c.CreateTopic("connect-configs", 2, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(rawClient(t, c))
	const want = "Topic 'connect-configs' supplied via the 'config.storage.topic' property is required to have a single partition in order to guarantee consistency of connector configurations, but found 2 partitions."
	err := EnsureTopic(testCtx(t), adm, configsSpec("connect-configs"))
	if err == nil || err.Error() != want {
		t.Fatalf("EnsureTopic: got %v\nwant %s", err, want)
	}

	// The store itself refuses it too, after reading it (as Java does).
	ct, err := NewConfigTopic(logCfg(c, "connect-configs"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.Close()
	if err := ct.Start(testCtx(t)); err == nil || err.Error() != want {
		t.Fatalf("ConfigTopic.Start: got %v\nwant %s", err, want)
	}
}

func TestEnsureTopicConcurrentWorkers(t *testing.T) {
	c := newCluster(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		adm := kadm.NewClient(rawClient(t, c))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- EnsureTopic(ctx, adm, configsSpec("connect-configs"))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a worker failed: %v", err)
		}
	}
}

func TestEnsureTopicValidatesSpec(t *testing.T) {
	c := newCluster(t)
	adm := kadm.NewClient(rawClient(t, c))
	for _, spec := range []TopicSpec{
		{Name: "", Partitions: 1, ReplicationFactor: 1},
		{Name: "t", Partitions: 0, ReplicationFactor: 1},
		{Name: "t", Partitions: -2, ReplicationFactor: 1},
		{Name: "t", Partitions: 1, ReplicationFactor: 0},
	} {
		if err := EnsureTopic(testCtx(t), adm, spec); err == nil {
			t.Errorf("EnsureTopic(%+v) succeeded", spec)
		}
	}
	// More replicas than brokers is the broker's refusal, reported.
	spec := offsetsSpec("t")
	spec.ReplicationFactor = 3
	if err := EnsureTopic(testCtx(t), adm, spec); err == nil {
		t.Error("replication factor 3 on one broker succeeded")
	}
}
