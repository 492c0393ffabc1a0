package sink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/jackc/pgx/v5/stdlib"
)

// Task is Confluent's JdbcSinkTask, with one difference in when data
// becomes durable: Confluent commits the database transaction at the end
// of every Put, while this task keeps one transaction open from Put to Put
// and commits it in Flush or PreCommit, so that the consumer offsets the
// runtime commits are exactly those of rows the database committed.
//
// Put routes each record to its table (table.name.format), buffers it, and
// writes a table's buffer once it holds batch.size records, as multi-row
// statements (or COPY, on PostgreSQL, which runs in the background: Put
// returns while PostgreSQL loads the batch, the batches of a table
// stream into one COPY, and the next other use of the connection ends it
// and reports how it went) in the open transaction; past
// max(10 x batch.size, 10000) uncommitted records it commits by itself and
// asks the runtime for an offset commit, to bound what a retry rewrites.
// A change of key or value schema writes the buffer first (and may CREATE
// or ALTER the table, committing what was written before, since DDL is not
// transactional everywhere).
// PreCommit writes what is left, commits, and returns, per partition, the
// offset after the last committed record.
//
// A failed write rolls the transaction back and, max.retries times after
// retry.backoff.ms, writes again every record not yet committed; after
// that the task fails, asking the runtime (SetOffset) to consume again
// from the first record not committed. Problems with the records or the
// config (no schema, a missing table without auto.create, ...) fail the
// task at once.
type Task struct {
	cfg  *sinkConfig
	ctx  connect.SinkTaskContext
	log  *slog.Logger
	db   *sql.DB
	conn *sql.Conn // the task's connection: COPY must run on the transaction's
	d    *jdbcdb.Dialect
	sql  sinkSQL

	tx    *sql.Tx
	stmts map[string]*sql.Stmt // prepared in tx (MySQL, SQLite)

	tables      map[jdbcdb.TableID]*sinkTable
	topicTables map[string]jdbcdb.TableID
	infos       map[jdbcdb.TableID]*sinkTableInfo

	// uncommitted holds every record put since the last commit; the
	// first processed of them are in the table buffers or written in tx.
	uncommitted []connect.SinkRecord
	processed   int
	committed   map[connect.TopicPartition]int64
	remaining   int

	args    []any
	keyBuf  []byte
	copyEnc sinkCopyEncoder
	// copying is the COPY in flight: batches load in the background
	// while the runtime converts the next records. Every other use of the
	// connection waits for it (settle).
	copying *sinkCopy

	// execHook, when set (by tests), sees every statement before it runs
	// and can fail it.
	execHook func(query string, args []any) error
}

// sinkTable is the buffer of one destination table: records with the same
// key and value schemas, inserts (or updates) first, then deletes.
type sinkTable struct {
	id     jdbcdb.TableID
	fields *sinkFields
	stmts  *sinkStatements
	rows   []*connect.SinkRecord
	dels   []*connect.SinkRecord
	// copyOK: the batches can be loaded with COPY (PostgreSQL). After an
	// upsert batch met existing keys, the next copySkip batches skip
	// COPY.
	copyOK                bool
	copySkip, copyBackoff int
}

var (
	_ connect.SinkTask     = (*Task)(nil)
	_ connect.PreCommitter = (*Task)(nil)
)

// sinkUncommittedLimit bounds the records held for a retry: past it, Put
// commits by itself (and asks the runtime for an offset commit) instead
// of waiting for the next PreCommit.
func (t *Task) uncommittedLimit() int { return max(10*t.cfg.batchSize, 10000) }

// Version implements connect.SinkTask.
func (t *Task) Version() string { return Version }

