package debezium

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/transforms"
)

// outcome renders what the transform made of a record.
func outcome(r *connect.Record) string {
	switch {
	case r == nil:
		return "dropped"
	case r.Value == nil && r.ValueSchema == nil:
		return "tombstone"
	case r.Value == nil:
		return "null value of " + r.ValueSchema.Name
	}
	if s, ok := r.Value.(*connect.Struct); ok {
		return s.String()
	}
	return fmt.Sprint(r.Value)
}

func truncate() *connect.Record { return change("t", nil, nil, false) }

func TestDeleteTombstoneHandlingModes(t *testing.T) {
	const (
		row      = "Struct{id=1,name=alice,email=a@example.com}"
		rowFalse = "Struct{id=1,name=alice,email=a@example.com,__deleted=false}"
		rowTrue  = "Struct{id=1,name=alice,__deleted=true}"
		nullRow  = "null value of dbserver1.inventory.customers.Value"
	)
	events := []struct {
		name string
		rec  func() *connect.Record
	}{
		{"read", func() *connect.Record { return change("r", nil, alice, false) }},
		{"create", func() *connect.Record { return change("c", nil, alice, true) }},
		{"update", func() *connect.Record { return change("u", alice2, alice, true) }},
		{"delete", func() *connect.Record { return change("d", alice2, nil, true) }},
		{"tombstone", tombstone},
		{"truncate", truncate},
	}
	// Per mode: read, create, update, delete, tombstone, truncate.
	for _, c := range []struct {
		config map[string]string
		want   []string
	}{
		{map[string]string{}, []string{row, row, row, nullRow, "dropped", "dropped"}},
		{map[string]string{"delete.tombstone.handling.mode": "tombstone"}, []string{row, row, row, nullRow, "dropped", "dropped"}},
		{map[string]string{"delete.tombstone.handling.mode": "drop"}, []string{row, row, row, "dropped", "dropped", "dropped"}},
		{map[string]string{"delete.tombstone.handling.mode": "rewrite"}, []string{rowFalse, rowFalse, rowFalse, rowTrue, "dropped", "dropped"}},
		{map[string]string{"delete.tombstone.handling.mode": " Rewrite-With-Tombstone "}, []string{rowFalse, rowFalse, rowFalse, rowTrue, "tombstone", "dropped"}},
		{map[string]string{"delete.tombstone.handling.mode": "delete-to-tombstone"}, []string{row, row, row, "tombstone", "dropped", "dropped"}},
		// The keys Debezium 3.2 removed, each with its default.
		{map[string]string{"drop.tombstones": "true"}, []string{row, row, row, "dropped", "dropped", "dropped"}},
		{map[string]string{"drop.tombstones": "false"}, []string{row, row, row, "dropped", "tombstone", "dropped"}},
		{map[string]string{"delete.handling.mode": "none"}, []string{row, row, row, nullRow, "dropped", "dropped"}},
		{map[string]string{"delete.handling.mode": "none", "drop.tombstones": "false"}, []string{row, row, row, nullRow, "tombstone", "dropped"}},
		{map[string]string{"delete.handling.mode": "rewrite"}, []string{rowFalse, rowFalse, rowFalse, rowTrue, "dropped", "dropped"}},
		{map[string]string{"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, []string{rowFalse, rowFalse, rowFalse, rowTrue, "tombstone", "dropped"}},
		// The new key wins over the old ones.
		{map[string]string{"delete.tombstone.handling.mode": "rewrite", "delete.handling.mode": "none", "drop.tombstones": "false"}, []string{rowFalse, rowFalse, rowFalse, rowTrue, "dropped", "dropped"}},
	} {
		tr := configured(t, c.config)
		for i, ev := range events {
			in := ev.rec()
			out, err := tr.Apply(in)
			if err != nil {
				t.Fatalf("%v %s: %v", c.config, ev.name, err)
			}
			if got := outcome(out); got != c.want[i] {
				t.Errorf("%v %s: got %s, want %s", c.config, ev.name, got, c.want[i])
			}
		}
	}
}

func TestFlattenedRowSchema(t *testing.T) {
	for _, mode := range []string{"tombstone", "rewrite"} {
		tr := configured(t, map[string]string{"delete.tombstone.handling.mode": mode})
		in := change("c", nil, alice, false)
		out, err := tr.Apply(in)
		if err != nil {
			t.Fatal(err)
		}
		s := out.ValueSchema
		// Debezium rebuilds the row's struct: named as the row, but required.
		if s.Name != customersValue.Name || s.Optional || s.Type != connect.TypeStruct {
			t.Errorf("%s: schema %+v", mode, s)
		}
		if out.Key == nil || out.KeySchema != customersKey || out.Topic != "dbserver1.inventory.customers" {
			t.Errorf("%s: key or topic changed: %+v", mode, out)
		}
		if mode == "rewrite" {
			f := s.Field("__deleted")
			if f == nil || f.Schema.Type != connect.TypeString || !f.Schema.Optional || f.Index != 3 {
				t.Errorf("__deleted field: %+v", f)
			}
		}
	}
	// A delete in tombstone mode keeps the row's schema as the envelope has it.
	tr := configured(t, map[string]string{})
	out, err := tr.Apply(change("d", alice, nil, false))
	if err != nil || out.ValueSchema != customersValue {
		t.Errorf("delete: %v, %v", out, err)
	}
}

func TestOtherRecordsPassUnchanged(t *testing.T) {
	schemaChange := connect.StructSchema("io.debezium.connector.postgresql.SchemaChangeValue", connect.Field{Name: "ddl", Schema: connect.StringSchema})
	unnamed := connect.StructSchema("", connect.Field{Name: "a", Schema: connect.StringSchema})
	for _, in := range []*connect.Record{
		heartbeat(),
		{Topic: "dbserver1", ValueSchema: schemaChange, Value: connect.NewStruct(schemaChange).Put("ddl", "CREATE TABLE t ()")},
		{Topic: "t", ValueSchema: unnamed, Value: connect.NewStruct(unnamed).Put("a", "x")},
		{Topic: "t", Value: map[string]any{"before": nil, "after": map[string]any{"id": int64(1)}, "op": "c"}},
		{Topic: "t", ValueSchema: connect.StringSchema, Value: "text"},
	} {
		for _, config := range []map[string]string{{}, {"add.headers": "op,source.lsn", "add.fields": "op"}} {
			tr := configured(t, config)
			want := *in
			out, err := tr.Apply(in)
			if err != nil {
				t.Fatal(err)
			}
			if out == nil || out.Topic != want.Topic || out.ValueSchema != want.ValueSchema || fmt.Sprint(out.Value) != fmt.Sprint(want.Value) || len(out.Headers) != 0 {
				t.Errorf("%v: %+v became %+v", config, want, out)
			}
		}
	}
}

func TestAddFields(t *testing.T) {
	cases := []struct {
		name   string
		config map[string]string
		in     *connect.Record
		want   string
	}{
		{"the usual ones", map[string]string{"add.fields": "op,table,lsn,source.ts_ms"},
			change("u", alice2, alice, true), "Struct{id=1,name=alice,email=a@example.com,__op=u,__table=customers,__lsn=200,__source_ts_ms=1700000000123}"},
		{"top level and transaction", map[string]string{"add.fields": "ts_ms, ts_us ,ts_ns,id,total_order,data_collection_order"},
			change("c", nil, alice, true), "Struct{id=1,name=alice,email=a@example.com,__ts_ms=1700000000200,__ts_us=1700000000200000,__ts_ns=1700000000200000000,__id=771:200,__total_order=3,__data_collection_order=2}"},
		{"no transaction block in a snapshot", map[string]string{"add.fields": "op,transaction.id,source.snapshot"},
			change("r", nil, alice, false), "Struct{id=1,name=alice,email=a@example.com,__op=r,__source_snapshot=true}"},
		{"renames and prefix", map[string]string{"add.fields": "op:OP,source.lsn:LSN,total_order:TOTAL_ORDER", "add.fields.prefix": "cdc_"},
			change("c", nil, alice, true), "Struct{id=1,name=alice,email=a@example.com,cdc_OP=c,cdc_LSN=200,cdc_TOTAL_ORDER=3}"},
		{"a field no block has is left out", map[string]string{"add.fields": "op,nosuch,source.nosuch"},
			change("c", nil, alice, true), "Struct{id=1,name=alice,email=a@example.com,__op=c}"},
		{"rewrite deletes get them", map[string]string{"add.fields": "op,lsn", "delete.tombstone.handling.mode": "rewrite"},
			change("d", alice2, nil, true), "Struct{id=1,name=alice,__deleted=true,__op=d,__lsn=200}"},
		{"tombstone-mode deletes do not", map[string]string{"add.fields": "op,lsn"},
			change("d", alice2, nil, true), "null value of dbserver1.inventory.customers.Value"},
		{"trailing comma", map[string]string{"add.fields": "op,"},
			change("c", nil, alice, true), "Struct{id=1,name=alice,email=a@example.com,__op=c}"},
	}
	for _, c := range cases {
		tr := configured(t, c.config)
		out, err := tr.Apply(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := outcome(out); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}

	// Added fields are optional copies of the envelope's schemas, without
	// their defaults.
	tr := configured(t, map[string]string{"add.fields": "source.snapshot,op"})
	out, err := tr.Apply(change("r", nil, alice, false))
	if err != nil {
		t.Fatal(err)
	}
	f := out.ValueSchema.Field("__source_snapshot").Schema
	if !f.Optional || f.Default != nil || f.Name != "io.debezium.data.Enum" || f.Version != 1 || len(f.Parameters) != 1 {
		t.Errorf("__source_snapshot schema: %+v", f)
	}
	if op := out.ValueSchema.Field("__op").Schema; !op.Optional || op.Type != connect.TypeString {
		t.Errorf("__op schema: %+v", op)
	}

	// A name the row already has fails the record, as Kafka's SchemaBuilder.
	tr = configured(t, map[string]string{"add.fields": "op:name", "add.fields.prefix": ""})
	if _, err := tr.Apply(change("c", nil, alice, false)); err == nil || !strings.Contains(err.Error(), "Cannot create field because of field name duplication name") {
		t.Errorf("duplicate: %v", err)
	}
}

func header(r *connect.Record, key string) *connect.Header {
	for i := range r.Headers {
		if r.Headers[i].Key == key {
			return &r.Headers[i]
		}
	}
	return nil
}

func TestAddHeaders(t *testing.T) {
	tr := configured(t, map[string]string{"add.headers": "op,source.lsn,id,ts_ms:EVENT_TS", "delete.tombstone.handling.mode": "rewrite-with-tombstone"})
	prior := []connect.Header{{Key: "kept", Schema: connect.StringSchema, Value: "v"}}
	in := change("u", alice2, alice, true)
	in.Headers = prior
	out, err := tr.Apply(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(prior) != 1 || len(out.Headers) != 5 || out.Headers[0].Key != "kept" {
		t.Fatalf("headers: %+v (given %+v)", out.Headers, prior)
	}
	for _, c := range []struct {
		key    string
		value  any
		schema connect.Type
	}{{"__op", "u", connect.TypeString}, {"__source_lsn", int64(200), connect.TypeInt64}, {"__id", "771:200", connect.TypeString}, {"__EVENT_TS", int64(1700000000200), connect.TypeInt64}} {
		h := header(out, c.key)
		if h == nil || h.Value != c.value || h.Schema.Type != c.schema || !h.Schema.Optional {
			t.Errorf("header %s: %+v", c.key, h)
		}
	}

	// A snapshot has no transaction block: its header is null.
	out, err = tr.Apply(change("r", nil, alice, false))
	if err != nil {
		t.Fatal(err)
	}
	if h := header(out, "__id"); h == nil || h.Value != nil {
		t.Errorf("__id in a snapshot: %+v", h)
	}

	// A delete's rewritten row and its tombstone both say op=d; the
	// tombstone's header is a required string, as ConnectHeaders.addString.
	out, err = tr.Apply(change("d", alice2, nil, true))
	if err != nil {
		t.Fatal(err)
	}
	if h := header(out, "__op"); h == nil || h.Value != "d" {
		t.Errorf("delete __op: %+v", h)
	}
	out, err = tr.Apply(tombstone())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Headers) != 1 || out.Headers[0] != (connect.Header{Key: "__op", Schema: connect.StringSchema, Value: "d"}) {
		t.Errorf("tombstone headers: %+v", out.Headers)
	}
}

func TestRouteByField(t *testing.T) {
	for _, c := range []struct {
		mode, op  string
		before    *row
		after     *row
		wantTopic string
	}{
		{"tombstone", "c", nil, &row{1, "orders", nil}, "orders"},
		{"tombstone", "u", &row{1, "x", nil}, &row{1, "updated", nil}, "updated"},
		{"tombstone", "d", &row{1, "gone", nil}, nil, "gone"},
		{"rewrite", "d", &row{1, "gone", nil}, nil, "gone"},
		{"tombstone", "c", nil, &row{1, " ", nil}, "dbserver1.inventory.customers"}, // blank: kept
	} {
		tr := configured(t, map[string]string{"route.by.field": "name", "delete.tombstone.handling.mode": c.mode})
		out, err := tr.Apply(change(c.op, c.before, c.after, false))
		if err != nil {
			t.Fatal(err)
		}
		if out.Topic != c.wantTopic {
			t.Errorf("%s %s: topic %s, want %s", c.mode, c.op, out.Topic, c.wantTopic)
		}
	}
	for field, want := range map[string]string{"nosuch": "nosuch is not a valid field name", "id": "Field 'id' is not of type STRING"} {
		tr := configured(t, map[string]string{"route.by.field": field})
		_, err := tr.Apply(change("c", nil, alice, false))
		var de *transforms.DataError
		if !errors.As(err, &de) || de.Message != want {
			t.Errorf("route.by.field=%s: %v, want %s", field, err, want)
		}
	}
}

func TestDropFields(t *testing.T) {
	names := []any{"name", "email"}
	for _, c := range []struct {
		config   map[string]string
		wantRow  string
		wantKey  string
		rowNames []string
	}{
		// Only the optional email goes: the schemas stay compatible.
		{map[string]string{}, "Struct{id=1,name=alice}", "Struct{id=1}", []string{"id", "name"}},
		{map[string]string{"drop.fields.keep.schema.compatible": "false"}, "Struct{id=1}", "Struct{id=1}", []string{"id"}},
		{map[string]string{"drop.fields.keep.schema.compatible": "false", "drop.fields.from.key": "true"}, "Struct{id=1}", "Struct{id=1}", []string{"id"}},
	} {
		c.config["drop.fields.header.name"] = "unchanged"
		tr := configured(t, c.config)
		in := change("u", alice, alice, false)
		in.Headers = []connect.Header{{Key: "unchanged", Schema: connect.ArrayOf(connect.StringSchema), Value: names}}
		out, err := tr.Apply(in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range out.ValueSchema.Fields {
			got = append(got, f.Name)
		}
		if outcome(out) != c.wantRow || !slices.Equal(got, c.rowNames) || out.Key.(*connect.Struct).String() != c.wantKey {
			t.Errorf("%v: %s %v key %v", c.config, outcome(out), got, out.Key)
		}
	}
	// Dropping id from the key too.
	tr := configured(t, map[string]string{"drop.fields.header.name": "h", "drop.fields.from.key": "true", "drop.fields.keep.schema.compatible": "false"})
	in := change("c", nil, alice, false)
	in.Headers = []connect.Header{{Key: "h", Value: []any{"id"}}}
	out, err := tr.Apply(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.KeySchema.Fields) != 0 || outcome(out) != "Struct{name=alice,email=a@example.com}" {
		t.Errorf("key %+v, row %s", out.KeySchema, outcome(out))
	}
	// A header that is not a list of names fails the record.
	in = change("c", nil, alice, false)
	in.Headers = []connect.Header{{Key: "h", Value: "id"}}
	if _, err := tr.Apply(in); err == nil {
		t.Error("a string header was taken as a list")
	}
}

func TestReplaceNullWithDefault(t *testing.T) {
	withDefault := func() *connect.Schema {
		s := connect.StructSchema("s.t.Value", connect.Field{Name: "id", Schema: connect.Int32Schema},
			connect.Field{Name: "n", Schema: &connect.Schema{Type: connect.TypeInt32, Optional: true, Default: int32(7)}})
		s.Optional = true
		return s
	}()
	env := connect.StructSchema("s.t.Envelope", connect.Field{Name: "before", Schema: withDefault}, connect.Field{Name: "after", Schema: withDefault},
		connect.Field{Name: "op", Schema: connect.StringSchema})
	in := func() *connect.Record {
		return &connect.Record{Topic: "s.t", ValueSchema: env, Value: connect.NewStruct(env).Put("after", connect.NewStruct(withDefault).Put("id", int32(1))).Put("op", "c")}
	}
	for _, c := range []struct {
		config map[string]string
		want   any
	}{
		{map[string]string{"delete.tombstone.handling.mode": "rewrite"}, int32(7)},
		{map[string]string{"delete.tombstone.handling.mode": "rewrite", "replace.null.with.default": "false"}, nil},
		// Without the rewrite, values are copied as stored.
		{map[string]string{}, nil},
	} {
		out, err := configured(t, c.config).Apply(in())
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Value.(*connect.Struct).GetWithoutDefault("n"); got != c.want {
			t.Errorf("%v: n = %v, want %v", c.config, got, c.want)
		}
	}
}

func TestExtractConfigure(t *testing.T) {
	for _, c := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"delete.tombstone.handling.mode": "keep"}, "Invalid value keep for configuration delete.tombstone.handling.mode: Value must be one of " + enumLiterals(deleteTombstoneModes...)},
		{map[string]string{"delete.handling.mode": "keep"}, "Invalid value keep for configuration delete.handling.mode: Value must be one of " + enumLiterals(legacyDeleteModes...)},
		{map[string]string{"drop.tombstones": "yes"}, "Invalid value yes for configuration drop.tombstones: Expected value to be either true or false"},
		{map[string]string{"add.fields": "op:a:b"}, "Invalid value op:a:b for configuration add.fields: Unexpected field name: op:a:b"},
		{map[string]string{"add.headers": "op,:"}, "Invalid value op,: for configuration add.headers: Unexpected field name: :"},
		{map[string]string{"replace.null.with.default": "maybe"}, "Invalid value maybe for configuration replace.null.with.default: Expected value to be either true or false"},
	} {
		err := NewExtractNewRecordState().Configure(c.config)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %s", c.config, err, c.want)
		}
	}
	// The list Debezium's EnumRecommender prints is its HashSet's order.
	if got := enumLiterals(deleteTombstoneModes...); got != "drop, tombstone, rewrite-with-tombstone, rewrite, delete-to-tombstone" {
		t.Errorf("order: %s", got)
	}
}

