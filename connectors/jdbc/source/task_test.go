package source

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbctest"
)

var srcEventsBase = time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)

func srcEventTS(sec int) string {
	return srcEventsBase.Add(time.Duration(sec) * time.Second).Format("2006-01-02 15:04:05.000")
}

// srcCreateEvents makes a table events(id, name, ts NOT NULL, ts2 NULL).
func srcCreateEvents(t *testing.T, db *jdbctest.DB) {
	t.Helper()
	switch db.Dialect {
	case jdbcdb.PostgreSQL:
		db.Exec(t, "CREATE TABLE events (id INT PRIMARY KEY, name TEXT NOT NULL, ts TIMESTAMP(3) NOT NULL, ts2 TIMESTAMP(3))")
	case jdbcdb.MySQL:
		db.Exec(t, "CREATE TABLE events (id INT PRIMARY KEY, name TEXT NOT NULL, ts DATETIME(3) NOT NULL, ts2 DATETIME(3))")
	default:
		db.Exec(t, "CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT NOT NULL, ts TIMESTAMP NOT NULL, ts2 TIMESTAMP)")
	}
}

func srcInsertEvent(t *testing.T, db *jdbctest.DB, id int, ts int, ts2 *int) {
	t.Helper()
	v2 := "NULL"
	if ts2 != nil {
		v2 = "'" + srcEventTS(*ts2) + "'"
	}
	db.Exec(t, fmt.Sprintf("INSERT INTO events (id, name, ts, ts2) VALUES (%d, 'event-%d', '%s', %s)", id, id, srcEventTS(ts), v2))
}

func srcTSOffset(sec int) map[string]any {
	ts := srcEventsBase.Add(time.Duration(sec) * time.Second)
	return map[string]any{"timestamp": ts.UnixMilli(), "timestamp_nanos": int64(ts.Nanosecond())}
}

// Timestamp mode sees new and updated rows; its offsets have no
// incrementing value; several timestamp columns are coalesced.
func TestSourceTimestampMode(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateEvents(t, db)
		for i := 1; i <= 5; i++ {
			srcInsertEvent(t, db, i, i*10, nil)
		}
		ctx := &srcTestContext{}
		cfg := srcBaseConfig(db, map[string]string{srcMode: "timestamp", srcTimestampColumn: "ts", srcTableWhitelist: "events"})
		task := srcStartTask(t, cfg, ctx)
		recs := srcPollN(t, task, ctx, 5)
		if got := srcIDs(t, recs); !slices.Equal(got, srcSeq(1, 5)) {
			t.Fatalf("ids %v", got)
		}
		if got := srcLastOffset(recs); !reflect.DeepEqual(got, srcTSOffset(50)) {
			t.Fatalf("offset %v, want %v", got, srcTSOffset(50))
		}
		// An update moves a row's timestamp: it comes again.
		db.Exec(t, "UPDATE events SET ts = '"+srcEventTS(60)+"' WHERE id = 2")
		srcInsertEvent(t, db, 6, 70, nil)
		if got := srcIDs(t, srcPollN(t, task, ctx, 2)); !slices.Equal(got, []int64{2, 6}) {
			t.Fatalf("after an update and an insert: ids %v", got)
		}
		task.Stop()

		// COALESCE(ts2, ts): row 3's ts2 is the latest.
		three := 100
		db.Exec(t, "UPDATE events SET ts2 = '"+srcEventTS(three)+"' WHERE id = 3")
		cfg[srcTimestampColumn] = "ts2,ts"
		ctx = &srcTestContext{}
		ctx.set(srcTablePartition(srcTableID(db, "events")), srcTSOffset(70))
		task = srcStartTask(t, cfg, ctx)
		recs = srcPollN(t, task, ctx, 1)
		if got := srcIDs(t, recs); !slices.Equal(got, []int64{3}) {
			t.Fatalf("coalesced: ids %v", got)
		}
		if got := srcLastOffset(recs); !reflect.DeepEqual(got, srcTSOffset(100)) {
			t.Fatalf("coalesced offset %v", got)
		}
	})
}

