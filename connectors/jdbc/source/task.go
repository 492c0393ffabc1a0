package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// srcIdleWait is how long Poll waits for a table to be due before it
// returns no records, as the SDK asks (about a second).
const srcIdleWait = time.Second

// Task is Confluent's JdbcSourceTask: it reads its tables (or the
// query) in turn, each at most every poll.interval.ms, and turns each row
// into a record whose value is a struct of the row's columns.
//
// Offsets are Confluent's: per table the partition
// {"protocol":"1","table":"<schema-qualified name>"} (query mode:
// {"query":"query"}) and the offset {"incrementing":…}, {"timestamp":…,
// "timestamp_nanos":…} or both. A batch's last record carries the offset
// of the position reached; the others carry none (the runtime commits a
// partition up to the last acknowledged offset, so nothing is skipped).
type Task struct {
	cfg      *srcConfig
	d        *jdbcdb.Dialect
	conn     *srcConn
	queriers []*srcQuerier
	active   *srcQuerier
	idleWait time.Duration
	log      *slog.Logger

	mu          sync.Mutex
	queryCancel context.CancelFunc

	// Batches out with the runtime, and those it released for read to
	// fill again (see ReleaseRecords).
	batchMu sync.Mutex
	out     []*srcBatch
	free    []*srcBatch
}

var (
	_ connect.SourceTask     = (*Task)(nil)
	_ connect.RecordReleaser = (*Task)(nil)
)

// NewTask returns a task ready for Start.
func NewTask() *Task { return &Task{idleWait: srcIdleWait} }

// Version implements connect.SourceTask.
func (t *Task) Version() string { return Version }

// srcQuerier reads one table (or the query).
type srcQuerier struct {
	table     *jdbcdb.TableID // nil in query mode
	name      string          // the table's name or "query", for messages
	topic     string
	partition map[string]any
	mode      string
	incCol    string
	tsCols    []string
	stmt      string
	// structName is the value schema's name: the table name, unnamed in
	// query mode.
	structName string
	columns    []srcColumnInfo // table mode

	offset    srcOffset // position reached
	committed srcOffset // position when the current poll began
	// lookupTS: the stored offset had an incrementing value but no
	// timestamp; the row's timestamp is looked up before the first query.
	lookupTS   bool
	lastUpdate time.Time

	res       srcResult
	m         *srcMapping
	incIdx    int
	tsIdx     []int
	vals      []connect.Value // the current row's, per field
	pending   srcRow          // timestamp mode: the row read ahead
	hasNext   bool            // pending holds a row
	exhausted bool
}

type srcRow struct {
	value *connect.Struct
	ts    time.Time
	hasTS bool
}

func (q *srcQuerier) querying() bool { return q.res != nil }

// Start reads the config, connects, and for each table reads its stored
// offset and checks its columns as Confluent does (validate.non.null).
func (t *Task) Start(ctx connect.SourceTaskContext, config map[string]string) error {
	t.log = ctx.Logger()
	if t.idleWait == 0 {
		t.idleWait = srcIdleWait
	}
	cfg, err := parseSourceConfig(config)
	if err != nil {
		return fmt.Errorf("Couldn't start JdbcSourceTask due to configuration error: %w", err)
	}
	t.cfg = cfg
	d, _, err := jdbcdb.ParseURL(cfg.url, cfg.user, cfg.password)
	if err != nil {
		return err
	}
	t.d = d
	var tables []jdbcdb.TableID
	if cfg.query == "" {
		if tables, err = srcParseTables(d, config[srcTablesConfig]); err != nil {
			return fmt.Errorf("Invalid configuration: %s: %w", srcTablesConfig, err)
		}
		if len(tables) == 0 {
			t.log.Warn("JDBC source task has no table assigned: there is no work to be done")
			return nil
		}
	}
	t.conn, err = srcConnect(context.Background(), cfg, t.log)
	if err != nil {
		return err
	}
	if cfg.query != "" {
		q := t.newQuerier(nil)
		if err := t.loadOffset(ctx, q, srcQueryPartition()); err != nil {
			t.Stop()
			return err
		}
		t.queriers = append(t.queriers, q)
		return nil
	}
	for i := range tables {
		q := t.newQuerier(&tables[i])
		if err := t.prepareTable(q); err != nil {
			t.Stop()
			return err
		}
		if cfg.mode != srcModeBulk {
			if err := t.loadOffset(ctx, q, srcTablePartition(tables[i]), srcLegacyPartition(tables[i])); err != nil {
				t.Stop()
				return err
			}
		}
		t.queriers = append(t.queriers, q)
	}
	return nil
}

