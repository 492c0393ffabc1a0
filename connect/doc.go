// Package connect is the SDK for connector authors: the connector and task
// contracts of Kafka Connect, its data model (schemas, structs and the
// logical types) and declarative config definitions.
//
// A connector package exports its Plugin values (a class name and a New
// function); a worker runs those it is given (see the module's root
// package connectd), and configures, starts and stops each instance,
// calling the methods in the order their documentation states, from one
// goroutine per instance.
//
// A source connector is a SourceConnector: Config declares its keys,
// Start receives its config, TaskConfigs splits the work into at most
// tasks.max task configs, and NewTask makes the SourceTask each one
// runs. The task's Start reads its stored position from its
// SourceTaskContext; each Poll returns SourceRecords, each with the
// SourcePartition it reads and the SourceOffset to resume from, which the
// worker stores once Kafka acknowledged the record. A source that resumes
// exactly at the offsets it is given back can declare so
// (ExactlyOnceSource): a cluster with exactly-once source support then
// writes its records and their offsets in one Kafka transaction, and a
// connector may end those transactions itself (TransactionContext).
//
// A sink connector is a SinkConnector whose SinkTask is given the records
// of its topics by Put, and makes them durable in Flush: the worker then
// commits the offsets Flush was passed to the consumer group.
//
// A single message transform is a Transformation: the worker configures
// it with the keys of its alias (transforms.<alias>.*) and applies it to
// each record between the connector and the converters, where a
// Predicate, if one guards it, says so. A record is a Record to both.
//
// The examples drive a tiny source, a tiny sink and a transformation as a
// worker would;
// examples/custom-connector runs a source in a worker beside the built-in
// plugins.
package connect
