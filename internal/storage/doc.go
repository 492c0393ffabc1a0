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
//
// Distributed mode keeps its state in the three compacted internal topics
// Apache Kafka Connect uses, in Kafka's exact record formats, so Java and Go
// workers can share them (spec §4): KafkaOffsetStore (offsets),
// ConfigTopic (connector and task configs, target states, session key,
// restart requests, logger levels) and StatusTopic (statuses). Each reads
// its topic from the beginning through a KafkaLog (Kafka's KafkaBasedLog)
// and writes through it with Kafka's murmur2 partitioning; EnsureTopic
// creates or checks the topics at startup. The Encode*/Decode* functions
// are the pure codecs; testdata/topics holds a Java worker's records byte
// for byte, and the tests hold both directions to them.
package storage
