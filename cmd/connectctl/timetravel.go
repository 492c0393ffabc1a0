package main

import (
	"context"
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/directoffsets"
	"github.com/connectd/connectd/internal/storage"
)

// Offsets time travel: a worker writes each commit of a source
// connector's offsets as a record of the offsets topic, with the time it
// wrote it, and the topic keeps every record until compaction leaves only
// the latest of each partition. Reading them back answers "where was this
// connector at 14:30, before the bad deploy?", and --to-datetime goes
// back there.

// historyStore is the offsets topic of a connector: --offsets-topic, else
// its own offsets.storage.topic (config), else the context's or the
// default, as direct mode finds it.
func (a *app) historyStore(kf *kafkaFlags, config map[string]string) (*directStore, error) {
	if kf.offsetsTopic == "" && config["offsets.storage.topic"] != "" {
		k := *kf
		k.offsetsTopic = config["offsets.storage.topic"]
		kf = &k
	}
	d, err := a.directStore(kf)
	if err != nil {
		return nil, withHint(err, "the offsets topic's history is read from Kafka itself")
	}
	return d, nil
}

// readHistory reads a connector's commits from the offsets topic.
func (d *directStore) readHistory(ctx context.Context, name string) (*directoffsets.History, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	h, err := directoffsets.ReadHistory(ctx, d.cfg, name)
	if err != nil {
		return nil, d.explain(err)
	}
	if len(h.Commits) == 0 {
		return nil, withHint(fmt.Errorf("%s holds no offsets of connector %s", d.cfg.Topic, name),
			"sink connectors' offsets are their consumer group's (connectctl groups describe connect-"+name+"); a worker of another cluster uses another offsets topic: --offsets-topic")
	}
	return h, nil
}

// commits reads a connector's commits: from the worker when it keeps
// them (a standalone connectd), else from the offsets topic. source names
// where they came from.
func (a *app) commits(ctx context.Context, name string, kf *kafkaFlags, config map[string]string) (h *directoffsets.History, source string, err error) {
	if !kf.direct {
		c, err := a.client()
		if err != nil {
			return nil, "", err
		}
		wh, err := c.OffsetsHistory(ctx, name)
		switch {
		case err == nil:
			h = &directoffsets.History{Compacted: wh.Truncated}
			for _, wc := range wh.Commits {
				h.Commits = append(h.Commits, directoffsets.Commit{Partition: wc.Partition, Offset: wc.Offset, Time: time.UnixMilli(wc.Time)})
			}
			if len(h.Commits) == 0 {
				return nil, "", fmt.Errorf("the worker recorded no offsets of connector %s", name)
			}
			return h, "the worker's offsets history", nil
		case !client.IsNotFound(err):
			return nil, "", err
		}
		// Any other worker's history is its offsets topic.
		if config == nil && kf.offsetsTopic == "" {
			// The connector may have an offsets topic of its own.
			if info, err := c.Connector(ctx, name); err == nil {
				config = info.Config
			}
		}
	}
	if config == nil {
		kf = a.ownOffsetsTopic(ctx, kf, name)
	}
	d, err := a.historyStore(kf, config)
	if err != nil {
		return nil, "", err
	}
	if h, err = d.readHistory(ctx, name); err != nil {
		return nil, "", err
	}
	return h, d.cfg.Topic, nil
}

// committedHistory lists the commits of a connector, per source
// partition, oldest first, at most limit (the newest) per partition.
func (a *app) committedHistory(ctx context.Context, name string, kf *kafkaFlags, limit int) error {
	h, source, err := a.commits(ctx, name, kf, nil)
	if err != nil {
		return err
	}
	type commit struct {
		Committed time.Time      `json:"committed"`
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	byPart := map[string][]commit{}
	parts := map[string]map[string]any{}
	for _, c := range h.Commits {
		if c.Invalid {
			continue
		}
		k := storage.CanonicalKey(name, c.Partition)
		byPart[k] = append(byPart[k], commit{c.Time, c.Partition, c.Offset})
		parts[k] = c.Partition
	}
	keys := slices.SortedFunc(maps.Keys(parts), func(x, y string) int { return comparePartitions(parts[x], parts[y]) })
	if a.structured() {
		type out struct {
			Connector string   `json:"connector"`
			Source    string   `json:"source"`
			Compacted bool     `json:"compacted"`
			Commits   []commit `json:"commits"`
		}
		o := out{Connector: name, Source: source, Compacted: h.Compacted, Commits: []commit{}}
		for _, k := range keys {
			o.Commits = append(o.Commits, byPart[k]...)
		}
		return a.writeStructured(o)
	}
	var rows [][]string
	hidden := 0
	for _, k := range keys {
		list := byPart[k]
		if limit > 0 && len(list) > limit {
			hidden += len(list) - limit
			list = list[len(list)-limit:]
		}
		for _, c := range list {
			rows = append(rows, []string{c.Committed.Local().Format("2006-01-02 15:04:05.000"), mapText(c.Partition), mapText(c.Offset)})
		}
	}
	if err := table(a.stdout, a.out(), []string{"COMMITTED", "PARTITION", "OFFSET"}, rows, nil); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(a.stdout, "(%d older commit%s not shown; --limit 0 shows all)\n", hidden, plural(hidden))
	}
	if h.Compacted {
		fmt.Fprintf(a.stdout, "%s has been compacted: commits older than the first shown for a partition may be gone\n", source)
	}
	return nil
}

// sourceAtDatetime is every source partition's offset as last committed
// at or before the time: a partition that had no offset then loses its
// offset, unless compaction may have removed what it had (then the change
// is refused, naming the earliest point known).
func (a *app) sourceAtDatetime(ctx context.Context, b *backend, name, when string, kf *kafkaFlags) ([]client.ConnectorOffset, error) {
	at, err := groupoffsets.ParseDatetime(when)
	if err != nil {
		return nil, err
	}
	h, source, err := a.commits(ctx, name, kf, b.config)
	if err != nil {
		return nil, err
	}
	var out []client.ConnectorOffset
	var unknown []string
	for _, p := range h.At(name, at) {
		switch {
		case p.Known:
			out = append(out, client.ConnectorOffset{Partition: p.Partition, Offset: p.Offset})
		case h.Compacted:
			unknown = append(unknown, fmt.Sprintf("%s: the earliest commit kept is of %s", mapText(p.Partition), p.Earliest.Local().Format("2006-01-02 15:04:05.000")))
		default:
			// Not committed yet at that time: it had no offset.
			out = append(out, client.ConnectorOffset{Partition: p.Partition})
		}
	}
	if len(unknown) > 0 {
		return nil, withHint(fmt.Errorf("%s has been compacted, and where connector %s was at %s is no longer known for:\n  %s",
			source, name, at.Local().Format("2006-01-02 15:04:05.000"), strings.Join(unknown, "\n  ")),
			"pick a time after those, or set those partitions with --partition JSON --offset JSON; see them with: connectctl offsets history "+name+" --from-topic")
	}
	if !a.structured() {
		fmt.Fprintf(a.stdout, "offsets of %s as committed at or before %s (from %s)\n", name, at.Local().Format("2006-01-02 15:04:05.000"), source)
	}
	return out, nil
}