// The transform must not change the record it is given beyond its own
// fields: the envelope, its structs and the headers slice stay as they were.
func TestApplyLeavesInputIntact(t *testing.T) {
	tr := configured(t, map[string]string{"add.fields": "op", "add.headers": "op", "delete.tombstone.handling.mode": "rewrite"})
	in := change("d", alice2, nil, true)
	in.Headers = make([]connect.Header, 1, 4)
	in.Headers[0] = connect.Header{Key: "x", Value: "y"}
	env := in.Value.(*connect.Struct)
	before := env.String()
	headers := in.Headers
	if _, err := tr.Apply(in); err != nil {
		t.Fatal(err)
	}
	if env.String() != before || len(headers) != 1 || headers[:2][1].Key != "" {
		t.Errorf("input changed: %s, headers %+v", env, headers[:cap(headers)])
	}
}

// Apply runs on several goroutines at once, sharing the schema caches.
func TestConcurrentApply(t *testing.T) {
	tr := configured(t, map[string]string{"add.fields": "op,lsn", "delete.tombstone.handling.mode": "rewrite"})
	rt := router(t, map[string]string{"topic.regex": "(.*)", "topic.replacement": "all"})
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				var out *connect.Record
				if out, err = rt.Apply(change("u", alice2, alice, true)); err == nil {
					_, err = tr.Apply(out)
				}
			}
			errs <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
