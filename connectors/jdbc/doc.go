// Package jdbc is connectd's JDBC source and sink connectors, registered
// under Confluent's class names (io.confluent.connect.jdbc.JdbcSourceConnector
// and io.confluent.connect.jdbc.JdbcSinkConnector), with Confluent's
// configs and source offsets, so that configs and offsets taken from a
// Confluent JDBC connector mean the same here.
//
// "JDBC" is only the name users know: the connectors read the JDBC URL they
// copy from their Java configs (jdbc:postgresql://..., jdbc:mysql://...,
// jdbc:mariadb://..., jdbc:sqlite:...) and talk to the database with a Go
// driver: pgx for PostgreSQL, go-sql-driver/mysql for MySQL and MariaDB,
// modernc.org/sqlite for SQLite.
package jdbc
