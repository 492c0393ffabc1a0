// Package source is Confluent's JDBC source connector (Connector, with
// its class name, configs and source offsets): tables, or one query, read
// in bulk, incrementing, timestamp or timestamp+incrementing mode, each
// row a record. It reaches the database through
// connectors/jdbc/internal/jdbcdb, as the sink does, and decodes
// PostgreSQL's binary values with connectors/jdbc/pgbinary;
// connectors/jdbc lists both connectors.
package source
