package connect

import (
	"context"
	"errors"
	"log/slog"
)

// Connector is the part of a plugin that owns a connector's configuration
// and splits the work into task configs. The runtime calls, on one
// goroutine:
//
//	Config (any time, also on an instance that is never started)
//	Start(ctx, config)
//	TaskConfigs(maxTasks)   (after Start, again after RequestTaskReconfiguration)
//	Stop()
//
// Start gets the connector's whole config as the user wrote it. A Start
// error fails the connector (state FAILED with the error as its trace).
type Connector interface {
	// Version is the plugin's version, shown by the connector-plugins API.
	Version() string
	// Config declares the connector's own config keys; the runtime adds
	// the framework's keys (name, tasks.max, converters, ...).
	Config() *ConfigDef
	Start(ctx ConnectorContext, config map[string]string) error
	// TaskConfigs returns at most maxTasks configs, one per task.
	TaskConfigs(maxTasks int) ([]map[string]string, error)
	Stop() error
	// TaskClass is the task's class name, written to each task config as
	// task.class (as Java workers do).
	TaskClass() string
}

// ConnectorContext lets a running connector talk back to the runtime.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the runtime to call TaskConfigs
	// again, for example after the connector found new tables.
	RequestTaskReconfiguration()
	// RaiseError fails the connector from a background goroutine.
	RaiseError(err error)
	// Logger is where the connector logs: each line names it (Kafka's
	// [name] log context) and hides its secrets, and /admin/loggers sets
	// its level by the connector's class.
	Logger() *slog.Logger
}

// SourceConnector is a connector whose tasks read from an outside system
// into Kafka.
type SourceConnector interface {
	Connector
	NewTask() SourceTask
}

// SinkConnector is a connector whose tasks write Kafka records to an
// outside system.
type SinkConnector interface {
	Connector
	NewTask() SinkTask
}

// SourceTask reads from an outside system. The runtime calls Start, then
// Poll in a loop until it stops the task, then Stop. Poll should block for
// at most about a second when no data is ready and return (nil, nil); it
// must return promptly when ctx is done. Poll and Stop are called from the
// same goroutine; a task that blocks in Poll should watch ctx.
//
// Offsets: each record's SourceOffset becomes the stored position for its
// SourcePartition only after Kafka acknowledged the record (and every
// record polled before it), and is flushed to the offset store every
// offset.flush.interval.ms and on a clean stop. After a crash a task
// therefore resumes from the last flushed offset and may emit records
// again; it never skips one.
type SourceTask interface {
	Version() string
	Start(ctx SourceTaskContext, config map[string]string) error
	Poll(ctx context.Context) ([]*SourceRecord, error)
	Stop() error
}

// SourceTaskContext gives a source task access to its stored offsets.
type SourceTaskContext interface {
	// Offset returns the last committed offset of a source partition, or
	// nil when there is none.
	Offset(partition map[string]any) (map[string]any, error)
	// Logger is where the task logs: each line names its connector and
	// task (Kafka's [name|task-0]) and hides its secrets.
	Logger() *slog.Logger
	// TransactionContext is how the task sets its own transaction
	// boundaries when its connector runs exactly once with
	// transaction.boundary=connector; nil otherwise.
	TransactionContext() TransactionContext
}

// ExactlyOnceSupport is a source connector's answer to whether it can
// give exactly-once semantics with a config (Java's ExactlyOnceSupport).
type ExactlyOnceSupport int

const (
	// ExactlyOnceUnsupported: the connector cannot, with this config.
	ExactlyOnceUnsupported ExactlyOnceSupport = iota
	// ExactlyOnceSupported: the connector can (its tasks resume exactly
	// at the offsets the runtime gives them back).
	ExactlyOnceSupported
)

// ExactlyOnceSource is implemented by source connectors that declare
// whether they support exactly-once delivery (KIP-618). With
// exactly.once.support=required, a connector that does not implement it
// is refused, as Java refuses one whose exactlyOnceSupport returns null.
// CanDefineTransactionBoundaries says whether its tasks set their own
// transaction boundaries through TransactionContext, which
// transaction.boundary=connector needs.
type ExactlyOnceSource interface {
	ExactlyOnceSupport(config map[string]string) ExactlyOnceSupport
	CanDefineTransactionBoundaries(config map[string]string) bool
}

// TransactionContext lets a source task end its transactions itself
// (transaction.boundary=connector, Java's TransactionContext). A request
// about a record takes effect once that record is sent; the others once
// the batch Poll returned is. An abort drops the transaction's records,
// and commits their offsets, so that they are not read again.
type TransactionContext interface {
	CommitTransaction()
	CommitTransactionAfter(rec *SourceRecord)
	AbortTransaction()
	AbortTransactionAfter(rec *SourceRecord)
}