func (t *Task) newQuerier(table *jdbcdb.TableID) *srcQuerier {
	cfg := t.cfg
	q := &srcQuerier{table: table, mode: cfg.mode, incCol: cfg.incrementing, incIdx: -1}
	if cfg.usesTimestamp() {
		q.tsCols = cfg.timestampColumns
	}
	if !cfg.usesIncrementing() {
		q.incCol = ""
	}
	if table == nil {
		q.name, q.topic = "query", cfg.topicPrefix
		q.partition = srcQueryPartition()
	} else {
		q.name, q.topic, q.structName = table.String(), cfg.topicPrefix+table.Table, table.Table
		if cfg.mode == srcModeBulk {
			q.partition = srcLegacyPartition(*table)
		} else {
			q.partition = srcTablePartition(*table)
		}
	}
	return q
}

// prepareTable reads a table's columns, finds its auto-increment column
// when incrementing.column.name is empty, and checks the mode's columns
// exist and, with validate.non.null, are NOT NULL.
func (t *Task) prepareTable(q *srcQuerier) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cols, err := t.conn.columns(ctx, *q.table)
	if err != nil {
		return fmt.Errorf("Failed trying to read the columns of table %s: %w", q.name, err)
	}
	if len(cols) == 0 {
		return fmt.Errorf("Table %s does not exist or has no columns", q.name)
	}
	q.columns = cols
	if t.cfg.mode == srcModeBulk {
		return nil
	}
	problems := srcCheckColumns(t.d, t.cfg, q.name, cols, &q.incCol)
	if len(problems) > 0 {
		return errors.New(problems[0].msg)
	}
	return nil
}

// srcColumnProblem is a config key and what is wrong with it.
type srcColumnProblem struct {
	key, msg string
}

