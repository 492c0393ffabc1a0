package debezium

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javaregex"
)

// ByLogicalTableRouter is io.debezium.transforms.ByLogicalTableRouter: the
// change events of several physical tables (shards, partitions) go to one
// topic, the logical table's. A record whose whole topic matches
// topic.regex gets the topic topic.replacement makes of it; its key and
// envelope get schemas named after the new topic, and its key a field
// (key.field.name) that tells the physical tables apart, whose value is
// the old topic, or what key.field.regex and key.field.replacement make
// of it.
type ByLogicalTableRouter struct {
	topicRegex        *javaregex.Pattern
	topicReplacement  string
	keyFieldRegex     *javaregex.Pattern
	keyFieldRepl      string
	keyFieldName      string
	enforceUniqueness bool
	adjust            func(string) (string, error)

	keySchemas      *lru[*connect.Schema, *connect.Schema]
	envelopeSchemas *lru[*connect.Schema, *connect.Schema]
	keyIDs          *lru[string, string]
	topics          *lru[string, string]
}

// The keys of ByLogicalTableRouter.
const (
	keyTopicRegex         = "topic.regex"
	keyTopicReplacement   = "topic.replacement"
	keyEnforceUniqueness  = "key.enforce.uniqueness"
	keyKeyFieldRegex      = "key.field.regex"
	keyKeyFieldName       = "key.field.name"
	keyKeyFieldRepl       = "key.field.replacement"
	keySchemaNameAdjust   = "schema.name.adjustment.mode"
	keyLogicalTableCache  = "logical.table.cache.size"
	defaultKeyFieldName   = "__dbz__physicalTableIdentifier"
	defaultLogicalTableCS = 16
)

var schemaNameAdjustmentModes = []string{"none", "avro", "avro_unicode"}

// NewByLogicalTableRouter returns an unconfigured transform.
func NewByLogicalTableRouter() *ByLogicalTableRouter { return &ByLogicalTableRouter{} }

// Config returns Debezium's keys.
func (t *ByLogicalTableRouter) Config() *connect.ConfigDef {
	low := connect.Low
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: keyTopicRegex, Type: connect.ConfigString, Importance: low, Width: connect.WidthLong, DisplayName: "Topic regex",
			Doc: "The regex used for extracting the name of the logical table from the original topic name."}).
		Define(connect.ConfigKey{Name: keyTopicReplacement, Type: connect.ConfigString, Importance: low, Width: connect.WidthLong, DisplayName: "Topic replacement",
			Doc: "The replacement string used in conjunction with " + keyTopicRegex + ". This will be used to create the new topic name."}).
		Define(connect.ConfigKey{Name: keyEnforceUniqueness, Type: connect.ConfigBoolean, Default: true, Importance: low, Width: connect.WidthShort, DisplayName: "Add source topic name into key",
			Doc: "Augment each record's key with a field denoting the source topic. This field " +
				"distinguishes records coming from different physical tables which may otherwise have " +
				"primary/unique key conflicts. If the source tables are guaranteed to have globally " +
				"unique keys then this may be set to false to disable key rewriting."}).
		Define(connect.ConfigKey{Name: keyKeyFieldRegex, Type: connect.ConfigString, Importance: low, Width: connect.WidthLong, DisplayName: "Key field regex",
			Doc: "The regex used for extracting the physical table identifier from the original topic " +
				"name. Now that multiple physical tables can share a topic, the event's key may need to be augmented " +
				"to include fields other than just those for the record's primary/unique key, since these are not " +
				"guaranteed to be unique across tables. We need some identifier added to the key that distinguishes " +
				"the different physical tables."}).
		Define(connect.ConfigKey{Name: keyKeyFieldName, Type: connect.ConfigString, Default: defaultKeyFieldName, Importance: low, Width: connect.WidthLong, DisplayName: "Key field name",
			Doc: "Each record's key schema will be augmented with this field name. The purpose of this " +
				"field is to distinguish the different physical tables that can now share a single topic. Make " +
				"sure not to configure a field name that is at risk of conflict with existing key schema field " +
				"names."}).
		Define(connect.ConfigKey{Name: keyKeyFieldRepl, Type: connect.ConfigString, Importance: low, Width: connect.WidthLong, DisplayName: "Key field replacement",
			Doc: "The replacement string used in conjunction with " + keyKeyFieldRegex + ". This will be used to create the physical table identifier in the record's key."}).
		Define(connect.ConfigKey{Name: keySchemaNameAdjust, Type: connect.ConfigString, Default: "none", Importance: low, Width: connect.WidthMedium, DisplayName: "Schema Name Adjustment",
			Validator: enumValidator(schemaNameAdjustmentModes), Recommended: strings.Split(enumLiterals(schemaNameAdjustmentModes...), ", "),
			Doc: "Specify how the message key schema names derived from the resulting topic name should be adjusted for compatibility with the message converter used by the connector, including:" +
				"'avro' replaces the characters that cannot be used in the Avro type name with underscore (default)" +
				"'none' does not apply any adjustment"}).
		Define(connect.ConfigKey{Name: keyLogicalTableCache, Type: connect.ConfigInt, Default: int32(defaultLogicalTableCS), Importance: low, Width: connect.WidthLong, DisplayName: "Logical table cache size",
			Validator: connect.AtLeast(0),
			Doc: "The size used for holding the max entries in LRUCache. The cache will keep the old/new " +
				"schema for logical table key and value, also cache the derived key and topic regex result for improving " +
				"the source record transformation."})
}