// Start parses the config and connects, trying connection.attempts times
// connection.backoff.ms apart.
func (t *Task) Start(ctx connect.SinkTaskContext, config map[string]string) error {
	log := slog.Default() // unit tests start tasks without a context
	if ctx != nil {
		log = ctx.Logger()
	}
	cfg, err := parseSinkConfig(config)
	if err != nil {
		return err
	}
	var db *sql.DB
	var d *jdbcdb.Dialect
	for attempt := 1; ; attempt++ {
		db, d, err = sinkOpen(context.Background(), cfg.url, cfg.user, cfg.password)
		if err == nil {
			break
		}
		err = errors.New(jdbcdb.HideSecrets(err.Error(), cfg.url, cfg.password))
		if attempt >= cfg.connAttempts {
			return err
		}
		log.Warn("JDBC sink could not connect, retrying", "attempt", attempt, "error", err)
		time.Sleep(cfg.connBackoff)
	}
	*t = Task{
		cfg: cfg, ctx: ctx, log: log, db: db, d: d, sql: sinkSQL{d: d, quote: cfg.quote},
		tables: map[jdbcdb.TableID]*sinkTable{}, topicTables: map[string]jdbcdb.TableID{}, infos: map[jdbcdb.TableID]*sinkTableInfo{},
		committed: map[connect.TopicPartition]int64{}, remaining: cfg.maxRetries,
	}
	t.log.Debug("JDBC sink task started", "dialect", d.Name, "insert.mode", cfg.insertMode, "pk.mode", cfg.pkMode)
	return nil
}

// sinkIdle hands the connection that validated a config over to the task
// (handOver).
var sinkIdle = jdbcdb.NewHandOver(4, func(db *sql.DB) { db.Close() })

// sinkOpen takes the connection the config's validation left, when it
// still answers, or opens one.
func sinkOpen(ctx context.Context, url, user, password string) (*sql.DB, *jdbcdb.Dialect, error) {
	if db, ok := sinkIdle.Take(jdbcdb.ConnKey(url, user, password)); ok {
		d, _, err := jdbcdb.ParseURL(url, user, password)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		// database/sql replaces a pooled connection the server closed.
		if err == nil {
			err = db.PingContext(pctx)
		}
		cancel()
		if err == nil {
			return db, d, nil
		}
		db.Close()
	}
	return jdbcdb.Open(ctx, url, user, password)
}

// Open implements connect.SinkTask; nothing to do.
func (t *Task) Open([]connect.TopicPartition) error { return nil }

// Put buffers the records and writes the tables whose buffers are full.
func (t *Task) Put(records []connect.SinkRecord) error {
	if t.db == nil {
		return errors.New("JdbcSinkTask is not started")
	}
	if len(records) == 0 {
		return nil
	}
	t.uncommitted = append(t.uncommitted, records...)
	if err := t.attempt(t.processPending); err != nil {
		return err
	}
	if len(t.uncommitted) >= t.uncommittedLimit() {
		if err := t.attempt(t.flushAndCommit); err != nil {
			return err
		}
		if t.ctx != nil {
			t.ctx.RequestCommit()
		}
	}
	return nil
}

// Flush writes and commits everything put so far.
func (t *Task) Flush(map[connect.TopicPartition]int64) error {
	if t.db == nil {
		return nil
	}
	return t.attempt(t.flushAndCommit)
}

// PreCommit writes and commits everything put so far and returns the
// offsets of the committed data: per partition, the offset after its last
// committed record. After a failed write it returns the offsets committed
// before it, with the error.
func (t *Task) PreCommit(map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	if t.db == nil {
		return map[connect.TopicPartition]int64{}, nil
	}
	err := t.attempt(t.flushAndCommit)
	return maps.Clone(t.committed), err
}

// Close commits what was put (for every partition: the transaction is
// shared) and forgets the closed partitions' offsets.
func (t *Task) Close(partitions []connect.TopicPartition) error {
	if t.db == nil {
		return nil
	}
	err := t.attempt(t.flushAndCommit)
	for _, tp := range partitions {
		delete(t.committed, tp)
	}
	return err
}