// Rows sharing a timestamp: timestamp+incrementing resumes strictly after
// (timestamp, id); timestamp mode re-reads a run of equal timestamps cut
// by a restart rather than losing part of it.
func TestSourceTimestampTies(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateEvents(t, db)
		for i := 1; i <= 5; i++ { // 1,2,3 share a timestamp; so do 4,5
			srcInsertEvent(t, db, i, 10+10*(i/4), nil)
		}
		for _, mode := range []string{srcModeTimestampIncrementing, srcModeTimestamp} {
			cfg := srcBaseConfig(db, map[string]string{srcMode: mode, srcTimestampColumn: "ts", srcIncrementingColumn: "id",
				srcTableWhitelist: "events", srcBatchMaxRows: "2"})
			ctx := &srcTestContext{}
			task := srcStartTask(t, cfg, ctx)
			first, err := task.Poll(context.Background())
			if err != nil || len(first) != 2 {
				t.Fatalf("%s: first poll %d records, %v", mode, len(first), err)
			}
			ctx.commit(first)
			task.Stop() // a restart inside the run of 1,2,3

			task = srcStartTask(t, cfg, ctx)
			var rest []*connect.SourceRecord
			if mode == srcModeTimestampIncrementing {
				if got := srcLastOffset(first); !reflect.DeepEqual(got, map[string]any{"incrementing": int64(2),
					"timestamp": srcTSOffset(10)["timestamp"], "timestamp_nanos": int64(0)}) {
					t.Fatalf("offset inside the tie %v", got)
				}
				rest = srcPollN(t, task, ctx, 3)
				if got := srcIDs(t, rest); !slices.Equal(got, []int64{3, 4, 5}) {
					t.Fatalf("%s: after the restart ids %v, want 3,4,5", mode, got)
				}
			} else {
				// No offset could be committed inside the tie: the run is
				// read again, whole.
				if got := srcLastOffset(first); got != nil {
					t.Fatalf("timestamp mode committed %v inside a tie", got)
				}
				rest = srcPollN(t, task, ctx, 5)
				if got := srcIDs(t, rest); !slices.Equal(got, srcSeq(1, 5)) {
					t.Fatalf("%s: after the restart ids %v, want 1..5", mode, got)
				}
				if got := srcLastOffset(rest); !reflect.DeepEqual(got, srcTSOffset(20)) {
					t.Fatalf("final offset %v", got)
				}
			}
			task.Stop()
		}
	})
}

// Bulk mode reads the whole table at every poll interval, with the
// unqualified table name as partition and no offset.
func TestSourceBulkMode(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateEvents(t, db)
		for i := 1; i <= 3; i++ {
			srcInsertEvent(t, db, i, i, nil)
		}
		cfg := srcBaseConfig(db, map[string]string{srcMode: "bulk", srcTableWhitelist: "events"})
		ctx := &srcTestContext{}
		task := srcStartTask(t, cfg, ctx)
		for round := range 2 {
			var got []*connect.SourceRecord
			deadline := time.Now().Add(10 * time.Second)
			for len(got) < 3 && time.Now().Before(deadline) {
				recs, err := task.Poll(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, recs...)
			}
			if ids := srcIDs(t, got); !slices.Equal(slices.Sorted(slices.Values(ids)), []int64{1, 2, 3}) {
				t.Fatalf("round %d: ids %v", round, ids)
			}
			for _, r := range got {
				if r.SourceOffset != nil || !reflect.DeepEqual(r.SourcePartition, map[string]any{"table": "events"}) || r.Topic != "db-events" {
					t.Fatalf("bulk record partition %v offset %v topic %s", r.SourcePartition, r.SourceOffset, r.Topic)
				}
			}
		}
	})
}