// Configure reads the keys, with Debezium's checks: both topic keys set,
// the regexes valid, and key.field.replacement set when key.field.regex
// is.
func (t *ByLogicalTableRouter) Configure(config map[string]string) error {
	pc, err := t.Config().Parse(config)
	if err != nil {
		return err
	}
	for _, k := range []string{keyTopicRegex, keyTopicReplacement} {
		if v, ok := config[k]; !ok || isBlank(v) {
			value := "null"
			if ok {
				value = v
			}
			return configError(k, value, "A value is required")
		}
	}
	if t.topicRegex, err = compileRegex(keyTopicRegex, config[keyTopicRegex]); err != nil {
		return err
	}
	t.topicReplacement = config[keyTopicReplacement]
	if err := t.topicRegex.CheckReplacement(t.topicReplacement); err != nil {
		return configError(keyTopicReplacement, t.topicReplacement, err.Error())
	}
	if re := config[keyKeyFieldRegex]; javaTrim(re) != "" {
		if javaTrim(config[keyKeyFieldRepl]) == "" {
			return configError(keyKeyFieldRepl, "null", keyKeyFieldRepl+" must be non-empty if "+keyKeyFieldRegex+" is set.")
		}
		if t.keyFieldRegex, err = compileRegex(keyKeyFieldRegex, re); err != nil {
			return err
		}
		t.keyFieldRepl = config[keyKeyFieldRepl]
		if err := t.keyFieldRegex.CheckReplacement(t.keyFieldRepl); err != nil {
			return configError(keyKeyFieldRepl, t.keyFieldRepl, err.Error())
		}
	}
	t.keyFieldName = rawString(config, keyKeyFieldName, defaultKeyFieldName)
	t.enforceUniqueness = pc.Bool(keyEnforceUniqueness)
	switch strings.ToLower(strings.TrimSpace(pc.String(keySchemaNameAdjust))) {
	case "avro":
		t.adjust = newAvroAdjuster(underscoreReplacement, isAvroFirst)
	case "avro_unicode":
		t.adjust = newAvroAdjuster(unicodeReplacement, isLetter)
	default:
		t.adjust = func(s string) (string, error) { return s, nil }
	}
	size := pc.Int(keyLogicalTableCache)
	t.keySchemas = newLRU[*connect.Schema, *connect.Schema](size)
	t.envelopeSchemas = newLRU[*connect.Schema, *connect.Schema](size)
	t.keyIDs = newLRU[string, string](size)
	t.topics = newLRU[string, string](size)
	return nil
}