// Stop rolls back whatever was not committed (the runtime commits
// through PreCommit before it stops a healthy task) and hands the
// connection on to the next validation or task of the same database
// (sinkIdle), as a restart needs it, or disconnects when it is not fit
// for another user.
func (t *Task) Stop() error {
	if t.db == nil {
		return nil
	}
	t.rollback() // the task's connection goes back to db's pool
	db := t.db
	t.db = nil
	if !sinkReset(db) {
		return db.Close()
	}
	sinkIdle.Put(jdbcdb.ConnKey(t.cfg.url, t.cfg.user, t.cfg.password), db)
	return nil
}

// sinkReset readies the idle connection of a task's pool for its next
// user (pgReadyToHandOn), and reports whether there is one. The task uses
// one connection at a time, so the pool holds at most that one; the other
// dialects' statements are closed by then (rollback).
func sinkReset(db *sql.DB) bool {
	if db.Stats().Idle == 0 {
		return false // none to hand on: do not open one for that
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if sc, ok := dc.(*stdlib.Conn); ok && !jdbcdb.PGReadyToHandOn(sc.Conn()) {
			return errNotReady
		}
		return nil
	}) == nil
}

var errNotReady = errors.New("the connection is not fit for another user")

// attempt runs op, retrying database failures max.retries times: each
// retry rolls back and writes again every uncommitted record.
func (t *Task) attempt(op func() error) error {
	for {
		err := op()
		if err == nil {
			t.remaining = t.cfg.maxRetries
			return nil
		}
		t.rollback()
		if t.ctx != nil && refusedRow(err) {
			if reporter := t.ctx.ErrantRecordReporter(); reporter != nil {
				werr, rerr := t.isolate(reporter, err)
				if werr == nil && rerr == nil {
					t.remaining = t.cfg.maxRetries
					return nil
				}
				t.rollback()
				if rerr != nil {
					// errors.tolerance=none: the task fails once the
					// record was reported.
					t.abandon()
					t.remaining = t.cfg.maxRetries
					return rerr
				}
				err = werr
			}
		}
		var de *sinkDataError
		if errors.As(err, &de) || t.remaining <= 0 {
			t.abandon()
			t.remaining = t.cfg.maxRetries
			return err
		}
		t.log.Warn("JDBC sink write failed, retrying", "remainingRetries", t.remaining, "backoff", t.cfg.retryBackoff, "error", err)
		t.remaining--
		time.Sleep(t.cfg.retryBackoff)
	}
}

// rollback ends the transaction without committing and empties the
// buffers; the records stay in uncommitted, to be processed again.
func (t *Task) rollback() {
	t.abandonCopy()
	t.closeStmts()
	if t.tx != nil {
		if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			t.log.Warn("JDBC sink rollback failed", "error", err)
		}
		t.tx = nil
	}
	if t.conn != nil {
		// A fresh connection for the retry: this one may be broken.
		t.conn.Close()
		t.conn = nil
	}
	clear(t.tables)
	clear(t.infos)
	t.processed = 0
}

// abandon gives up the uncommitted records after a failure: the runtime
// is asked to consume them again, from the first one of each partition.
func (t *Task) abandon() {
	first := map[connect.TopicPartition]int64{}
	for i := range t.uncommitted {
		r := &t.uncommitted[i]
		tp := connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if off, ok := first[tp]; !ok || r.Offset < off {
			first[tp] = r.Offset
		}
	}
	if t.ctx != nil {
		for tp, off := range first {
			t.ctx.SetOffset(tp, off)
		}
	}
	clear(t.uncommitted)
	t.uncommitted = t.uncommitted[:0]
	t.processed = 0
}

// processPending buffers the records not yet buffered, writing full
// buffers.
func (t *Task) processPending() error {
	for t.processed < len(t.uncommitted) {
		if err := t.add(&t.uncommitted[t.processed]); err != nil {
			return err
		}
		t.processed++
	}
	return nil
}

// flushAndCommit writes every buffer and commits.
func (t *Task) flushAndCommit() error {
	if err := t.processPending(); err != nil {
		return err
	}
	return t.commit()
}