// Query mode: one partition {"query":"query"}, the topic is the prefix,
// the struct is unnamed, criteria are appended to the query.
func TestSourceQueryMode(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateEvents(t, db)
		for i := 1; i <= 4; i++ {
			srcInsertEvent(t, db, i, i, nil)
		}
		for _, mode := range []string{srcModeIncrementing, srcModeTimestampIncrementing, srcModeTimestamp} {
			cfg := srcBaseConfig(db, map[string]string{srcMode: mode, srcQuery: "SELECT id, name, ts FROM events",
				srcIncrementingColumn: "id", srcTimestampColumn: "ts", srcTopicPrefix: "events-query"})
			delete(cfg, srcSchemaPattern)
			ctx := &srcTestContext{}
			ctx.set(srcQueryPartition(), map[string]any{"incrementing": int64(1), "timestamp": srcTSOffset(1)["timestamp"]})
			task := srcStartTask(t, cfg, ctx)
			recs := srcPollN(t, task, ctx, 3)
			if got := srcIDs(t, recs); !slices.Equal(got, []int64{2, 3, 4}) {
				t.Fatalf("%s: ids %v", mode, got)
			}
			r := recs[2]
			if r.Topic != "events-query" || !reflect.DeepEqual(r.SourcePartition, map[string]any{"query": "query"}) {
				t.Fatalf("%s: topic %s partition %v", mode, r.Topic, r.SourcePartition)
			}
			st := r.Value.(*connect.Struct)
			if st.Schema().Name != "" || len(st.Schema().Fields) != 3 || st.Get("name") != "event-4" {
				t.Fatalf("%s: value %v schema %+v", mode, st, st.Schema())
			}
			want := map[string]any{}
			if mode != srcModeTimestamp {
				want["incrementing"] = int64(4)
			}
			if mode != srcModeIncrementing {
				maps := srcTSOffset(4)
				want["timestamp"], want["timestamp_nanos"] = maps["timestamp"], maps["timestamp_nanos"]
			}
			if got := srcLastOffset(recs); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: offset %v, want %v", mode, got, want)
			}
			task.Stop()
		}
	})
}

// timestamp.initial and timestamp.delay.interval.ms bound what is read.
func TestSourceTimestampInitialAndDelay(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateEvents(t, db)
		for i := 1; i <= 4; i++ {
			srcInsertEvent(t, db, i, i*10, nil)
		}
		now := map[string]string{
			jdbcdb.PostgreSQL.Name: "(now() AT TIME ZONE 'UTC')",
			jdbcdb.MySQL.Name:      "UTC_TIMESTAMP(3)",
			jdbcdb.SQLite.Name:     "strftime('%Y-%m-%d %H:%M:%f', 'now')",
		}[db.Dialect.Name]
		db.Exec(t, "INSERT INTO events (id, name, ts) VALUES (5, 'recent', "+now+")")
		initial := srcEventsBase.Add(25 * time.Second).UnixMilli()
		cfg := srcBaseConfig(db, map[string]string{srcMode: "timestamp+incrementing", srcTimestampColumn: "ts",
			srcIncrementingColumn: "id", srcTableWhitelist: "events", srcTimestampInitial: fmt.Sprint(initial),
			srcTimestampDelay: "3600000"})
		ctx := &srcTestContext{}
		task := srcStartTask(t, cfg, ctx)
		// Rows after the initial timestamp, but not the one of the last hour.
		if got := srcIDs(t, srcPollN(t, task, ctx, 2)); !slices.Equal(got, []int64{3, 4}) {
			t.Fatalf("ids %v, want 3,4", got)
		}
		task.Stop()

		// -1 starts from the database's current time: nothing old.
		cfg[srcTimestampInitial] = "-1"
		cfg[srcTimestampDelay] = "0"
		ctx = &srcTestContext{}
		task = srcStartTask(t, cfg, ctx)
		srcPollNone(t, task)
		db.Exec(t, "INSERT INTO events (id, name, ts) VALUES (6, 'new', "+now+")")
		if got := srcIDs(t, srcPollN(t, task, ctx, 1)); !slices.Equal(got, []int64{6}) {
			t.Fatalf("ids %v, want 6", got)
		}
	})
}

