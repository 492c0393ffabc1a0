// Package file holds the FileStream example connectors of Apache Kafka
// Connect, registered under their Java class names so that configs written
// for Kafka (connector.class=FileStreamSource, ...) work unchanged:
//
//   - org.apache.kafka.connect.file.FileStreamSourceConnector reads a file
//     (or stdin when "file" is unset) line by line into a topic, following
//     the file as it grows, like tail -f;
//   - org.apache.kafka.connect.file.FileStreamSinkConnector appends the
//     text of each record value as a line to a file (or stdout).
//
// Importing the package registers both plugins.
//
// # Security
//
// The REST API has no authentication: whoever reaches it can create a
// FileStreamSource of any file the worker's user may read (its lines then
// sit in a topic anyone with Kafka access reads) and a FileStreamSink
// appending to any file it may write. Expose the REST listeners only to
// trusted clients (listeners=http://127.0.0.1:8083, or a proxy that
// authenticates).
//
// # Offsets
//
// The source task stores, per file, the partition {"filename": <file>}
// (the "file" setting verbatim) with the offset {"position": <int64>}: the
// position just after the last emitted line and its terminator, that is
// where the next unread line starts. On restart it resumes there. Only
// the last record of each poll carries the position (the runtime commits
// it once the whole batch is acknowledged): a map per line cost more than
// reading the line, and the stored offsets are the same.
//
// Deliberate deviation: Kafka's task counts position in decoded UTF-16
// chars but skips that many bytes on restart, so its offsets are wrong for
// any non-ASCII file. This package counts bytes, which is correct for any
// file and identical to Kafka for ASCII files; offsets of non-ASCII files
// written by a Java worker (or read by one) differ accordingly.
//
// Other differences from the Java implementation:
//
//   - while waiting for data, Poll re-reads the file every 100ms within its
//     one-second wait, so appended lines are picked up sooner;
//   - records read from stdin carry nil SourcePartition and SourceOffset
//     (Java attaches {"filename": null} and {"position": null});
//   - stdin, named pipes and devices are read on a goroutine, so Poll never
//     blocks on them and returns promptly when its ctx is done;
//   - invalid UTF-8 bytes in a line become U+FFFD, one per bad byte;
//   - a negative stored position (only possible in corrupt offsets) fails
//     the task instead of being read as 0;
//   - a read error fails the source task instead of being swallowed, and
//     sink write errors are returned instead of being ignored as a Java
//     PrintStream does;
//   - the sink fsyncs the file on Flush, so committed consumer offsets never
//     run ahead of the data on disk;
//   - an empty "file" on the sink writes to stdout (as it does for the
//     source) where Java fails to open the empty path; lines always end
//     with "\n" (Java's println uses the platform separator);
//   - Java's String.valueOf of a byte[] prints an object identity; the
//     sink writes the bytes themselves.
package file
