// Package worker runs connector and task instances: it starts them, feeds
// source records through the converters into Kafka and sink records from
// Kafka into tasks, and commits their offsets. It decides nothing about
// what should run; the herder tells it.
package worker
