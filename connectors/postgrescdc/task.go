package postgrescdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Task is Debezium's PostgresConnectorTask: it snapshots the captured
// tables when its snapshot.mode says so, then streams their changes from
// the replication slot.
type Task struct {
	cfg       *config
	ctx       connect.SourceTaskContext
	partition map[string]any
	log       *slog.Logger

	runCtx context.Context
	cancel context.CancelFunc

	meta  *pgx.Conn // queries, snapshots, catalog lookups
	cat   *catalog
	types *typeResolver
	repl  *pgconn.PgConn // replication connection, until streaming starts

	phase int
	snap  *snapshotState

	// startLSN is where streaming starts once the snapshot (if any) ends.
	startLSN pglogrepl.LSN
	// slotFlushed is the slot's confirmed_flush_lsn when the task started:
	// the task never confirms less (PostgreSQL 15 would move it back).
	slotFlushed pglogrepl.LSN

	mu     sync.Mutex
	stream *replStream // guarded by mu: Commit may run on another goroutine

	// Streaming state, on the Poll goroutine only.
	pos       position
	resume    resumeFilter
	rels      map[uint32]*tableInfo
	tx        txState
	held      []*connect.SourceRecord
	heldLSN   pglogrepl.LSN
	heldOff   map[string]any
	out       []*connect.SourceRecord
	pending   []walEvent
	keepalive pglogrepl.LSN
	lastBeat  time.Time
	streamErr error
}

const (
	phaseNone = iota
	phaseSnapshot
	phaseStream
	phaseIdle // initial_only after its snapshot
)

// resumeFilter drops what a stored offset shows as already handled, as
// Debezium's WalPositionLocator: whole transactions that committed before
// the offset's commit LSN, and the handled changes of the transaction the
// offset points into.
type resumeFilter struct {
	commitLSN pglogrepl.LSN
	midTx     bool
	xid       uint32
	procLSN   pglogrepl.LSN
}

type txState struct {
	open       bool
	skip       bool
	xid        uint32
	commitTime time.Time
	skipUpTo   pglogrepl.LSN
}

var (
	_ connect.SourceTask = (*Task)(nil)
	_ connect.Committer  = (*Task)(nil)
)

// NewTask returns a task ready for Start.
func NewTask() *Task { return &Task{} }

// Version implements connect.SourceTask.
func (t *Task) Version() string { return Version }

// Start connects, makes sure the publication and the slot exist, reads the
// stored offset and decides between a snapshot and streaming, as
// snapshot.mode says. It fails when the offset's position is no longer
// available in the slot (unless snapshot.mode is when_needed).
func (t *Task) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cfg, err := parseConfig(props)
	if err != nil {
		return fmt.Errorf("Couldn't start PostgresConnectorTask due to configuration error: %w", err)
	}
	t.cfg, t.ctx = cfg, ctx
	t.partition = map[string]any{PartitionServerKey: cfg.prefix}
	// The context's logger names the connector already.
	t.log = ctx.Logger().With("server", cfg.prefix)
	t.runCtx, t.cancel = context.WithCancel(context.Background())
	if err := t.start(); err != nil {
		t.closeAll()
		return err
	}
	return nil
}

