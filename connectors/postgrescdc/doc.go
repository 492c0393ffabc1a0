// Package postgrescdc is a PostgreSQL change-data-capture source connector
// that behaves as Debezium's io.debezium.connector.postgresql.PostgresConnector
// (2.7): the same config keys, the same change events (topics, keys, the
// before/after/source/op envelope, tombstones, heartbeats) and the same
// source partition and offsets, so that a connector can move between a
// Java Kafka Connect worker running Debezium and connectd, in either
// direction, without a new snapshot.
//
// It reads the changes with logical replication and the pgoutput plugin
// through a replication slot (slot.name) and a publication
// (publication.name). An initial snapshot, taken with the snapshot the slot
// exports (or, for an existing slot, a temporary slot's), is consistent with
// the point streaming continues from.
//
// # Filters, keys and skipped operations
//
// As in Debezium, schema.include/exclude.list and table.include/exclude.list
// choose the tables, and column.include/exclude.list the columns of their
// values: each a list of Java regular expressions matched, without case,
// against the whole of "schema", "schema.table" or "schema.table.column".
// A column left out of the values is still in the key when the key holds
// it. message.key.columns ("schema.table:col1,col2;...", the table part a
// regular expression too) gives the key's columns, in that order, for the
// tables it matches; other tables keep their primary key. skipped.operations
// (default "t") names the streamed operations not emitted: c, u, d and t
// (a truncate event: no key, neither before nor after); the snapshot's
// reads are never skipped. Every other key Debezium's connector defines is
// refused, naming it, unless it is at Debezium's default (unsupported.go).
//
// # Offsets and the slot
//
// The partition is {"server": <topic.prefix>}. The offsets are Debezium's:
// during a snapshot {"lsn", "txId", "ts_usec", "snapshot": true,
// "last_snapshot_record"}, while streaming {"lsn", "lsn_proc", "lsn_commit",
// "txId", "ts_usec", "messageType"}. Streaming resumes at lsn_proc (else
// lsn); transactions whose commit lies before lsn_commit are skipped, and so
// are the changes of the transaction the offset points into that were
// already handled, as Debezium's WalPositionLocator does.
//
// The slot's confirmed_flush_lsn is advanced only from Commit, which the
// runtime calls once the offsets are durable, and only up to the committed
// offset's lsn_commit (else lsn_proc): the slot never releases WAL the
// stored offset may still need. A task that resumes from an offset the slot
// can no longer serve (the slot was dropped, or confirmed_flush_lsn is past
// the offset) fails and says how to recover, unless snapshot.mode is
// when_needed, which takes a new snapshot.
//
// The records a task returns from Poll carry an offset only where it is a
// safe resume point: a record whose change shares its LSN with the next
// change (a multi-row insert by COPY) carries none, and the last record of
// a transaction carries the transaction's COMMIT position.
//
// # Registration
//
// The plugin is registered as io.debezium.connector.postgresql.PostgresConnector,
// so configs written for Debezium name it as they always did; the aliases
// are PostgresConnector, Postgres and connectd's own PostgresCdc.
package postgrescdc
