package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
)

// What a Kafka Connect worker (Java's or connectd's) without exactly-once
// source support says when asked to validate a connector that requires
// it: a distributed one, and connectd's standalone one.
const (
	msgNoExactlyOnce           = "This worker does not have exactly-once source support enabled."
	msgStandaloneNoExactlyOnce = "Kafka Connect in standalone mode does not support exactly-once source connectors."
)

// exactlyOnceSources asks a cluster whether it runs source connectors
// exactly once (exactly.once.source.support=enabled), which Kafka
// Connect's REST API does not show: it validates a source connector's
// config with exactly.once.support=required, which such a worker refuses
// with msgNoExactlyOnce (or, standalone, msgStandaloneNoExactlyOnce), and
// a worker with the support does not. known is
// false when the cluster could not be asked (no source config given, or
// the validation failed).
func exactlyOnceSources(ctx context.Context, c *client.Client, config map[string]string) (enabled, known bool) {
	class := config["connector.class"]
	if class == "" {
		return false, false
	}
	cfg := maps.Clone(config)
	cfg["exactly.once.support"] = "required"
	infos, err := c.Validate(ctx, class, cfg)
	if err != nil {
		return false, false
	}
	errs := infos.Errors()["exactly.once.support"]
	return !slices.Contains(errs, msgNoExactlyOnce) && !slices.Contains(errs, msgStandaloneNoExactlyOnce), true
}

// sourceConfig is the config of one of the source connectors listed, nil
// when there is none.
func sourceConfig(all map[string]client.ConnectorExpanded) map[string]string {
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if info := all[name].Info; info != nil && info.Type == "source" {
			return info.Config
		}
	}
	return nil
}

// dupWindow is how many records before the copy, per partition, the
// records written after it are checked against.
const dupWindow = 10_000

// copyMark is where a copied source connector's topics ended when it was
// copied: what follows was written by the new connector.
type copyMark map[string]map[int32]int64

// markTopics reads the end offsets of a connector's topics.
func markTopics(ctx context.Context, adm *kadm.Client, topics []string) (copyMark, error) {
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	m := copyMark{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			if m[o.Topic] == nil {
				m[o.Topic] = map[int32]int64{}
			}
			m[o.Topic][o.Partition] = o.Offset
		}
	})
	return m, nil
}

// dupCheck is what checkDuplicates found.
type dupCheck struct {
	after, before int    // records after the mark, and before it, compared
	dup           string // the first record after the mark that repeats one before it, if any
}

// checkDuplicates reads, as a read_committed consumer, each partition of
// the marked topics from dupWindow records before the mark to its end now,
// and finds the first record after the mark whose key and value repeat a
// record's before it: what a connector carrying on from offsets older than
// its last records would write again.
func checkDuplicates(ctx context.Context, opts []kgo.Opt, mark copyMark) (dupCheck, error) {
	var res dupCheck
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return res, err
	}
	ends, err := markTopics(ctx, kadm.NewClient(cl), slices.Collect(maps.Keys(mark)))
	cl.Close()
	if err != nil {
		return res, err
	}
	for topic, parts := range mark {
		for p, at := range parts {
			end := ends[topic][p]
			if end <= at {
				continue
			}
			start := max(0, at-dupWindow)
			pcl, err := kgo.NewClient(append(slices.Clone(opts), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(start)}}))...)
			if err != nil {
				return res, err
			}
			seen := map[string]int64{}
			pos := start
			// Up to the end read first; a transactional topic's last
			// offset is a commit marker, which no fetch returns: a poll
			// that finds nothing more for a second ends the reading too.
			for pos < end-1 && ctx.Err() == nil && res.dup == "" {
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				fs := pcl.PollFetches(pctx)
				cancel()
				fs.EachRecord(func(r *kgo.Record) {
					pos = r.Offset
					k := string(r.Key) + "\x00" + string(r.Value)
					if r.Offset < at {
						seen[k] = r.Offset
						res.before++
						return
					}
					res.after++
					if o, ok := seen[k]; ok && res.dup == "" {
						res.dup = fmt.Sprintf("%s[%d]@%d repeats @%d", topic, p, r.Offset, o)
					}
				})
				if fs.Empty() {
					break
				}
			}
			pcl.Close()
		}
	}
	return res, ctx.Err()
}
