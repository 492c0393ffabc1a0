// Package converters holds the Go versions of Kafka Connect's built-in
// converters, registered under their Java class names so that worker and
// connector configs written for Apache Kafka Connect keep working:
//
//   - org.apache.kafka.connect.json.JsonConverter (JSONConverter)
//   - org.apache.kafka.connect.storage.StringConverter (StringConverter)
//   - org.apache.kafka.connect.converters.ByteArrayConverter (ByteArrayConverter)
//
// The JSON converter is byte-compatible with the Java one: records written
// by a Go worker read the same in a Java worker and the other way round,
// and re-serializing what was read gives back the same bytes (JSONConverter
// lists the few exceptions). To get there
// it parses JSON itself rather than with encoding/json, because Jackson,
// as Kafka configures it, keeps object fields in document order, keeps a
// number's exact decimal text (for Decimal fields), accepts leading zeros
// and refuses invalid UTF-8, and encoding/json does none of these.
//
// New builds a configured converter from a class name or alias, which is
// what the worker does for key.converter and value.converter.
package converters