// A nullable incrementing column fails the task at start (validate.non.null),
// naming the table and the column; without the check a NULL met while
// reading fails the task, and no row is skipped.
func TestSourceNullIncrementing(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		typ := map[string]string{jdbcdb.PostgreSQL.Name: "TIMESTAMP(3)", jdbcdb.MySQL.Name: "DATETIME(3)", jdbcdb.SQLite.Name: "TIMESTAMP"}[db.Dialect.Name]
		db.Exec(t, "CREATE TABLE nullable_ids (id BIGINT, ts "+typ+" NOT NULL)")
		db.Exec(t, "INSERT INTO nullable_ids VALUES (1, '"+srcEventTS(1)+"'), (NULL, '"+srcEventTS(2)+"'), (3, '"+srcEventTS(3)+"')")
		table := srcTableID(db, "nullable_ids").String()
		cfg := srcBaseConfig(db, map[string]string{srcMode: "timestamp+incrementing", srcTimestampColumn: "ts",
			srcIncrementingColumn: "id", srcTableWhitelist: "nullable_ids"})
		tcs := srcTaskConfigs(t, cfg, 1)
		task := NewTask()
		err := task.Start(&srcTestContext{}, tcs[0])
		if err == nil || !strings.Contains(err.Error(), "incrementing column id on "+table+" because this column is nullable") {
			t.Fatalf("Start with a nullable incrementing column: %v", err)
		}
		errs := (&Connector{}).Validate(cfg)
		if !slices.ContainsFunc(errs[srcIncrementingColumn], func(s string) bool { return strings.Contains(s, "nullable") }) {
			t.Fatalf("Validate: %v", errs)
		}

		cfg[srcValidateNonNull] = "false"
		tcs = srcTaskConfigs(t, cfg, 1)
		task = NewTask()
		task.idleWait = 50 * time.Millisecond
		if err := task.Start(&srcTestContext{}, tcs[0]); err != nil {
			t.Fatal(err)
		}
		defer task.Stop()
		srcPollUntilError(t, task, "Null value for incrementing column id of "+table)
	})
}

// An incrementing column of text fails the task on its first row, as
// Confluent's does. On PostgreSQL the query itself fails (an integer
// offset against a text column): that error is logged and the query run
// again, as Confluent's is.
func TestSourceTextIncrementing(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		db.Exec(t, "CREATE TABLE text_ids (id VARCHAR(10) NOT NULL, note TEXT)")
		db.Exec(t, "INSERT INTO text_ids VALUES ('1', 'a'), ('2', 'b')")
		table := srcTableID(db, "text_ids").String()
		cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id",
			srcTableWhitelist: "text_ids", srcPollInterval: "10"})
		task := NewTask()
		task.idleWait = 50 * time.Millisecond
		if err := task.Start(&srcTestContext{}, srcTaskConfigs(t, cfg, 1)[0]); err != nil {
			t.Fatal(err)
		}
		defer task.Stop()
		if db.Dialect != jdbcdb.PostgreSQL {
			srcPollUntilError(t, task, "Invalid type for incrementing column id of "+table+": STRING")
			return
		}
		for range 3 {
			if recs, err := task.Poll(context.Background()); len(recs) != 0 || err != nil {
				t.Fatalf("PostgreSQL: %d records, %v; want none, the query refused and run again", len(recs), err)
			}
		}
	})
}

