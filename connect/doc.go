// Package connect is the SDK for connector authors: the connector and task
// contracts of Kafka Connect, its data model (schemas, structs and the
// logical types) and declarative config definitions.
//
// A connector is registered once with Register and then configured,
// started and stopped by the connectd runtime, which calls the methods in
// the order their documentation states, from one goroutine per instance.
package connect
