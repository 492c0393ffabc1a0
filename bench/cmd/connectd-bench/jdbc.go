package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The JDBC figures use the machine's PostgreSQL: 127.0.0.1:5432, database
// test, user postgres, trust auth. Each figure works in a schema of its
// own, dropped at the end (and on SIGINT, SIGTERM, SIGHUP).
const (
	pgDSN  = "postgres://postgres@127.0.0.1:5432/test?connect_timeout=5"
	pgJDBC = "jdbc:postgresql://127.0.0.1:5432/test"
	pgUser = "postgres"
)

// pgConnect opens a pgx connection to the bench database.
func pgConnect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, pgDSN)
}

// pgCheck reports why PostgreSQL cannot be used, or nil.
func pgCheck() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgConnect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// benchSchemas are the schemas the bench created and has not dropped yet.
var benchSchemas = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// createSchema creates a fresh schema and returns it with the function
// that drops it.
func createSchema(ctx context.Context, conn *pgx.Conn, kind string) (string, func(), error) {
	name := fmt.Sprintf("connectd_bench_%s_%d_%d", kind, os.Getpid(), time.Now().UnixNano()%1_000_000_000)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", nil, fmt.Errorf("creating schema %s: %w", name, err)
	}
	benchSchemas.Lock()
	benchSchemas.m[name] = true
	benchSchemas.Unlock()
	return name, func() { dropSchema(name) }, nil
}

// dropSchema drops a bench schema on a connection of its own (the
// figure's may be broken), waiting 20 s at most for locks.
func dropSchema(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgConnect(ctx)
	if err == nil {
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "connectd-bench: dropping schema %s: %v\n", name, err)
		return
	}
	benchSchemas.Lock()
	delete(benchSchemas.m, name)
	benchSchemas.Unlock()
}

// dropBenchSchemas drops what is left; for the signal handler, after the
// workers were killed (their sessions no longer hold locks).
func dropBenchSchemas() {
	benchSchemas.Lock()
	names := make([]string, 0, len(benchSchemas.m))
	for n := range benchSchemas.m {
		names = append(names, n)
	}
	benchSchemas.Unlock()
	for _, n := range names {
		dropSchema(n)
	}
}

// benchCPU is the CPU time this process has used so far.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchConnector reports on the returned channel when the worker exits
// or the connector or one of its tasks is FAILED; it checks every 250 ms
// until ctx is done.
func watchConnector(ctx context.Context, p *proc, name string) <-chan error {
	fail := make(chan error, 1)
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.exited:
				fail <- fmt.Errorf("connectd exited (%v); log:\n%s", p.waitErr, p.logTail())
				return
			case <-tick.C:
			}
			code, body, err := p.do(ctx, "GET", "/connectors/"+name+"/status", "")
			if err != nil || code != 200 {
				continue
			}
			var st struct {
				Connector struct {
					State string `json:"state"`
					Trace string `json:"trace"`
				} `json:"connector"`
				Tasks []struct {
					State string `json:"state"`
					Trace string `json:"trace"`
				} `json:"tasks"`
			}
			if json.Unmarshal(body, &st) != nil {
				continue
			}
			if st.Connector.State == "FAILED" {
				fail <- fmt.Errorf("connector %s FAILED: %s", name, st.Connector.Trace)
				return
			}
			for i, t := range st.Tasks {
				if t.State == "FAILED" {
					fail <- fmt.Errorf("task %d of %s FAILED: %s", i, name, t.Trace)
					return
				}
			}
		}
	}()
	return fail
}

func postConnector(ctx context.Context, p *proc, name string, config map[string]string) error {
	body, _ := json.Marshal(map[string]any{"name": name, "config": config})
	_, err := p.must(ctx, 201, "POST", "/connectors", string(body))
	return err
}

// ---- jdbc-source ----

// jdbcSourceResult holds every run of the jdbc-source figure.
type jdbcSourceResult struct {
	rows    int
	schemas bool          // value.converter.schemas.enable
	fill    time.Duration // CREATE TABLE, INSERT ... SELECT, VACUUM ANALYZE
	// Each round's worker reads the table twice, each time with a new
	// connector to a new topic: first as a fresh process, then again
	// once it has run, as a worker that has been up for a while does.
	fresh, running jdbcSourcePasses
	// pgx alone, each the limit of the pass it is like: on a new
	// connection (connect to the last row scanned), as a fresh pass
	// starts; and on the bench's open connection, whose backend has read
	// the table before, as a running pass reads through the connection
	// the fresh pass's task handed on.
	pgxNew, pgxOpen jdbcPgxRuns
	lastLen         int // bytes of the last record's value
}

