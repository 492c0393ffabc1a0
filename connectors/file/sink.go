package file

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"

	"github.com/connectd/connectd/connect"
)

// SinkConnectorConfig returns the config definition of the sink
// connector, as Kafka's FileStreamSinkConnector.CONFIG_DEF. The runtime
// adds topics and topics.regex.
func SinkConnectorConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{
			Name:       FileConfig,
			Type:       connect.ConfigString,
			Default:    nil,
			Importance: connect.High,
			Doc:        "Destination filename. If not specified, the standard output will be used",
		})
}

// SinkConnector is FileStreamSinkConnector: tasks that append each record
// value as a line to a file (or stdout).
type SinkConnector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector     = (*SinkConnector)(nil)
	_ connect.SinkOffsetAlterer = (*SinkConnector)(nil)
)

// Version implements connect.Connector.
func (c *SinkConnector) Version() string { return Version }

// Config implements connect.Connector.
func (c *SinkConnector) Config() *connect.ConfigDef { return SinkConnectorConfig() }

// Start checks the config and keeps it for the tasks.
func (c *SinkConnector) Start(_ connect.ConnectorContext, config map[string]string) error {
	if _, err := SinkConnectorConfig().Parse(config); err != nil {
		return err
	}
	c.props = maps.Clone(config)
	return nil
}

// TaskConfigs returns maxTasks identical task configs, copies of the
// connector config.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, 0, max(maxTasks, 0))
	for range maxTasks {
		out = append(out, maps.Clone(c.props))
	}
	return out, nil
}

// Stop implements connect.Connector; there is nothing to stop.
func (c *SinkConnector) Stop() error { return nil }

// TaskClass implements connect.Connector.
func (c *SinkConnector) TaskClass() string { return SinkTaskClass }

// NewTask implements connect.SinkConnector.
func (c *SinkConnector) NewTask() connect.SinkTask { return &SinkTask{} }

// AlterOffsets accepts any change: the connector keeps no offsets of its
// own and the consumer-group offsets need no checks.
func (c *SinkConnector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// SinkTask is FileStreamSinkTask: it appends, for each record, the text of
// its value (Java's String.valueOf, "null" for a null value) and "\n".
// Writes are buffered; Flush writes the buffer out and fsyncs the file.
type SinkTask struct {
	filename string
	f        *os.File // nil when writing to stdout
	w        *bufio.Writer
	dirty    bool // written since the last fsync
	log      *slog.Logger
}

var _ connect.SinkTask = (*SinkTask)(nil)

// stdout is where a task without a file writes; tests replace it.
var stdout io.Writer = os.Stdout

// Version implements connect.SinkTask.
func (t *SinkTask) Version() string { return Version }

// Start opens the file in append mode, creating it if missing. Without a
// file the task writes to stdout.
func (t *SinkTask) Start(ctx connect.SinkTaskContext, config map[string]string) error {
	t.log = loggerOf(ctx)
	pc, err := SinkConnectorConfig().Parse(config)
	if err != nil {
		return err
	}
	t.filename = pc.String(FileConfig)
	if t.filename == "" {
		t.w = bufio.NewWriter(stdout)
		return nil
	}
	f, err := os.OpenFile(t.filename, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	t.f = f
	t.w = bufio.NewWriterSize(f, 64<<10)
	return nil
}

// Open implements connect.SinkTask; nothing to do.
func (t *SinkTask) Open([]connect.TopicPartition) error { return nil }

// Close implements connect.SinkTask; nothing to do.
func (t *SinkTask) Close([]connect.TopicPartition) error { return nil }

// Put writes one line per record.
func (t *SinkTask) Put(records []connect.SinkRecord) error {
	if t.w == nil {
		return errors.New("FileStreamSinkTask is not started")
	}
	t.dirty = t.dirty || len(records) > 0
	for i := range records {
		b := appendJavaString(t.w.AvailableBuffer(), records[i].Value)
		b = append(b, '\n')
		if _, err := t.w.Write(b); err != nil {
			return fmt.Errorf("writing to %s: %w", t.logName(), err)
		}
	}
	// Hand the batch to the OS now, as Java's PrintStream hands each
	// line, so readers of the file see it at once; only the fsync waits
	// for Flush.
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("writing to %s: %w", t.logName(), err)
	}
	return nil
}

// Flush writes out everything Put so far and fsyncs the file, so that the
// offsets the runtime commits next never run ahead of the data on disk.
func (t *SinkTask) Flush(map[connect.TopicPartition]int64) error {
	if t.w == nil {
		return nil
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("flushing %s: %w", t.logName(), err)
	}
	if t.f != nil && t.dirty {
		if err := t.f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", t.logName(), err)
		}
	}
	t.dirty = false
	return nil
}

// Stop flushes and closes the file.
func (t *SinkTask) Stop() error {
	if t.w == nil {
		return nil
	}
	err := t.w.Flush()
	if t.f != nil {
		err = errors.Join(err, t.f.Close())
		t.f = nil
	}
	t.w = nil
	if err != nil {
		t.log.Error("Failed to close FileStreamSinkTask output", "file", t.logName(), "error", err)
	}
	return err
}

func (t *SinkTask) logName() string {
	if t.filename == "" {
		return "stdout"
	}
	return t.filename
}
