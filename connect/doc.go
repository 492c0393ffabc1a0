// Package connect is the SDK for connector authors: the connector and task
// contracts of Kafka Connect, its data model (schemas, structs and the
// logical types) and declarative config definitions.
//
// A connector package exports its Plugin values (a class name and a New
// function); a worker runs those it is given (see the module's root
// package connectd), and configures, starts and stops each instance,
// calling the methods in the order their documentation states, from one
// goroutine per instance.
package connect