// Poll waits about idleWait when nothing is due, without spinning, and
// returns at once when its context is done.
func TestSourcePollWaitsAndStops(t *testing.T) {
	db := jdbctest.SQLite(t)
	srcCreateEvents(t, db)
	srcInsertEvent(t, db, 1, 1, nil)
	cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id",
		srcPollInterval: "60000"})
	ctx := &srcTestContext{}
	task := srcStartTask(t, cfg, ctx)
	task.idleWait = 300 * time.Millisecond
	if recs, err := task.Poll(context.Background()); err != nil || len(recs) != 1 {
		t.Fatalf("first poll: %d records, %v", len(recs), err)
	}
	start := time.Now()
	if recs, err := task.Poll(context.Background()); err != nil || recs != nil {
		t.Fatalf("idle poll: %v, %v", recs, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("idle poll took %v, want about 300ms", d)
	}
	task.idleWait = time.Hour
	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	if recs, err := task.Poll(cctx); err != nil || recs != nil {
		t.Fatalf("canceled poll: %v, %v", recs, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a canceled poll took %v", d)
	}
}

// A task spreads its tables over polls and gives each its own topic,
// partition and offset.
func TestSourceSeveralTables(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		for _, name := range []string{"alpha", "beta"} {
			db.Exec(t, "CREATE TABLE "+name+" (id INT NOT NULL PRIMARY KEY, v VARCHAR(10))")
			db.Exec(t, "INSERT INTO "+name+" VALUES (1, 'a'), (2, 'b')")
		}
		cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id"})
		if db.Dialect == jdbcdb.SQLite {
			cfg[srcTableWhitelist] = "alpha,beta"
		}
		ctx := &srcTestContext{}
		task := srcStartTask(t, cfg, ctx)
		recs := srcPollN(t, task, ctx, 4)
		byTopic := map[string][]int64{}
		for _, r := range recs {
			byTopic[r.Topic] = append(byTopic[r.Topic], srcIDs(t, []*connect.SourceRecord{r})[0])
		}
		if !reflect.DeepEqual(byTopic, map[string][]int64{"db-alpha": {1, 2}, "db-beta": {1, 2}}) {
			t.Fatalf("records by topic %v", byTopic)
		}
		for _, name := range []string{"alpha", "beta"} {
			o, _ := ctx.Offset(srcTablePartition(srcTableID(db, name)))
			if !reflect.DeepEqual(o, map[string]any{"incrementing": int64(2)}) {
				t.Fatalf("%s offset %v", name, o)
			}
		}
	})
}

// A failing query (here: its table dropped) is logged and run again at the
// next poll interval, on a new connection, from the position reached.
func TestSourceQueryErrorsAreRetried(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		db.Exec(t, "CREATE TABLE flaky (id INT NOT NULL PRIMARY KEY)")
		db.Exec(t, "INSERT INTO flaky VALUES (1)")
		cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id", srcTableWhitelist: "flaky"})
		ctx := &srcTestContext{}
		task := srcStartTask(t, cfg, ctx)
		srcPollN(t, task, ctx, 1)
		db.Exec(t, "DROP TABLE flaky")
		for range 3 {
			if recs, err := task.Poll(context.Background()); err != nil || len(recs) > 0 {
				t.Fatalf("Poll without the table: %v, %v", recs, err)
			}
		}
		db.Exec(t, "CREATE TABLE flaky (id INT NOT NULL PRIMARY KEY)")
		db.Exec(t, "INSERT INTO flaky VALUES (1), (2)")
		if got := srcIDs(t, srcPollN(t, task, ctx, 1)); !slices.Equal(got, []int64{2}) {
			t.Fatalf("after the table came back: ids %v", got)
		}
	})
}

