package transforms

import (
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/owned"
)

func replaceFieldPlugins() []connect.Plugin {
	return keyValuePlugins("ReplaceField", func(p Part) connect.Transformation { return &ReplaceField{part: p} })
}

const replaceFieldPurpose = "field replacement"

// ReplaceFieldConfig is the ConfigDef of Kafka's ReplaceField, with the
// deprecated blacklist and whitelist keys Kafka 3.9 still accepts.
func ReplaceFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.ConfigList, Default: []string{}, Importance: connect.Medium,
			Doc: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "blacklist", Type: connect.ConfigList, Importance: connect.Low,
			Doc: "Deprecated. Use exclude instead."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.ConfigList, Default: []string{}, Importance: connect.Medium,
			Doc: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "whitelist", Type: connect.ConfigList, Importance: connect.Low,
			Doc: "Deprecated. Use include instead."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.ConfigList, Default: []string{}, Importance: connect.Medium,
			Doc: "Field rename mappings.", Validator: func(v any) error {
				l, _ := v.([]string)
				_, err := parseRenameMappings(l)
				return err
			}}).
		Define(replaceNullWithDefaultKey)
}

// parseRenameMappings reads "old:new" pairs. Each is split as Java's
// String.split(":") splits, which drops trailing empty strings: "a:b:" is
// the pair a, b, and ":b" renames the field "" to b. A later pair for the
// same field wins.
func parseRenameMappings(mappings []string) (map[string]string, error) {
	m := make(map[string]string, len(mappings))
	for _, mapping := range mappings {
		parts := strings.Split(mapping, ":")
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 {
			return nil, errors.New("Invalid rename mapping: " + mapping)
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

// translateDeprecated is Kafka's ConfigUtils.translateDeprecatedConfigs
// for one key and its one alias: the alias's value moves to the key
// unless the key is set too, and the alias itself is dropped.
func translateDeprecated(config map[string]string, key, alias string) {
	v, ok := config[alias]
	if !ok {
		return
	}
	delete(config, alias)
	if _, set := config[key]; set {
		slog.Error(key+" was configured, as well as the deprecated alias(es) "+alias+".  Using the value of "+key,
			"logger", "org.apache.kafka.common.utils.ConfigUtils")
		return
	}
	slog.Warn("Configuration key "+alias+" is deprecated and may be removed in the future.  Please update your configuration to use "+key+" instead.",
		"logger", "org.apache.kafka.common.utils.ConfigUtils")
	config[key] = v
}

// ReplaceField is Kafka's ReplaceField$Key and ReplaceField$Value: it
// keeps, drops and renames the fields of a struct or map.
type ReplaceField struct {
	part                   Part
	exclude, include       map[string]bool
	renames, reverse       map[string]string
	replaceNullWithDefault bool
	cache                  schemaCache
	// plan is how the last input schema's struct is copied: a
	// connector's records mostly share one schema, and finding each
	// field by name again for every record was most of the transform's
	// cost.
	plan atomic.Pointer[replacePlan]
}

// A replacePlan copies a struct of schema in to one of schema out: from
// holds, per output field, the index of the input field it reads, or -1
// when the input has no field of the name it reads back (Kafka's
// DataException for each record), with that name in missing.
type replacePlan struct {
	in, out *connect.Schema
	from    []int
	missing []string
	// renamesOnly: out's field i is in's, for every i.
	renamesOnly bool
}

// Config returns Kafka's keys for ReplaceField.
func (t *ReplaceField) Config() *connect.ConfigDef { return ReplaceFieldConfig() }

// Configure reads the field lists and renames.
func (t *ReplaceField) Configure(config map[string]string) error {
	translated := make(map[string]string, len(config))
	for k, v := range config {
		translated[k] = v
	}
	translateDeprecated(translated, "include", "whitelist")
	translateDeprecated(translated, "exclude", "blacklist")
	pc, err := ReplaceFieldConfig().Parse(translated)
	if err != nil {
		return err
	}
	t.exclude = nameSet(pc.List("exclude"))
	t.include = nameSet(pc.List("include"))
	if t.renames, err = parseRenameMappings(pc.List("renames")); err != nil {
		return err
	}
	t.reverse = invertRenames(t.renames)
	t.replaceNullWithDefault = pc.Bool(replaceNullWithDefaultKey.Name)
	t.cache = schemaCache{}
	return nil
}

func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// invertRenames maps each new name to its old one. Where two fields are
// renamed to the same name, the one Kafka keeps is the last its HashMap
// of renames iterates.
func invertRenames(renames map[string]string) map[string]string {
	out := make(map[string]string, len(renames))
	for _, old := range javaHashMapKeys(renames) {
		out[renames[old]] = old
	}
	return out
}

// javaHashMapKeys returns m's keys in the order a java.util.HashMap of them
// iterates.
func javaHashMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return javajson.HashMapOrder(keys)
}

func (t *ReplaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *ReplaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *ReplaceField) reverseRenamed(name string) string {
	if n, ok := t.reverse[name]; ok {
		return n
	}
	return name
}

// planFor derives, or takes from the cache, the output schema of in and
// the input field each of its fields reads.
func (t *ReplaceField) planFor(in *connect.Schema) (*replacePlan, error) {
	updated := t.cache.get(in)
	if updated == nil {
		b := newFieldsBuilder(len(in.Fields))
		for _, f := range in.Fields {
			if t.keep(f.Name) {
				if err := b.add(t.renamed(f.Name), f.Schema); err != nil {
					return nil, err
				}
			}
		}
		updated = b.build(copySchemaBasics(in, connect.TypeStruct))
		t.cache.put(in, updated)
	}
	plan := &replacePlan{in: in, out: updated, from: make([]int, len(updated.Fields)), missing: make([]string, len(updated.Fields))}
	for i, f := range updated.Fields {
		// Kafka reads each output field back by the name it had: a field
		// that took the name of a field left in place reads a field the
		// input may not have.
		old := t.reverseRenamed(f.Name)
		plan.from[i], plan.missing[i] = -1, old
		for j := range in.Fields {
			if in.Fields[j].Name == old {
				plan.from[i] = j
				break
			}
		}
	}
	plan.renamesOnly = len(plan.from) == len(in.Fields)
	for i, j := range plan.from {
		plan.renamesOnly = plan.renamesOnly && i == j
	}
	return plan, nil
}

// Apply filters and renames the fields; a null key or value passes.
func (t *ReplaceField) Apply(r *connect.Record) (*connect.Record, error) {
	return t.ApplyOwned(r, new(owned.State[connect.Struct]))
}

// ApplyOwned is Apply in a worker's chain (internal/owned): a struct the
// record owns is renamed in place when no field is dropped or moved, and
// what the part ends up holding is the record's own.
func (t *ReplaceField) ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error) {
	schema, value := t.part.Get(r)
	if value == nil {
		return r, nil
	}
	if schema == nil {
		m, err := requireMap(value, replaceFieldPurpose)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		if len(t.renames) == 0 {
			for k, v := range m {
				if t.keep(k) {
					out[k] = v
				}
			}
		} else {
			// Two fields renamed to one name: the value kept is that of
			// the field Kafka's HashMap iterates last.
			for _, k := range javaHashMapKeys(m) {
				if t.keep(k) {
					out[t.renamed(k)] = m[k]
				}
			}
		}
		t.part.Set(r, nil, out)
		st.Parts |= t.part.owned()
		return r, nil
	}
	in, err := requireStruct(value, replaceFieldPurpose)
	if err != nil {
		return nil, err
	}
	plan := t.plan.Load()
	if plan == nil || plan.in != in.Schema() {
		if plan, err = t.planFor(in.Schema()); err != nil {
			return nil, err
		}
		t.plan.Store(plan)
	}
	updated := plan.out
	var out *connect.Struct
	if plan.renamesOnly {
		out, err = copyFields(in, updated, t.replaceNullWithDefault, st.Parts&t.part.owned() != 0)
	} else {
		out, err = t.pick(in, plan)
	}
	if err != nil {
		return nil, err
	}
	t.part.Set(r, updated, out)
	st.Parts |= t.part.owned()
	return r, nil
}

// pick is the struct of plan.out that takes each field from the field of
// in that plan says.
func (t *ReplaceField) pick(in *connect.Struct, plan *replacePlan) (*connect.Struct, error) {
	out := connect.NewStruct(plan.out)
	srcFields := in.Schema().Fields
	for i, j := range plan.from {
		if j < 0 {
			return nil, dataError("%s is not a valid field name", plan.missing[i])
		}
		if err := copyField(out, i, in, &srcFields[j], t.replaceNullWithDefault); err != nil {
			return nil, err
		}
	}
	return out, nil
}
