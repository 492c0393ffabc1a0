package storage

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// topicStore is what the stores over the internal topics share: their
// KafkaLog, and a logger naming the topic.
type topicStore struct {
	log    *KafkaLog
	logger *slog.Logger
}

// open creates the store's log with its callbacks, which are the store's
// own: cfg must leave them nil.
func (t *topicStore) open(cfg KafkaLogConfig, onRecord func(*kgo.Record), onCaughtUp func()) error {
	if cfg.OnRecord != nil || cfg.OnCaughtUp != nil {
		return errors.New("storage: a store sets its log's OnRecord and OnCaughtUp itself")
	}
	t.logger = cfg.Logger
	if t.logger == nil {
		t.logger = slog.Default()
	}
	t.logger = t.logger.With("topic", cfg.Topic)
	cfg.OnRecord, cfg.OnCaughtUp = onRecord, onCaughtUp
	l, err := NewKafkaLog(cfg)
	if err != nil {
		return err
	}
	t.log = l
	return nil
}

// Log returns the underlying KafkaLog.
func (t *topicStore) Log() *KafkaLog { return t.log }

// Start reads the whole topic.
func (t *topicStore) Start(ctx context.Context) error { return t.log.Start(ctx) }

// ReadToEnd reads the topic to its current end.
func (t *topicStore) ReadToEnd(ctx context.Context) error { return t.log.ReadToEnd(ctx) }

// Close stops the store.
func (t *topicStore) Close() { t.log.Close() }