// RecordCommitter is implemented by source tasks that want to know when
// Kafka acknowledged each record (Java's SourceTask.commitRecord). A
// record a transformation dropped, or errors.tolerance=all skipped, was
// not sent: CommitRecord is called for it at once, with a RecordMetadata
// whose Offset is -1.
type RecordCommitter interface {
	CommitRecord(rec *SourceRecord, meta RecordMetadata) error
}

// RecordReleaser is implemented by source tasks that reuse the memory of
// the records they return (the records, their structs, ...) instead of
// allocating it again for every batch: at tens of thousands of records a
// second, that memory is most of what the collector handles.
//
// A record, and what it points to (its struct, the struct's values),
// belongs to the runtime from the Poll that returned it until the runtime
// hands it back. The runtime calls ReleaseRecords once for each batch
// Poll returned, with that very slice, when it reads none of the records
// it hands back any more: once it converted them and took their offsets
// (run exactly once, as their batch goes into its transaction), or for a
// RecordCommitter once CommitRecord ran for each of them. It hands back
// only records nothing else holds; the entry of one it does not is nil,
// and the task must not reuse that record's memory, nor that of anything
// it points to, as it may still be read. A transformation may keep what
// it is given, so a connector with transforms gets every entry nil;
// without them every entry is the record polled. The task may
// overwrite what it got back, except the source partition and offset
// maps: the runtime keeps them until it commits the offsets, and the task
// must not change them. ReleaseRecords runs on another goroutine than
// Poll, possibly while Poll runs. A batch the runtime could not send (the
// task failing or stopping) is not released; the collector frees it.
type RecordReleaser interface {
	ReleaseRecords(records []*SourceRecord)
}

// Committer is implemented by source tasks that want to know when the
// runtime committed their offsets (Java's SourceTask.commit), for example
// to acknowledge upstream only after the position is durable.
type Committer interface {
	Commit() error
}

// SinkTask writes records to an outside system. The runtime calls Start,
// then Open for each assignment, Put with batches of records, and
// periodically Flush (or PreCommit) before it commits the consumer offsets;
// Close when partitions are revoked, and Stop at the end.
//
// Offsets committed to the consumer group are those Flush made durable:
// after a crash the task gets again every record after the last commit.
type SinkTask interface {
	Version() string
	Start(ctx SinkTaskContext, config map[string]string) error
	Open(partitions []TopicPartition) error
	Put(records []SinkRecord) error
	// Flush makes everything Put so far durable. offsets holds, per
	// partition, the offset of the next record to consume.
	Flush(offsets map[TopicPartition]int64) error
	Close(partitions []TopicPartition) error
	Stop() error
}

// PreCommitter is implemented by sink tasks that decide themselves which
// offsets are safe to commit (Java's SinkTask.preCommit). Without it the
// runtime calls Flush and commits the offsets it passed.
type PreCommitter interface {
	PreCommit(offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
}

// SinkTaskContext lets a sink task steer its consumer.
type SinkTaskContext interface {
	// Assignment returns the partitions the task currently owns.
	Assignment() []TopicPartition
	// SetOffset asks the runtime to consume a partition from offset next,
	// for tasks that keep their position in the outside system.
	SetOffset(tp TopicPartition, offset int64)
	// RequestCommit asks for an offset commit soon.
	RequestCommit()
	// ErrantRecordReporter returns the connector's reporter of records
	// the task cannot write, or nil when it has no dead letter queue and
	// no error log (see ErrantRecordReporter).
	ErrantRecordReporter() ErrantRecordReporter
	// Logger is where the task logs, as SourceTaskContext's.
	Logger() *slog.Logger
}

// SourceOffset is one source partition and its offset in an alter request.
// A nil Offset asks to remove the partition's offset.
type SourceOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// SourceOffsetAlterer is implemented by source connectors that check or
// apply offset changes made through the REST API (KIP-875). It is called
// on an instance that was not started, possibly more than once. Returning
// true says the connector handled the offsets completely; false says only
// the runtime's offsets were changed. Return ErrOffsetsUnsupported to
// refuse any change, or an error whose text explains a bad offset.
type SourceOffsetAlterer interface {
	AlterOffsets(config map[string]string, offsets []SourceOffset) (bool, error)
}

// SinkOffsetAlterer is SourceOffsetAlterer for sink connectors. A nil
// offset asks to reset that partition.
type SinkOffsetAlterer interface {
	AlterOffsets(config map[string]string, offsets map[TopicPartition]*int64) (bool, error)
}

// ErrOffsetsUnsupported is returned by an offsets hook to refuse any
// external change of the connector's offsets.
var ErrOffsetsUnsupported = errors.New("connector does not support external modification of offsets")

// Validator is implemented by connectors with checks that span several
// keys; its errors are reported by the validate endpoint beside the
// per-key ones. It returns a map from config key to its error messages.
type Validator interface {
	Validate(config map[string]string) map[string][]string
}