// srcCheckColumns checks the mode's columns against a table's columns.
// An empty *incCol is replaced by the table's auto-increment column.
func srcCheckColumns(d *jdbcdb.Dialect, cfg *srcConfig, table string, cols []srcColumnInfo, incCol *string) []srcColumnProblem {
	var out []srcColumnProblem
	find := func(name string) *srcColumnInfo {
		for i := range cols {
			if cols[i].name == name {
				return &cols[i]
			}
		}
		if d != jdbcdb.PostgreSQL { // MySQL and SQLite names ignore case
			for i := range cols {
				if strings.EqualFold(cols[i].name, name) {
					return &cols[i]
				}
			}
		}
		return nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	if cfg.usesIncrementing() {
		if *incCol == "" {
			for _, c := range cols {
				if c.autoInc {
					*incCol = c.name
					break
				}
			}
			if *incCol == "" {
				out = append(out, srcColumnProblem{srcIncrementingColumn, fmt.Sprintf("Table %s has no auto-incrementing "+
					"column to use as the incrementing column: set '%s'", table, srcIncrementingColumn)})
			}
		}
		if *incCol != "" {
			c := find(*incCol)
			switch {
			case c == nil:
				out = append(out, srcColumnProblem{srcIncrementingColumn, fmt.Sprintf("Incrementing column %s not found "+
					"in table %s, whose columns are %s", *incCol, table, strings.Join(names, ", "))})
			case cfg.validateNonNull && c.nullable:
				out = append(out, srcColumnProblem{srcIncrementingColumn, fmt.Sprintf("Cannot make incremental queries "+
					"using incrementing column %s on %s because this column is nullable.", *incCol, table)})
			}
		}
	}
	if cfg.usesTimestamp() {
		notNull := false
		for _, name := range cfg.timestampColumns {
			c := find(name)
			if c == nil {
				out = append(out, srcColumnProblem{srcTimestampColumn, fmt.Sprintf("Timestamp column %s not found in "+
					"table %s, whose columns are %s", name, table, strings.Join(names, ", "))})
				notNull = true // reported already
				continue
			}
			if !c.nullable {
				notNull = true
			}
		}
		if cfg.validateNonNull && !notNull {
			out = append(out, srcColumnProblem{srcTimestampColumn, fmt.Sprintf("Cannot make incremental queries using "+
				"timestamp columns [%s] on %s because all of these columns nullable.",
				strings.Join(cfg.timestampColumns, ", "), table)})
		}
	}
	return out
}

// loadOffset reads the stored offset of the first of partitions that has
// one (protocol 1, then the legacy protocol 0), or starts from
// timestamp.initial.
func (t *Task) loadOffset(ctx connect.SourceTaskContext, q *srcQuerier, partitions ...map[string]any) error {
	if t.cfg.mode == srcModeBulk {
		return nil
	}
	var stored map[string]any
	if ctx != nil {
		for _, p := range partitions {
			o, err := ctx.Offset(p)
			if err != nil {
				return fmt.Errorf("reading the stored offset of %s: %w", q.name, err)
			}
			if o != nil {
				stored = o
				t.log.Info("JDBC source found a stored offset", "source", q.name, "partition", p, "offset", o)
				break
			}
		}
	}
	o, err := srcOffsetFromMap(stored)
	if err != nil {
		return fmt.Errorf("The stored offset of %s is not valid: %w; alter it through the offsets API", q.name, err)
	}
	if stored == nil && t.cfg.usesTimestamp() && t.cfg.timestampInitial != nil {
		ms := *t.cfg.timestampInitial
		if ms == -1 {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			now, err := t.conn.now(cctx)
			cancel()
			if err != nil {
				return fmt.Errorf("reading the database's current time for %s: %w", srcTimestampInitial, err)
			}
			o.ts = now
		} else {
			o.ts = time.UnixMilli(ms).UTC()
		}
		o.hasTS = true
	}
	if t.cfg.mode == srcModeTimestampIncrementing && o.hasInc && !o.hasTS {
		// An offset such as {"incrementing":1043} written through the
		// offsets API: resume after that row rather than from the epoch.
		q.lookupTS = true
	}
	q.offset, q.committed = o, o
	return nil
}

// resolveTimestamp finds the timestamp of the row whose incrementing value
// the offset names, so that the offset resumes strictly after that row.
func (t *Task) resolveTimestamp(ctx context.Context, q *srcQuerier) error {
	if q.table == nil {
		q.lookupTS = false
		t.log.Warn("JDBC source: the stored offset has no timestamp; as in Confluent's connector, reading resumes from "+
			"the epoch", "source", q.name, "incrementing", q.offset.inc)
		return nil
	}
	d := t.d
	cols := make([]string, len(q.tsCols))
	for i, c := range q.tsCols {
		cols[i] = d.QuoteTable(*q.table) + "." + d.Quote(c)
	}
	stmt := fmt.Sprintf("SELECT %s FROM %s WHERE %s.%s = %s", strings.Join(cols, ", "), d.QuoteTable(*q.table),
		d.QuoteTable(*q.table), d.Quote(q.incCol), d.Placeholder(1))
	res, m, err := t.conn.open(ctx, stmt, []any{q.offset.inc}, q.structName, t.cfg, q.nullable, t.log)
	if err != nil {
		return err
	}
	defer res.close()
	vals := make([]connect.Value, len(m.fields))
	if res.next(vals) {
		for _, v := range vals {
			if v.Kind() == connect.KindTime {
				ts := v.Time()
				q.offset.ts, q.offset.hasTS = ts, true
				q.committed, q.lookupTS = q.offset, false
				t.log.Info("JDBC source: the stored offset has no timestamp; resuming after the row it names",
					"source", q.name, "incrementing", q.offset.inc, "timestamp", ts)
				return nil
			}
		}
	}
	if err := res.err(); err != nil {
		return err
	}
	q.lookupTS = false
	t.log.Warn("JDBC source: the stored offset has no timestamp and no row has its incrementing value; as in "+
		"Confluent's connector, reading resumes from the epoch", "source", q.name, "incrementing", q.offset.inc)
	return nil
}

// nullable tells SQLite's result mapping whether a table column may be
// null.
func (q *srcQuerier) nullable(column string) *bool {
	for _, c := range q.columns {
		if c.name == column {
			n := c.nullable
			return &n
		}
	}
	return nil
}

// Poll returns the next batch of records of the table due first. It
// waits for a table to be due for about a second at most, and returns
// early, with nothing, when ctx is done.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	stop := context.AfterFunc(ctx, t.cancelQuery)
	defer stop()
	deadline := time.Now().Add(t.idleWait)
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		q := t.next()
		if q == nil {
			t.idle()
			srcSleep(ctx, time.Until(deadline))
			return nil, nil
		}
		if !q.querying() {
			due := q.lastUpdate.Add(t.cfg.pollInterval)
			if wait := time.Until(due); wait > 0 {
				left := time.Until(deadline)
				if left <= 0 {
					return nil, nil
				}
				t.idle()
				srcSleep(ctx, min(wait, left))
				continue
			}
		}
		recs, err := t.poll(ctx, q)
		if err != nil {
			if srcIsDataError(err) || errors.Is(err, errSrcFatal) {
				t.reset(q, true)
				return nil, fmt.Errorf("JDBC source failed reading %s: %w", q.name, err)
			}
			if ctx.Err() == nil {
				t.log.Error("JDBC source: failed to run the query; it will be run again", "source", q.name, "error", err)
			}
			t.reset(q, true)
			t.conn.close()
			t.conn = nil
			return nil, nil
		}
		if len(recs) > 0 {
			return recs, nil
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
	}
}

