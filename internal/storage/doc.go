// Package storage holds connectd's durable local state and the offsets-key
// codec shared with Apache Kafka Connect.
//
// Source offsets are keyed by the JSON text of [connector, partition]. Java
// workers look offsets up, compact them and pick Kafka partitions by the
// exact key bytes, so this package writes keys byte-for-byte as Jackson
// would (see offsetkey.go) and keeps the original bytes of any key it reads.
// Lookups inside connectd go through a canonical form instead, so that a
// key whose fields arrived in a different order never loses its offset.
//
// The standalone stores (FileOffsetStore, ConfigFileStore) use a readable
// JSON format of our own rather than Java object serialization. They are
// written atomically and a file that exists but cannot be understood is
// always an error, never an empty store: silently resetting offsets would
// make source connectors re-read or skip data.
package storage