func compileRegex(name, expr string) (*javaregex.Pattern, error) {
	p, err := javaregex.Compile(expr)
	if err != nil {
		return nil, configError(name, expr, "A valid regular expressions is expected, but "+err.Error())
	}
	return p, nil
}

// Apply reroutes one record.
func (t *ByLogicalTableRouter) Apply(r *connect.Record) (*connect.Record, error) {
	oldTopic := r.Topic
	newTopic, ok, err := t.newTopic(oldTopic)
	if err != nil {
		return nil, err
	}
	if !ok || newTopic == "" {
		return r, nil
	}
	var keySchema *connect.Schema
	var key any
	// A table without a primary key has events without a key.
	if r.Key != nil {
		old, err := requireStruct(r.Key, "Updating schema")
		if err != nil {
			return nil, err
		}
		if keySchema, err = t.keySchema(old.Schema(), newTopic); err != nil {
			return nil, err
		}
		if key, err = t.key(keySchema, old, oldTopic); err != nil {
			return nil, err
		}
	}
	r.Topic, r.KeySchema, r.Key = newTopic, keySchema, key
	// Tombstones, heartbeats and schema changes keep their value.
	if r.Value == nil || !isEnvelope(r) {
		return r, nil
	}
	env, err := requireStruct(r.Value, "Updating schema")
	if err != nil {
		return nil, err
	}
	schema, err := t.envelopeSchema(env.Schema(), newTopic)
	if err != nil {
		return nil, err
	}
	out := connect.NewStruct(schema)
	rowSchema := schema.Field("before").Schema
	for i, f := range env.Schema().Fields {
		v := env.At(i)
		if (f.Name == "before" || f.Name == "after") && v != nil {
			row, err := requireStruct(v, "Updating schema")
			if err != nil {
				return nil, err
			}
			if v, err = copyStruct(rowSchema, row); err != nil {
				return nil, err
			}
		}
		if err := put(out, f.Name, v); err != nil {
			return nil, err
		}
	}
	r.ValueSchema, r.Value = schema, out
	return r, nil
}

// newTopic is the topic topic.replacement makes of a topic topic.regex
// matches whole; false when it does not match.
func (t *ByLogicalTableRouter) newTopic(old string) (string, bool, error) {
	if n, ok := t.topics.get(old); ok {
		return n, true, nil
	}
	if !t.topicRegex.Matches(old) {
		return "", false, nil
	}
	n, err := t.topicRegex.ReplaceFirst(old, t.topicReplacement)
	if err != nil {
		return "", false, dataError("%v", err)
	}
	t.topics.put(old, n)
	return n, true, nil
}

func (t *ByLogicalTableRouter) keySchema(old *connect.Schema, newTopic string) (*connect.Schema, error) {
	if s, ok := t.keySchemas.get(old); ok {
		return s, nil
	}
	name, err := t.adjust(newTopic + ".Key")
	if err != nil {
		return nil, err
	}
	b := copyExcludingName(old, name)
	for _, f := range old.Fields {
		if err := b.field(f.Name, f.Schema); err != nil {
			return nil, err
		}
	}
	// Tables that now share a topic may have equal keys: the physical
	// table's identifier keeps them apart.
	if t.enforceUniqueness {
		if err := b.field(t.keyFieldName, connect.StringSchema); err != nil {
			return nil, err
		}
	}
	t.keySchemas.put(old, b.s)
	return b.s, nil
}

func (t *ByLogicalTableRouter) key(schema *connect.Schema, old *connect.Struct, oldTopic string) (*connect.Struct, error) {
	k := connect.NewStruct(schema)
	for i, f := range old.Schema().Fields {
		if err := put(k, f.Name, old.AtWithoutDefault(i)); err != nil {
			return nil, err
		}
	}
	if !t.enforceUniqueness {
		return k, nil
	}
	id := oldTopic
	if t.keyFieldRegex != nil {
		if cached, ok := t.keyIDs.get(oldTopic); ok {
			id = cached
		} else if t.keyFieldRegex.Matches(oldTopic) {
			var err error
			if id, err = t.keyFieldRegex.ReplaceFirst(oldTopic, t.keyFieldRepl); err != nil {
				return nil, dataError("%v", err)
			}
			t.keyIDs.put(oldTopic, id)
		}
	}
	return k, put(k, t.keyFieldName, id)
}