// errSrcFatal marks errors that fail the task instead of being retried.
var errSrcFatal = errors.New("")

type srcFatal struct{ msg string }

func (e *srcFatal) Error() string        { return e.msg }
func (e *srcFatal) Is(target error) bool { return target == errSrcFatal }

// next is the querier to serve: the one whose result is open, else the
// one polled least recently.
func (t *Task) next() *srcQuerier {
	if t.active != nil {
		return t.active
	}
	var best *srcQuerier
	for _, q := range t.queriers {
		if best == nil || q.lastUpdate.Before(best.lastUpdate) {
			best = q
		}
	}
	return best
}

func srcSleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

func (t *Task) cancelQuery() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.queryCancel != nil {
		t.queryCancel()
	}
}

// reset closes q's result and requeues it: polled again poll.interval.ms
// from now. With rollback its position goes back to where this poll
// began, as Confluent's resetAndRequeueHead does after an error.
func (t *Task) reset(q *srcQuerier, rollback bool) {
	if rollback {
		// Cancel first: closing a result read halfway would otherwise
		// read the rest of it.
		t.cancelQuery()
	}
	if q.res != nil {
		q.res.close()
		q.res = nil
	}
	t.mu.Lock()
	if t.queryCancel != nil {
		t.queryCancel()
		t.queryCancel = nil
	}
	t.mu.Unlock()
	if rollback {
		q.offset = q.committed
	}
	q.pending, q.hasNext, q.exhausted = srcRow{}, false, false
	q.lastUpdate = time.Now()
	if t.active == q {
		t.active = nil
	}
}

