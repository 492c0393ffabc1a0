// Package herder owns the state of a Kafka Connect worker and every
// decision about it: which connectors exist, their configs and target
// states, their tasks, statuses and offsets. The REST layer translates
// HTTP into calls here; the runtime (package worker) runs what the herder
// decides; the stores persist it. Errors meant for clients are *Error
// values carrying the HTTP status and Kafka Connect's message.
package herder