// jdbcPgxRuns holds the pgx runs of one kind.
type jdbcPgxRuns struct {
	rates []float64 // rows/s
	cpu   []cpuUse  // the bench's, the machine's and PostgreSQL's
}

// jdbcSourcePasses holds the connectd runs of one kind.
type jdbcSourcePasses struct {
	rates []float64 // rows/s, POST to end offset == rows
	first []time.Duration
	cpu   []cpuUse // worker + bench
}

func (ps *jdbcSourcePasses) add(rate float64, first time.Duration, cpu cpuUse) {
	ps.rates = append(ps.rates, rate)
	ps.first = append(ps.first, first)
	ps.cpu = append(ps.cpu, cpu)
}

// benchJdbcSource runs the jdbc-source figure: a rows-row table read by a
// JdbcSourceConnector into the embedded broker of a fresh worker, and by
// pgx alone, runs times each, alternating which goes first.
func benchJdbcSource(bin, work string, rows, runs int, schemas bool, timeout time.Duration) (res *jdbcSourceResult, err error) {
	res = &jdbcSourceResult{rows: rows, schemas: schemas}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	schema, drop, err := createSchema(ctx, conn, "src")
	if err != nil {
		return nil, err
	}
	defer drop()
	table := schema + ".orders"
	t0 := time.Now()
	for _, q := range []string{
		"CREATE TABLE " + table + " (id BIGSERIAL PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(10,2) NOT NULL, updated_at TIMESTAMP NOT NULL)",
		"INSERT INTO " + table + " (customer, amount, updated_at) SELECT 'customer-' || (g % 1000), (g % 100000) / 100.0, " +
			"TIMESTAMP '2024-01-01' + g * INTERVAL '1 second' FROM generate_series(1, " + strconv.Itoa(rows) + ") g",
		// Sets the hint bits and the visibility map, so that the first
		// reader does not pay for them.
		"VACUUM ANALYZE " + table,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%.60s...: %w", q, err)
		}
	}
	res.fill = time.Since(t0)
	logf("jdbc-source: filled %s with %d rows in %v", table, rows, res.fill.Round(time.Millisecond))
	// Warm up: the first read brings the table into PostgreSQL's buffers
	// and the page cache for both paths, and has the open connection's
	// backend read it once.
	if n, err := pgxScan(ctx, conn, table); err != nil {
		return nil, err
	} else if n != rows {
		return nil, fmt.Errorf("pgx read %d rows of %s, want %d", n, table, rows)
	}
	for r := 1; r <= runs; r++ {
		if err := jdbcSourceRound(bin, work, table, conn, r, res, timeout); err != nil {
			return nil, fmt.Errorf("jdbc-source round %d: %w", r, err)
		}
	}
	return res, nil
}

// pgxRead is the limit of the jdbc-source figure's fresh pass: a new
// connection, then pgxScan. It also returns the connection's backend: its
// process id, and its CPU time read just before it ends with the
// connection.
func pgxRead(ctx context.Context, table string) (int, endedBackend, error) {
	conn, err := pgConnect(ctx)
	if err != nil {
		return 0, endedBackend{}, err
	}
	defer conn.Close(context.Background())
	n, err := pgxScan(ctx, conn, table)
	b := endedBackend{pid: int(conn.PgConn().PID())}
	b.cpu, _ = procCPU(b.pid)
	return n, b, err
}

// endedBackend is a PostgreSQL backend that a run closed: the machine's
// count of PostgreSQL's CPU misses it once the process has gone.
type endedBackend struct {
	pid int
	cpu time.Duration
}

// wait waits, up to 2 s, for the backend's process to end, so that the
// machine's count after the run does not have it too.
func (b endedBackend) wait() {
	if b.pid == 0 {
		return
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", b.pid)); err != nil {
			return
		}
	}
}

