// Package httpsource is an HTTP polling source connector: it polls a JSON
// API and writes each new record of the responses to a topic, keeping a
// cursor (the id of the last record) as its source offset.
//
// Importing the package registers io.connectd.connect.http.HttpSourceConnector
// (aliases HttpSourceConnector and HttpSource). It runs one task whatever
// tasks.max is.
//
// # Example
//
//	connector.class=HttpSource
//	http.url=https://api.example.com/api/orders
//	http.auth.type=bearer
//	http.auth.token=...
//	http.records.pointer=/data
//	http.cursor.id.field=id
//	http.cursor.timestamp.field=updated_at
//	http.cursor.param=since_id
//	http.page.param=page
//	poll.interval.ms=10000
//	topic=orders
//	value.converter=org.apache.kafka.connect.json.JsonConverter
//	value.converter.schemas.enable=false
//
// # Records
//
// The array at http.records.pointer (a JSON Pointer, RFC 6901; empty for a
// body that is the array itself) holds the records, which must be JSON
// objects with an id at http.cursor.id.field. Each becomes one Kafka
// record:
//
//   - value: the record object as schemaless Connect data (nil value
//     schema), as Kafka's JsonConverter reads JSON without schemas:
//     objects map[string]any, arrays []any, integers int64, other numbers
//     float64 (an integer beyond the int64 range too). With the
//     JsonConverter and schemas.enable=false the topic holds the record's
//     JSON (object keys in Java HashMap order, not the API's);
//   - key: the id as a string, with a STRING schema;
//   - no Kafka partition (the producer hashes the key), no headers, and no
//     timestamp (the producer stamps it), so that old API timestamps
//     cannot expire records at once under time-based retention.
//
// # Offsets
//
// The source partition is {"endpoint": <URL path of http.url>} and the
// offset {"last_id": <id>, "timestamp": <text>}, e.g. {"endpoint":
// "/api/orders"} and {"last_id": 42, "timestamp": "2026-07-10T14:30:00Z"}.
// last_id is an int64 when the API's id is a JSON integer, otherwise a
// string (a JSON string verbatim; another number as its JSON text).
// timestamp is the http.cursor.timestamp.field value of the same record,
// as text exactly as the response had it; it is absent when that field is
// unset or the record has none. Every record carries its offset, so after
// a crash the task resumes after the last record Kafka acknowledged.
//
// On start the task reads the stored offset and continues after it (with
// no offset, after http.cursor.initial, or from nothing). Altering the
// offset through the REST API (PATCH /connectors/<name>/offsets while
// stopped) therefore makes the resumed task poll again from there;
// AlterOffsets only checks the request: a non-null offset must be for
// this connector's endpoint and have a last_id that is an integer or a
// string, and a timestamp, if any, that is a string (or null). Null
// offsets may be written for any partition.
//
// # Poll cycle
//
// A poll cycle sends one or more requests, one per Poll call, and the next
// cycle starts poll.interval.ms after the last request of the previous
// one (the first at once). The cursor reaches the server through
// http.cursor.param (query parameter = last_id, left out while there is
// no cursor), http.cursor.timestamp.param (= timestamp) and the
// ${last_id} and ${timestamp} placeholders of http.url.template and
// http.body. A cycle goes on:
//
//   - with http.page.next.pointer: while the response has a next-page
//     link (absolute or relative to the request URL), which is followed
//     as is;
//   - with http.page.param: with page numbers from http.page.start up,
//     all with the cursor of the cycle's start, until a page holds no
//     record (or repeats the previous page exactly: the server ignores
//     the parameter);
//   - otherwise, when requests carry the cursor: again at once with the
//     new cursor while a page brings new records (cursor paging);
//   - otherwise it is one request.
//
// A page's records are returned only once the whole response was read and
// parsed. They are sorted by id (integers, and integer strings, compare as
// numbers; other ids as strings) and those at or before the cursor are
// dropped, so a server that ignores the cursor parameter, or repeats a
// record on the next page, causes no duplicates. Ids must therefore grow
// with the data; the API must return pages in ascending id order (records
// within a page may come in any order).
//
// # Errors and retries
//
// Statuses 5xx and 429, timeouts (http.timeout.ms, reading the body
// included) and connection errors are retried up to http.retries times
// (-1 forever), after an exponential backoff from http.retry.backoff.ms
// doubling to at most http.retry.backoff.max.ms, or after the Retry-After
// of the response (seconds or HTTP date), capped at the same maximum.
// Poll never sleeps out a backoff: it returns nothing and the request is
// retried by a later Poll, so offsets keep being committed and a stop is
// prompt. Any other status that is not 2xx, a body that is not JSON, a
// records pointer that names something other than an array, and a record
// without a usable id fail the task with the status (or problem) and the
// first 100 bytes of the body, quoted as a Go string (line breaks and
// control characters escaped), with the body's length when it is longer:
// the task's error is its status trace, which GET
// /connectors/<name>/status shows to anyone. An empty body (204) and a
// missing or null records target are an empty page.
//
// # Redirects
//
// Redirects are followed, at most 10, as Go's client does, except that
// while the requests carry credentials (http.auth.type basic or bearer,
// any http.headers entry, or a user in http.url) a redirect to another
// origin (scheme, host or port) fails the task, naming the target,
// instead of sending them there; so does a next-page link
// (http.page.next.pointer) to another origin. Point http.url at the final
// endpoint if it is to be trusted.
//
// # Security
//
// The REST API has no authentication. Whoever reaches it can create an
// HTTP source polling any URL the worker can reach, internal services and
// cloud metadata endpoints included, and read what comes back from the
// topic; a FileStreamSource reads, and a FileStreamSink writes, any file
// the worker's user may. Expose the REST listeners only to trusted
// clients (listeners=http://127.0.0.1:8083, or a proxy that
// authenticates).
//
// # Deviations from the reference connectors
//
// The offset follows the seed's shape rather than castorm's (spec §5.1,
// §5.4): a per-endpoint partition instead of {}, and a numeric last_id
// stored as a JSON integer instead of a string, so castorm offsets cannot
// be reused. Request headers are a comma-separated list, so a header value
// cannot contain a comma.
package httpsource
