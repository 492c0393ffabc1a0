// Package rest serves Apache Kafka Connect 3.9's REST API over a Herder:
// the same paths, query parameters, JSON shapes, status codes and error
// bodies ({"error_code":N,"message":"..."}).
//
// The package only translates: it binds and checks request bodies, calls
// the herder with a context bounded by the request timeout, and writes
// what comes back; when the herder names another worker that must serve
// the request (the leader), it re-sends the request there and writes
// that worker's answer, as Kafka Connect's HerderRequestHandler does. A *herder.Error becomes its status and message; any
// other error is a 500 carrying its text.
//
// Deliberate deviations from Kafka, all for a client's mistake that Kafka
// answers with 500 (Jackson binding errors, null pointer exceptions):
// malformed JSON, JSON of the wrong type, unknown fields in typed bodies,
// missing bodies and nested offset values all get 400 with a message that
// names the problem. Request bodies are parsed as JSON whatever their
// Content-Type, where Kafka answers 415 to a non-JSON type.
package rest
