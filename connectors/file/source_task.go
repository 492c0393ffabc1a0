package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

const (
	// idleWait is how long Poll waits for data before returning nothing.
	idleWait = time.Second
	// recheck is how often a file at its end is read again while waiting.
	recheck = 100 * time.Millisecond
	// readSize is the initial read buffer; it grows for longer lines.
	readSize = 64 << 10
)

// SourceTask is FileStreamSourceTask: it emits each line of a file (or of
// stdin) as a record with a STRING value, and keeps following the file as
// it grows.
//
// Lines end at "\n", "\r\n" or a lone "\r"; a "\r" that is the last byte
// read so far waits for the next byte, and a last line without terminator
// is not emitted until its terminator is written. Records have no key and
// no Kafka partition, and the time of reading as timestamp. Offsets count
// bytes (see the package documentation). All records of a task share one
// SourcePartition map, which must not be modified.
type SourceTask struct {
	filename  string // the "file" setting verbatim; "" reads stdin
	topic     string
	batchSize int
	partition map[string]any // nil for stdin: no offsets are tracked
	startPos  int64          // stored position to resume from

	in      input // nil until the file could be opened
	warned  bool  // the missing-file warning was logged
	skip    int64 // bytes still to drop from a stream input
	buf     []byte
	r, w    int   // unread data is buf[r:w]
	scanned int   // buf[r:r+scanned] holds no line terminator
	pos     int64 // input position of buf[r]
	ends    []int // scratch for extract

	idleWait time.Duration
	recheck  time.Duration
	log      *slog.Logger
}

var _ connect.SourceTask = (*SourceTask)(nil)

// NewSourceTask returns a task ready for Start.
func NewSourceTask() *SourceTask {
	return &SourceTask{idleWait: idleWait, recheck: recheck}
}

// Version implements connect.SourceTask.
func (t *SourceTask) Version() string { return Version }

// Start reads the task config (as Kafka's task does: "file" verbatim,
// "topic" required, "batch.size" optional) and, for a file, the stored
// position to resume from. The file itself is opened by Poll, which waits
// for it to appear.
func (t *SourceTask) Start(ctx connect.SourceTaskContext, config map[string]string) error {
	t.log = loggerOf(ctx)
	if t.idleWait == 0 {
		t.idleWait, t.recheck = idleWait, recheck
	}
	t.filename = config[FileConfig]
	topic, ok := config[TopicConfig]
	if !ok {
		return errors.New("FileStreamSourceTask config missing topic setting")
	}
	t.topic = topic
	t.batchSize = DefaultBatchSize
	if s, ok := config[BatchSizeConfig]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fmt.Errorf("Invalid FileStreamSourceTask configuration: %w", err)
		}
		// As in Kafka, a batch holds at least one record.
		t.batchSize = max(int(n), 1)
	}
	t.partition, t.startPos = nil, 0
	if t.filename == "" {
		return nil
	}
	t.partition = map[string]any{FilenameField: t.filename}
	if ctx == nil {
		return nil
	}
	offset, err := ctx.Offset(t.partition)
	if err != nil {
		return err
	}
	if v := offset[PositionField]; v != nil {
		pos, ok := v.(int64)
		if !ok {
			return errors.New("Offset position is the incorrect type")
		}
		if pos < 0 {
			// Reading from 0 instead would silently replay the file.
			return fmt.Errorf("The stored offset position %d of file %s is negative; alter it through the offsets API", pos, t.filename)
		}
		t.startPos = pos
	}
	return nil
}

// Poll returns up to batch.size records. When no complete line is ready it
// waits for one for about a second, returning nil early when ctx is done.
func (t *SourceTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	deadline := time.Now().Add(t.idleWait)
	for {
		recs, err := t.read()
		if err != nil || len(recs) > 0 {
			return recs, err
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return nil, nil
		}
		if t.in == nil {
			sleep(ctx, min(left, t.recheck))
		} else {
			t.in.Wait(ctx, left)
		}
	}
}

// Stop closes the file. Stdin stays open for a later task.
func (t *SourceTask) Stop() error {
	var err error
	if t.in != nil {
		err = t.in.Close()
		t.in = nil
	}
	t.buf, t.r, t.w, t.scanned = nil, 0, 0, 0
	return err
}

// read returns the records of the complete lines ready now.
func (t *SourceTask) read() ([]*connect.SourceRecord, error) {
	if t.in == nil {
		if err := t.open(); err != nil || t.in == nil {
			return nil, err
		}
	}
	var recs []*connect.SourceRecord
	for {
		recs = t.extract(recs)
		if len(recs) >= t.batchSize {
			return recs, nil
		}
		n, err := t.fill()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", t.logName(), err)
		}
		if n == 0 {
			return recs, nil
		}
	}
}

