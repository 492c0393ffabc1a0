// Package directoffsets reads and writes a connector's source offsets
// directly in a Kafka Connect offsets topic, without a worker: the "direct
// mode" for clusters older than Kafka 3.6 (no offsets REST API) or whose
// REST API is down.
//
// Records are written exactly as a Java worker writes them (spec §3.10,
// §4.2): the key is the JSON text of ["<connector>",{partition}], the value
// the offset JSON or null (a tombstone), and the Kafka partition is the one
// Java's default partitioner picks, murmur2 over the key bytes. Because
// compaction, lookups and partitioning all go by the exact key bytes, a
// partition already on the topic is always written with the bytes found
// there, whatever field order they have; only partitions never seen get
// storage.EncodeOffsetKey's Java HashMap order.
//
// Every call opens its own client, reads the topic from the beginning to
// its end, does its work and closes the client. Calls retry while the
// cluster is unreachable until ctx ends, so give ctx a deadline. A
// missing topic fails at once with ErrTopicNotFound. Nothing stops a
// running connector from overwriting what is written here; check Running
// first.
package directoffsets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/storage"
)

// ErrTopicNotFound is wrapped by the error returned when the offsets (or
// status) topic does not exist.
var ErrTopicNotFound = errors.New("topic does not exist")

// Config says where the offsets topic is.
type Config struct {
	// Seeds are the bootstrap brokers (host:port).
	Seeds []string
	// Topic is the offsets topic (the workers' offset.storage.topic, or a
	// connector's offsets.storage.topic).
	Topic string
	// ClientOpts are extra franz-go options (TLS, SASL, client id, ...),
	// applied last. They must not change how records are partitioned or
	// consumed (kgo.RecordPartitioner, consumer groups, explicit
	// partitions). Idempotent writes are disabled by default, as in Java
	// Connect's internal producers, so clusters whose ACLs lack
	// IDEMPOTENT_WRITE work; kgo options may turn them back on.
	ClientOpts []kgo.Opt
	// Logger receives warnings (unreadable records, retried fetches); nil
	// means slog.Default().
	Logger *slog.Logger
}

// Entry is one source partition of a connector with its offset.
type Entry struct {
	// Partition and Offset are decoded as Kafka's JsonConverter decodes
	// them: integers int64, other numbers float64.
	Partition, Offset map[string]any
	// Key is the exact key bytes of the record the offset came from.
	Key []byte
}

// Read reads the topic to its end and returns the connector's partitions
// that have an offset, ordered by storage.CanonicalKey, each with the exact
// key bytes last seen.
//
// Records are interpreted as Kafka's offset store does (§3.1, §4.2): keys
// that are not ["<connector>",{...}] are skipped, a tombstone removes its
// key. Keys are compared by exact bytes, so one logical partition written
// with two field orders has two keys; Read reports it once, with the
// latest of its keys that still has an offset (by record timestamp). An
// offset value that is not a JSON object is skipped with a warning (Java
// cannot use it either), though Reset still tombstones it.
func Read(ctx context.Context, cfg Config, connector string) ([]Entry, error) {
	t := newTracker(connector, logger(cfg))
	l, err := open(ctx, cfg, t.onRecord)
	if err != nil {
		return nil, err
	}
	l.Close()

	t.mu.Lock()
	defer t.mu.Unlock()
	out := []Entry{}
	for _, canon := range slices.Sorted(maps.Keys(t.byCanon)) {
		live := t.byCanon[canon].live()
		if len(live) == 0 {
			continue
		}
		cur := live[len(live)-1]
		v, err := javajson.Unmarshal(cur.value)
		offset, ok := v.(map[string]any)
		if err != nil || !ok {
			what := fmt.Sprint(err)
			if err == nil {
				what = "not a JSON object"
			}
			t.logger.Warn("skipping a source offset that is not a JSON object",
				"connector", connector, "key", string(cur.key), "error", what)
			continue
		}
		out = append(out, Entry{
			Partition: maps.Clone(cur.partition),
			Offset:    offset,
			Key:       bytes.Clone(cur.key),
		})
	}
	return out, nil
}

