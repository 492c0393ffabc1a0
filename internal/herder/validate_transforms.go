package herder

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/worker"
)

// aliasKind is what Kafka's ConnectorConfig.EnrichablePlugin varies
// between transforms and predicates.
type aliasKind struct {
	key   string // transforms, predicates
	group string // Transforms, Predicates
	kind  string // Transformation, Predicate
	typ   connect.PluginType
}

var (
	transformAliases = aliasKind{key: "transforms", group: "Transforms", kind: "Transformation", typ: connect.PluginTransformation}
	predicateAliases = aliasKind{key: "predicates", group: "Predicates", kind: "Predicate", typ: connect.PluginPredicate}
)

// aliasesValidator refuses an alias given twice, as Kafka's does.
func aliasesValidator(v any) error {
	l, _ := v.([]string)
	seen := map[string]bool{}
	for _, a := range l {
		if seen[a] {
			return fmt.Errorf("Duplicate alias provided.")
		}
		seen[a] = true
	}
	return nil
}

// enrich adds to base, as Kafka's ConnectorConfig.enrich does, the keys
// of each transform and predicate config names: per alias a group
// "<Transforms|Predicates>: <alias>" with its type key, for a transform
// its predicate and negate keys, then the plugin's own keys, prefixed.
// checks holds, per type key, what the plugin's Configure said of the
// alias's config (the worker would fail the task with it), and what the
// negate and predicate keys refer to.
func enrich(plugins *connect.PluginSet, base *connect.ConfigDef, config map[string]string) (def *connect.ConfigDef, groups []string, checks map[string][]string) {
	def = base.Merge(connect.NewConfigDef())
	checks = map[string][]string{}
	predicates, _ := worker.TransformAliases(config, "predicates")
	for _, ak := range []aliasKind{transformAliases, predicateAliases} {
		aliases, err := worker.TransformAliases(config, ak.key)
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, alias := range aliases {
			if seen[alias] {
				continue
			}
			seen[alias] = true
			groups = append(groups, ak.group+": "+alias)
			enrichAlias(plugins, def, config, ak, alias, predicates, checks)
		}
	}
	return def, groups, checks
}

func enrichAlias(plugins *connect.PluginSet, def *connect.ConfigDef, config map[string]string, ak aliasKind, alias string, predicates []string, checks map[string][]string) {
	prefix := ak.key + "." + alias + "."
	group := ak.group + ": " + alias
	typeKey := prefix + "type"
	// The alias's plugin, found once: its keys are the alias's, and the
	// type key's check is that it was found.
	var plugin any
	if class, ok := config[typeKey]; ok {
		if p, err := plugins.Lookup(strings.TrimSpace(class), ak.typ); err == nil {
			plugin = p.New()
		}
	}
	def.Define(connect.ConfigKey{
		Name: typeKey, Type: connect.ConfigClass, Required: true, Importance: connect.High,
		Doc: "Class for the '" + alias + "' " + strings.ToLower(ak.kind) + ".", Group: group, OrderInGroup: 0,
		Width: connect.WidthLong, DisplayName: ak.kind + " type for " + alias,
		Validator: func(v any) error {
			if ak.typ == connect.PluginTransformation {
				if _, neg := config[prefix+"negate"]; neg {
					if _, pred := config[prefix+"predicate"]; !pred {
						return &connect.ConfigError{Name: typeKey, Message: fmt.Sprintf("Config '%snegate' was provided but there is no config '%spredicate' defining a predicate to be negated.", prefix, prefix)}
					}
				}
			}
			if plugin == nil {
				return fmt.Errorf("Class %v could not be found.", v)
			}
			return nil
		},
	})
	child := connect.NewConfigDef()
	if ak.typ == connect.PluginTransformation {
		child.Define(connect.ConfigKey{Name: "predicate", Type: connect.ConfigString, Importance: connect.Medium, Doc: "The alias of a predicate used to determine whether to apply this transformation.",
			Validator: func(v any) error {
				if s, _ := v.(string); s != "" && !slices.Contains(predicates, s) {
					return fmt.Errorf("There is no predicate with alias '%s' in 'predicates'", s)
				}
				return nil
			}})
		child.Define(connect.ConfigKey{Name: "negate", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Doc: "Whether the configured predicate should be negated."})
	}
	var own *connect.ConfigDef
	switch x := plugin.(type) {
	case connect.Transformation:
		own = x.Config()
	case connect.Predicate:
		own = x.Config()
	}
	if own != nil {
		for _, k := range own.Keys() {
			if child.Key(k.Name) == nil {
				child.Define(k)
			}
		}
	}
	for i, k := range sortedConfigs(child) {
		k.Name = prefix + k.Name
		if k.Group == "" {
			k.Group = group
		} else {
			k.Group = group + ": " + k.Group
		}
		k.OrderInGroup = i + 1
		for j, d := range k.Dependents {
			k.Dependents[j] = prefix + d
		}
		def.Define(k)
	}
	if plugin == nil || own == nil {
		return
	}
	// Kafka configures transforms only when a task starts, which then
	// fails; validation tells what Configure says now, so that a create
	// is refused rather than a task failed.
	sub := worker.AliasConfig(config, prefix)
	if len(errorsOf(own.Validate(sub))) > 0 {
		return // the prefixed keys say what is wrong
	}
	var cerr error
	switch x := plugin.(type) {
	case connect.Transformation:
		cerr = safeConfigure(x.Configure, sub)
	case connect.Predicate:
		cerr = safeConfigure(x.Configure, sub)
	}
	if cerr != nil {
		checks[typeKey] = append(checks[typeKey], fmt.Sprintf("Invalid value %s for configuration %s: %v", config[typeKey], typeKey, cerr))
	}
}

func errorsOf(values []connect.ConfigValue) []string {
	var out []string
	for _, v := range values {
		out = append(out, v.Errors...)
	}
	return out
}

func safeConfigure(configure func(map[string]string) error, config map[string]string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return configure(config)
}

// sortedConfigs orders a plugin's keys as Kafka's ConfigDef.sortedConfigs
// does: keys without a group first, then each group in the order it was
// first defined; within one, by order in group, then required keys
// first, then by importance, then by name.
func sortedConfigs(d *connect.ConfigDef) []connect.ConfigKey {
	keys := d.Keys()
	groupRank := map[string]int{"": 0}
	for _, k := range keys {
		if _, ok := groupRank[k.Group]; !ok {
			groupRank[k.Group] = len(groupRank)
		}
	}
	importance := map[connect.Importance]int{connect.High: 0, connect.Medium: 1, connect.Low: 2}
	slices.SortStableFunc(keys, func(a, b connect.ConfigKey) int {
		if c := cmp.Compare(groupRank[a.Group], groupRank[b.Group]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.OrderInGroup, b.OrderInGroup); c != 0 {
			return c
		}
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(importance[a.Importance], importance[b.Importance]); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return keys
}