func (t *Task) start() error {
	ctx, cancel := context.WithTimeout(t.runCtx, 2*time.Minute)
	defer cancel()
	cfg := t.cfg
	var err error
	if t.meta, err = connectMeta(ctx, cfg); err != nil {
		return err
	}
	t.cat = &catalog{conn: t.meta}
	t.types = &typeResolver{cfg: cfg, lookup: func(oid uint32) (*pgType, error) { return t.cat.lookupType(t.runCtx, oid) }}
	var walLevel string
	if err := t.meta.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return fmt.Errorf("reading wal_level of %s: %w", cfg.redacted(), err)
	}
	if walLevel != "logical" {
		return fmt.Errorf("Postgres server wal_level property must be 'logical' but is: '%s'", walLevel)
	}
	if err := t.ensurePublication(ctx); err != nil {
		return err
	}

	var stored *position
	if t.ctx != nil {
		off, err := t.ctx.Offset(t.partition)
		if err != nil {
			return fmt.Errorf("reading the stored offset: %w", err)
		}
		if off != nil {
			if stored, err = parseOffset(off); err != nil {
				return fmt.Errorf("the stored offset %v is invalid: %w", off, err)
			}
		}
	}
	slot, err := readSlot(ctx, t.meta, cfg.slot)
	if err != nil {
		return err
	}
	if slot != nil {
		if slot.plugin != "pgoutput" {
			return fmt.Errorf("replication slot %q uses the plugin %q; this connector needs a pgoutput slot: drop it or set slot.name", cfg.slot, slot.plugin)
		}
		if slot.database != cfg.dbname {
			return fmt.Errorf("replication slot %q belongs to database %q, not %q: set slot.name to a slot of its own", cfg.slot, slot.database, cfg.dbname)
		}
	}

	mode := cfg.snapshotMode
	needSnapshot := false
	switch {
	case stored == nil:
		needSnapshot = mode != SnapshotNoData
		t.log.Info("No previous offset found", "snapshot", needSnapshot)
	case !stored.snapshotDone():
		needSnapshot = mode != SnapshotNoData
		t.log.Info("The previous snapshot was not completed", "snapshot", needSnapshot)
	default:
		needSnapshot = mode == SnapshotAlways
	}
	streamAfter := mode != SnapshotInitialOnly
	if stored != nil && !needSnapshot && streamAfter {
		if problem := walProblem(stored, slot, cfg.slot); problem != "" {
			if mode != SnapshotWhenNeeded {
				return fmt.Errorf("cannot resume streaming from the stored offset (lsn_commit/lsn_proc/lsn = %s): %s. "+
					"The WAL needed from that position is gone, and the changes since cannot be read again. To recover, take a new snapshot: "+
					"stop the connector and DELETE its offsets (DELETE /connectors/<name>/offsets), or set snapshot.mode=when_needed, "+
					"which snapshots whenever the stored position is no longer available", stored.commitLSN(), problem)
			}
			t.log.Warn("The stored offset's position is no longer available in the slot; taking a new snapshot (snapshot.mode=when_needed)", "problem", problem)
			needSnapshot = true
		}
	}
	if stored != nil && stored.snapshotDone() && mode == SnapshotInitialOnly {
		t.log.Info("The snapshot was completed and snapshot.mode is initial_only: nothing to do")
		t.phase = phaseIdle
		return nil
	}

	if slot != nil {
		t.slotFlushed = slot.confirmedFlush
	}
	if t.repl, err = connectRepl(ctx, cfg); err != nil {
		return err
	}
	var exported string
	var consistent pglogrepl.LSN
	switch {
	case slot == nil:
		action := "NOEXPORT_SNAPSHOT"
		if needSnapshot {
			action = "EXPORT_SNAPSHOT"
		}
		res, err := pglogrepl.CreateReplicationSlot(ctx, t.repl, cfg.slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{SnapshotAction: action})
		if err != nil {
			return fmt.Errorf("creating replication slot %q: %w", cfg.slot, err)
		}
		if consistent, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
			return err
		}
		exported = res.SnapshotName
		t.slotFlushed = consistent
		t.log.Info("Created replication slot", "slot", cfg.slot, "consistentPoint", consistent)
	case needSnapshot:
		// The slot exists: a temporary slot exports a snapshot exactly
		// consistent with its creation point, from which the existing slot
		// then streams.
		tmp, err := connectRepl(ctx, cfg)
		if err != nil {
			return err
		}
		defer tmp.Close(context.Background())
		name := fmt.Sprintf("%.40s_snap_%d", cfg.slot, time.Now().UnixNano()%1_000_000_000_000)
		res, err := pglogrepl.CreateReplicationSlot(ctx, tmp, name, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Temporary: true, SnapshotAction: "EXPORT_SNAPSHOT"})
		if err != nil {
			return fmt.Errorf("creating a temporary replication slot for the snapshot: %w", err)
		}
		if consistent, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
			return err
		}
		exported = res.SnapshotName
		if err := t.beginSnapshot(ctx, exported, consistent); err != nil {
			return err
		}
	}

	if needSnapshot {
		if t.snap == nil {
			if err := t.beginSnapshot(ctx, exported, consistent); err != nil {
				return err
			}
		}
		t.startLSN = consistent
		t.pos = position{lsn: consistent, txID: t.snap.txID, hasTxID: true, tsUsec: time.Now().UnixMicro(), hasTS: true}
		t.phase = phaseSnapshot
		return nil
	}

	switch {
	case stored != nil:
		t.pos = *stored
		t.pos.snapshot, t.pos.lastSnapshotRecord, t.pos.snapshotCompleted = false, false, false
		t.startLSN = stored.startLSN()
		t.resume = resumeFilter{commitLSN: stored.commitLSN()}
		if stored.midTransaction() {
			t.resume.midTx, t.resume.xid, t.resume.procLSN = true, uint32(stored.txID), stored.lsnProc
		}
	case slot == nil:
		// Every transaction that committed before the slot's position
		// counts as handled: lsn_commit says so in the offsets.
		t.startLSN = consistent
		t.pos = position{lsn: consistent, lsnCommit: consistent, tsUsec: time.Now().UnixMicro(), hasTS: true}
	default:
		t.startLSN = slot.confirmedFlush
		t.pos = position{lsn: slot.confirmedFlush, lsnCommit: slot.confirmedFlush, tsUsec: time.Now().UnixMicro(), hasTS: true}
	}
	return t.startStreaming()
}

