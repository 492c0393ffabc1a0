package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The context headers of a dead letter queue record (Kafka's
// DeadLetterQueueReporter.ERROR_HEADER_*).
const (
	dlqHeaderTopic          = "__connect.errors.topic"
	dlqHeaderPartition      = "__connect.errors.partition"
	dlqHeaderOffset         = "__connect.errors.offset"
	dlqHeaderConnector      = "__connect.errors.connector.name"
	dlqHeaderTaskID         = "__connect.errors.task.id"
	dlqHeaderStage          = "__connect.errors.stage"
	dlqHeaderClass          = "__connect.errors.class.name"
	dlqHeaderException      = "__connect.errors.exception.class.name"
	dlqHeaderExceptionMsg   = "__connect.errors.exception.message"
	dlqHeaderExceptionTrace = "__connect.errors.exception.stacktrace"
)

// The Java classes the dead letter queue names for Go errors, as Kafka
// Connect's would throw them.
const (
	javaDataException      = "org.apache.kafka.connect.errors.DataException"
	javaConnectException   = "org.apache.kafka.connect.errors.ConnectException"
	javaRetriableException = "org.apache.kafka.connect.errors.RetriableException"
	// The executing class of an errant record report: Kafka names the
	// interface, SinkTask.class, whatever the task's own class.
	javaSinkTask = "org.apache.kafka.connect.sink.SinkTask"
)

// deadLetterQueue is a sink task's DeadLetterQueueReporter: the records
// its converters, transforms or ErrantRecordReporter failed, written as
// they were consumed to errors.deadletterqueue.topic.name.
type deadLetterQueue struct {
	topic       string
	replication int16
	headers     bool
	connector   string
	task        int
	client      *kgo.Client
	log         *slog.Logger

	mu  sync.Mutex
	err error // the first write Kafka refused
}

// newDeadLetterQueue makes the producer of a sink task's dead letter
// queue, nil when the connector has none. The producer has Kafka's
// baseProducerConfigs: the worker's producer.* keys and the connector's
// producer.override.*. Its topic is made by open.
func (w *Worker) newDeadLetterQueue(connector string, id int, connConfig map[string]string, log *slog.Logger) (*deadLetterQueue, error) {
	topic := strings.TrimSpace(connConfig["errors.deadletterqueue.topic.name"])
	if topic == "" {
		return nil, nil
	}
	q := &deadLetterQueue{topic: topic, replication: 3, connector: connector, task: id, log: log}
	if v := connConfig["errors.deadletterqueue.topic.replication.factor"]; v != "" {
		rf, err := connect.ParseValue("errors.deadletterqueue.topic.replication.factor", connect.ConfigShort, v)
		if err != nil {
			return nil, err
		}
		q.replication = rf.(int16)
	}
	q.headers = parseBool(connConfig["errors.deadletterqueue.context.headers.enable"])
	props := w.clientProps(map[string]string{
		"client.id":        fmt.Sprintf("connector-dlq-producer-%s-%d", connector, id),
		"compression.type": "none",
		"acks":             "all",
	}, "producer.", "producer.override.", connConfig)
	cl, err := w.newClient(props,
		// Kafka's DLQ producer: not idempotent, retried without end.
		kgo.DisableIdempotentWrite(),
		kgo.RecordDeliveryTimeout(0),
	)
	if err != nil {
		return nil, err
	}
	q.client = cl
	return q, nil
}

// open creates the topic, with one partition and the configured
// replication factor, unless it exists, as Kafka's createAndSetup does
// when the task starts. Any other failure fails the task.
func (q *deadLetterQueue) open(ctx context.Context, w *Worker, connConfig map[string]string) error {
	adm, closeAdm, err := w.admin("connector-dlq-adminclient-", connConfig)
	if err != nil {
		return fmt.Errorf("Could not initialize dead letter queue with topic=%s: %w", q.topic, err)
	}
	defer closeAdm()
	topics, err := adm.ListTopics(ctx, q.topic)
	if err == nil && topics.Has(q.topic) {
		return nil
	}
	if err == nil {
		q.log.Error(fmt.Sprintf("Topic %s doesn't exist. Will attempt to create topic.", q.topic))
		r, cerr := adm.CreateTopic(ctx, 1, q.replication, nil, q.topic)
		if err = cerr; err == nil {
			err = r.Err
		}
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("Could not initialize dead letter queue with topic=%s: %w", q.topic, err)
	}
	return nil
}

// report writes the consumed record to the queue. The write is
// asynchronous: flush waits for it.
func (q *deadLetterQueue) report(consumed *kgo.Record, stage errorStage, class string, err error) {
	rec := q.record(consumed, stage, class, err)
	q.client.Produce(context.Background(), rec, func(_ *kgo.Record, perr error) {
		if perr == nil {
			return
		}
		q.log.Error("Could not produce message to dead letter queue. topic="+q.topic, "error", perr)
		q.mu.Lock()
		if q.err == nil {
			q.err = fmt.Errorf("Could not produce message to dead letter queue. topic=%s: %w", q.topic, perr)
		}
		q.mu.Unlock()
	})
}

// record is the queue's record of a failed consumed record: its key,
// value, headers and timestamp as read, and with context headers enabled
// Kafka's __connect.errors.* headers after its own.
func (q *deadLetterQueue) record(consumed *kgo.Record, stage errorStage, class string, err error) *kgo.Record {
	rec := &kgo.Record{Topic: q.topic, Key: consumed.Key, Value: consumed.Value}
	// A record read without a timestamp (-1) is written with none, which
	// the producer makes the time of the send, as Kafka's does.
	if consumed.Timestamp.UnixMilli() != -1 && !consumed.Timestamp.IsZero() {
		rec.Timestamp = consumed.Timestamp
	}
	n := len(consumed.Headers)
	if q.headers {
		n += 10
	}
	rec.Headers = make([]kgo.RecordHeader, len(consumed.Headers), n)
	copy(rec.Headers, consumed.Headers)
	if !q.headers {
		return rec
	}
	add := func(k, v string) { rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
	add(dlqHeaderTopic, consumed.Topic)
	add(dlqHeaderPartition, strconv.Itoa(int(consumed.Partition)))
	add(dlqHeaderOffset, strconv.FormatInt(consumed.Offset, 10))
	add(dlqHeaderConnector, q.connector)
	add(dlqHeaderTaskID, strconv.Itoa(q.task))
	add(dlqHeaderStage, string(stage))
	add(dlqHeaderClass, class)
	if err != nil {
		exClass, ex := javaException(stage, err)
		add(dlqHeaderException, exClass)
		add(dlqHeaderExceptionMsg, ex.Error())
		add(dlqHeaderExceptionTrace, stackTrace(exClass, ex))
	}
	return rec
}

// javaException names the Java exception Kafka Connect would have met
// for err, and the error that stands for it. A converter's error loses
// the location the worker put before it: Kafka's message is the
// converter's own.
func javaException(stage errorStage, err error) (class string, ex error) {
	if re, ok := errors.AsType[*recordError](err); ok {
		err = re.err
		if stage == stageKeyConverter || stage == stageValueConverter || stage == stageHeaderConv {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
		}
	}
	switch {
	case connect.IsRetriable(err):
		class = javaRetriableException
	case stage == stageTaskPut || stage == stageKafkaProduce:
		class = javaConnectException
	default:
		class = javaDataException
	}
	return class, err
}

// stackTrace is what Java's printStackTrace shows of err, without the
// frames a Go error does not carry: the exception, then a "Caused by:"
// line for each error it wraps, named by its Go type.
func stackTrace(class string, err error) string {
	var b strings.Builder
	b.WriteString(class + ": " + err.Error() + "\n")
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		fmt.Fprintf(&b, "Caused by: %T: %s\n", cause, cause.Error())
	}
	return b.String()
}

// flush waits until Kafka acknowledged every record reported so far, and
// returns the first write it refused. ctx ending first is its error.
func (q *deadLetterQueue) flush(ctx context.Context) error {
	if err := q.client.Flush(ctx); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// close sends what is buffered, for at most timeout, and closes the
// producer.
func (q *deadLetterQueue) close(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := q.flush(ctx)
	q.client.Close()
	return err
}

// errantReporter is a sink task's connect.ErrantRecordReporter (Kafka's
// WorkerErrantRecordReporter, KIP-610).
type errantReporter struct{ s *sinkTask }

// Report sends the record as it was consumed to the error log and the
// dead letter queue, with stage TASK_PUT. A record the task made itself,
// which the worker did not hand it, is written as the connector's
// converters make it, as Kafka does.
func (r *errantReporter) Report(rec connect.SinkRecord, err error) error {
	s := r.s
	if err == nil {
		return errors.New("an errant record is reported with the error it failed with; the error is nil")
	}
	s.cmu.Lock()
	consumed := s.consumed[recordPlace{rec.Topic, rec.Partition, rec.Offset}]
	s.cmu.Unlock()
	if consumed == nil {
		var cerr error
		if consumed, cerr = s.fromSink(rec); cerr != nil {
			return fmt.Errorf("reporting an errant record of %s[%d]@%d: %w", rec.Topic, rec.Partition, rec.Offset, cerr)
		}
	}
	failed := &recordError{stage: stageTaskPut, class: javaSinkTask, err: err}
	if ok, _ := s.errs.tolerate(failed, consumed, nil); ok {
		return nil
	}
	s.cmu.Lock()
	if s.putErr == nil {
		s.putErr = s.errs.failure(err)
	}
	s.cmu.Unlock()
	return s.errs.failure(err)
}

// fromSink makes Kafka's record of a sink record with the converters.
// Headers are written as connectd's are: bytes as they are, a string as
// its UTF-8 bytes.
func (s *sinkTask) fromSink(rec connect.SinkRecord) (*kgo.Record, error) {
	key, err := s.keyConv.FromConnectData(rec.Topic, rec.KeySchema, rec.Key)
	if err != nil {
		return nil, err
	}
	value, err := s.valueConv.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
	if err != nil {
		return nil, err
	}
	out := &kgo.Record{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Key: key, Value: value, Timestamp: rec.Timestamp}
	for _, h := range rec.Headers {
		var b []byte
		switch v := h.Value.(type) {
		case nil:
		case []byte:
			b = v
		case string:
			b = []byte(v)
		default:
			return nil, fmt.Errorf("header %s holds a %T: connectd runs no header converter, and writes only bytes and strings as headers", h.Key, h.Value)
		}
		out.Headers = append(out.Headers, kgo.RecordHeader{Key: h.Key, Value: b})
	}
	return out, nil
}

// takePutError returns, once, the failure a report with
// errors.tolerance=none left for the task.
func (s *sinkTask) takePutError() error {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	err := s.putErr
	s.putErr = nil
	return err
}

// forgetConsumed drops the consumed records of what the task was handed
// before this commit: a report of them now could not be found anyway
// once their offsets are committed. Records converted but not yet put
// stay. The caller holds s.mu.
func (s *sinkTask) forgetConsumed() {
	s.forgetConsumedWhere(func(r *kgo.Record) bool {
		next, ok := s.current[connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}]
		return ok && r.Offset < next
	})
}

// forgetConsumedWhere drops the consumed records drop says to.
func (s *sinkTask) forgetConsumedWhere(drop func(*kgo.Record) bool) {
	if s.consumed == nil {
		return
	}
	s.cmu.Lock()
	defer s.cmu.Unlock()
	for place, r := range s.consumed {
		if drop(r) {
			delete(s.consumed, place)
		}
	}
}