// Write writes one record per entry (a nil Offset is a tombstone) and
// waits until every record is acknowledged by all in-sync replicas.
//
// Entries are validated first, as Kafka does (errors are
// *storage.PrimitiveError values with Kafka's text), and nothing is
// written if one fails. The key is the exact key bytes already on the
// topic for that partition (looked up by canonical form, so field order
// does not matter); if the partition currently has offsets under several
// key spellings, each of them is written, so that whichever spelling a
// worker looks up it finds the new offset. A partition without a live
// offset reuses the bytes of its last tombstone if it has one, else gets
// storage.EncodeOffsetKey's Java-order bytes. The value is the offset as
// javajson writes it (Java HashMap field order). Records go to the
// partition Java's default partitioner picks for the key (murmur2).
func Write(ctx context.Context, cfg Config, connector string, entries []storage.PartitionOffset) error {
	type planned struct {
		canon string
		key   []byte // Java-order key, used if the partition was never seen
		value []byte
	}
	if !utf8.ValidString(connector) {
		return fmt.Errorf("connector name %q is not valid UTF-8", connector)
	}
	plan := make([]planned, 0, len(entries))
	for _, e := range entries {
		if err := storage.ValidatePrimitive("partition", e.Partition); err != nil {
			return err
		}
		var value []byte
		if e.Offset != nil {
			if err := storage.ValidatePrimitive("offset", e.Offset); err != nil {
				return err
			}
			v, err := javajson.Marshal(e.Offset)
			if err != nil {
				return err
			}
			value = v
		}
		key, err := storage.EncodeOffsetKey(connector, e.Partition)
		if err != nil {
			return err
		}
		// Canonicalize what a reader decodes, not the Go values given
		// (int vs int64, float32 vs float64).
		_, partition, err := storage.DecodeOffsetKey(key)
		if err != nil {
			return fmt.Errorf("internal error: re-reading offset key %s: %v", key, err)
		}
		plan = append(plan, planned{canon: storage.CanonicalKey(connector, partition), key: key, value: value})
	}
	if len(plan) == 0 {
		return nil
	}

	t := newTracker(connector, logger(cfg))
	l, err := open(ctx, cfg, t.onRecord)
	if err != nil {
		return err
	}
	defer l.Close()

	var kvs []storage.KeyValue
	t.mu.Lock()
	for _, p := range plan {
		var keys [][]byte
		if g := t.byCanon[p.canon]; g != nil {
			for _, s := range g.live() {
				keys = append(keys, s.key)
			}
			if len(keys) == 0 {
				keys = append(keys, g.latest().key)
			}
		} else {
			keys = append(keys, p.key)
		}
		for _, k := range keys {
			kvs = append(kvs, storage.KeyValue{Key: bytes.Clone(k), Value: p.value})
		}
	}
	t.mu.Unlock()

	if err := l.SendAll(ctx, kvs); err != nil {
		return fmt.Errorf("writing source offsets of connector %q: %w", connector, err)
	}
	return nil
}

// Reset writes a tombstone, with the exact key bytes, for every key of the
// connector whose latest record has a value (all key spellings of a
// partition, and values that are not valid offsets included), waits for
// the acknowledgements and returns the number of partitions reset
// (logical partitions: several spellings of one count once).
func Reset(ctx context.Context, cfg Config, connector string) (int, error) {
	t := newTracker(connector, logger(cfg))
	l, err := open(ctx, cfg, t.onRecord)
	if err != nil {
		return 0, err
	}
	defer l.Close()

	var kvs []storage.KeyValue
	n := 0
	t.mu.Lock()
	for _, canon := range slices.Sorted(maps.Keys(t.byCanon)) {
		live := t.byCanon[canon].live()
		if len(live) > 0 {
			n++
		}
		for _, s := range live {
			kvs = append(kvs, storage.KeyValue{Key: bytes.Clone(s.key)})
		}
	}
	t.mu.Unlock()
	if len(kvs) == 0 {
		return 0, nil
	}
	if err := l.SendAll(ctx, kvs); err != nil {
		return 0, fmt.Errorf("resetting source offsets of connector %q: %w", connector, err)
	}
	return n, nil
}

// Running reports whether the connector looks alive according to the
// status topic statusTopic (the workers' status.storage.topic): true if
// the latest status of the connector or of any of its tasks is RUNNING.
// The status topic is read as Java workers read it (storage.StatusTopic).
// It is only evidence: a worker that died without a rebalance leaves
// RUNNING behind, and a connector on a cluster that writes no statuses
// looks idle. An empty statusTopic gives false and no error; cfg.Topic is
// not used.
func Running(ctx context.Context, cfg Config, statusTopic, connector string) (bool, error) {
	if statusTopic == "" {
		return false, nil
	}
	if err := checkConfig(cfg.Seeds, statusTopic); err != nil {
		return false, err
	}
	st, err := storage.NewStatusTopic(storage.KafkaLogConfig{
		Topic:      statusTopic,
		Seeds:      cfg.Seeds,
		ClientOpts: clientOpts(cfg),
		Logger:     logger(cfg),
	})
	if err != nil {
		return false, err
	}
	defer st.Close()
	if err := checkTopic(ctx, st.Log().Client(), statusTopic); err != nil {
		return false, err
	}
	if err := st.Start(ctx); err != nil {
		return false, fmt.Errorf("reading status topic: %w", err)
	}
	if s, ok := st.Connector(connector); ok && s.State == storage.StateRunning {
		return true, nil
	}
	for _, s := range st.Tasks(connector) {
		if s.State == storage.StateRunning {
			return true, nil
		}
	}
	return false, nil
}

