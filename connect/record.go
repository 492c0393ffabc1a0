package connect

import "time"

// Header is one record header with its schema.
type Header struct {
	Key    string
	Schema *Schema
	Value  any
}

// SourceRecord is a record produced by a source task. Its SourcePartition
// and SourceOffset are what the runtime stores as the task's position once
// Kafka has acknowledged the record. Both maps may only hold primitive
// values (nil, bool, string, integers, floats): they are stored as JSON,
// read back with integers as int64 and other numbers as float64, as Java
// workers do. The runtime keeps references to both maps until the offset
// is committed, so a task must not modify a map after returning it; it may
// return the same partition map with every record, which is cheaper.
//
// A record may carry a SourcePartition and a nil SourceOffset: it then
// only holds back the commit of its partition until Kafka acknowledged it.
// A task that reads in batches can so give its offset to the last record
// of each batch only, and save a map per record; after a crash it resumes
// from the last batch committed.
type SourceRecord struct {
	SourcePartition map[string]any
	SourceOffset    map[string]any
	Topic           string
	// Partition is the Kafka partition; nil lets the producer's
	// partitioner choose from the key, as a null partition does in Java.
	Partition   *int32
	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any
	// Timestamp is the record's timestamp; the zero time lets the
	// producer stamp it.
	Timestamp time.Time
	Headers   []Header
}

// TimestampType says what a consumed record's timestamp means.
type TimestampType string

// Kafka's timestamp types, as Java's TimestampType names.
const (
	NoTimestampType TimestampType = "NoTimestampType"
	CreateTime      TimestampType = "CreateTime"
	LogAppendTime   TimestampType = "LogAppendTime"
)

// SinkRecord is a record consumed from Kafka and handed to a sink task.
type SinkRecord struct {
	Topic         string
	Partition     int32
	Offset        int64
	KeySchema     *Schema
	Key           any
	ValueSchema   *Schema
	Value         any
	Timestamp     time.Time
	TimestampType TimestampType
	Headers       []Header
}

// TopicPartition names one partition of a Kafka topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// RecordMetadata describes where Kafka stored an acknowledged source record.
type RecordMetadata struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
}