// walProblem says why a stored offset's position can no longer be streamed
// from the slot, or "" when it can: the slot is gone, its WAL was removed,
// or it confirmed a position past the last transaction the offset shows
// as handled (PostgreSQL would silently skip to confirmed_flush_lsn).
func walProblem(p *position, s *slotInfo, name string) string {
	switch {
	case s == nil:
		return fmt.Sprintf("replication slot %q does not exist (it was dropped or never created)", name)
	case s.walStatus == "lost":
		return fmt.Sprintf("replication slot %q lost the WAL it needed (max_slot_wal_keep_size)", name)
	case p.lsnCommit == 0 && p.midTransaction():
		// A change of the first transaction streamed after a snapshot
		// may precede the slot's position (the transaction began before
		// it): without lsn_commit the offset cannot tell.
	case s.confirmedFlush > p.commitLSN():
		return fmt.Sprintf("replication slot %q has confirmed_flush_lsn %s (restart_lsn %s), past the stored position", name, s.confirmedFlush, s.restartLSN)
	}
	return ""
}

// slotInfo is a row of pg_replication_slots.
type slotInfo struct {
	plugin, database string
	restartLSN       pglogrepl.LSN
	confirmedFlush   pglogrepl.LSN
	walStatus        string
	activePID        int64
}

func readSlot(ctx context.Context, conn *pgx.Conn, name string) (*slotInfo, error) {
	var raw []byte
	err := conn.QueryRow(ctx, "SELECT to_jsonb(s)::text FROM pg_catalog.pg_replication_slots s WHERE s.slot_name = $1", name).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading replication slot %q: %w", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	s := &slotInfo{}
	s.plugin, _ = m["plugin"].(string)
	s.database, _ = m["database"].(string)
	s.walStatus, _ = m["wal_status"].(string)
	if pid, ok := m["active_pid"].(float64); ok {
		s.activePID = int64(pid)
	}
	if v, ok := m["restart_lsn"].(string); ok {
		s.restartLSN, _ = pglogrepl.ParseLSN(v)
	}
	if v, ok := m["confirmed_flush_lsn"].(string); ok {
		s.confirmedFlush, _ = pglogrepl.ParseLSN(v)
	}
	return s, nil
}

