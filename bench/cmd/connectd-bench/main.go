// Command connectd-bench measures connectd against its performance
// targets and prints one table: file source throughput against a plain
// franz-go producer on the same broker, startup time and idle memory of
// the built binary, GET /connectors/{name}/offsets with 100,000 source
// partitions, the failover of a task after kill -9 of its worker in a
// 3-worker distributed cluster, the time a fresh 3-worker cluster
// takes to run 100 connectors, the JDBC source and sink connectors
// against pgx alone on the machine's PostgreSQL, and the file source run
// exactly once against at least once. A figure that misses its target is
// reported as MISS; only errors make the command exit non-zero. See
// bench/README.md.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/internal/gcpace"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "  "+format+"\n", args...)
}

func main() {
	// The limits that run in this process (the plain producer, pgx) get
	// the garbage collector pacing connectd runs with.
	if _, set := os.LookupEnv("GOGC"); !set {
		gcpace.Start()
	}
	// Interrupted or terminated: take every worker and broker down too.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		children.killAll()
		dropBenchSchemas()
		fmt.Fprintln(os.Stderr, "connectd-bench:", sig)
		os.Exit(1)
	}()
	err := run()
	children.killAll() // normally none is left
	if err != nil {
		fmt.Fprintln(os.Stderr, "connectd-bench:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	var (
		bin         = flag.String("connectd", "", "the connectd binary to measure; empty builds ./cmd/connectd (run from the repository root)")
		work        = flag.String("work", "", "scratch directory (default: a new temporary directory, removed at the end)")
		figures     = flag.String("figures", "throughput,startup,offsets,failover,cluster,jdbc-source,jdbc-sink,smt-file,smt-jdbc-sink,metrics-file,eos-file", "comma-separated figures to measure")
		lines       = flag.Int("lines", 1_000_000, "throughput: lines in the source file")
		lineBytes   = flag.Int("line-bytes", 100, "throughput: bytes per line, newline included")
		rounds      = flag.Int("rounds", 3, "throughput: rounds (fresh worker each), best taken")
		runTimeout  = flag.Duration("timeout", 2*time.Minute, "throughput, jdbc-source, jdbc-sink, eos-file: limit for one run")
		startupRuns = flag.Int("startup-runs", 10, "startup: number of process starts")
		idle        = flag.Duration("idle", 2*time.Second, "startup: idle time before reading VmRSS")
		partitions  = flag.Int("partitions", 100_000, "offsets: source partitions in the offsets file")
		gets        = flag.Int("gets", 5, "offsets: timed GET requests")
		failovers   = flag.Int("failover-runs", 3, "failover: kills, each on a fresh cluster")
		sizes       = flag.String("cluster-connectors", "100,1000,3000", "cluster: connectors to create, one fresh cluster per size; the largest is restarted worker by worker")
		concurrency = flag.Int("cluster-concurrency", 8, "cluster: POST /connectors requests in flight at most")
		jdbcRows    = flag.Int("jdbc-rows", 1_000_000, "jdbc-source: rows in the table")
		jdbcRuns    = flag.Int("jdbc-source-runs", 3, "jdbc-source: runs of connectd and of pgx (fresh worker each round), best taken")
		jdbcSchemas = flag.Bool("jdbc-schemas", false, "jdbc-source: value.converter.schemas.enable (JsonConverter)")
		sinkRecords = flag.Int("jdbc-sink-records", 200_000, "jdbc-sink: records on the topic")
		sinkRuns    = flag.Int("jdbc-sink-runs", 3, "jdbc-sink: rounds (COPY, insert, upsert, upsert again), best taken")
		sinkFlush   = flag.Duration("jdbc-sink-flush", time.Second, "jdbc-sink: the worker's offset.flush.interval.ms")
		smtLines    = flag.Int("smt-lines", 500_000, "smt-file: lines in the source file")
		smtRounds   = flag.Int("smt-rounds", 3, "smt-file, smt-jdbc-sink: rounds, median taken")
		smtRecords  = flag.Int("smt-records", 100_000, "smt-jdbc-sink: records on each topic")
		metricLines = flag.Int("metrics-lines", 3_000_000, "metrics-file: lines in the source file (a pass should span a few scrapes)")
		eosLines    = flag.Int("eos-lines", 500_000, "eos-file: lines in the source file")
		eosRounds   = flag.Int("eos-rounds", 3, "eos-file: rounds (fresh broker and workers each), median taken")
		eosFailures = flag.Int("eos-failover-runs", 3, "eos-file: kills of the worker running an exactly-once task, each on a fresh cluster")
	)
	flag.StringVar(&cpuProfiles, "cpuprofiles", "", "a directory where each connectd process writes a CPU profile of its run (bench/pgo.sh)")
	flag.BoolVar(&keepClusters, "keep-clusters", false, "cluster, failover, eos-file: keep each cluster's directory (worker logs, broker data) under -work")
	flag.Parse()
	if cpuProfiles != "" {
		if err := os.MkdirAll(cpuProfiles, 0o755); err != nil {
			return err
		}
	}
	want := map[string]bool{}
	for _, f := range strings.Split(*figures, ",") {
		switch f = strings.TrimSpace(f); f {
		case "throughput", "startup", "offsets", "failover", "cluster", "jdbc-source", "jdbc-sink", "smt-file", "smt-jdbc-sink", "metrics-file", "eos-file":
			want[f] = true
		case "":
		default:
			return fmt.Errorf("unknown figure %q (want throughput, startup, offsets, failover, cluster, jdbc-source, jdbc-sink, smt-file, smt-jdbc-sink, metrics-file, eos-file)", f)
		}
	}
	var connectors []int
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-cluster-connectors: %q is not a count of connectors", f)
		}
		connectors = append(connectors, n)
	}
	slices.Sort(connectors)
	if *failovers < 1 || *concurrency < 1 {
		return fmt.Errorf("-failover-runs and -cluster-concurrency must be at least 1")
	}
	if *smtLines < 1 || *smtRounds < 1 || *smtRecords < 1 || *metricLines < 1 {
		return fmt.Errorf("-smt-lines, -smt-rounds, -smt-records and -metrics-lines must be at least 1")
	}
	if *eosLines < 1 || *eosRounds < 1 || *eosFailures < 1 {
		return fmt.Errorf("-eos-lines, -eos-rounds and -eos-failover-runs must be at least 1")
	}
	if want["eos-file"] && *lineBytes < 11 {
		return fmt.Errorf("-line-bytes must be at least 11 for eos-file (a 9-digit line number, a space, a newline)")
	}
	if *jdbcRows < 1 || *jdbcRuns < 1 || *sinkRecords < 1 || *sinkRuns < 1 {
		return fmt.Errorf("-jdbc-rows, -jdbc-source-runs, -jdbc-sink-records and -jdbc-sink-runs must be at least 1")
	}
	if *sinkFlush < time.Millisecond {
		return fmt.Errorf("-jdbc-sink-flush must be at least 1ms")
	}
	if *work == "" {
		dir, err := os.MkdirTemp("", "connectd-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*work = dir
	} else if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	if *bin == "" {
		*bin = filepath.Join(*work, "connectd")
		logf("building ./cmd/connectd")
		cmd := exec.Command("go", "build", "-o", *bin, "./cmd/connectd")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./cmd/connectd: %w", err)
		}
	}
	if *bin, err = filepath.Abs(*bin); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "connectd-bench: %s, %s/%s, %d CPUs, GOMAXPROCS %d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))

	var tp *throughputResult
	var su *startupResult
	var off *offsetsResult
	var fo *failoverResult
	var cl []*clusterResult
	var jd *jdbcResults
	// Checked first, so that a skip shows at once.
	if want["jdbc-source"] || want["jdbc-sink"] || want["smt-jdbc-sink"] {
		jd = &jdbcResults{}
		for _, f := range []string{"jdbc-source", "jdbc-sink", "smt-jdbc-sink"} {
			if want[f] {
				jd.want = append(jd.want, f)
			}
		}
		if err := pgCheck(); err != nil {
			jd.skipped = strings.Join(strings.Fields(err.Error()), " ")
			fmt.Fprintf(os.Stderr, "%s: skipped, PostgreSQL at 127.0.0.1:5432 (database test, user postgres) is unreachable: %s\n", strings.Join(jd.want, ", "), jd.skipped)
		}
	}
	if want["throughput"] {
		fmt.Fprintln(os.Stderr, "figure 1: file source throughput")
		if tp, err = benchThroughput(*bin, *work, *lines, *lineBytes, *rounds, *runTimeout); err != nil {
			return err
		}
	}
	if want["startup"] {
		fmt.Fprintln(os.Stderr, "figure 2: startup and idle RSS")
		if su, err = benchStartup(*bin, *work, *startupRuns, *idle); err != nil {
			return err
		}
	}
	if want["offsets"] {
		fmt.Fprintln(os.Stderr, "figure 3: GET offsets")
		if off, err = benchOffsets(*bin, *work, *partitions, *gets); err != nil {
			return err
		}
	}
	if want["failover"] {
		fmt.Fprintln(os.Stderr, "figure 4: failover after kill -9")
		if fo, err = benchFailover(*bin, *work, *failovers, plainFailover); err != nil {
			return err
		}
	}
	if want["cluster"] {
		for i, n := range connectors {
			fmt.Fprintf(os.Stderr, "figure 5: 3-worker cluster to %d connectors RUNNING\n", n)
			res, err := benchCluster(*bin, *work, n, *concurrency, i == len(connectors)-1)
			if err != nil {
				return err
			}
			cl = append(cl, res)
		}
	}
	if want["jdbc-source"] && jd.skipped == "" {
		fmt.Fprintf(os.Stderr, "figure 6: JDBC source, %d-row PostgreSQL table to a topic\n", *jdbcRows)
		if jd.source, err = benchJdbcSource(*bin, *work, *jdbcRows, *jdbcRuns, *jdbcSchemas, *runTimeout); err != nil {
			return err
		}
	}
	if want["jdbc-sink"] && jd.skipped == "" {
		fmt.Fprintf(os.Stderr, "figure 7: JDBC sink, %d records to PostgreSQL\n", *sinkRecords)
		if jd.sink, err = benchJdbcSink(*bin, *work, *sinkRecords, *sinkRuns, *sinkFlush, *runTimeout); err != nil {
			return err
		}
	}
	if want["smt-file"] {
		fmt.Fprintf(os.Stderr, "figure 8: file source through four transforms, %d lines\n", *smtLines)
		if jd == nil {
			jd = &jdbcResults{}
		}
		res, err := benchFilePair(*bin, *work, smtFilePair, *smtLines, *lineBytes, *smtRounds, *runTimeout)
		if err != nil {
			return err
		}
		jd.smtFile = &smtFileResult{*res}
	}
	if want["smt-jdbc-sink"] && jd.skipped == "" {
		fmt.Fprintf(os.Stderr, "figure 9: JDBC sink fed Debezium envelopes through ExtractNewRecordState, %d records\n", *smtRecords)
		if jd.smtSink, err = benchSmtSink(*bin, *work, *smtRecords, *smtRounds, *runTimeout); err != nil {
			return err
		}
	}
	if want["metrics-file"] {
		fmt.Fprintf(os.Stderr, "figure 10: file source scraped every second, %d lines\n", *metricLines)
		if jd == nil {
			jd = &jdbcResults{}
		}
		res, err := benchFilePair(*bin, *work, metricsFilePair, *metricLines, *lineBytes, *smtRounds, *runTimeout)
		if err != nil {
			return err
		}
		jd.metricsFile = &metricsFileResult{*res}
	}
	var eos *eosFileResult
	if want["eos-file"] {
		fmt.Fprintf(os.Stderr, "figure 11: exactly-once file source against at least once, %d lines\n", *eosLines)
		if eos, err = benchEOSFile(*bin, *work, *eosLines, *lineBytes, *eosRounds, *runTimeout); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "figure 11: failover after kill -9 with exactly-once support")
		if eos.failover, err = benchFailover(*bin, *work, *eosFailures, eosFailover); err != nil {
			return err
		}
	}
	report(os.Stdout, tp, su, off, fo, cl, jd, eos)
	return nil
}

