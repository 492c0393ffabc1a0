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
// modernc.org/sqlite for SQLite. Credentials come from connection.user and
// connection.password, else from the URL's user and password parameters,
// else from its user info (jdbc:mysql://user:password@host/db, as
// Connector/J takes it). Messages, logs and task traces show a URL with
// its passwords as [hidden]: every password= parameter and the password of
// the user info (the whole user info of a form without //).
//
// Each connector is a package, source and sink, below this one, which
// lists them (Plugins). What both share of the database, the dialects,
// the JDBC URLs and the hand-over of released connections, is
// internal/jdbcdb, below both, so that neither imports the other nor
// this package; internal/jdbctest gives their tests the databases.
// pgbinary decodes PostgreSQL's binary wire values for the source.
package jdbc
