package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A stage is where in a task's work an error happened, as Kafka's
// errors.Stage names it: the name goes into the error log and the dead
// letter queue's __connect.errors.stage header.
type errorStage string

const (
	stageTransformation errorStage = "TRANSFORMATION"
	stageKeyConverter   errorStage = "KEY_CONVERTER"
	stageValueConverter errorStage = "VALUE_CONVERTER"
	stageHeaderConv     errorStage = "HEADER_CONVERTER"
	stageTaskPut        errorStage = "TASK_PUT"
	stageKafkaProduce   errorStage = "KAFKA_PRODUCE"
)

// A recordError is a record's failure in one stage, with the class that
// failed.
type recordError struct {
	stage errorStage
	class string
	err   error
}

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// errorHandler applies a connector's errors.* keys (Kafka's
// RetryWithToleranceOperator with its LogReporter, and for sinks its
// DeadLetterQueueReporter) to the failures of the stages Kafka tolerates:
// transforms and converters.
type errorHandler struct {
	task         string // <connector>-<id>
	tolerateAll  bool
	retryTimeout time.Duration // <0: without end
	maxDelay     time.Duration
	logErrors    bool
	logRecords   bool
	log          *slog.Logger
	dlq          *deadLetterQueue // a sink's, if it has one
	m            *TaskMetrics
}

// newErrorHandler reads the errors.* keys of a connector config, which
// validation has checked.
func newErrorHandler(log *slog.Logger, connector string, id int, config map[string]string, m *TaskMetrics) *errorHandler {
	millis := func(key string, def time.Duration) time.Duration {
		if v, err := connect.ParseValue(key, connect.ConfigLong, config[key]); err == nil {
			return time.Duration(v.(int64)) * time.Millisecond
		}
		return def // unset: validation refused anything else
	}
	h := &errorHandler{
		task:         fmt.Sprintf("%s-%d", connector, id),
		log:          log,
		tolerateAll:  strings.EqualFold(strings.TrimSpace(config["errors.tolerance"]), "all"),
		retryTimeout: millis("errors.retry.timeout", 0),
		maxDelay:     millis("errors.retry.delay.max.ms", time.Minute),
		m:            m,
	}
	h.logErrors = parseBool(config["errors.log.enable"])
	h.logRecords = parseBool(config["errors.log.include.messages"])
	return h
}

func parseBool(s string) bool {
	v, err := connect.ParseValue("", connect.ConfigBoolean, s)
	return err == nil && v.(bool)
}

// retry runs op again, after its first attempt failed with err, while it
// fails with a connect.RetriableError within errors.retry.timeout, with
// Kafka's backoff: 300 ms doubling to errors.retry.delay.max.ms, then a
// random delay below it. The first attempt is the caller's, so that the
// path without errors makes no closure.
func (h *errorHandler) retry(ctx context.Context, err error, op func() error) error {
	if err == nil || h.retryTimeout == 0 || !connect.IsRetriable(err) {
		return err
	}
	deadline := time.Now().Add(h.retryTimeout)
	for attempt := 1; ; attempt++ {
		if h.retryTimeout > 0 && !time.Now().Before(deadline) {
			return err
		}
		delay := retryDelayMin << min(attempt-1, 30)
		if delay > h.maxDelay || delay <= 0 {
			delay = time.Duration(rand.Int64N(int64(max(h.maxDelay, 1))))
		}
		if h.retryTimeout > 0 {
			delay = min(delay, time.Until(deadline))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		if err = op(); err == nil || !connect.IsRetriable(err) {
			return err
		}
	}
}

// retryDelayMin is Kafka's RETRIES_DELAY_MIN_MS.
const retryDelayMin = 300 * time.Millisecond

// tolerate reports a record's failure to the error log and, for a sink,
// to its dead letter queue (consumed is a sink's record as read from
// Kafka; a source passes nil and its record), and says whether the task
// goes on without the record (errors.tolerance=all). It is called from
// several goroutines at once.
func (h *errorHandler) tolerate(err error, consumed *kgo.Record, source *connect.SourceRecord) (bool, error) {
	stage, class := stageOf(err)
	h.m.RecordFailures.Add(1)
	h.m.RecordErrors.Add(1)
	if h.tolerateAll {
		h.m.RecordsSkipped.Add(1)
	}
	if h.logErrors {
		h.m.ErrorsLogged.Add(1)
		msg := fmt.Sprintf("Error encountered in task %s. Executing stage '%s' with class '%s'", h.task, stage, class)
		if h.logRecords {
			switch {
			case consumed != nil:
				msg += fmt.Sprintf(", where consumed record is {topic='%s', partition=%d, offset=%d, timestamp=%d, timestampType=%s}",
					consumed.Topic, consumed.Partition, consumed.Offset, consumed.Timestamp.UnixMilli(), timestampTypeOf(consumed))
			case source != nil:
				msg += fmt.Sprintf(", where source record is = SourceRecord{sourcePartition=%v, sourceOffset=%v} ConnectRecord{topic='%s', key=%v, value=%v}",
					source.SourcePartition, source.SourceOffset, source.Topic, source.Key, source.Value)
			}
		}
		h.log.Error(msg+".", "error", err)
	}
	// Reported whatever the tolerance, as Kafka does: with none, the
	// record that failed the task is in the queue all the same.
	if h.dlq != nil && consumed != nil {
		h.m.DLQRequests.Add(1)
		h.dlq.report(consumed, stage, class, err)
	}
	return h.tolerateAll, nil
}

// failure is the task's error for a failure it does not tolerate.
func (h *errorHandler) failure(err error) error {
	return fmt.Errorf("Tolerance exceeded in error handler: %w", err)
}

func stageOf(err error) (errorStage, string) {
	var re *recordError
	if errors.As(err, &re) {
		return re.stage, re.class
	}
	return stageTransformation, "null"
}

func timestampTypeOf(r *kgo.Record) connect.TimestampType {
	if r.Attrs.TimestampType() == 1 {
		return connect.LogAppendTime
	}
	return connect.CreateTime
}