// ConnectorConfig is a connector's config as the workers' config topic
// holds it (nil when it holds none), for finding what a worker would: the
// connector's own offsets topic (offsets.storage.topic). cfg.Topic is not
// used.
func ConnectorConfig(ctx context.Context, cfg Config, configTopic, connector string) (map[string]string, error) {
	if err := checkConfig(cfg.Seeds, configTopic); err != nil {
		return nil, err
	}
	ct, err := storage.NewConfigTopic(storage.KafkaLogConfig{
		Topic:         configTopic,
		Seeds:         cfg.Seeds,
		ClientOpts:    clientOpts(cfg),
		Logger:        logger(cfg),
		ReadCommitted: true,
	}, nil)
	if err != nil {
		return nil, err
	}
	defer ct.Close()
	if err := checkTopic(ctx, ct.Log().Client(), configTopic); err != nil {
		return nil, err
	}
	if err := ct.Start(ctx); err != nil {
		return nil, fmt.Errorf("reading config topic: %w", err)
	}
	cs, ok := ct.Connector(connector)
	if !ok {
		return nil, nil
	}
	return cs.Config, nil
}

func logger(cfg Config) *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}

func clientOpts(cfg Config) []kgo.Opt {
	return append([]kgo.Opt{kgo.DisableIdempotentWrite()}, cfg.ClientOpts...)
}

func checkConfig(seeds []string, topic string) error {
	if len(seeds) == 0 {
		return errors.New("directoffsets: no bootstrap servers given")
	}
	if topic == "" {
		return errors.New("directoffsets: no topic given")
	}
	return nil
}

// open creates a log over cfg.Topic, checks the topic exists and reads it
// to the end. The caller must Close the log.
func open(ctx context.Context, cfg Config, onRecord func(*kgo.Record)) (*storage.KafkaLog, error) {
	if err := checkConfig(cfg.Seeds, cfg.Topic); err != nil {
		return nil, err
	}
	l, err := storage.NewKafkaLog(storage.KafkaLogConfig{
		Topic:      cfg.Topic,
		Seeds:      cfg.Seeds,
		ClientOpts: clientOpts(cfg),
		OnRecord:   onRecord,
		// Explicit, though it is the default: keyed records go where
		// Java's default partitioner puts them (storage.PartitionFor).
		ProducerPartitioner: kgo.StickyKeyPartitioner(nil),
		Logger:              logger(cfg),
		// As the workers read it: the offsets an exactly-once task's
		// aborted transaction wrote never count.
		ReadCommitted: true,
	})
	if err != nil {
		return nil, err
	}
	if err := checkTopic(ctx, l.Client(), cfg.Topic); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.Start(ctx); err != nil {
		l.Close()
		return nil, fmt.Errorf("reading offsets topic: %w", err)
	}
	return l, nil
}

// checkTopic fails fast on a missing topic, which KafkaLog.Start would
// otherwise wait for until ctx ends. The metadata request does not create
// the topic.
func checkTopic(ctx context.Context, cl *kgo.Client, topic string) error {
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("looking up topic %q: %w", topic, err)
	}
	d, ok := details[topic]
	switch {
	case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
		return fmt.Errorf("topic %q: %w", topic, ErrTopicNotFound)
	case d.Err != nil:
		return fmt.Errorf("looking up topic %q: %w", topic, d.Err)
	}
	return nil
}

// tracker follows one connector's keys on the offsets topic.
type tracker struct {
	connector string
	logger    *slog.Logger

	mu      sync.Mutex
	seq     int64
	byCanon map[string]*group
}

// group is one logical partition: all key spellings seen for it.
type group struct {
	spellings map[string]*spelling // by key bytes
}

// spelling is one exact key and its latest record.
type spelling struct {
	key       []byte
	partition map[string]any
	value     []byte // nil: the latest record was a tombstone
	ts        time.Time
	seq       int64
}

func newTracker(connector string, logger *slog.Logger) *tracker {
	return &tracker{connector: connector, logger: logger, byCanon: map[string]*group{}}
}

func (t *tracker) onRecord(r *kgo.Record) {
	connector, partition, err := storage.DecodeOffsetKey(r.Key)
	if err != nil || connector != t.connector {
		// Not this connector's, or a key Kafka Connect skips too.
		return
	}
	canon := storage.CanonicalKey(connector, partition)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	g := t.byCanon[canon]
	if g == nil {
		g = &group{spellings: map[string]*spelling{}}
		t.byCanon[canon] = g
	}
	g.spellings[string(r.Key)] = &spelling{
		key:       r.Key,
		partition: partition,
		value:     r.Value,
		ts:        r.Timestamp,
		seq:       t.seq,
	}
}

// ordered returns the spellings oldest first: by record timestamp (records
// of different spellings usually sit in different Kafka partitions, so
// arrival order alone means little), then by arrival.
func (g *group) ordered() []*spelling {
	out := slices.Collect(maps.Values(g.spellings))
	slices.SortFunc(out, func(a, b *spelling) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return int(a.seq - b.seq)
	})
	return out
}

// live returns the spellings whose latest record has a value, oldest first.
func (g *group) live() []*spelling {
	var out []*spelling
	for _, s := range g.ordered() {
		if s.value != nil {
			out = append(out, s)
		}
	}
	return out
}

// latest returns the most recently written spelling, live or not.
func (g *group) latest() *spelling {
	o := g.ordered()
	return o[len(o)-1]
}