// A column added while the task runs is in the next record's schema, and
// the query that first sees it does not fail (PostgreSQL refuses to run a
// statement prepared before the table changed: "cached plan must not
// change result type").
func TestSourceTableGainsColumn(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateOrders(t, db)
		srcInsertOrders(t, db, 1, 3, srcEventsBase)
		cfg := srcBaseConfig(db, map[string]string{srcMode: "incrementing", srcIncrementingColumn: "id"})
		ctx := &srcTestContext{}
		task := srcStartTask(t, cfg, ctx)
		srcPollN(t, task, ctx, 3)
		db.Exec(t, "ALTER TABLE orders ADD COLUMN note VARCHAR(20)")
		db.Exec(t, "INSERT INTO orders (id, customer, amount, updated_at, note) VALUES (4, 'c', 1.00, '2024-03-02 00:00:00', 'hello')")
		task.idleWait = time.Minute // one Poll: the table is due within it
		recs, err := task.Poll(context.Background())
		if err != nil || len(recs) != 1 {
			t.Fatalf("Poll after the column was added: %d records, %v", len(recs), err)
		}
		st := recs[0].Value.(*connect.Struct)
		if got := st.Get("note"); got != "hello" {
			t.Fatalf("note = %v; value %s", got, srcValueString(st))
		}
	})
}

// Batches the runtime released are filled again, records, structs and
// decimals, and hold the same values as fresh ones: a field null in the
// new row is null even where the struct's previous row had a value. In
// timestamp mode the row read ahead of a batch survives that batch's
// release.
func TestSourceReusesReleasedBatches(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateOrders(t, db)
		srcInsertOrders(t, db, 1, 10, srcEventsBase)
		db.Exec(t, "UPDATE orders SET amount = NULL WHERE id % 3 = 0")
		for _, mode := range []string{srcModeIncrementing, srcModeTimestamp, srcModeBulk} {
			cfg := srcBaseConfig(db, map[string]string{srcMode: mode, srcIncrementingColumn: "id", srcTimestampColumn: "updated_at",
				srcTableWhitelist: "orders", srcBatchMaxRows: "3"})
			// read renders every record of a pass over the table, releasing
			// each batch once rendered when release is set.
			read := func(release bool) (rows []string, reused int) {
				task := srcStartTask(t, cfg, &srcTestContext{})
				defer task.Stop()
				var last *connect.SourceRecord
				for len(rows) < 10 {
					recs, err := task.Poll(context.Background())
					if err != nil {
						t.Fatalf("%s: Poll: %v", mode, err)
					}
					if len(recs) == 0 {
						continue
					}
					if recs[0] == last {
						reused++
					}
					last = recs[0]
					for _, r := range recs {
						st := r.Value.(*connect.Struct)
						var fields []string
						for i := range st.Schema().Fields {
							fields = append(fields, srcValueString(st.AtWithoutDefault(i)))
						}
						rows = append(rows, strings.Join(fields, " "))
					}
					if release {
						task.ReleaseRecords(recs)
					}
				}
				return rows, reused
			}
			fresh, _ := read(false)
			again, reused := read(true)
			if !slices.Equal(again, fresh) {
				t.Fatalf("%s: released batches filled again hold\n%s\nwant\n%s", mode, strings.Join(again, "\n"), strings.Join(fresh, "\n"))
			}
			if reused == 0 {
				t.Fatalf("%s: no batch reused a released one's memory", mode)
			}
			if strings.Count(strings.Join(fresh, "\n"), "null") != 3 {
				t.Fatalf("%s: want the amount null in rows 3, 6 and 9:\n%s", mode, strings.Join(fresh, "\n"))
			}
		}
	})
}

