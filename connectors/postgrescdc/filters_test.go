package postgrescdc

import (
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

const peopleTables = `
CREATE TABLE people (
	id int PRIMARY KEY,
	name text NOT NULL,
	ssn text,
	email text
);
CREATE TABLE lines (
	order_id int NOT NULL,
	line int NOT NULL,
	sku text NOT NULL,
	qty int,
	PRIMARY KEY (order_id, line)
);
`

func valueFields(tb testing.TB, rec *connect.SourceRecord, which string) []string {
	tb.Helper()
	var out []string
	for _, f := range envOf(tb, rec).Schema().Field(which).Schema.Fields {
		out = append(out, f.Name)
	}
	return out
}

func keyFields(rec *connect.SourceRecord) []string {
	if rec.KeySchema == nil {
		return nil
	}
	var out []string
	for _, f := range rec.KeySchema.Fields {
		out = append(out, f.Name)
	}
	return out
}

// TestColumnFiltersKeyColumnsSkippedOperations runs a connector with a
// column excluded (a PII column, in the key of no table), a custom key,
// and updates skipped but truncates not, through snapshot and streaming.
func TestColumnFiltersKeyColumnsSkippedOperations(t *testing.T) {
	db := newDB(t)
	db.exec(peopleTables)
	db.exec(`INSERT INTO people VALUES (1, 'alice', '123-45-6789', 'a@x.org')`)
	db.exec(`INSERT INTO lines VALUES (1, 1, 'A', 2)`)

	r := startRunner(t, newOffsetStore(), db.config("pii", "pii_slot",
		ColumnExcludeConfig, `public\.people\.SSN, public.lines.qty`,
		MsgKeyColumnsConfig, `public.lines:sku,order_id`,
		SkippedOperationsConfig, "u"))
	snap := r.pollN(2)
	json := new(converters.JSONConverter)
	if err := json.Configure(map[string]string{"schemas.enable": "true"}, false); err != nil {
		t.Fatal(err)
	}
	check := func(rec *connect.SourceRecord) {
		t.Helper()
		b, err := json.FromConnectData(rec.Topic, rec.ValueSchema, rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "ssn") || strings.Contains(string(b), "123-45") || strings.Contains(string(b), "qty") {
			t.Fatalf("an excluded column was published: %s", b)
		}
	}
	for _, rec := range snap {
		check(rec)
	}
	people, lines := snap[1], snap[0] // lines before people: snapshot order is by schema, then table
	if got := valueFields(t, people, "after"); !slices.Equal(got, []string{"id", "name", "email"}) {
		t.Fatalf("people's value fields %v", got)
	}
	if got := keyFields(people); !slices.Equal(got, []string{"id"}) {
		t.Fatalf("people's key %v", got)
	}
	// The key's fields come in the order of the expressions.
	if got := keyFields(lines); !slices.Equal(got, []string{"sku", "order_id"}) || lines.KeySchema.Name != "pii.public.lines.Key" {
		t.Fatalf("lines' key %v", got)
	}
	if k := lines.Key.(*connect.Struct); k.Get("sku") != "A" || k.Get("order_id") != int32(1) {
		t.Fatalf("lines' key %v", k)
	}

	// Streaming: the update is skipped, the delete (and its tombstone),
	// the insert and the truncate are not.
	db.exec(`INSERT INTO people VALUES (2, 'bob', '987-65-4321', NULL)`)
	db.exec(`UPDATE people SET name = 'alicia' WHERE id = 1`)
	db.exec(`DELETE FROM people WHERE id = 2`)
	db.exec(`TRUNCATE lines`)
	db.exec(`INSERT INTO lines VALUES (2, 1, 'B', 5)`)
	recs := r.pollN(5)
	var got []string
	for _, rec := range recs {
		if rec.Value != nil {
			check(rec)
		}
		got = append(got, rec.Topic+" "+opOf(t, rec))
	}
	want := []string{"pii.public.people c", "pii.public.people d", "pii.public.people tombstone", "pii.public.lines t", "pii.public.lines c"}
	if !slices.Equal(got, want) {
		t.Fatalf("streamed %v, want %v", got, want)
	}
	trunc := recs[3]
	if trunc.Key != nil || trunc.KeySchema != nil || envOf(t, trunc).Get("before") != nil || envOf(t, trunc).Get("after") != nil ||
		sourceField(t, trunc, "table") != "lines" {
		t.Fatalf("truncate event %v %v", trunc.Key, envOf(t, trunc))
	}
	if k := recs[4].Key.(*connect.Struct); k.Get("sku") != "B" || k.Get("order_id") != int32(2) {
		t.Fatalf("streamed lines key %v", k)
	}
	r.stop()

	// column.include.list, and the default skipped.operations (truncates).
	r = startRunner(t, newOffsetStore(), db.config("inc", "inc_slot", ColumnIncludeConfig, `public\.people\.(id|name)`, SnapshotModeConfig, SnapshotNoData))
	db.exec(`TRUNCATE lines`)
	db.exec(`UPDATE people SET email = 'b@x.org' WHERE id = 1`)
	recs = r.pollN(1)
	if len(recs) != 1 || opOf(t, recs[0]) != "u" || recs[0].Topic != "inc.public.people" {
		t.Fatalf("streamed %d records: %s", len(recs), describe(t, recs[0]))
	}
	if got := valueFields(t, recs[0], "after"); !slices.Equal(got, []string{"id", "name"}) {
		t.Fatalf("included value fields %v", got)
	}
	// Every column of a table the list leaves no column of is out.
	db.exec(`INSERT INTO lines VALUES (3, 1, 'C', 1)`)
	recs = r.pollN(1)
	if got := valueFields(t, recs[0], "after"); len(got) != 0 || !slices.Equal(keyFields(recs[0]), []string{"order_id", "line"}) {
		t.Fatalf("lines' value fields %v, key %v", got, keyFields(recs[0]))
	}
}

func TestFilterAndKeyConfig(t *testing.T) {
	base := map[string]string{"topic.prefix": "srv", "database.hostname": "h", "database.dbname": "d", "database.user": "u"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := parseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	if !c.skipped["t"] || len(c.skipped) != 1 || c.keyColumns != nil || !c.inValue("public", "a", "b") {
		t.Fatalf("defaults: skipped %v, key columns %v", c.skipped, c.keyColumns)
	}
	for _, tc := range []struct {
		kv      []string
		wantErr string // "" accepted
	}{
		{[]string{SkippedOperationsConfig, "none"}, ""},
		{[]string{SkippedOperationsConfig, "c, u,d,t,r"}, ""},
		{[]string{SkippedOperationsConfig, "x"}, "skipped.operations"},
		{[]string{SkippedOperationsConfig, ""}, "skipped.operations"},
		{[]string{SkippedOperationsConfig, "none,c"}, "'none' cannot be specified with other skipped operation types"},
		{[]string{MsgKeyColumnsConfig, "public.t:a,b;s.u:c"}, ""},
		{[]string{MsgKeyColumnsConfig, "public.t:a;"}, ""},
		{[]string{MsgKeyColumnsConfig, ""}, "Must not be empty"},
		{[]string{MsgKeyColumnsConfig, "public.t"}, "public.t has an invalid format (expecting '^\\s*([^\\s:]+):([^:\\s]+)\\s*$')"},
		{[]string{MsgKeyColumnsConfig, "a:b:c"}, "invalid format"},
		{[]string{MsgKeyColumnsConfig, "(:a"}, "message.key.columns"},
		{[]string{MsgKeyColumnsConfig, "t:(?=x)"}, "lookahead"},
		{[]string{ColumnIncludeConfig, "a.b.c", ColumnExcludeConfig, "a.b.d"}, `"column.include.list" is already specified`},
		{[]string{ColumnExcludeConfig, "("}, "column.exclude.list"},
		{[]string{"snapshot.fetch.size", "10240"}, ""},
		{[]string{"snapshot.fetch.size", "500"}, "snapshot.fetch.size"},
		{[]string{"provide.transaction.metadata", "FALSE"}, ""},
		{[]string{"provide.transaction.metadata", "true"}, "Invalid value true for configuration provide.transaction.metadata: connectd does not implement"},
		{[]string{"converters", "boolean"}, "converters"},
		{[]string{"column.mask.with.5.chars", "public.t.c"}, "column.mask.with.5.chars"},
		{[]string{"column.mask.hash.SHA-256.with.salt.x", "public.t.c"}, "column.mask.hash.SHA-256.with.salt.x"},
		{[]string{"column.truncate.to.3.chars", "public.t.c"}, "column.truncate.to.3.chars"},
		{[]string{"snapshot.select.statement.overrides.public.t", "SELECT 1"}, "snapshot.select.statement.overrides.public.t"},
		{[]string{SSLRootCertConfig, "/ca.pem"}, ""},
	} {
		_, err := parseConfig(with(tc.kv...))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.kv, err)
		case tc.wantErr != "" && err == nil:
			t.Errorf("%v accepted", tc.kv)
		case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
			t.Errorf("%v: %v, want it to say %q", tc.kv, err, tc.wantErr)
		}
	}

	if c, _ := parseConfig(with(TopicDelimiterConfig, "_")); c.heartbeatTopicStr != "__debezium-heartbeat_srv" {
		t.Errorf("heartbeat topic with topic.delimiter=_: %s", c.heartbeatTopicStr)
	}
	c, _ = parseConfig(with(SkippedOperationsConfig, "none"))
	if len(c.skipped) != 0 {
		t.Errorf("none: %v", c.skipped)
	}
	c, _ = parseConfig(with(ColumnExcludeConfig, `public\.t\.secret.*`))
	for col, want := range map[string]bool{"secret": false, "SECRET_2": false, "xsecret": true, "id": true} {
		if c.inValue("public", "t", col) != want {
			t.Errorf("inValue(%s) != %v", col, want)
		}
	}
	if c.inValue("public", "u", "secret") != true {
		t.Error("the exclude list applies to another table")
	}
	c, _ = parseConfig(with(SSLRootCertConfig, "/ca.pem", SSLPasswordConfig, "pw"))
	if dsn := c.dsn(false); !strings.Contains(dsn, "sslrootcert='/ca.pem'") || !strings.Contains(dsn, "sslpassword='pw'") || strings.Contains(dsn, "sslcert") {
		t.Errorf("dsn %s", dsn)
	}

	// The validate hook names the pattern keys the definition cannot hold.
	errs := (&Connector{}).Validate(with("column.mask.with.5.chars", "x", "table.include.list", "a"))
	if len(errs) != 1 || len(errs["column.mask.with.5.chars"]) != 1 {
		t.Errorf("Validate: %v", errs)
	}
}

func FuzzKeyColumns(f *testing.F) {
	for _, s := range []string{"public.t:a,b;s.u:c", "", ";", "a:b;", " a:b ", "(.*).t:[a-z]+", "t:(?=x)", "a:b:c", "a:,", "x:\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := parseKeyColumns(s)
		if err == nil {
			for _, re := range res {
				re.Matches("public.t.a")
			}
		}
		if verr := msgKeyColumnsValid(s); (verr == nil) != (err == nil) {
			t.Fatalf("%q: validator says %v, parser %v", s, verr, err)
		}
	})
}
