package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ---- smt-file, and the file source pairs ----

// A filePair figure runs a FileStreamSource over the same file in two
// ways, in one fresh worker per round: base and other, in alternating
// order, each after an untimed warm-up pass of both.
type filePair struct {
	name        string // the figure's, in logs, topics and connector names
	base, other fileKind
}

// fileKind is one way of running the source.
type fileKind struct {
	label string            // for the log: "no transforms"
	key   string            // in topic and connector names: "plain"
	extra map[string]string // added to the connector's config
	// routed: the connector writes to <topic>-in, which a transform
	// routes to <topic>.
	routed bool
	// during, if set, runs while the timed pass does, until ctx ends.
	during func(ctx context.Context, p *proc)
}

// filePairResult holds a filePair figure's rounds, in lines/s.
type filePairResult struct {
	lines             int
	base, other       []float64
	baseCPU, otherCPU []cpuUse
}

// smtChain is Kafka's transforms the smt-file figure runs, in order: the
// line becomes a struct (FileStreamSource's values are strings, which the
// other three take only as fields), gets a static field, has its field
// renamed, and goes to the topic RegexRouter makes of the connector's.
func smtChain() map[string]string {
	return map[string]string{
		"transforms":                     "hoist,insert,rename,route",
		"transforms.hoist.type":          "org.apache.kafka.connect.transforms.HoistField$Value",
		"transforms.hoist.field":         "line",
		"transforms.insert.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.insert.static.field": "source",
		"transforms.insert.static.value": "bench",
		"transforms.rename.type":         "org.apache.kafka.connect.transforms.ReplaceField$Value",
		"transforms.rename.renames":      "line:text",
		"transforms.route.type":          "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":         "(.*)-in",
		"transforms.route.replacement":   "$1",
	}
}

// smtConverters are both runs' converters: a struct needs JSON.
var smtConverters = map[string]string{
	"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
	"value.converter.schemas.enable": "false",
	"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
}

// smtFilePair is figure 8: the file source without transforms, and
// through smtChain.
var smtFilePair = filePair{
	name:  "smt-file",
	base:  fileKind{label: "no transforms", key: "plain"},
	other: fileKind{label: "through 4 transforms", key: "chain", extra: smtChain(), routed: true},
}

// benchFilePair runs a filePair figure: rounds rounds over a file of
// lines lines.
func benchFilePair(bin, work string, pair filePair, lines, lineBytes, rounds int, timeout time.Duration) (*filePairResult, error) {
	res := &filePairResult{lines: lines}
	path := filepath.Join(work, pair.name+"-lines.txt")
	if err := writeLinesFile(path, lines, lineBytes); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	for r := 1; r <= rounds; r++ {
		if err := filePairRound(bin, work, path, pair, r, res, timeout); err != nil {
			return nil, fmt.Errorf("%s round %d: %w", pair.name, r, err)
		}
	}
	return res, nil
}

