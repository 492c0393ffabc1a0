// Package logging gives connectd Kafka Connect's /admin/loggers model on
// top of log/slog.
//
// A Registry holds named loggers and the levels set on them, as Kafka's
// Loggers class does over log4j: a logger's effective level is the level
// set on the nearest dotted ancestor namespace ("a.b" for "a.b.C"), else
// the root level. Loggers come from Registry.Logger; their records carry
// the attribute logger=<name> and are filtered by the name's effective
// level before anything is formatted.
package logging