// sessionParams make the server write values in the forms the converters
// read, on the replication connection (where pgoutput formats them) as on
// the others.
var sessionParams = map[string]string{
	"DateStyle":          "ISO, YMD",
	"TimeZone":           "UTC",
	"IntervalStyle":      "iso_8601",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
}

func connectMeta(ctx context.Context, cfg *config) (*pgx.Conn, error) {
	pc, err := pgx.ParseConfig(cfg.dsn(false))
	if err != nil {
		return nil, fmt.Errorf("invalid connection settings: %w", err)
	}
	for k, v := range sessionParams {
		pc.RuntimeParams[k] = v
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", cfg.redacted(), err)
	}
	return conn, nil
}

func connectRepl(ctx context.Context, cfg *config) (*pgconn.PgConn, error) {
	pc, err := pgconn.ParseConfig(cfg.dsn(true))
	if err != nil {
		return nil, fmt.Errorf("invalid connection settings: %w", err)
	}
	for k, v := range sessionParams {
		pc.RuntimeParams[k] = v
	}
	conn, err := pgconn.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("opening a replication connection to %s: %w", cfg.redacted(), err)
	}
	return conn, nil
}

// ensurePublication makes sure the publication exists, as
// publication.autocreate.mode says.
func (t *Task) ensurePublication(ctx context.Context) error {
	cfg := t.cfg
	var allTables bool
	err := t.meta.QueryRow(ctx, "SELECT puballtables FROM pg_catalog.pg_publication WHERE pubname = $1", cfg.publication).Scan(&allTables)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("reading publication %q: %w", cfg.publication, err)
	}
	exec := func(sql string) error {
		_, err := t.meta.PgConn().Exec(ctx, sql).ReadAll()
		return err
	}
	switch cfg.pubMode {
	case PublicationDisabled:
		if !exists {
			return fmt.Errorf("Publication autocreation is disabled, please create one and restart the connector. (publication.name=%s)", cfg.publication)
		}
	case PublicationAllTables:
		if !exists {
			t.log.Info("Creating new publication for all tables", "publication", cfg.publication)
			if err := exec("CREATE PUBLICATION " + quoteIdent(cfg.publication) + " FOR ALL TABLES"); err != nil {
				return fmt.Errorf("creating publication %q: %w", cfg.publication, err)
			}
		}
	case PublicationFiltered:
		tables, err := t.cat.listTables(ctx)
		if err != nil {
			return err
		}
		var names []string
		for _, tb := range tables {
			if cfg.captured(tb.schema, tb.name) {
				names = append(names, quoteIdent(tb.schema)+"."+quoteIdent(tb.name))
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("No table filters found for filtered publication %s", cfg.publication)
		}
		list := strings.Join(names, ", ")
		switch {
		case !exists:
			t.log.Info("Creating new publication for the captured tables", "publication", cfg.publication, "tables", list)
			if err := exec("CREATE PUBLICATION " + quoteIdent(cfg.publication) + " FOR TABLE " + list); err != nil {
				return fmt.Errorf("creating publication %q: %w", cfg.publication, err)
			}
		case !allTables:
			if err := exec("ALTER PUBLICATION " + quoteIdent(cfg.publication) + " SET TABLE " + list); err != nil {
				return fmt.Errorf("updating publication %q: %w", cfg.publication, err)
			}
		}
	}
	return nil
}

