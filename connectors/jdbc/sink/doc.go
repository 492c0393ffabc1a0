// Package sink is Confluent's JDBC sink connector (Connector, with its
// class name and configs): the records of Kafka topics written into
// database tables, with INSERT, upsert, update or delete statements, or,
// on PostgreSQL, COPY (copy.go). It reaches the database through
// connectors/jdbc/internal/jdbcdb, as the source does; connectors/jdbc
// lists both connectors.
package sink
