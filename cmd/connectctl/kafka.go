package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/properties"
)

// kafkaOpts are the franz-go options that reach Kafka: the bootstrap
// servers of --bootstrap-server or the context, and the security settings
// of --kafka-config.
func (a *app) kafkaOpts(kf *kafkaFlags) ([]kgo.Opt, []string, error) {
	bootstrap := kf.bootstrap
	if bootstrap == "" {
		if c, err := a.resolve(); err == nil {
			bootstrap = c.bootstrap
		}
	}
	if bootstrap == "" {
		return nil, nil, errNoBootstrap
	}
	var seeds []string
	for _, s := range strings.Split(bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...)}
	if kf.kafkaConfig != "" {
		props, err := properties.ParseFile(kf.kafkaConfig)
		if err != nil {
			return nil, nil, err
		}
		sec, err := kafkasec.ConnOptions(props, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", kf.kafkaConfig, err)
		}
		opts = append(opts, sec...)
	}
	return opts, seeds, nil
}

var errNoBootstrap = withHint(errors.New("this needs Kafka's address: --bootstrap-server host:port"),
	"pass --bootstrap-server, or keep it in the context: connectctl config set-context NAME --bootstrap-server host:port")

// hasBootstrap reports whether Kafka's address is known.
func (a *app) hasBootstrap(kf *kafkaFlags) bool {
	if kf.bootstrap != "" {
		return true
	}
	c, err := a.resolve()
	return err == nil && c.bootstrap != ""
}

// admin is a Kafka admin client; close it with the returned function.
func (a *app) admin(kf *kafkaFlags) (*kadm.Client, func(), error) {
	opts, _, err := a.kafkaOpts(kf)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// sinkTopics are the topics a sink connector reads: its config's topics,
// the topics matching its topics.regex, and those it has offsets for.
func sinkTopics(ctx context.Context, adm *kadm.Client, config map[string]string, offsets []client.ConnectorOffset) ([]string, error) {
	var topics []string
	for _, t := range strings.Split(config["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			topics = append(topics, t)
		}
	}
	if re := strings.TrimSpace(config["topics.regex"]); re != "" {
		// Java's Pattern.matcher().matches(): the whole name must match.
		rx, err := regexp.Compile("^(?:" + re + ")$")
		if err != nil {
			return nil, fmt.Errorf("the connector's topics.regex %q: %w", re, err)
		}
		all, err := adm.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range all.Names() {
			if rx.MatchString(t) {
				topics = append(topics, t)
			}
		}
	}
	for _, o := range offsets {
		if t, ok := o.Partition["kafka_topic"].(string); ok {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	return slices.Compact(topics), nil
}

// resolveDatetime finds, on every partition of a sink connector's topics,
// the first offset at or after --to-datetime (kafka-consumer-groups
// --to-datetime): Kafka's ListOffsets by timestamp, or the end offset where
// no record is that recent.
func (a *app) resolveDatetime(ctx context.Context, b *backend, name string, sf *setFlags, kf *kafkaFlags) ([]client.ConnectorOffset, error) {
	at, err := groupoffsets.ParseDatetime(sf.toDatetime)
	if err != nil {
		return nil, err
	}
	adm, closeAdm, err := a.admin(kf)
	if err != nil {
		return nil, err
	}
	defer closeAdm()
	var topics []string
	if sf.topic != "" {
		topics = []string{sf.topic}
	} else {
		current, err := b.read(ctx)
		if err != nil {
			return nil, err
		}
		if topics, err = sinkTopics(ctx, adm, b.config, current); err != nil {
			return nil, err
		}
		if len(topics) == 0 {
			return nil, fmt.Errorf("connector %s names no topics (topics or topics.regex) and has no offsets", name)
		}
	}
	only := int32(-1)
	if sf.partition != "" && sf.partition != "all" {
		p, err := strconv.ParseInt(sf.partition, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("--partition %q: want a partition number or all", sf.partition)
		}
		only = int32(p)
	}
	listed, err := adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...)
	if err != nil {
		return nil, fmt.Errorf("listing offsets by time: %w", err)
	}
	var end kadm.ListedOffsets
	var out []client.ConnectorOffset
	var errs []error
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			if o.Partition < 0 {
				errs = append(errs, fmt.Errorf("topic %s: %w", o.Topic, o.Err))
			} else {
				errs = append(errs, fmt.Errorf("topic %s partition %d: %w", o.Topic, o.Partition, o.Err))
			}
			return
		}
		if only >= 0 && o.Partition != only {
			return
		}
		off := o.Offset
		if off < 0 {
			// No record at or after the time: the end, as
			// kafka-consumer-groups does.
			if end == nil {
				if end, err = adm.ListEndOffsets(ctx, topics...); err != nil {
					errs = append(errs, err)
					return
				}
			}
			e, ok := end.Lookup(o.Topic, o.Partition)
			if !ok || e.Err != nil {
				errs = append(errs, fmt.Errorf("topic %s partition %d: no end offset", o.Topic, o.Partition))
				return
			}
			off = e.Offset
		}
		out = append(out, sinkOffset(o.Topic, o.Partition, off))
	})
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no partitions found for topics %s", strings.Join(topics, ", "))
	}
	return sortOffsets(out), nil
}