// poll reads up to batch.max.rows records from q, running its query first
// when no result is open.
func (t *Task) poll(ctx context.Context, q *srcQuerier) ([]*connect.SourceRecord, error) {
	for attempt := 1; ; attempt++ {
		if t.conn == nil {
			c, err := srcConnect(ctx, t.cfg, t.log)
			if err != nil {
				return nil, err
			}
			t.conn = c
		}
		if !q.querying() {
			if err := t.startQuery(ctx, q); err != nil {
				return nil, err
			}
		}
		// What was returned before this poll is the runtime's now.
		q.committed = q.offset
		recs, err := t.read(q)
		if err != nil {
			// The table changed since its statement was prepared:
			// PostgreSQL refuses to run it before any row, so it is
			// prepared again and run at once.
			if attempt == 1 && srcStalePlan(err) {
				t.reset(q, true)
				if t.conn.unprepare(ctx, q.stmt) == nil {
					continue
				}
			}
			return nil, err
		}
		if q.exhausted && !q.hasNext {
			t.reset(q, false)
		}
		return recs, nil
	}
}

func (t *Task) startQuery(ctx context.Context, q *srcQuerier) error {
	if q.lookupTS {
		if err := t.resolveTimestamp(ctx, q); err != nil {
			return err
		}
	}
	if q.stmt == "" {
		q.stmt = srcStatement(t.d, q.table, t.cfg.query, q.mode, q.incCol, q.tsCols, t.cfg.querySuffix)
	}
	var args []any
	if q.mode != srcModeBulk {
		var end time.Time
		if q.tsCols != nil {
			now, err := t.conn.now(ctx)
			if err != nil {
				return err
			}
			end = now.Add(-t.cfg.timestampDelay)
		}
		args = srcArgs(t.d, q.mode, q.offset, end, t.cfg.loc)
	}
	// The result outlives this Poll: its context is canceled by Stop, or
	// by Poll when its ctx is done while reading.
	qctx, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.queryCancel = cancel
	t.mu.Unlock()
	t.log.Debug("JDBC source query", "source", q.name, "sql", q.stmt)
	res, m, err := t.conn.open(qctx, q.stmt, args, q.structName, t.cfg, q.nullable, t.log)
	if err != nil {
		cancel()
		return err
	}
	q.res, q.m = res, m
	t.active = q
	q.exhausted, q.pending, q.hasNext = false, srcRow{}, false
	if len(q.vals) != len(m.fields) {
		q.vals = make([]connect.Value, len(m.fields))
	}
	q.incIdx, q.tsIdx = -1, q.tsIdx[:0]
	if q.incCol != "" {
		i, ok := m.field(q.incCol)
		if !ok {
			return &srcFatal{fmt.Sprintf("Incrementing column %s not found in the result of %s, whose columns are %s",
				q.incCol, q.name, srcFieldNames(m))}
		}
		q.incIdx = i
	}
	for _, c := range q.tsCols {
		i, ok := m.field(c)
		if !ok {
			return &srcFatal{fmt.Sprintf("Timestamp column %s not found in the result of %s, whose columns are %s",
				c, q.name, srcFieldNames(m))}
		}
		q.tsIdx = append(q.tsIdx, i)
	}
	return nil
}