// pgxScan reads the table's columns, in id order, into Go values with pgx
// alone, on conn.
func pgxScan(ctx context.Context, conn *pgx.Conn, table string) (int, error) {
	rs, err := conn.Query(ctx, "SELECT id, customer, amount, updated_at FROM "+table+" ORDER BY id")
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	var (
		id       int64
		customer string
		amount   pgtype.Numeric
		updated  time.Time
		n        int
	)
	for rs.Next() {
		if err := rs.Scan(&id, &customer, &amount, &updated); err != nil {
			return n, err
		}
		n++
	}
	return n, rs.Err()
}

func jdbcSourceRound(bin, work, table string, open *pgx.Conn, r int, res *jdbcSourceResult, timeout time.Duration) (err error) {
	dir := filepath.Join(work, fmt.Sprintf("jdbc-source-%d", r))
	p, cl, stop, err := readyWorker(bin, dir, map[string]string{
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": strconv.FormatBool(res.schemas),
		"offset.flush.interval.ms":       "1000",
	})
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	adm := kadm.NewClient(cl)
	// pass reads the whole table with a new connector into a new topic.
	pass := func(kind string, prefix string, into *jdbcSourcePasses) error {
		topic := prefix + table[strings.LastIndexByte(table, '.')+1:]
		name := fmt.Sprintf("jdbc-source-%d-%s", r, kind)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		// Created before the clock starts, with the partition count the
		// broker gives auto-created topics.
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			return fmt.Errorf("creating topic %s: %w", topic, err)
		}
		var done, first, start time.Time
		cpu, err := measureCPU(p, func() error {
			start = time.Now()
			if err := postConnector(ctx, p, name, map[string]string{
				"connector.class":          "io.confluent.connect.jdbc.JdbcSourceConnector",
				"tasks.max":                "1",
				"connection.url":           pgJDBC,
				"connection.user":          pgUser,
				"mode":                     "incrementing",
				"incrementing.column.name": "id",
				"table.whitelist":          table,
				"batch.max.rows":           "10000",
				"poll.interval.ms":         "100",
				"topic.prefix":             prefix,
			}); err != nil {
				return err
			}
			var err error
			done, first, err = waitEnd(ctx, adm, topic, int64(res.rows), watchConnector(ctx, p, name))
			return err
		})
		if err != nil {
			return fmt.Errorf("%w; worker log:\n%s", err, p.logTail())
		}
		// The connector would go on querying the table every 100 ms.
		if _, err := p.must(ctx, 204, "DELETE", "/connectors/"+name, ""); err != nil {
			return err
		}
		if res.lastLen, err = checkLastRecord(ctx, p.kafka, topic, int64(res.rows), res.schemas); err != nil {
			return err
		}
		v := float64(res.rows) / done.Sub(start).Seconds()
		into.add(v, first.Sub(start), cpu)
		logf("jdbc-source round %d: connectd (%s worker) %s rows/s (%.2f s, first record after %v; %v; PostgreSQL %.2f CPU-s)",
			r, kind, grouped(v), done.Sub(start).Seconds(), first.Sub(start).Round(time.Millisecond), cpu, cpu.postgres.Seconds())
		return nil
	}
	connectd := func() error {
		if err := pass("fresh", "jdbc-", &res.fresh); err != nil {
			return err
		}
		return pass("running", "jdbc-again-", &res.running)
	}
	// read returns the backend the run ended, if it closed its
	// connection.
	plainRun := func(kind string, into *jdbcPgxRuns, read func(context.Context) (int, endedBackend, error)) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		h0 := readHost()
		c0 := benchCPU()
		start := time.Now()
		n, ended, err := read(ctx)
		wall := time.Since(start)
		cpu := cpuUse{bench: benchCPU() - c0, wall: wall}
		// Read before the wait, so that the machine's busy time is the
		// run's; the backend's is counted on its own.
		busy := machineBusy()
		ended.wait()
		cpu.machine, cpu.postgres = busy-h0.busy, postgresCPU()-h0.postgres+ended.cpu
		if err != nil {
			return err
		}
		if n != res.rows {
			return fmt.Errorf("pgx read %d rows, want %d", n, res.rows)
		}
		v := float64(n) / wall.Seconds()
		into.rates = append(into.rates, v)
		into.cpu = append(into.cpu, cpu)
		logf("jdbc-source round %d: pgx alone, %s %s rows/s (%.2f s; bench %.2f CPU-s, PostgreSQL %.2f CPU-s; machine %.2f of %d cores busy)",
			r, kind, grouped(v), wall.Seconds(), cpu.bench.Seconds(), cpu.postgres.Seconds(), cpu.machine.Seconds()/wall.Seconds(), runtime.NumCPU())
		return nil
	}
	plain := func() error {
		if err := plainRun("new connection", &res.pgxNew, func(ctx context.Context) (int, endedBackend, error) { return pgxRead(ctx, table) }); err != nil {
			return err
		}
		return plainRun("open connection", &res.pgxOpen, func(ctx context.Context) (int, endedBackend, error) {
			n, err := pgxScan(ctx, open, table)
			return n, endedBackend{}, err
		})
	}
	order := []func() error{plain, connectd}
	if r%2 == 0 {
		order = []func() error{connectd, plain}
	}
	for _, f := range order {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// checkLastRecord reads the topic's last record (offset n-1) and checks
// that it is the table's last row, id n; it returns the value's size.
func checkLastRecord(ctx context.Context, bootstrap, topic string, n int64, schemas bool) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(n - 1)}}))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("reading the last record of %s: %w", topic, err)
		}
		var rec *kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset == n-1 {
				rec = r
			}
		})
		if rec == nil {
			continue
		}
		var v struct {
			ID      *int64 `json:"id"`
			Payload struct {
				ID *int64 `json:"id"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			return 0, fmt.Errorf("the last record of %s: %w: %.200s", topic, err, rec.Value)
		}
		id := v.ID
		if schemas {
			id = v.Payload.ID
		}
		if id == nil || *id != n {
			return 0, fmt.Errorf("the last record of %s is not row %d: %.200s", topic, n, rec.Value)
		}
		return len(rec.Value), nil
	}
}

// ---- jdbc-sink ----

// jdbcSinkResult holds every run of the jdbc-sink figure, in rows/s.
type jdbcSinkResult struct {
	records                        int
	valueBytes                     int
	produce                        time.Duration
	copy, insert, upsert, reupsert []float64
	polls                          []int               // probes of the insert, upsert and re-upsert runs
	cpu                            map[string][]cpuUse // by mode: worker + bench
	shape                          string
	flush                          time.Duration // the worker's offset.flush.interval.ms
}

// The sink's records: the JsonConverter's envelope around a struct.
const sinkValueSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":false,"field":"customer"},{"type":"double","optional":false,"field":"amount"}],` +
	`"optional":false,"name":"bench.order"}`

// sinkDDL is what auto.create makes of that schema with pk.mode
// record_value and pk.fields id (the figure checks it).
const sinkDDL = ` (id BIGINT NOT NULL, customer TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL, PRIMARY KEY (id))`

func sinkRow(i int) (int64, string, float64) {
	return int64(i), "customer-" + strconv.Itoa(i%1000), float64(i%100000) / 100
}

// benchJdbcSink runs the jdbc-sink figure: n records on a topic of one
// worker's embedded broker, written to fresh tables by JdbcSinkConnectors
// (insert, upsert into an empty table, upsert of the same records again)
// and, as the limit, by pgx's CopyFrom, runs times.
func benchJdbcSink(bin, work string, n, runs int, flush, timeout time.Duration) (res *jdbcSinkResult, err error) {
	res = &jdbcSinkResult{records: n, flush: flush, cpu: map[string][]cpuUse{}}
	// Setup, then four runs per round, each limited to timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(4*runs)*timeout)
	defer cancel()
	conn, err := pgConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	schema, drop, err := createSchema(ctx, conn, "sink")
	if err != nil {
		return nil, err
	}
	defer drop()

	dir := filepath.Join(work, "jdbc-sink")
	p, cl, stop, err := sinkWorker(bin, dir, flush)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	adm := kadm.NewClient(cl)
	const topic = "jdbc-sink-orders"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		return nil, fmt.Errorf("creating topic %s: %w", topic, err)
	}
	t0 := time.Now()
	var produced firstError
	for i := 1; i <= n; i++ {
		id, customer, amount := sinkRow(i)
		v := fmt.Appendf(nil, `{"schema":%s,"payload":{"id":%d,"customer":%q,"amount":%s}}`,
			sinkValueSchema, id, customer, strconv.FormatFloat(amount, 'g', -1, 64))
		res.valueBytes = len(v)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.FormatInt(id, 10)), Value: v}, produced.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	if produced.err != nil {
		return nil, fmt.Errorf("producing the sink's records: %w", produced.err)
	}
	if end, err := endOffset(ctx, adm, topic); err != nil || end != int64(n) {
		return nil, fmt.Errorf("topic %s holds %d records (%v), want %d", topic, end, err, n)
	}
	res.produce = time.Since(t0)
	logf("jdbc-sink: produced %d records (%d-byte values) to %s in %v", n, res.valueBytes, topic, res.produce.Round(time.Millisecond))

	// The limit's rows, built before any clock starts.
	rows := make([][]any, n)
	for i := range rows {
		id, customer, amount := sinkRow(i + 1)
		rows[i] = []any{id, customer, amount}
	}
	for r := 1; r <= runs; r++ {
		if err := jdbcSinkRound(ctx, p, conn, schema, topic, rows, r, res, timeout); err != nil {
			return nil, fmt.Errorf("jdbc-sink round %d: %w", r, err)
		}
	}
	return res, nil
}

