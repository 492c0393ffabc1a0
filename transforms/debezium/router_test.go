package debezium

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

func router(tb testing.TB, config map[string]string) *ByLogicalTableRouter {
	tb.Helper()
	r := NewByLogicalTableRouter()
	if err := r.Configure(config); err != nil {
		tb.Fatalf("Configure(%v): %v", config, err)
	}
	return r
}

func shardRecord(topic string) *connect.Record {
	r := change("c", nil, alice, true)
	r.Topic = topic
	return r
}

func TestByLogicalTableRouter(t *testing.T) {
	base := map[string]string{"topic.regex": `(.*)customers_shard(.*)`, "topic.replacement": "$1customers_all_shards"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		name      string
		config    map[string]string
		topic     string
		wantTopic string
		wantKey   string
		keySchema string
	}{
		{"default key field", base, "db.inv.customers_shard1", "db.inv.customers_all_shards", "Struct{id=1,__dbz__physicalTableIdentifier=db.inv.customers_shard1}", "db.inv.customers_all_shards.Key"},
		{"key field regex", with("key.field.name", "shard_id", "key.field.regex", `(.*)customers_shard(.*)`, "key.field.replacement", "$2"),
			"db.inv.customers_shard7", "db.inv.customers_all_shards", "Struct{id=1,shard_id=7}", "db.inv.customers_all_shards.Key"},
		{"key field regex that does not match", with("key.field.regex", `nomatch`, "key.field.replacement", "x"),
			"db.inv.customers_shard7", "db.inv.customers_all_shards", "Struct{id=1,__dbz__physicalTableIdentifier=db.inv.customers_shard7}", "db.inv.customers_all_shards.Key"},
		{"no uniqueness", with("key.enforce.uniqueness", "false"), "db.inv.customers_shard1", "db.inv.customers_all_shards", "Struct{id=1}", "db.inv.customers_all_shards.Key"},
		{"avro names", with("topic.replacement", "$1customers-all", "schema.name.adjustment.mode", "avro"), "db.inv.customers_shard1", "db.inv.customers-all",
			"Struct{id=1,__dbz__physicalTableIdentifier=db.inv.customers_shard1}", "db.inv.customers_all.Key"},
		{"avro_unicode names", with("topic.replacement", "$1customers-all", "schema.name.adjustment.mode", "AVRO_UNICODE"), "db.inv.customers_shard1", "db.inv.customers-all",
			"Struct{id=1,__dbz__physicalTableIdentifier=db.inv.customers_shard1}", "db.inv.customers_u002dall.Key"},
	} {
		tr := router(t, c.config)
		in := shardRecord(c.topic)
		out, err := tr.Apply(in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out.Topic != c.wantTopic || out.Key.(*connect.Struct).String() != c.wantKey || out.KeySchema.Name != c.keySchema {
			t.Errorf("%s: %s %v %s", c.name, out.Topic, out.Key, out.KeySchema.Name)
		}
		env := out.Value.(*connect.Struct)
		wantEnv := strings.TrimSuffix(c.keySchema, ".Key")
		if out.ValueSchema.Name != wantEnv+".Envelope" || out.ValueSchema.Version != 2 ||
			out.ValueSchema.Field("after").Schema.Name != wantEnv+".Value" || !out.ValueSchema.Field("after").Schema.Optional ||
			out.ValueSchema.Field("before").Schema != out.ValueSchema.Field("after").Schema {
			t.Errorf("%s: envelope schema %+v", c.name, out.ValueSchema)
		}
		if a := env.Get("after").(*connect.Struct); a.String() != "Struct{id=1,name=alice,email=a@example.com}" || env.Get("op") != "c" || env.Get("source") == nil {
			t.Errorf("%s: envelope %s", c.name, env)
		}
	}

	tr := router(t, base)
	// A topic the regex does not match whole is left alone.
	in := shardRecord("db.inv.orders")
	if out, err := tr.Apply(in); err != nil || out.Topic != "db.inv.orders" || out.ValueSchema != customersEnvelope {
		t.Errorf("unmatched: %+v, %v", out, err)
	}
	// A tombstone and a heartbeat keep their values; the key is rerouted.
	ts := tombstone()
	ts.Topic = "db.inv.customers_shard2"
	out, err := tr.Apply(ts)
	if err != nil || out.Topic != "db.inv.customers_all_shards" || out.Value != nil || out.Key.(*connect.Struct).String() != "Struct{id=1,__dbz__physicalTableIdentifier=db.inv.customers_shard2}" {
		t.Errorf("tombstone: %+v, %v", out, err)
	}
	hb := heartbeat()
	hb.Topic = "x.customers_shard1"
	if out, err := tr.Apply(hb); err != nil || out.Topic != "x.customers_all_shards" || out.ValueSchema != pgHeartbeatSchema {
		t.Errorf("heartbeat: %+v, %v", out, err)
	}
	// A keyless table's events have no key schema afterwards either.
	nokey := shardRecord("db.inv.customers_shard3")
	nokey.Key = nil
	if out, err := tr.Apply(nokey); err != nil || out.KeySchema != nil || out.Key != nil {
		t.Errorf("keyless: %+v, %v", out, err)
	}
	// A key that is not a struct fails the record.
	bad := shardRecord("db.inv.customers_shard3")
	bad.KeySchema, bad.Key = nil, "k"
	if _, err := tr.Apply(bad); err == nil || err.Error() != "Only Struct objects supported for [Updating schema], found: java.lang.String" {
		t.Errorf("string key: %v", err)
	}
	// A key field the key already has.
	dup := router(t, map[string]string{"topic.regex": "(.*)", "topic.replacement": "all", "key.field.name": "id"})
	if _, err := dup.Apply(shardRecord("a")); err == nil || !strings.Contains(err.Error(), "duplication id") {
		t.Errorf("duplicate key field: %v", err)
	}
}

func TestAvroAdjusterConflict(t *testing.T) {
	adj := newAvroAdjuster(underscoreReplacement, isAvroFirst)
	for in, want := range map[string]string{"a-b.Key": "a_b.Key", "1abc": "_1abc", "ok.Name_1": "ok.Name_1", "": ""} {
		if got, err := adj(in); err != nil || got != want {
			t.Errorf("adjust(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := adj("a+b.Key"); err == nil || !strings.Contains(err.Error(), "conflicts with another different schema 'a-b.Key'") {
		t.Errorf("conflict: %v", err)
	}
	uni := newAvroAdjuster(unicodeReplacement, isLetter)
	if got, _ := uni("_a-b1"); got != "_u005fa_u002db1" {
		t.Errorf("unicode: %s", got)
	}
}

func TestRouterConfigure(t *testing.T) {
	for _, c := range []struct {
		config map[string]string
		want   string
	}{
		{map[string]string{"topic.replacement": "x"}, "Invalid value null for configuration topic.regex: A value is required"},
		{map[string]string{"topic.regex": "x", "topic.replacement": " "}, "Invalid value   for configuration topic.replacement: A value is required"},
		{map[string]string{"topic.regex": "(x", "topic.replacement": "y"}, "Invalid value (x for configuration topic.regex: A valid regular expressions is expected, but "},
		{map[string]string{"topic.regex": "x", "topic.replacement": "$2"}, "Invalid value $2 for configuration topic.replacement: No group 2"},
		{map[string]string{"topic.regex": "x", "topic.replacement": "y", "key.field.regex": "(.*)"}, "Invalid value null for configuration key.field.replacement: key.field.replacement must be non-empty if key.field.regex is set."},
		{map[string]string{"topic.regex": "x", "topic.replacement": "y", "schema.name.adjustment.mode": "strict"}, "Invalid value strict for configuration schema.name.adjustment.mode: Value must be one of " + enumLiterals(schemaNameAdjustmentModes...)},
		{map[string]string{"topic.regex": "x", "topic.replacement": "y", "logical.table.cache.size": "many"}, "Invalid value many for configuration logical.table.cache.size: Not a number of type INT"},
	} {
		err := NewByLogicalTableRouter().Configure(c.config)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s", c.config, err, c.want)
		}
	}
}

func TestPlugins(t *testing.T) {
	ps := Plugins()
	if len(ps) != 2 || ps[0].Class != "io.debezium.transforms.ExtractNewRecordState" || ps[1].Class != "io.debezium.transforms.ByLogicalTableRouter" {
		t.Fatalf("%+v", ps)
	}
	for _, p := range ps {
		if p.Type != connect.PluginTransformation || p.Version != "3.6.1.Final" {
			t.Errorf("%+v", p)
		}
		if _, ok := p.New().(connect.Transformation); !ok {
			t.Errorf("%s is not a Transformation", p.Class)
		}
	}
}