func filePairRound(bin, work, path string, pair filePair, r int, res *filePairResult, timeout time.Duration) (err error) {
	dir := filepath.Join(work, fmt.Sprintf("%s-%d", pair.name, r))
	p, cl, stop, err := readyWorker(bin, dir, map[string]string{"offset.flush.interval.ms": "1000"})
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	adm := kadm.NewClient(cl)
	topic := func(k fileKind) string { return fmt.Sprintf("%s-%s-%d", pair.name, k.key, r) }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, k := range []fileKind{pair.base, pair.other} {
		for _, t := range []string{topic(k), topic(k) + "-warm"} {
			if _, err := adm.CreateTopic(ctx, 1, 1, nil, t); err != nil {
				return fmt.Errorf("creating topic %s: %w", t, err)
			}
		}
	}
	// run measures one pass of the file; with nil rates it is the
	// round's untimed warm-up of that kind.
	run := func(k fileKind, suffix string, rates *[]float64, cpus *[]cpuUse) error {
		rctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		name, out := topic(k)+suffix, topic(k)+suffix
		in := out
		if k.routed {
			in += "-in"
		}
		config := map[string]string{"connector.class": "FileStreamSource", "file": path, "topic": in, "tasks.max": "1"}
		for _, m := range []map[string]string{smtConverters, k.extra} {
			for key, v := range m {
				config[key] = v
			}
		}
		var rate float64
		cpu, err := measureCPU(p, func() error {
			if k.during != nil && rates != nil {
				dctx, stopDuring := context.WithCancel(rctx)
				done := make(chan struct{})
				go func() { defer close(done); k.during(dctx, p) }()
				defer func() { stopDuring(); <-done }()
			}
			start := time.Now()
			if err := postConnector(rctx, p, name, config); err != nil {
				return err
			}
			done, _, err := waitEnd(rctx, adm, out, int64(res.lines), watchConnector(rctx, p, name))
			if err != nil {
				return fmt.Errorf("%w; worker log:\n%s", err, p.logTail())
			}
			rate = float64(res.lines) / done.Sub(start).Seconds()
			return nil
		})
		if err != nil {
			return err
		}
		if _, err := p.must(rctx, 204, "DELETE", "/connectors/"+name, ""); err != nil {
			return err
		}
		if rates == nil {
			return nil
		}
		*rates, *cpus = append(*rates, rate), append(*cpus, cpu)
		logf("%s round %d: %s %s lines/s (%v)", pair.name, r, k.label, grouped(rate), cpu)
		return nil
	}
	base := func() error { return run(pair.base, "", &res.base, &res.baseCPU) }
	other := func() error { return run(pair.other, "", &res.other, &res.otherCPU) }
	// A fresh worker's first pass grows its heap, and the page faults of
	// that growth cost more than the pass's records: each kind runs once
	// untimed first, so that both timed runs find the worker as it is
	// after a pass.
	warm := func() error {
		for _, k := range []fileKind{pair.base, pair.other} {
			if err := run(k, "-warm", nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
	order := []func() error{warm, base, other}
	if r%2 == 0 {
		order = []func() error{warm, other, base}
	}
	for _, f := range order {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// row is a filePair figure's line of the table: the median of other
// against that of base, whose label is baseLabel, and the target ratio.
func (r *filePairResult) row(figure, baseLabel string, target float64) row {
	ratio := median(r.other) / median(r.base)
	return row{
		figure: fmt.Sprintf("%s, median of %d", figure, len(r.other)),
		value:  grouped(median(r.other)) + " lines/s",
		limit:  baseLabel + ", same worker: " + grouped(median(r.base)) + " lines/s",
		ratio:  fmt.Sprintf("%.2f", ratio),
		target: fmt.Sprintf("ratio >= %.2f", target),
		result: passMiss(ratio >= target),
	}
}

// smtFileResult is figure 8's rounds.
type smtFileResult struct{ filePairResult }

func (s *smtFileResult) report() (rows []row, notes []string) {
	if s == nil {
		return nil, nil
	}
	rows = append(rows, s.row("file source through HoistField, InsertField (static), ReplaceField (rename), RegexRouter", "no transforms", 0.8))
	notes = append(notes, fmt.Sprintf("smt-file: %d lines, JsonConverter values without schemas; runs with transforms %s lines/s, without %s lines/s; CPU with %s; without %s",
		s.lines, joinF(s.other), joinF(s.base), cpuSummary(s.otherCPU, s.lines), cpuSummary(s.baseCPU, s.lines)))
	return rows, notes
}

// ---- smt-jdbc-sink ----

// smtSinkResult holds the rounds of the smt-jdbc-sink figure: the JDBC
// sink fed Debezium envelopes through ExtractNewRecordState, and the same
// rows already flat, in rows/s.
type smtSinkResult struct {
	records          int
	envelopeBytes    int
	flatBytes        int
	unwrapped, plain []float64
	// padded: the flat rows, each with a key that makes the record as
	// long as its envelope, read as bytes: the envelopes' bytes through
	// the broker and the consumer, none of them converted.
	padded []float64
}

// The envelope's schema: Debezium's PostgreSQL connector's, for a table
// of the sink figure's three columns.
const (
	smtRowSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},` +
		`{"type":"string","optional":false,"field":"customer"},{"type":"double","optional":false,"field":"amount"}],` +
		`"optional":true,"name":"bench.public.orders.Value","field":"%s"}`
	smtSourceSchema = `{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},` +
		`{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},{"type":"string","optional":false,"field":"db"},` +
		`{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},{"type":"int64","optional":true,"field":"lsn"}],` +
		`"optional":false,"name":"io.debezium.connector.postgresql.Source","field":"source"}`
)

var smtEnvelopeSchema = `{"type":"struct","fields":[` + fmt.Sprintf(smtRowSchema, "before") + `,` + fmt.Sprintf(smtRowSchema, "after") + `,` + smtSourceSchema +
	`,{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"bench.public.orders.Envelope","version":2}`

// benchSmtSink runs the smt-jdbc-sink figure: n Debezium insert events and
// the same n rows flat, each on a topic of one worker, upserted into fresh
// tables by JdbcSinkConnectors, in alternating order, runs times.
func benchSmtSink(bin, work string, n, runs int, timeout time.Duration) (res *smtSinkResult, err error) {
	res = &smtSinkResult{records: n}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(2*runs)*timeout)
	defer cancel()
	conn, err := pgConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	schema, drop, err := createSchema(ctx, conn, "smt")
	if err != nil {
		return nil, err
	}
	defer drop()
	dir := filepath.Join(work, "smt-jdbc-sink")
	p, cl, stop, err := sinkWorker(bin, dir, time.Second)
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := stop(); err == nil {
			err = serr
		}
	}()
	adm := kadm.NewClient(cl)
	const envTopic, flatTopic, paddedTopic = "smt-envelopes", "smt-flat", "smt-padded"
	for _, t := range []string{envTopic, flatTopic, paddedTopic} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, t); err != nil {
			return nil, fmt.Errorf("creating topic %s: %w", t, err)
		}
	}
	var produced firstError
	for i := 1; i <= n; i++ {
		id, customer, amount := sinkRow(i)
		row := fmt.Sprintf(`{"id":%d,"customer":%q,"amount":%s}`, id, customer, strconv.FormatFloat(amount, 'g', -1, 64))
		env := fmt.Appendf(nil, `{"schema":%s,"payload":{"before":null,"after":%s,"source":{"version":"2.7.0.Final","connector":"postgresql","name":"bench","ts_ms":1720621800000,"db":"test","schema":"public","table":"orders","lsn":%d},"op":"c","ts_ms":1720621800123}}`,
			smtEnvelopeSchema, row, 1000+i)
		flat := fmt.Appendf(nil, `{"schema":%s,"payload":%s}`, sinkValueSchema, row)
		res.envelopeBytes, res.flatBytes = len(env), len(flat)
		key := []byte(strconv.FormatInt(id, 10))
		cl.Produce(ctx, &kgo.Record{Topic: envTopic, Key: key, Value: env}, produced.promise)
		cl.Produce(ctx, &kgo.Record{Topic: flatTopic, Key: key, Value: flat}, produced.promise)
		padded := append(bytes.Repeat([]byte{'-'}, len(env)-len(flat)), key...)
		cl.Produce(ctx, &kgo.Record{Topic: paddedTopic, Key: padded, Value: flat}, produced.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	if produced.err != nil {
		return nil, fmt.Errorf("producing the records: %w", produced.err)
	}
	for r := 1; r <= runs; r++ {
		if err := smtSinkRound(ctx, p, conn, schema, r, res, timeout, envTopic, flatTopic, paddedTopic); err != nil {
			return nil, fmt.Errorf("smt-jdbc-sink round %d: %w", r, err)
		}
	}
	return res, nil
}

func smtSinkRound(ctx context.Context, p *proc, conn *pgx.Conn, schema string, r int, res *smtSinkResult, timeout time.Duration, envTopic, flatTopic, paddedTopic string) error {
	n := res.records
	// run upserts topic into a fresh table and, unless out is nil (an
	// untimed pass), notes its rate in out.
	run := func(what, topic, table string, extra map[string]string, out *[]float64) error {
		if out == nil {
			table += "_warm"
		}
		if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
			return err
		}
		name := fmt.Sprintf("smt-sink-%s-%d", table, r)
		config := map[string]string{
			"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "tasks.max": "1",
			"connection.url": pgJDBC, "connection.user": pgUser, "topics": topic,
			"table.name.format": schema + "." + fmt.Sprintf("%s_%d", table, r),
			"insert.mode":       "upsert", "pk.mode": "record_value", "pk.fields": "id", "auto.create": "true",
		}
		for k, v := range extra {
			config[k] = v
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var d time.Duration
		cpu, err := measureCPU(p, func() error {
			start := time.Now()
			if err := postConnector(rctx, p, name, config); err != nil {
				return err
			}
			done, _, err := waitLastRow(rctx, conn, schema+"."+fmt.Sprintf("%s_%d", table, r), int64(n), "", watchConnector(rctx, p, name))
			if err != nil {
				return fmt.Errorf("%s: %w; worker log:\n%s", what, err, p.logTail())
			}
			d = done.Sub(start)
			return nil
		})
		if err != nil {
			return err
		}
		if _, err := p.must(rctx, 204, "DELETE", "/connectors/"+name, ""); err != nil {
			return err
		}
		var count int64
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s_%d", schema, table, r)).Scan(&count); err != nil {
			return err
		}
		if count != int64(n) {
			return fmt.Errorf("%s: the table holds %d rows, want %d", what, count, n)
		}
		if out == nil {
			return nil
		}
		*out = append(*out, float64(n)/d.Seconds())
		logf("smt-jdbc-sink round %d: %s %s rows/s (%.2f s; %v, PostgreSQL %.2f s)", r, what, grouped(float64(n)/d.Seconds()), d.Seconds(), cpu, cpu.postgres.Seconds())
		return nil
	}
	unwrap := func(out *[]float64) error {
		return run("Debezium envelopes through ExtractNewRecordState", envTopic, "unwrapped", map[string]string{
			"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		}, out)
	}
	flat := func(out *[]float64) error { return run("the same rows flat", flatTopic, "flat", nil, out) }
	// The pass moves the envelopes' bytes and converts only the flat
	// rows: the connector's own key converter, ByteArrayConverter, hands
	// the padded key on as the consumer read it, and ValueToKey replaces
	// it with the row's id, as ExtractNewRecordState replaces the
	// envelope with its row, so that the sink does not keep the fetched
	// bytes alive until its commit.
	padded := func(out *[]float64) error {
		return run("the same rows flat, padded to the envelopes' length", paddedTopic, "padded", map[string]string{
			"key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
			"transforms":    "key", "transforms.key.type": "org.apache.kafka.connect.transforms.ValueToKey", "transforms.key.fields": "id",
		}, out)
	}
	// The worker runs each once untimed first, as figures 8 and 11 do:
	// its first pass grows its heap (some 14,000 page faults), which no
	// later pass pays.
	if r == 1 {
		for _, warm := range []func(*[]float64) error{unwrap, flat, padded} {
			if err := warm(nil); err != nil {
				return err
			}
		}
	}
	order := []func() error{
		func() error { return unwrap(&res.unwrapped) },
		func() error { return padded(&res.padded) },
		func() error { return flat(&res.plain) },
	}
	if r%2 == 0 {
		slices.Reverse(order)
	}
	for _, f := range order {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (s *smtSinkResult) report() (rows []row, notes []string) {
	if s == nil {
		return nil, nil
	}
	ratio := median(s.unwrapped) / median(s.plain)
	rows = append(rows, row{
		figure: fmt.Sprintf("JDBC sink upserts, %s Debezium envelopes through ExtractNewRecordState, median of %d", grouped(float64(s.records)), len(s.unwrapped)),
		value:  grouped(median(s.unwrapped)) + " rows/s",
		limit:  "the same rows flat: " + grouped(median(s.plain)) + " rows/s",
		ratio:  fmt.Sprintf("%.2f", ratio),
		target: "ratio >= 0.80",
		result: passMiss(ratio >= 0.8),
	})
	bound := median(s.padded) / median(s.plain)
	rows = append(rows, row{
		figure: fmt.Sprintf("the same rows flat, each with a key that pads it to the envelope's length, read as bytes, then ValueToKey: the envelopes' bytes, none converted, median of %d", len(s.padded)),
		value:  grouped(median(s.padded)) + " rows/s",
		limit:  "the same rows flat: " + grouped(median(s.plain)) + " rows/s",
		ratio:  fmt.Sprintf("%.2f", bound),
		target: "n/a",
		result: "n/a",
	})
	notes = append(notes, fmt.Sprintf("smt-jdbc-sink: JsonConverter with schemas, envelopes of %d bytes, flat rows of %d bytes; runs through ExtractNewRecordState %s rows/s, flat %s rows/s, flat with keys of the envelopes' length %s rows/s",
		s.envelopeBytes, s.flatBytes, joinF(s.unwrapped), joinF(s.plain), joinF(s.padded)))
	return rows, notes
}

// ---- metrics-file ----

// metricsFilePair is figure 10: the file source, with GET /metrics
// scraped every second during the pass, against no scraping.
var metricsFilePair = filePair{
	name:  "metrics-file",
	base:  fileKind{label: "not scraped", key: "quiet"},
	other: fileKind{label: "scraped every second", key: "scraped", during: scrapeEverySecond},
}

// scrapeEverySecond reads the worker's /metrics every second, as
// Prometheus scrapes a target, until ctx ends.
func scrapeEverySecond(ctx context.Context, p *proc) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := p.must(ctx, 200, "GET", "/metrics", ""); err != nil && ctx.Err() == nil {
			logf("metrics-file: scrape: %v", err)
		}
	}
}

// metricsFileResult is figure 10's rounds.
type metricsFileResult struct{ filePairResult }

func (m *metricsFileResult) report() (rows []row, notes []string) {
	if m == nil {
		return nil, nil
	}
	rows = append(rows, m.row("file source with GET /metrics scraped every second", "not scraped", 0.97))
	notes = append(notes, fmt.Sprintf("metrics-file: %d lines; runs scraped %s lines/s, not scraped %s lines/s; CPU scraped %s; not %s",
		m.lines, joinF(m.other), joinF(m.base), cpuSummary(m.otherCPU, m.lines), cpuSummary(m.baseCPU, m.lines)))
	return rows, notes
}