// A record the runtime did not hand back (nil in the batch it released)
// may still be read: no later batch fills it, its struct, or the rest of
// its batch again, while batches handed back whole are still reused.
func TestSourceKeepsRecordsNotHandedBack(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		srcCreateOrders(t, db)
		srcInsertOrders(t, db, 1, 12, srcEventsBase)
		task := srcStartTask(t, srcBaseConfig(db, map[string]string{srcMode: srcModeIncrementing,
			srcIncrementingColumn: "id", srcTableWhitelist: "orders", srcBatchMaxRows: "3"}), &srcTestContext{})
		render := func(r *connect.SourceRecord) string {
			st := r.Value.(*connect.Struct)
			var fields []string
			for i := range st.Schema().Fields {
				fields = append(fields, srcValueString(st.AtWithoutDefault(i)))
			}
			return strings.Join(fields, " ")
		}
		var kept *connect.SourceRecord
		var keptRow string
		var keptBatch []*connect.SourceRecord
		var last *connect.SourceRecord
		reused := 0
		for n := 0; n < 12; {
			recs, err := task.Poll(context.Background())
			if err != nil {
				t.Fatalf("Poll: %v", err)
			}
			if len(recs) == 0 {
				continue
			}
			n += len(recs)
			for _, r := range recs {
				if kept != nil && (slices.Contains(keptBatch, r) || r.Value == kept.Value) {
					t.Fatalf("row %s was read into the memory of a batch the runtime did not hand back whole", render(r))
				}
			}
			if recs[0] == last {
				reused++
			}
			last = recs[0]
			if kept == nil {
				kept, keptRow, keptBatch = recs[1], render(recs[1]), slices.Clone(recs)
				recs[1] = nil
			}
			task.ReleaseRecords(recs)
		}
		if got := render(kept); got != keptRow {
			t.Fatalf("the record not handed back holds %s, want %s", got, keptRow)
		}
		if reused == 0 {
			t.Fatal("no batch reused a released one's memory")
		}
	})
}

// An incrementing column may be a DECIMAL of scale 0, as Confluent's
// allows; one with a fractional part stops the task.
func TestSourceDecimalIncrementing(t *testing.T) {
	jdbctest.Each(t, func(t *testing.T, db *jdbctest.DB) {
		db.Exec(t, "CREATE TABLE dec_ids (id NUMERIC(12,0) NOT NULL PRIMARY KEY, v VARCHAR(10))")
		db.Exec(t, "INSERT INTO dec_ids VALUES (1, 'a'), (2, 'b'), (30000000001, 'c')")
		ctx := &srcTestContext{}
		task := srcStartTask(t, srcBaseConfig(db, map[string]string{srcMode: "incrementing",
			srcIncrementingColumn: "id", srcTableWhitelist: "dec_ids"}), ctx)
		recs := srcPollN(t, task, ctx, 3)
		last := recs[len(recs)-1]
		if got := last.SourceOffset["incrementing"]; got != int64(30000000001) {
			t.Fatalf("offset incrementing = %#v, want 30000000001", got)
		}
		if d, ok := last.Value.(*connect.Struct).Get("id").(*connect.Decimal); !ok || d.Scale != 0 || d.Unscaled.Int64() != 30000000001 {
			t.Fatalf("id = %#v", last.Value.(*connect.Struct).Get("id"))
		}

		db.Exec(t, "CREATE TABLE frac_ids (id NUMERIC(12,2) NOT NULL PRIMARY KEY)")
		db.Exec(t, "INSERT INTO frac_ids VALUES (1.50)")
		table := srcTableID(db, "frac_ids").String()
		frac := srcStartTask(t, srcBaseConfig(db, map[string]string{srcMode: "incrementing",
			srcIncrementingColumn: "id", srcTableWhitelist: "frac_ids"}), &srcTestContext{})
		srcPollUntilError(t, frac, "Scale of Decimal value for incrementing column id of "+table+" must be 0")
	})
}

// srcPollUntilError polls task until it fails with an error holding want,
// failing if a record comes first or nothing fails before a deadline: a
// row the task cannot take stops it and is not skipped.
func srcPollUntilError(t *testing.T, task *Task, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs, err := task.Poll(context.Background())
		if err != nil {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("Poll error %v, want one with %q", err, want)
			}
			return
		}
		if len(recs) > 0 {
			t.Fatalf("Poll returned %d records before failing with %q", len(recs), want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Poll failed with %q", want)
		}
	}
}