// open opens the input; when the file cannot be opened yet it logs that
// once and leaves t.in nil so that the next attempt tries again.
func (t *SourceTask) open() error {
	t.buf, t.r, t.w, t.scanned = make([]byte, readSize), 0, 0, 0
	t.pos, t.skip = t.startPos, 0
	if t.filename == "" {
		t.in = openStdin()
		return nil
	}
	fi, err := os.Stat(t.filename)
	if err == nil && fi.IsDir() {
		err = errors.New("is a directory")
	}
	if err != nil {
		t.warnMissing(err)
		return nil
	}
	if !fi.Mode().IsRegular() {
		// A named pipe or device: read it on a goroutine, as stdin, and
		// skip the stored position by reading past it.
		name := t.filename
		p := startPump(func() (io.ReadCloser, error) { return os.Open(name) }, true)
		t.in = &pumpInput{p: p, stop: true}
		t.skip = t.startPos
		t.opened()
		return nil
	}
	f, err := os.Open(t.filename)
	if err != nil {
		t.warnMissing(err)
		return nil
	}
	if t.startPos > 0 {
		if _, err := f.Seek(t.startPos, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("seeking %s to the stored position %d: %w", t.filename, t.startPos, err)
		}
		if fi, err := f.Stat(); err == nil && fi.Size() < t.startPos {
			t.log.Warn("FileStreamSourceTask's stored position is past the end of the file; waiting for the file to reach it",
				"file", t.filename, "position", t.startPos, "size", fi.Size())
		}
	}
	t.in = &fileInput{f: f, recheck: t.recheck}
	t.opened()
	return nil
}

func (t *SourceTask) warnMissing(err error) {
	if !t.warned {
		t.warned = true
		t.log.Warn("Couldn't find file for FileStreamSourceTask, waiting for it to be created",
			"file", t.filename, "error", err)
	}
}

func (t *SourceTask) opened() {
	t.warned = false
	t.log.Debug("Opened file for reading", "file", t.filename, "position", t.startPos)
}

func (t *SourceTask) logName() string {
	if t.filename == "" {
		return "stdin"
	}
	return t.filename
}

// fill reads more input into the buffer and returns how many bytes it
// read, or 0 when none was ready.
func (t *SourceTask) fill() (int, error) {
	if t.r == t.w {
		t.r, t.w = 0, 0
	} else if t.r > 0 && len(t.buf)-t.w < len(t.buf)/2 {
		t.w = copy(t.buf, t.buf[t.r:t.w])
		t.r = 0
	}
	if t.w == len(t.buf) {
		// One line fills the whole buffer.
		t.buf = append(t.buf, make([]byte, len(t.buf))...)
	}
	n, err := t.in.Read(t.buf[t.w:])
	t.w += n
	if t.skip > 0 && n > 0 {
		// Nothing is buffered before the skip completes, so the skipped
		// bytes are exactly the unread ones.
		d := min(int64(n), t.skip)
		t.r += int(d)
		t.skip -= d
	}
	return n, err
}

// extract appends a record for each complete buffered line, up to the
// batch size. The lines' text is converted to one string, which the
// records' values share, and the records are allocated together.
func (t *SourceTask) extract(recs []*connect.SourceRecord) []*connect.SourceRecord {
	ends := t.ends[:0] // pairs: end of a line's text, start of the next line
	first := t.r
	for len(recs)+len(ends)/2 < t.batchSize {
		end, next := lineEnd(t.buf[t.r:t.w], t.scanned)
		if next == 0 {
			t.scanned = end
			break
		}
		ends = append(ends, t.r+end, t.r+next)
		t.r += next
		t.scanned = 0
	}
	t.ends = ends
	n := len(ends) / 2
	if n == 0 {
		return recs
	}
	text := t.buf[first:t.r]
	valid := utf8.Valid(text)
	var all string
	if valid {
		all = string(text)
	}
	now := time.Now()
	block := make([]connect.SourceRecord, n)
	if recs == nil {
		recs = make([]*connect.SourceRecord, 0, n)
	}
	start := first
	for i := range block {
		end, next := ends[2*i], ends[2*i+1]
		var value string
		if valid {
			value = all[start-first : end-first]
		} else {
			value = lineString(t.buf[start:end])
		}
		t.pos += int64(next - start)
		start = next
		rec := &block[i]
		rec.SourcePartition = t.partition
		rec.Topic = t.topic
		rec.ValueSchema = connect.StringSchema
		rec.Value = value
		rec.Timestamp = now
		// Only the batch's last record carries the position: the
		// runtime commits a partition's offset once every record before
		// it was acknowledged, so the batch commits as a whole, and a
		// map per line would cost more than reading the line.
		if t.partition != nil && i == len(block)-1 {
			rec.SourceOffset = map[string]any{PositionField: t.pos}
		}
		recs = append(recs, rec)
	}
	return recs
}

// lineEnd finds the first line in data, whose first from bytes are known
// to hold no terminator. It returns where the line's text ends and where
// the next line starts, or next == 0 when data holds no complete line yet;
// end then tells how far data is known to hold no terminator.
func lineEnd(data []byte, from int) (end, next int) {
	nl := bytes.IndexByte(data[from:], '\n')
	limit := len(data)
	if nl >= 0 {
		nl += from
		limit = nl
	}
	if cr := bytes.IndexByte(data[from:limit], '\r'); cr >= 0 {
		cr += from
		switch {
		case cr+1 == len(data):
			// "\r" may be the start of "\r\n": wait for the next byte.
			return cr, 0
		case data[cr+1] == '\n':
			return cr, cr + 2
		}
		return cr, cr + 1
	}
	if nl >= 0 {
		return nl, nl + 1
	}
	return len(data), 0
}

// lineString returns the line as a string, each invalid UTF-8 byte
// replaced by U+FFFD as a decoder does.
func lineString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = append(out, r)
		b = b[n:]
	}
	return string(out)
}