// commit writes every buffer, commits the transaction, and records the
// offsets of the processed records as committed.
func (t *Task) commit() error {
	for _, id := range slices.SortedFunc(maps.Keys(t.tables), compareTableIDs) {
		if err := t.flushTable(t.tables[id]); err != nil {
			return err
		}
	}
	if err := t.settle(); err != nil {
		return err
	}
	if t.tx != nil {
		t.closeStmts()
		err := t.tx.Commit()
		t.tx = nil
		if err != nil {
			return fmt.Errorf("committing the transaction: %w", err)
		}
	}
	for i := range t.processed {
		r := &t.uncommitted[i]
		tp := connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if off, ok := t.committed[tp]; !ok || r.Offset+1 > off {
			t.committed[tp] = r.Offset + 1
		}
	}
	if rest := t.uncommitted[t.processed:]; len(rest) > 0 {
		t.uncommitted = slices.Clone(rest)
	} else {
		clear(t.uncommitted)
		t.uncommitted = t.uncommitted[:0]
	}
	t.processed = 0
	return nil
}

func compareTableIDs(a, b jdbcdb.TableID) int { return strings.Compare(a.String(), b.String()) }

func (t *Task) closeStmts() {
	for q, st := range t.stmts {
		st.Close()
		delete(t.stmts, q)
	}
}

// connection returns the task's connection, taking one from the pool if
// it has none.
func (t *Task) connection() (*sql.Conn, error) {
	if t.conn == nil {
		c, err := t.db.Conn(context.Background())
		if err != nil {
			return nil, fmt.Errorf("connecting: %w", err)
		}
		t.conn = c
	}
	return t.conn, nil
}

func (t *Task) begin() error {
	if err := t.settle(); err != nil {
		return err
	}
	if t.tx != nil {
		return nil
	}
	conn, err := t.connection()
	if err != nil {
		return err
	}
	tx, err := conn.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	t.tx = tx
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	return nil
}

// txExec runs a statement without arguments in the open transaction;
// the background COPY's savepoints use it.
func (t *Task) txExec(q string) error {
	if t.execHook != nil {
		if err := t.execHook(q, nil); err != nil {
			return err
		}
	}
	_, err := t.tx.ExecContext(context.Background(), q)
	return err
}

func (t *Task) exec(q string, args []any) error {
	if err := t.begin(); err != nil {
		return err
	}
	if t.execHook != nil {
		if err := t.execHook(q, args); err != nil {
			return err
		}
	}
	ctx := context.Background()
	if t.d == jdbcdb.PostgreSQL {
		// pgx prepares and caches each statement text on its own.
		_, err := t.tx.ExecContext(ctx, q, args...)
		return err
	}
	st := t.stmts[q]
	if st == nil {
		var err error
		if st, err = t.tx.PrepareContext(ctx, q); err != nil {
			return err
		}
		t.stmts[q] = st
	}
	_, err := st.ExecContext(ctx, args...)
	return err
}

// tableFor returns the buffer of a topic's destination table.
func (t *Task) tableFor(topic string) (*sinkTable, error) {
	id, ok := t.topicTables[topic]
	if !ok {
		name := strings.ReplaceAll(t.cfg.tableNameFormat, "${topic}", topic)
		if name == "" {
			return nil, sinkDataErrorf("Destination table name for topic '%s' is empty using the format string '%s'", topic, t.cfg.tableNameFormat)
		}
		id = parseSinkTableID(t.d, name, t.cfg.quote)
		t.topicTables[topic] = id
	}
	tb := t.tables[id]
	if tb == nil {
		tb = &sinkTable{id: id}
		t.tables[id] = tb
	}
	return tb, nil
}