func sinkOffset(topic string, partition int32, offset int64) client.ConnectorOffset {
	return client.ConnectorOffset{
		Partition: map[string]any{"kafka_topic": topic, "kafka_partition": int64(partition)},
		Offset:    map[string]any{"kafka_offset": offset},
	}
}

// sinkFlagOffsets reads --topic T --partition P|all --offset
// N|earliest|latest|null for a sink connector.
func (a *app) sinkFlagOffsets(ctx context.Context, b *backend, sf *setFlags, kf *kafkaFlags) ([]client.ConnectorOffset, error) {
	if sf.topic == "" {
		return nil, withHint(errors.New("a sink connector's offset needs --topic T and --partition P|all"),
			"for example: --topic orders --partition all --offset 0")
	}
	if sf.partition == "" {
		return nil, errors.New("--partition is missing: a partition number, or all")
	}
	var partitions []int32
	if sf.partition == "all" {
		if a.hasBootstrap(kf) {
			adm, closeAdm, err := a.admin(kf)
			if err != nil {
				return nil, err
			}
			defer closeAdm()
			td, err := adm.ListTopics(ctx, sf.topic)
			if err != nil {
				return nil, err
			}
			d, ok := td[sf.topic]
			if !ok || d.Err != nil {
				return nil, fmt.Errorf("topic %s: not found in Kafka", sf.topic)
			}
			for p := range d.Partitions {
				partitions = append(partitions, p)
			}
		} else {
			current, err := b.read(ctx)
			if err != nil {
				return nil, err
			}
			for _, o := range current {
				if t, _ := o.Partition["kafka_topic"].(string); t == sf.topic {
					if p, ok := intValue(o.Partition["kafka_partition"]); ok {
						partitions = append(partitions, int32(p))
					}
				}
			}
			if len(partitions) == 0 {
				return nil, withHint(fmt.Errorf("the connector has no offsets on topic %s, so its partitions are not known", sf.topic),
					"pass --bootstrap-server to look them up in Kafka, or name one with --partition N")
			}
		}
		slices.Sort(partitions)
	} else {
		p, err := strconv.ParseInt(sf.partition, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("--partition %q: want a partition number or all", sf.partition)
		}
		partitions = []int32{int32(p)}
	}
	var out []client.ConnectorOffset
	switch sf.offset {
	case "null":
		for _, p := range partitions {
			o := sinkOffset(sf.topic, p, 0)
			o.Offset = nil
			out = append(out, o)
		}
	case "earliest", "latest":
		adm, closeAdm, err := a.admin(kf)
		if err != nil {
			return nil, err
		}
		defer closeAdm()
		list := adm.ListStartOffsets
		if sf.offset == "latest" {
			list = adm.ListEndOffsets
		}
		listed, err := list(ctx, sf.topic)
		if err != nil {
			return nil, err
		}
		for _, p := range partitions {
			o, ok := listed.Lookup(sf.topic, p)
			if !ok || o.Err != nil {
				return nil, fmt.Errorf("topic %s partition %d: no %s offset in Kafka", sf.topic, p, sf.offset)
			}
			out = append(out, sinkOffset(sf.topic, p, o.Offset))
		}
	default:
		n, err := strconv.ParseInt(sf.offset, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--offset %q: want an offset (a number), earliest, latest or null", sf.offset)
		}
		for _, p := range partitions {
			out = append(out, sinkOffset(sf.topic, p, n))
		}
	}
	return out, nil
}