func jdbcSinkRound(ctx context.Context, p *proc, conn *pgx.Conn, schema, topic string, rows [][]any, r int, res *jdbcSinkResult, timeout time.Duration) error {
	n := len(rows)
	copyT, insertT, upsertT := fmt.Sprintf("copy_%d", r), fmt.Sprintf("insert_%d", r), fmt.Sprintf("upsert_%d", r)
	// No timed run pays for the dirty pages of the one before it.
	checkpoint := func() error {
		_, err := conn.Exec(ctx, "CHECKPOINT")
		return err
	}
	copyRun := func() error {
		if _, err := conn.Exec(ctx, "CREATE TABLE "+schema+"."+copyT+sinkDDL); err != nil {
			return err
		}
		if err := checkpoint(); err != nil {
			return err
		}
		start := time.Now()
		got, err := conn.CopyFrom(ctx, pgx.Identifier{schema, copyT}, []string{"id", "customer", "amount"}, pgx.CopyFromRows(rows))
		d := time.Since(start)
		if err != nil {
			return err
		}
		if got != int64(n) {
			return fmt.Errorf("COPY wrote %d rows, want %d", got, n)
		}
		res.copy = append(res.copy, float64(n)/d.Seconds())
		logf("jdbc-sink round %d: pgx CopyFrom %s rows/s (%.2f s)", r, grouped(float64(n)/d.Seconds()), d.Seconds())
		return nil
	}
	sinkRun := func(what, table, mode string, out *[]float64) error {
		if err := checkpoint(); err != nil {
			return err
		}
		// The re-upsert is over when the last record's row has a new
		// version: its xmin changes.
		var before string
		var oldXmins []string
		if mode == "reupsert" {
			if err := conn.QueryRow(ctx, "SELECT xmin::text FROM "+schema+"."+table+" WHERE id = $1", int64(n)).Scan(&before); err != nil {
				return err
			}
			if err := conn.QueryRow(ctx, "SELECT array_agg(DISTINCT xmin::text) FROM "+schema+"."+table).Scan(&oldXmins); err != nil {
				return err
			}
		}
		insertMode := "upsert"
		if mode == "insert" {
			insertMode = "insert"
		}
		name := fmt.Sprintf("jdbc-sink-%s-%d", mode, r)
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var start, posted, done time.Time
		var probes probeStats
		cpu, err := measureCPU(p, func() (err error) {
			start = time.Now()
			if err := postConnector(rctx, p, name, map[string]string{
				"connector.class":   "io.confluent.connect.jdbc.JdbcSinkConnector",
				"tasks.max":         "1",
				"connection.url":    pgJDBC,
				"connection.user":   pgUser,
				"topics":            topic,
				"table.name.format": schema + "." + table,
				"insert.mode":       insertMode,
				"pk.mode":           "record_value",
				"pk.fields":         "id",
				"auto.create":       "true",
			}); err != nil {
				return err
			}
			posted = time.Now()
			done, probes, err = waitLastRow(rctx, conn, schema+"."+table, int64(n), before, watchConnector(rctx, p, name))
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w; worker log:\n%s", what, err, p.logTail())
		}
		d := done.Sub(start)
		if _, err := p.must(rctx, 204, "DELETE", "/connectors/"+name, ""); err != nil {
			return err
		}
		// Checked after the clock: every row is there, once, and the
		// re-upsert wrote every one of them again.
		var count int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+table).Scan(&count); err != nil {
			return err
		}
		if count != int64(n) {
			return fmt.Errorf("%s: %s holds %d rows, want %d", what, table, count, n)
		}
		if mode == "reupsert" {
			var stale int64
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+schema+"."+table+" WHERE xmin::text = ANY($1)", oldXmins).Scan(&stale); err != nil {
				return err
			}
			if stale != 0 {
				return fmt.Errorf("%s: %d rows of %s were not written again", what, stale, table)
			}
		}
		*out = append(*out, float64(n)/d.Seconds())
		res.polls = append(res.polls, probes.polls)
		res.cpu[mode] = append(res.cpu[mode], cpu)
		logf("jdbc-sink round %d: connectd %s %s rows/s (%.2f s; POST answered after %s, table there after %s; %d probes, slowest %s; %v)",
			r, what, grouped(float64(n)/d.Seconds()), d.Seconds(), ms(posted.Sub(start)), ms(probes.table.Sub(start)), probes.polls, ms(probes.slowest), cpu)
		return nil
	}
	runs := []func() error{
		func() error { return sinkRun("insert", insertT, "insert", &res.insert) },
		func() error { return sinkRun("upsert (new keys)", upsertT, "upsert", &res.upsert) },
		func() error { return sinkRun("upsert over existing rows", upsertT, "reupsert", &res.reupsert) },
	}
	if r%2 == 1 {
		runs = append([]func() error{copyRun}, runs...)
	} else {
		runs = append(runs, copyRun)
	}
	for _, f := range runs {
		if err := f(); err != nil {
			return err
		}
	}
	// The tables auto.create made must be the limit's.
	want, err := tableShape(ctx, conn, schema, copyT)
	if err != nil {
		return err
	}
	res.shape = want
	for _, t := range []string{insertT, upsertT} {
		got, err := tableShape(ctx, conn, schema, t)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("auto.create made %s (%s), unlike the COPY table (%s)", t, got, want)
		}
	}
	// Dropped now, so that autovacuum does not work on them during the
	// next round.
	for _, t := range []string{copyT, insertT, upsertT} {
		if _, err := conn.Exec(ctx, "DROP TABLE "+schema+"."+t); err != nil {
			return err
		}
	}
	return nil
}

