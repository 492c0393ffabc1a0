// Package jdbcdb is what the JDBC source and sink share of the database:
// the dialects, the JDBC URLs they are reached by (ParseURL, Open), and
// the hand-over of released connections to their next user (HandOver).
// It sits under connectors/jdbc/internal, below both connector packages,
// so that connectors/jdbc can list both (Plugins) without a cycle and no
// importer outside the JDBC connectors depends on it.
package jdbcdb