// row is one line of the table.
type row struct {
	figure, value, limit, ratio, target, result string
}

func report(w io.Writer, tp *throughputResult, su *startupResult, off *offsetsResult, fo *failoverResult, cl []*clusterResult, jd *jdbcResults, eos *eosFileResult) {
	var rows []row
	var notes []string
	if tp != nil {
		c, p := slices.Max(tp.connectd), slices.Max(tp.plain)
		rows = append(rows, row{
			figure: fmt.Sprintf("file source throughput, best of %d", len(tp.connectd)),
			value:  grouped(c) + " lines/s",
			limit:  "plain producer " + grouped(p) + " lines/s",
			ratio:  fmt.Sprintf("%.2f", c/p),
			target: "ratio >= 0.80",
			result: passMiss(c/p >= 0.8),
		})
		notes = append(notes,
			fmt.Sprintf("throughput: %d lines of %d bytes (%.0f MB) per run; connectd runs %s lines/s, plain runs %s lines/s",
				tp.lines, tp.lineBytes, float64(tp.lines*tp.lineBytes)/1e6, joinF(tp.connectd), joinF(tp.plain)),
			fmt.Sprintf("throughput medians: connectd %s lines/s, plain %s lines/s, ratio %.2f; first record after: connectd %s, plain %s",
				grouped(median(tp.connectd)), grouped(median(tp.plain)), median(tp.connectd)/median(tp.plain),
				joinD(tp.connectdFirst), joinD(tp.plainFirst)),
			fmt.Sprintf("throughput CPU (worker process + bench process), median: connectd %s, plain %s",
				cpuSummary(tp.connectdCPU, tp.lines), cpuSummary(tp.plainCPU, tp.lines)))
	}
	if su != nil {
		const readyLimit = 100 * time.Millisecond
		const rssLimit = 40 << 20
		med, worst := medianD(su.ready), slices.Max(su.ready)
		rows = append(rows,
			row{
				figure: fmt.Sprintf("startup to first 200 from GET /, median of %d", len(su.ready)),
				value:  ms(med), limit: ms(readyLimit),
				ratio: fmt.Sprintf("%.2f", float64(med)/float64(readyLimit)), target: "ratio < 1", result: passMiss(med < readyLimit),
			},
			row{
				figure: fmt.Sprintf("startup to first 200 from GET /, max of %d", len(su.ready)),
				value:  ms(worst), limit: ms(readyLimit),
				ratio: fmt.Sprintf("%.2f", float64(worst)/float64(readyLimit)), target: "ratio < 1", result: passMiss(worst < readyLimit),
			})
		rmed, rworst := medianI(su.rss), slices.Max(su.rss)
		rows = append(rows,
			row{
				figure: fmt.Sprintf("idle RSS after %v, median of %d", su.idle, len(su.rss)),
				value:  mb(rmed), limit: mb(rssLimit),
				ratio: fmt.Sprintf("%.2f", float64(rmed)/rssLimit), target: "ratio < 1", result: passMiss(rmed < rssLimit),
			},
			row{
				figure: fmt.Sprintf("idle RSS after %v, max of %d", su.idle, len(su.rss)),
				value:  mb(rworst), limit: mb(rssLimit),
				ratio: fmt.Sprintf("%.2f", float64(rworst)/rssLimit), target: "ratio < 1", result: passMiss(rworst < rssLimit),
			})
		var rs []string
		for _, r := range su.rss {
			rs = append(rs, fmt.Sprintf("%.1f", float64(r)/(1<<20)))
		}
		notes = append(notes, fmt.Sprintf("startup runs: %s; idle RSS runs (MiB): %s", joinD(su.ready), strings.Join(rs, ", ")))
	}
	if off != nil {
		const limit = 200 * time.Millisecond
		med := medianD(off.gets)
		rows = append(rows, row{
			figure: fmt.Sprintf("GET offsets, %s partitions, median of %d", grouped(float64(off.partitions)), len(off.gets)),
			value:  ms(med), limit: ms(limit),
			ratio: fmt.Sprintf("%.2f", float64(med)/float64(limit)), target: "ratio < 1", result: passMiss(med < limit),
		})
		notes = append(notes, fmt.Sprintf("offsets GETs: %s; body %s listing all %d partitions, checked",
			joinD(off.gets), mb(int64(off.bodyBytes)), off.partitions))
	}
	if fo != nil {
		rows = append(rows, failoverRows("failover: kill -9 to task RUNNING elsewhere", fo)...)
		notes = append(notes, failoverNote("failover", fo))
	}
	crows, cnotes := clusterReport(cl)
	rows, notes = append(rows, crows...), append(notes, cnotes...)
	jrows, jnotes := jd.report()
	rows, notes = append(rows, jrows...), append(notes, jnotes...)
	erows, enotes := eos.report()
	rows, notes = append(rows, erows...), append(notes, enotes...)
	if len(rows) == 0 {
		return
	}
	head := row{"figure", "measured", "limit", "ratio", "target", "result"}
	all := append([]row{head}, rows...)
	width := make([]int, 6)
	for _, r := range all {
		for i, c := range r.cells() {
			width[i] = max(width[i], len(c))
		}
	}
	fmt.Fprintln(w)
	for n, r := range all {
		cells := r.cells()
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 1 || i == 3 { // numbers right-aligned
				fmt.Fprintf(&b, "%*s", width[i], c)
			} else {
				fmt.Fprintf(&b, "%-*s", width[i], c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n == 0 {
			fmt.Fprintln(w, strings.Repeat("-", len(strings.TrimRight(b.String(), " "))))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "machine: %s, %s/%s, %d CPUs, GOMAXPROCS %d; throughput and JDBC are the best run, cluster a single run, the others the median and max\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
}

// failoverRows are a failover figure's median and max against
// session.timeout.ms + 2 s.
func failoverRows(what string, fo *failoverResult) []row {
	limit := sessionTimeout + 2*time.Second
	took := fo.took()
	med, worst := medianD(took), slices.Max(took)
	return []row{
		{
			figure: fmt.Sprintf("%s, median of %d", what, len(took)),
			value:  secs(med), limit: secs(limit),
			ratio: fmt.Sprintf("%.2f", float64(med)/float64(limit)), target: "ratio < 1", result: passMiss(med < limit),
		},
		{
			figure: fmt.Sprintf("%s, max of %d", what, len(took)),
			value:  secs(worst), limit: secs(limit),
			ratio: fmt.Sprintf("%.2f", float64(worst)/float64(limit)), target: "ratio < 1", result: passMiss(worst < limit),
		},
	}
}

// failoverNote lists a failover figure's runs.
func failoverNote(what string, fo *failoverResult) string {
	var runs []string
	for _, r := range fo.runs {
		runs = append(runs, r.String())
	}
	return fmt.Sprintf("%s (fresh cluster per run, session.timeout.ms=%d, limit = session timeout + 2 s): %s",
		what, sessionTimeout.Milliseconds(), strings.Join(runs, "; "))
}

func (r row) cells() []string {
	return []string{r.figure, r.value, r.limit, r.ratio, r.target, r.result}
}

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mb(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// grouped formats a rate as an integer with thousands separators.
func grouped(v float64) string {
	s := fmt.Sprintf("%d", int64(v+0.5))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func joinF(vs []float64) string {
	var out []string
	for _, v := range vs {
		out = append(out, grouped(v))
	}
	return strings.Join(out, ", ")
}

func joinD(ds []time.Duration) string {
	var out []string
	for _, d := range ds {
		out = append(out, ms(d))
	}
	return strings.Join(out, ", ")
}

func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianD(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianI(vs []int64) int64 {
	s := slices.Sorted(slices.Values(vs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuSummary gives the median cores busy and CPU seconds per million
// lines over a set of runs.
func cpuSummary(cs []cpuUse, lines int) string {
	var cores, perM []float64
	for _, c := range cs {
		total := (c.worker + c.bench).Seconds()
		cores = append(cores, total/c.wall.Seconds())
		perM = append(perM, total/float64(lines)*1e6)
	}
	return fmt.Sprintf("%.2f cores busy, %.2f CPU-s per million lines", median(cores), median(perM))
}