// add is BufferedRecords.add: check the record, write the buffer first
// when the schemas change (or an insert follows a delete), buffer the
// record, and write the buffer once it holds batch.size records.
func (t *Task) add(r *connect.SinkRecord) error {
	if err := checkSinkRecord(t.cfg, r); err != nil {
		return err
	}
	tb, err := t.tableFor(r.Topic)
	if err != nil {
		return err
	}
	changed := tb.fields == nil || !sameSchema(tb.fields.keySchema, r.KeySchema) ||
		(r.ValueSchema != nil && !sameSchema(tb.fields.valueSchema, r.ValueSchema))
	if changed {
		if err := t.flushTable(tb); err != nil {
			return err
		}
		valueSchema := r.ValueSchema
		if valueSchema == nil && tb.fields != nil {
			valueSchema = tb.fields.valueSchema // a tombstone is no schema change
		}
		fields, err := extractSinkFields(t.cfg, t.d, t.describeName(tb.id), r.KeySchema, valueSchema)
		if err != nil {
			return err
		}
		if len(fields.keys) == 0 && t.cfg.insertMode != sinkModeInsert {
			return sinkDataErrorf("Write to table '%s' in %s mode requires key field names to be known, check the primary key configuration",
				tb.id, strings.ToUpper(t.cfg.insertMode))
		}
		if err := t.ensureTable(tb.id, fields); err != nil {
			return err
		}
		tb.fields = fields
		tb.stmts = newSinkStatements(t.sql, tb.id, fields, t.cfg.insertMode)
		tb.copyOK = sinkCanCopy(t.cfg, t.d, tb.stmts.writeColumns(), t.infos[tb.id])
	} else if r.Value != nil && len(tb.dels) > 0 {
		// Write the deletes first, so that a row deleted and written
		// again in one batch ends up written.
		if err := t.flushTable(tb); err != nil {
			return err
		}
	}
	if r.Value == nil {
		tb.dels = append(tb.dels, r)
	} else {
		tb.rows = append(tb.rows, r)
	}
	if len(tb.rows)+len(tb.dels) >= t.cfg.batchSize {
		return t.flushTable(tb)
	}
	return nil
}

func (t *Task) describeName(id jdbcdb.TableID) string { return t.d.QuoteTable(id) }