// startStreaming starts the replication stream at t.startLSN, retrying
// while another connection still holds the slot (a previous task that was
// not stopped cleanly), slot.max.retries times slot.retry.delay.ms apart.
func (t *Task) startStreaming() error {
	cfg := t.cfg
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(quoteIdent(cfg.publication))}
	var err error
	for attempt := 1; ; attempt++ {
		if t.repl == nil {
			if t.repl, err = connectRepl(t.runCtx, cfg); err != nil {
				return err
			}
		}
		err = pglogrepl.StartReplication(t.runCtx, t.repl, cfg.slot, t.startLSN, pglogrepl.StartReplicationOptions{PluginArgs: args})
		if err == nil {
			break
		}
		t.repl.Close(context.Background())
		t.repl = nil
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" || attempt >= cfg.slotRetries {
			return fmt.Errorf("starting replication from slot %q at %s: %w", cfg.slot, t.startLSN, err)
		}
		t.log.Warn("Replication slot is in use, waiting", "slot", cfg.slot, "attempt", attempt, "error", err)
		select {
		case <-time.After(cfg.slotDelay):
		case <-t.runCtx.Done():
			return t.runCtx.Err()
		}
	}
	t.log.Info("Streaming changes", "slot", cfg.slot, "from", t.startLSN)
	t.rels = map[uint32]*tableInfo{}
	t.lastBeat = time.Now()
	s := startStream(t.repl, cfg.statusInterval, cfg.maxQueue, t.slotFlushed)
	t.repl = nil
	t.mu.Lock()
	t.stream = s
	t.mu.Unlock()
	t.phase = phaseStream
	return nil
}

// Poll returns the next records: snapshot reads, then change events.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	switch t.phase {
	case phaseSnapshot:
		return t.pollSnapshot(ctx)
	case phaseStream:
		return t.pollStream(ctx)
	}
	select {
	case <-ctx.Done():
	case <-time.After(t.pollWait()):
	}
	return nil, nil
}

func (t *Task) pollWait() time.Duration {
	if t.cfg == nil {
		return time.Second
	}
	return min(t.cfg.pollInterval, time.Second)
}

// Commit confirms to the slot the position of the offset the runtime has
// just made durable: its lsn_commit (else lsn_proc). Nothing else ever
// advances the slot, so it never releases WAL a stored offset may need.
func (t *Task) Commit() error {
	if t.cfg == nil || t.ctx == nil || t.cfg.manualFlush {
		return nil
	}
	t.mu.Lock()
	s := t.stream
	t.mu.Unlock()
	if s == nil {
		return nil // not streaming (snapshot offsets flush nothing)
	}
	off, err := t.ctx.Offset(t.partition)
	if err != nil || off == nil {
		return err
	}
	p, err := parseOffset(off)
	if err != nil {
		return err
	}
	if p.snapshot && !p.snapshotDone() {
		return nil
	}
	if lsn := p.flushLSN(); lsn != 0 {
		s.requestFlush(lsn)
	}
	return nil
}

// Stop closes the connections; with slot.drop.on.stop it drops the slot.
func (t *Task) Stop() error {
	if t.cancel != nil {
		t.cancel()
	}
	t.mu.Lock()
	s := t.stream
	t.stream = nil // a Commit after Stop has nothing to confirm to
	t.mu.Unlock()
	if s != nil {
		s.close()
	}
	if t.repl != nil {
		t.repl.Close(context.Background())
		t.repl = nil
	}
	if t.cfg != nil && t.cfg.dropSlot && t.meta != nil {
		t.dropSlot()
	}
	t.closeAll()
	return nil
}

func (t *Task) dropSlot() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if t.snap != nil && t.snap.open {
		t.meta.PgConn().Exec(ctx, "ROLLBACK").ReadAll()
	}
	for {
		_, err := t.meta.Exec(ctx, "SELECT pg_drop_replication_slot($1) FROM pg_catalog.pg_replication_slots WHERE slot_name = $1", t.cfg.slot)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || ctx.Err() != nil {
			if err != nil {
				t.log.Warn("Could not drop the replication slot", "slot", t.cfg.slot, "error", err)
			} else {
				t.log.Info("Dropped the replication slot", "slot", t.cfg.slot)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (t *Task) closeAll() {
	if t.cancel != nil {
		t.cancel()
	}
	if t.repl != nil {
		t.repl.Close(context.Background())
		t.repl = nil
	}
	if t.meta != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.meta.Close(ctx)
		cancel()
		t.meta = nil
	}
}