// probeStats describes the probes of one waitLastRow.
type probeStats struct {
	polls   int
	table   time.Time     // first probe that found the table
	slowest time.Duration // longest probe
}

// waitLastRow probes every 5 ms, through the primary key, for the row of
// the last record (id) until it is there and, when before is not empty,
// its xmin differs from before. The topic has one partition and the sink
// commits its writes in order, one transaction per flush, so the last
// record's row shows up (or changes) in the transaction that completes
// the table. It returns when.
func waitLastRow(ctx context.Context, conn *pgx.Conn, table string, id int64, before string, fail <-chan error) (time.Time, probeStats, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	q := "SELECT xmin::text FROM " + table + " WHERE id = $1"
	var st probeStats
	timeout := fmt.Errorf("row %d of %s did not show up before the timeout", id, table)
	for {
		var xmin string
		// Before auto.create the table does not exist: that and no row
		// both mean not yet. Simple protocol: no statement is cached
		// while the table is missing.
		t0 := time.Now()
		err := conn.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol, id).Scan(&xmin)
		now := time.Now()
		st.polls++
		st.slowest = max(st.slowest, now.Sub(t0))
		if err == nil && xmin != before {
			if st.table.IsZero() {
				st.table = now
			}
			return now, st, nil
		}
		if err != nil && ctx.Err() != nil {
			return time.Time{}, st, timeout
		}
		var pgErr *pgconn.PgError
		missing := errors.As(err, &pgErr) && pgErr.Code == "42P01" // undefined_table
		if err != nil && !errors.Is(err, pgx.ErrNoRows) && !missing {
			return time.Time{}, st, err
		}
		if !missing && st.table.IsZero() {
			st.table = now
		}
		select {
		case <-ctx.Done():
			return time.Time{}, st, timeout
		case err := <-fail:
			return time.Time{}, st, err
		case <-tick.C:
		}
	}
}