func srcFieldNames(m *srcMapping) string {
	names := make([]string, len(m.fields))
	for i, f := range m.fields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// row reads the next row of q's result into a struct: st when it is of
// the result's schema, else a new one; ok is false at the end.
func (t *Task) row(q *srcQuerier, st *connect.Struct) (r srcRow, ok bool, err error) {
	if st != nil && st.Schema() == q.m.schema {
		// Its values are filled again by this row's.
		q.res.recycle(st)
	} else {
		st = nil
	}
	if !q.res.next(q.vals) {
		if st != nil {
			// No row overwrites the values recycled: none may be
			// handed out twice.
			st.Reset()
		}
		q.exhausted = true
		return r, false, q.res.err()
	}
	if st == nil {
		st = connect.NewStruct(q.m.schema)
	}
	for i := range q.m.fields {
		// Every field, nulls too: st may hold a previous row's. The
		// decoders made each value by its field's schema.
		st.SetValueAt(i, q.vals[i])
	}
	r.value = st
	for _, i := range q.tsIdx {
		if v := q.vals[i]; v.Kind() == connect.KindTime {
			r.ts, r.hasTS = v.Time(), true
			break
		}
	}
	return r, true, nil
}

// read turns up to batch.max.rows rows into records, in a batch the
// runtime released when there is one.
func (t *Task) read(q *srcQuerier) ([]*connect.SourceRecord, error) {
	batch := t.cfg.batchMaxRows
	b := t.takeBatch()
	timestampOnly := q.mode == srcModeTimestamp
	for len(b.recs) < batch {
		rec := b.slot(len(b.recs), batch)
		// The struct of the record this memory held before is filled
		// again, except in timestamp mode: there a row is read ahead
		// of the batch it goes to, into a struct of its own.
		var st *connect.Struct
		if !timestampOnly {
			st, _ = rec.Value.(*connect.Struct)
		}
		var cur srcRow
		var err error
		if timestampOnly {
			// Confluent's TimestampTableQuerier: a record's offset moves
			// to its timestamp only once the next row's is later (or the
			// result ends), so a restart inside a run of equal
			// timestamps reads the whole run again.
			if !q.hasNext && !q.exhausted {
				if q.pending, q.hasNext, err = t.row(q, nil); err != nil {
					return nil, err
				}
			}
			if !q.hasNext {
				break
			}
			cur, q.hasNext = q.pending, false
			if !q.exhausted {
				if q.pending, q.hasNext, err = t.row(q, nil); err != nil {
					return nil, err
				}
			}
			if cur.hasTS && (!q.hasNext || !q.pending.hasTS || cur.ts.Before(q.pending.ts)) {
				q.offset = srcOffset{ts: cur.ts, hasTS: true}
			}
		} else {
			var ok bool
			if cur, ok, err = t.row(q, st); err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if err := t.advance(q, cur); err != nil {
				return nil, err
			}
		}
		*rec = connect.SourceRecord{
			SourcePartition: q.partition,
			Topic:           q.topic,
			ValueSchema:     q.m.schema,
			Value:           cur.value,
		}
		b.recs = append(b.recs, rec)
	}
	if len(b.recs) == 0 {
		t.giveBack(b)
		return nil, nil
	}
	recs := b.recs
	if q.mode != srcModeBulk {
		if o := q.offset.toMap(); len(o) > 0 {
			recs[len(recs)-1].SourceOffset = o
		}
	}
	t.batchMu.Lock()
	if len(t.out) == srcMaxOut {
		// A runtime that does not release batches: forget the oldest.
		t.out = slices.Delete(t.out, 0, 1)
	}
	t.out = append(t.out, b)
	t.batchMu.Unlock()
	return recs, nil
}

// srcBatch is the memory of one batch of records: the records, in blocks
// that are never grown (a block that grew would copy every record before
// it), and the slice of pointers to them that Poll returns. Reading a
// large table, filling released batches again instead of allocating new
// ones takes most of the garbage out of each row.
type srcBatch struct {
	recs   []*connect.SourceRecord
	blocks [][]connect.SourceRecord
}

const (
	srcBlockRecords = 1024
	// Released batches kept for reuse: the runtime has about three out
	// at once (being read, waiting, being sent).
	srcFreeBatches = 2
	// Batches remembered as out with the runtime.
	srcMaxOut = 16
)

// slot returns the memory of the batch's i-th record. batch is
// batch.max.rows, which sizes the blocks the same way for every batch.
func (b *srcBatch) slot(i, batch int) *connect.SourceRecord {
	k := i / srcBlockRecords
	if k == len(b.blocks) {
		b.blocks = append(b.blocks, make([]connect.SourceRecord, min(batch-i, srcBlockRecords)))
	}
	return &b.blocks[k][i%srcBlockRecords]
}

// takeBatch returns a released batch, emptied, or a new one.
func (t *Task) takeBatch() *srcBatch {
	t.batchMu.Lock()
	defer t.batchMu.Unlock()
	if n := len(t.free); n > 0 {
		b := t.free[n-1]
		t.free = t.free[:n-1]
		b.recs = b.recs[:0]
		return b
	}
	return &srcBatch{}
}

// giveBack keeps b for the next read, if fewer than srcFreeBatches are.
func (t *Task) giveBack(b *srcBatch) {
	t.batchMu.Lock()
	defer t.batchMu.Unlock()
	t.keepFree(b)
}

// keepFree is giveBack with batchMu held.
func (t *Task) keepFree(b *srcBatch) {
	if len(t.free) < srcFreeBatches {
		t.free = append(t.free, b)
	}
}

// ReleaseRecords implements connect.RecordReleaser: the runtime is done
// with a batch read returned, whose memory the next read fills.
func (t *Task) ReleaseRecords(recs []*connect.SourceRecord) {
	if len(recs) == 0 {
		return
	}
	t.batchMu.Lock()
	defer t.batchMu.Unlock()
	if i := slices.IndexFunc(t.out, func(b *srcBatch) bool { return &b.recs[0] == &recs[0] }); i >= 0 {
		// A record the runtime did not hand back (nil) may still be read,
		// and so may its struct: its block is not filled again, nor,
		// since the blocks go together, the rest of the batch.
		if !slices.Contains(recs, nil) {
			t.keepFree(t.out[i])
		}
		t.out = slices.Delete(t.out, i, i+1)
	}
}

// idle lets the collector have the released batches while no table is
// due: a task waiting for new rows holds no memory for them.
func (t *Task) idle() {
	t.batchMu.Lock()
	defer t.batchMu.Unlock()
	t.free = nil
}

// advance moves q's offset to the row's, in the incrementing modes.
func (t *Task) advance(q *srcQuerier, r srcRow) error {
	if q.mode == srcModeBulk {
		return nil
	}
	var o srcOffset
	if q.incIdx >= 0 {
		inc, err := q.incrementing()
		if err != nil {
			return err
		}
		o.inc, o.hasInc = inc, true
	}
	o.ts, o.hasTS = r.ts, r.hasTS
	q.offset = o
	return nil
}

// incrementing is the current row's value of the incrementing column.
func (q *srcQuerier) incrementing() (int64, error) {
	v := q.vals[q.incIdx]
	switch v.Kind() {
	case connect.KindInt64:
		return v.Int64(), nil
	case connect.KindDecimal:
		if n, scale, ok := v.SmallDecimal(); ok {
			if scale != 0 {
				return 0, q.incScaleFatal()
			}
			return n, nil
		}
	}
	switch n := v.Any().(type) {
	case nil:
		return 0, &srcFatal{fmt.Sprintf("Null value for incrementing column %s of %s (of type %s): the incrementing "+
			"column must not hold nulls; the row is not skipped, the task stops", q.incCol, q.name, q.m.fields[q.incIdx].schema.Type)}
	case int64:
		return n, nil
	case int32:
		return int64(n), nil
	case int16:
		return int64(n), nil
	case int8:
		return int64(n), nil
	case *connect.Decimal:
		if n.Scale != 0 {
			return 0, q.incScaleFatal()
		}
		if !n.Unscaled.IsInt64() {
			return 0, &srcFatal{fmt.Sprintf("Decimal value for incrementing column %s of %s exceeded Long.MAX_VALUE", q.incCol, q.name)}
		}
		return n.Unscaled.Int64(), nil
	}
	return 0, q.incTypeFatal()
}

func (q *srcQuerier) incTypeFatal() error {
	return &srcFatal{fmt.Sprintf("Invalid type for incrementing column %s of %s: %s", q.incCol, q.name, q.m.fields[q.incIdx].schema.Type)}
}

func (q *srcQuerier) incScaleFatal() error {
	return &srcFatal{fmt.Sprintf("Scale of Decimal value for incrementing column %s of %s must be 0", q.incCol, q.name)}
}

// Stop closes the result and the connection.
func (t *Task) Stop() error {
	// Cancel first: closing a result read halfway would otherwise read
	// the rest of it.
	t.mu.Lock()
	if t.queryCancel != nil {
		t.queryCancel()
		t.queryCancel = nil
	}
	t.mu.Unlock()
	for _, q := range t.queriers {
		if q.res != nil {
			q.res.close()
			q.res = nil
		}
	}
	t.active = nil
	t.conn.release()
	t.conn = nil
	return nil
}
