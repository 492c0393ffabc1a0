package connect

import (
	"errors"
	"time"
)

// Record is a source or a sink record as a transformation or a predicate
// sees it: Kafka Connect's ConnectRecord. The worker makes one of each
// SourceRecord after Poll, before the converters, and of each SinkRecord
// after the converters, before Put.
type Record struct {
	Topic string
	// Partition is the Kafka partition; nil for a source record lets the
	// producer's partitioner choose. A sink record's is always set.
	Partition   *int32
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any
	// Timestamp is the record's timestamp; the zero time is none.
	Timestamp time.Time
	Headers   []Header
	// Sink says the record was consumed from Kafka (Java's SinkRecord);
	// Offset and TimestampType are then where and how it was read.
	Sink          bool
	Offset        int64
	TimestampType TimestampType
}

// Transformation is a single message transform (Kafka's Transformation):
// a function from a record to a record, configured once, applied to
// every record of a connector in the order of its transforms key.
//
// When a connector is created or validated, the worker checks the alias's
// keys (transforms.<alias>.* without that prefix, nor type, predicate and
// negate) against Config and calls Configure with them on a fresh
// instance, so that what Configure refuses refuses the connector. Each
// task then makes its own instance, calls Configure, and Apply for each
// record, from several goroutines at once: Apply must be safe for
// concurrent use.
// A transformation that also implements io.Closer is closed when its
// task stops.
//
// Apply may change the record it is given and return it, or return
// another; nil drops the record (a source record's offset is committed
// all the same). The Record itself is the worker's, which fills it again
// for the next record once the chain is done with it: a transformation
// may keep what a record points to, not the *Record. It must not change the structs, maps, slices or headers
// the record holds, which the connector or another record may share:
// build new ones, as Kafka's transformations do. An error fails the
// record as Kafka's DataException does: errors.tolerance says whether
// the task fails or the record is skipped (for a sink, sent to the dead
// letter queue).
type Transformation interface {
	Config() *ConfigDef
	Configure(config map[string]string) error
	Apply(r *Record) (*Record, error)
}

// Predicate decides whether a transformation applies to a record (Kafka's
// Predicate): a transform with transforms.<alias>.predicate applies only
// to records its predicate matches, or with negate=true only to those it
// does not. Configure and concurrency are as for a Transformation.
type Predicate interface {
	Config() *ConfigDef
	Configure(config map[string]string) error
	Test(r *Record) bool
}

// HeaderConverter turns a header's Connect value into the bytes of a
// Kafka record header, and back (Kafka's HeaderConverter). Configure is
// called once before any other method, with the header.converter.* keys
// without that prefix; after that its methods must be safe for concurrent
// use.
type HeaderConverter interface {
	Configure(config map[string]string) error
	FromConnectHeader(topic, key string, schema *Schema, value any) ([]byte, error)
	ToConnectHeader(topic, key string, data []byte) (*Schema, any, error)
}

// ErrantRecordReporter sends the records a sink task cannot write to the
// connector's dead letter queue and error log (Kafka's KIP-610), so that
// one bad record does not stop the others. A sink task gets it from its
// context when the connector has errors.deadletterqueue.topic.name or
// errors.log.enable=true set.
//
// Report returns once the record is handed to the reporters; the worker
// commits the record's offset only after its dead letter queue write was
// acknowledged. With errors.tolerance=none, Report returns the error the
// task is to fail with ("Tolerance exceeded in error handler"), after
// reporting the record all the same.
type ErrantRecordReporter interface {
	Report(rec SinkRecord, err error) error
}

// RetriableError marks an error as transient (Kafka's
// RetriableException): the worker calls the failed operation again, with
// a backoff, within the connector's errors.retry.timeout, where Kafka
// Connect retries that operation: a transformation or a converter.
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string { return e.Err.Error() }
func (e *RetriableError) Unwrap() error { return e.Err }

// IsRetriable reports whether err is, or wraps, a RetriableError.
func IsRetriable(err error) bool {
	var r *RetriableError
	return errors.As(err, &r)
}