// flushTable writes a table's buffer in the transaction: the inserts,
// upserts or updates, then the deletes.
func (t *Task) flushTable(tb *sinkTable) error {
	if len(tb.rows) > 0 {
		var err error
		if t.cfg.insertMode == sinkModeUpdate {
			err = t.writeUpdates(tb)
		} else {
			err = t.writeInserts(tb)
		}
		clear(tb.rows)
		tb.rows = tb.rows[:0]
		if err != nil {
			return err
		}
	}
	if len(tb.dels) > 0 {
		err := t.writeDeletes(tb)
		clear(tb.dels)
		tb.dels = tb.dels[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *Task) tableError(tb *sinkTable, err error) error {
	var de *sinkDataError
	var te *sinkTableError
	if err == nil || errors.As(err, &de) || errors.As(err, &te) {
		return err
	}
	return &sinkTableError{table: t.describeName(tb.id), err: err}
}

// sinkTableError is a failure to write to a table. A COPY's may surface
// while writing to another table (it ran in the background), so it is
// never wrapped twice.
type sinkTableError struct {
	table string
	err   error
}

func (e *sinkTableError) Error() string { return "writing to table " + e.table + ": " + e.err.Error() }
func (e *sinkTableError) Unwrap() error { return e.err }

func (t *Task) appendArgs(args []any, tb *sinkTable, r *connect.SinkRecord, cols []*sinkColumn) ([]any, error) {
	for _, c := range cols {
		var a any
		var err error
		if tb.copyOK {
			a, err = sinkCopyArg(t.cfg, c, c.value(tb.fields, r))
		} else {
			a, err = sinkArg(t.d, t.cfg, c, c.value(tb.fields, r))
		}
		if err != nil {
			return args, err
		}
		args = append(args, a)
	}
	return args, nil
}

// writeInserts writes the buffered rows with multi-row INSERT (or upsert)
// statements, as few as the bind parameter limit allows, or with COPY
// (copy.go). An upsert batch keeps only the last record of each key,
// as Confluent's batch compaction does: PostgreSQL refuses to update a row
// twice in one statement.
func (t *Task) writeInserts(tb *sinkTable) error {
	cols := tb.stmts.writeColumns()
	upsert := t.cfg.insertMode == sinkModeUpsert
	recs := tb.rows
	if upsert && len(recs) > 1 {
		recs = t.compact(tb, recs)
	}
	if tb.copyOK {
		switch {
		case !upsert:
			return t.tableError(tb, t.copyRecords(tb, cols, recs, nil))
		case tb.copySkip > 0:
			tb.copySkip--
		default:
			// The fallback runs at a later settle, when the buffer holds
			// other records and the table may have new fields.
			snap, saved := *tb, slices.Clone(recs)
			return t.tableError(tb, t.copyRecords(tb, cols, recs, func() error {
				return t.writeStatements(&snap, cols, saved)
			}))
		}
	}
	return t.writeStatements(tb, cols, recs)
}

// writeStatements writes rows with multi-row INSERT (or upsert)
// statements, as few as the bind parameter limit allows.
func (t *Task) writeStatements(tb *sinkTable, cols []*sinkColumn, recs []*connect.SinkRecord) error {
	// First, since settling may write a batch with this very function and
	// its shared argument buffer.
	if err := t.settle(); err != nil {
		return err
	}
	n := len(cols)
	args := t.args[:0]
	defer func() { clear(args); t.args = args[:0] }()
	var err error
	for _, r := range recs {
		if args, err = t.appendArgs(args, tb, r, cols); err != nil {
			return err
		}
	}
	rows := len(recs)
	per := max(sinkMaxParams(t.d)/n, 1)
	for off := 0; off < rows; off += per {
		k := min(per, rows-off)
		if err := t.exec(tb.stmts.insertSQL(k), args[off*n:(off+k)*n]); err != nil {
			return t.tableError(tb, err)
		}
	}
	return nil
}

// compact keeps only the last record of each key, in their order.
func (t *Task) compact(tb *sinkTable, recs []*connect.SinkRecord) []*connect.SinkRecord {
	seen := make(map[string]struct{}, len(recs))
	keep := make([]bool, len(recs))
	dup := false
	for i := len(recs) - 1; i >= 0; i-- {
		b := t.keyBuf[:0]
		for _, c := range tb.fields.keys {
			b = sinkKeyString(b, c.value(tb.fields, recs[i]))
		}
		t.keyBuf = b
		if _, ok := seen[string(b)]; ok {
			dup = true
			continue
		}
		seen[string(b)] = struct{}{}
		keep[i] = true
	}
	if !dup {
		return recs
	}
	out := make([]*connect.SinkRecord, 0, len(seen))
	for i, r := range recs {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out
}

// writeUpdates runs one UPDATE per buffered record.
func (t *Task) writeUpdates(tb *sinkTable) error {
	if len(tb.fields.nonKeys) == 0 {
		return nil // nothing to set
	}
	cols := append(slices.Clone(tb.fields.nonKeys), tb.fields.keys...)
	q := tb.stmts.updateSQL()
	args := make([]any, 0, len(cols))
	for _, r := range tb.rows {
		var err error
		if args, err = t.appendArgs(args[:0], tb, r, cols); err != nil {
			return err
		}
		if err := t.exec(q, args); err != nil {
			return t.tableError(tb, err)
		}
	}
	return nil
}

// writeDeletes deletes the rows of the buffered tombstones' keys.
func (t *Task) writeDeletes(tb *sinkTable) error {
	keys := tb.fields.keys
	n := len(keys)
	args := make([]any, 0, len(tb.dels)*n)
	var err error
	for _, r := range tb.dels {
		if args, err = t.appendArgs(args, tb, r, keys); err != nil {
			return err
		}
	}
	per := max(sinkMaxParams(t.d)/n, 1)
	rows := len(tb.dels)
	for off := 0; off < rows; off += per {
		k := min(per, rows-off)
		if err := t.exec(tb.stmts.deleteSQL(k), args[off*n:(off+k)*n]); err != nil {
			return t.tableError(tb, err)
		}
	}
	return nil
}

// querier is the open transaction, or the task's connection.
func (t *Task) querier() (sinkQueryer, error) {
	if err := t.settle(); err != nil {
		return nil, err
	}
	if t.tx != nil {
		return t.tx, nil
	}
	return t.connection()
}

func (t *Task) tableInfo(id jdbcdb.TableID, refresh bool) (*sinkTableInfo, error) {
	if info, ok := t.infos[id]; ok && !refresh {
		return info, nil
	}
	q, err := t.querier()
	if err != nil {
		return nil, err
	}
	info, err := describeSinkTable(context.Background(), q, t.d, t.cfg, id)
	if err != nil {
		return nil, err
	}
	t.infos[id] = info
	return info, nil
}

// ensureTable is DbStructure.createOrAmendIfNecessary: create a missing
// table (auto.create) and add missing columns (auto.evolve). DDL runs
// outside the transaction, after committing it.
func (t *Task) ensureTable(id jdbcdb.TableID, f *sinkFields) error {
	info, err := t.tableInfo(id, false)
	if err != nil {
		return err
	}
	name := t.describeName(id)
	if info == nil {
		if !t.cfg.autoCreate {
			return sinkDataErrorf("Table %s is missing and auto-creation is disabled", name)
		}
		if err := t.commit(); err != nil {
			return err
		}
		q := t.sql.createTableSQL(id, f, t.cfg)
		t.log.Info("JDBC sink creating table", "table", name, "sql", q)
		if _, cerr := t.ddl(q); cerr != nil {
			// Another task may have created it meanwhile.
			if info, err = t.tableInfo(id, true); err != nil || info == nil {
				return fmt.Errorf("creating table %s: %w", name, cerr)
			}
		}
		if info, err = t.tableInfo(id, true); err != nil {
			return err
		}
		if info == nil {
			return fmt.Errorf("table %s is still missing after CREATE TABLE", name)
		}
	}
	missing := sinkMissing(f, info)
	if len(missing) == 0 {
		return nil
	}
	for _, c := range missing {
		if !c.optional() && c.schema.Default == nil {
			return sinkDataErrorf("Cannot ALTER to add missing field %s, as it is not optional and does not have a default value", c)
		}
	}
	if !t.cfg.autoEvolve {
		descs := make([]string, len(missing))
		for i, c := range missing {
			descs[i] = c.String()
		}
		return sinkDataErrorf("Table %s is missing fields ([%s]) and auto-evolution is disabled", name, strings.Join(descs, ", "))
	}
	if err := t.commit(); err != nil {
		return err
	}
	for _, q := range t.sql.alterTableSQL(id, missing, t.cfg) {
		t.log.Info("JDBC sink amending table", "table", name, "sql", q)
		if _, aerr := t.ddl(q); aerr != nil {
			// Another task may have added the columns meanwhile.
			if info, err = t.tableInfo(id, true); err != nil || len(sinkMissing(f, info)) > 0 {
				return fmt.Errorf("Failed to amend table %s to add missing fields: %w", name, aerr)
			}
			return nil
		}
	}
	if info, err = t.tableInfo(id, true); err != nil {
		return err
	}
	if m := sinkMissing(f, info); len(m) > 0 {
		return fmt.Errorf("table %s still misses %s after ALTER TABLE", name, m[0].name)
	}
	return nil
}

// ddl runs a statement on the task's connection, outside any transaction.
func (t *Task) ddl(q string) (sql.Result, error) {
	if err := t.settle(); err != nil {
		return nil, err
	}
	conn, err := t.connection()
	if err != nil {
		return nil, err
	}
	return conn.ExecContext(context.Background(), q)
}

func sinkMissing(f *sinkFields, info *sinkTableInfo) []*sinkColumn {
	if info == nil {
		return f.all
	}
	var out []*sinkColumn
	for _, c := range f.all {
		if !info.has(c.name) {
			out = append(out, c)
		}
	}
	return out
}