func (t *ByLogicalTableRouter) envelopeSchema(old *connect.Schema, newTopic string) (*connect.Schema, error) {
	if s, ok := t.envelopeSchemas.get(old); ok {
		return s, nil
	}
	bf := old.Field("before")
	if bf == nil {
		return nil, dataError("The envelope %s has no field before", old.Name)
	}
	rowName, err := t.adjust(newTopic + ".Value")
	if err != nil {
		return nil, err
	}
	rb := copyExcludingName(bf.Schema, rowName)
	for _, f := range bf.Schema.Fields {
		if err := rb.field(f.Name, f.Schema); err != nil {
			return nil, err
		}
	}
	envName, err := t.adjust(newTopic + ".Envelope")
	if err != nil {
		return nil, err
	}
	eb := copyExcludingName(old, envName)
	for _, f := range old.Fields {
		fs := f.Schema
		if f.Name == "before" || f.Name == "after" {
			fs = rb.s
		}
		if err := eb.field(f.Name, fs); err != nil {
			return nil, err
		}
	}
	t.envelopeSchemas.put(old, eb.s)
	return eb.s, nil
}

// copyExcludingName is a struct schema with s's version, doc, parameters
// and optionality, named name, without fields yet.
func copyExcludingName(s *connect.Schema, name string) *structBuilder {
	b := newStructLike(s)
	b.s.Name, b.s.Optional = name, s.Optional
	return b
}

// copyStruct is a row in the renamed row schema, its values as stored.
func copyStruct(schema *connect.Schema, row *connect.Struct) (*connect.Struct, error) {
	out := connect.NewStruct(schema)
	for i, f := range row.Schema().Fields {
		if err := put(out, f.Name, row.AtWithoutDefault(i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Debezium's SchemaNameAdjuster for Avro: each UTF-16 unit that Avro does
// not allow in a full name is replaced (with "_", or with "_u" and its
// hex code), and a leading digit, when replaced by "_", is kept after it.
// Two names whose replacement is the same fail the record, as Debezium's
// adjuster throws on such a conflict.

func isLetter(c uint16) bool    { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAvroFirst(c uint16) bool { return isLetter(c) || c == '_' }

func underscoreReplacement(uint16) string { return "_" }

func unicodeReplacement(c uint16) string {
	hex := strconv.FormatUint(uint64(c), 16)
	if len(hex) <= 2 {
		hex = "00" + hex
	}
	return "_u" + hex
}

func newAvroAdjuster(replace func(uint16) string, validFirst func(uint16) bool) func(string) (string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	originalOf := map[string]string{}
	underscore := validFirst(uint16('_'))
	return func(name string) (string, error) {
		units := utf16.Encode([]rune(name))
		if len(units) == 0 {
			return name, nil
		}
		var b strings.Builder
		changed := false
		for i, c := range units {
			if validFirst(c) || (i > 0 && (c == '.' || c >= '0' && c <= '9')) {
				b.WriteByte(byte(c)) // every valid character is ASCII
				continue
			}
			b.WriteString(replace(c))
			if i == 0 && underscore && unicode.IsDigit(rune(c)) {
				b.WriteString(string(utf16.Decode([]uint16{c})))
			}
			changed = true
		}
		if !changed {
			return name, nil
		}
		out := b.String()
		mu.Lock()
		defer mu.Unlock()
		if !seen[name] {
			seen[name] = true
			prev, ok := originalOf[out]
			originalOf[out] = name
			if ok && prev != name {
				return "", fmt.Errorf("The Kafka Connect schema name '%s' is not a valid Avro schema name and its replacement '%s' conflicts with another different schema '%s'", name, out, prev)
			}
		}
		return out, nil
	}
}