// tableShape describes a table's columns and primary key.
func tableShape(ctx context.Context, conn *pgx.Conn, schema, table string) (string, error) {
	rs, err := conn.Query(ctx, `SELECT column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, schema, table)
	if err != nil {
		return "", err
	}
	var cols []string
	for rs.Next() {
		var name, typ, nullable string
		if err := rs.Scan(&name, &typ, &nullable); err != nil {
			rs.Close()
			return "", err
		}
		if nullable == "NO" {
			typ += " NOT NULL"
		}
		cols = append(cols, name+" "+typ)
	}
	if err := rs.Err(); err != nil {
		return "", err
	}
	var pk []string
	if err := conn.QueryRow(ctx, `SELECT coalesce(array_agg(a.attname ORDER BY a.attnum), '{}') FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = $1::regclass AND i.indisprimary`, schema+"."+table).Scan(&pk); err != nil {
		return "", err
	}
	return strings.Join(cols, ", ") + "; primary key (" + strings.Join(pk, ", ") + ")", nil
}

// ---- report ----

// jdbcResults holds the JDBC figures, or why they were skipped.
type jdbcResults struct {
	source      *jdbcSourceResult
	sink        *jdbcSinkResult
	smtFile     *smtFileResult
	smtSink     *smtSinkResult
	metricsFile *metricsFileResult
	skipped     string // PostgreSQL is unreachable: the reason
	want        []string
}

func (j *jdbcResults) report() (rows []row, notes []string) {
	if j == nil {
		return nil, nil
	}
	// Figures 8, 9 and 10 follow the JDBC ones, whatever returns: the
	// defers run last first, so they are listed from 10 down.
	for _, s := range []interface{ report() ([]row, []string) }{j.metricsFile, j.smtSink, j.smtFile} {
		defer func() {
			r, n := s.report()
			rows, notes = append(rows, r...), append(notes, n...)
		}()
	}
	if j.skipped != "" {
		for _, f := range j.want {
			rows = append(rows, row{figure: f + ": PostgreSQL unreachable", value: "-", limit: "-", ratio: "-", target: "-", result: "skipped"})
		}
		notes = append(notes, fmt.Sprintf("%s: skipped, PostgreSQL at 127.0.0.1:5432 (database test, user postgres, trust auth) is unreachable: %s",
			strings.Join(j.want, ", "), j.skipped))
		return rows, notes
	}
	if s := j.source; s != nil {
		pgxNote := func(kind string, runs *jdbcPgxRuns) string {
			return fmt.Sprintf("pgx alone on %s %s rows/s (median %s; %s)",
				kind, joinF(runs.rates), grouped(median(runs.rates)), hostSummary(runs.cpu, s.rows))
		}
		notes = append(notes,
			fmt.Sprintf("jdbc-source: tasks.max=1, incrementing on id, batch.max.rows=10000, poll.interval.ms=100; JsonConverter values with schemas.enable=%t (last record %d bytes), StringConverter keys; table filled in %s; each round's worker reads the table as a fresh process, then again with a new connector and topic",
				s.schemas, s.lastLen, secs(s.fill)),
			"jdbc-source limits: "+pgxNote("a new connection (the fresh pass's limit)", &s.pgxNew)+"; "+
				pgxNote("the bench's open connection, whose backend has read the table (the running pass's)", &s.pgxOpen))
		for _, pass := range []struct {
			kind  string
			ps    *jdbcSourcePasses
			limit *jdbcPgxRuns
			how   string
		}{{"fresh worker", &s.fresh, &s.pgxNew, "new connection"}, {"running worker", &s.running, &s.pgxOpen, "open connection"}} {
			c, p := slices.Max(pass.ps.rates), slices.Max(pass.limit.rates)
			rows = append(rows, row{
				figure: fmt.Sprintf("JDBC source, %s-row table to topic, %s, best of %d", grouped(float64(s.rows)), pass.kind, len(pass.ps.rates)),
				value:  grouped(c) + " rows/s",
				limit:  "pgx alone, " + pass.how + ", " + grouped(p) + " rows/s",
				ratio:  fmt.Sprintf("%.2f", c/p),
				target: "ratio >= 0.60",
				result: passMiss(c/p >= 0.6),
			})
			notes = append(notes,
				fmt.Sprintf("jdbc-source, %s: connectd runs %s rows/s, median %s, ratio of medians %.2f; first record after %s; %s",
					pass.kind, joinF(pass.ps.rates), grouped(median(pass.ps.rates)), median(pass.ps.rates)/median(pass.limit.rates),
					joinD(pass.ps.first), hostSummary(pass.ps.cpu, s.rows)))
		}
	}
	if k := j.sink; k != nil {
		cp := slices.Max(k.copy)
		what := fmt.Sprintf("JDBC sink, %s records to PostgreSQL", grouped(float64(k.records)))
		for _, m := range []struct {
			name   string
			rates  []float64
			target float64
		}{{"insert", k.insert, 0.5}, {"upsert, new keys", k.upsert, 0.3}, {"upsert over existing rows", k.reupsert, 0}} {
			v := slices.Max(m.rates)
			rw := row{
				figure: fmt.Sprintf("%s, %s, best of %d", what, m.name, len(m.rates)),
				value:  grouped(v) + " rows/s",
				limit:  "pgx COPY " + grouped(cp) + " rows/s",
				ratio:  fmt.Sprintf("%.2f", v/cp),
				target: fmt.Sprintf("ratio >= %.2f", m.target),
				result: passMiss(v/cp >= m.target),
			}
			if m.target == 0 {
				rw.target, rw.result = "none", "n/a"
			}
			rows = append(rows, rw)
		}
		cpuNote := func(mode string) string {
			var cores, perRec []float64
			for _, c := range k.cpu[mode] {
				cores = append(cores, (c.worker+c.bench).Seconds()/c.wall.Seconds())
				perRec = append(perRec, c.worker.Seconds()/float64(k.records)*1e6)
			}
			return fmt.Sprintf("%s %.2f cores, worker %.2f CPU-s per million", mode, median(cores), median(perRec))
		}
		notes = append(notes,
			fmt.Sprintf("jdbc-sink: %d JsonConverter records with schemas (%d-byte values, one partition) produced in %s before the clocks; tasks.max=1, pk.mode=record_value, pk.fields=id, auto.create=true, default batch.size; worker offset.flush.interval.ms=%d; tables %s",
				k.records, k.valueBytes, secs(k.produce), k.flush.Milliseconds(), k.shape),
			fmt.Sprintf("jdbc-sink runs, rows/s: COPY %s; insert %s; upsert %s; upsert over existing rows %s; medians: COPY %s, insert %.2f, upsert %.2f, re-upsert %.2f of COPY; last-row probes per run %v",
				joinF(k.copy), joinF(k.insert), joinF(k.upsert), joinF(k.reupsert), grouped(median(k.copy)),
				median(k.insert)/median(k.copy), median(k.upsert)/median(k.copy), median(k.reupsert)/median(k.copy), k.polls),
			fmt.Sprintf("jdbc-sink CPU (worker + bench, median; PostgreSQL's own not counted): %s; %s; %s",
				cpuNote("insert"), cpuNote("upsert"), cpuNote("reupsert")))
	}
	return rows, notes
}

// hostSummary gives the medians of the runs' CPU per million rows, by
// the worker (when the runs had one), the bench, PostgreSQL and in all,
// and the machine's busy cores, of runtime.NumCPU().
func hostSummary(cs []cpuUse, rows int) string {
	perM := func(f func(cpuUse) time.Duration) float64 {
		var vs []float64
		for _, c := range cs {
			vs = append(vs, f(c).Seconds()/float64(rows)*1e6)
		}
		return median(vs)
	}
	var b strings.Builder
	b.WriteString("CPU-s per million rows (medians): ")
	if slices.ContainsFunc(cs, func(c cpuUse) bool { return c.worker > 0 }) {
		fmt.Fprintf(&b, "worker %.2f (system %.2f) + ", perM(func(c cpuUse) time.Duration { return c.worker }),
			perM(func(c cpuUse) time.Duration { return c.workerSystem }))
	}
	var busy []float64
	for _, c := range cs {
		busy = append(busy, c.machine.Seconds()/c.wall.Seconds())
	}
	fmt.Fprintf(&b, "bench %.2f + PostgreSQL %.2f = %.2f; machine %.2f of %d cores busy",
		perM(func(c cpuUse) time.Duration { return c.bench }),
		perM(func(c cpuUse) time.Duration { return c.postgres }),
		perM(func(c cpuUse) time.Duration { return c.worker + c.bench + c.postgres }), median(busy), runtime.NumCPU())
	return b.String()
}
