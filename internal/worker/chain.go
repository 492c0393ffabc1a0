package worker

import (
	"fmt"
	"io"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
	"github.com/connectd/connectd/internal/valuefields"
)

// A chain is a connector's single message transforms, in the order of its
// transforms key (Kafka's TransformationChain).
type chain struct {
	stages []stage
}

// A stage is one transform and the predicate that guards it (Kafka's
// TransformationStage): the transform applies when there is no predicate,
// or when the predicate's answer differs from negate.
type stage struct {
	alias  string
	class  string
	t      connect.Transformation
	owning ownedTransformation // t, when it is one
	pred   connect.Predicate
	negate bool
}

// An ownedTransformation is a built-in transformation that builds in place
// in a struct the record owns (internal/owned).
type ownedTransformation interface {
	ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error)
}

// chainScratch is what a goroutine that runs a chain fills for it, record
// after record: the chain keeps none of it.
type chainScratch struct {
	rec       connect.Record
	partition int32 // a sink record's, which rec points to
	own       owned.State[connect.Struct]
}

// TransformAliases reads a LIST key of aliases (transforms, predicates).
func TransformAliases(config map[string]string, key string) ([]string, error) {
	raw, ok := config[key]
	if !ok {
		return nil, nil
	}
	v, err := connect.ParseValue(key, connect.ConfigList, raw)
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// AliasConfig is the config an alias's plugin is configured with: the
// keys under prefix (transforms.<alias>. or predicates.<alias>.) without
// it, less type and, for a transform, predicate and negate, which the
// runtime reads itself.
func AliasConfig(config map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range config {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	delete(out, "type")
	if strings.HasPrefix(prefix, "transforms.") {
		delete(out, "predicate")
		delete(out, "negate")
	}
	return out
}

// newChain builds and configures the transforms and predicates of a
// connector config; nil when it has none. An error names the alias.
func newChain(plugins *connect.PluginSet, config map[string]string) (*chain, error) {
	aliases, err := TransformAliases(config, "transforms")
	if err != nil || len(aliases) == 0 {
		return nil, err
	}
	predAliases, err := TransformAliases(config, "predicates")
	if err != nil {
		return nil, err
	}
	c := &chain{}
	fail := func(err error) (*chain, error) {
		c.close()
		return nil, err
	}
	preds := map[string]connect.Predicate{}
	for _, alias := range predAliases {
		prefix := "predicates." + alias + "."
		p, err := newPlugin(plugins, config, prefix, connect.PluginPredicate)
		if err != nil {
			return fail(err)
		}
		preds[alias] = p.(connect.Predicate)
	}
	for _, alias := range aliases {
		prefix := "transforms." + alias + "."
		t, err := newPlugin(plugins, config, prefix, connect.PluginTransformation)
		if err != nil {
			return fail(err)
		}
		st := stage{alias: alias, class: config[prefix+"type"], t: t.(connect.Transformation)}
		st.owning, _ = st.t.(ownedTransformation)
		c.stages = append(c.stages, st)
		predAlias, hasPred := config[prefix+"predicate"]
		negate, hasNegate := config[prefix+"negate"]
		if hasNegate && !hasPred {
			return fail(fmt.Errorf("Config '%snegate' was provided but there is no config '%spredicate' defining a predicate to be negated.", prefix, prefix))
		}
		if !hasPred {
			continue
		}
		p, ok := preds[predAlias]
		if !ok {
			return fail(fmt.Errorf("Invalid value %s for configuration %spredicate: no predicate of that alias is listed in predicates", predAlias, prefix))
		}
		c.stages[len(c.stages)-1].pred = p
		if hasNegate {
			b, err := connect.ParseValue(prefix+"negate", connect.ConfigBoolean, negate)
			if err != nil {
				return fail(err)
			}
			c.stages[len(c.stages)-1].negate = b.(bool)
		}
	}
	return c, nil
}

// newPlugin makes and configures the transform or predicate that
// prefix+"type" names.
func newPlugin(plugins *connect.PluginSet, config map[string]string, prefix string, typ connect.PluginType) (any, error) {
	class, ok := config[prefix+"type"]
	if !ok {
		return nil, fmt.Errorf("Missing required configuration \"%stype\" which has no default value.", prefix)
	}
	p, err := plugins.Lookup(strings.TrimSpace(class), typ)
	if err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration %stype: Class %s could not be found.", class, prefix, class)
	}
	inst := p.New()
	var conf func(map[string]string) error
	switch x := inst.(type) {
	case connect.Transformation:
		conf = x.Configure
	case connect.Predicate:
		conf = x.Configure
	default:
		return nil, fmt.Errorf("plugin %s is not a %s", p.Class, typ)
	}
	if err := safeCall(func() error { return conf(AliasConfig(config, prefix)) }); err != nil {
		closePlugin(inst)
		return nil, fmt.Errorf("configuring %s (%s): %w", strings.TrimSuffix(prefix, "."), p.Class, err)
	}
	return inst, nil
}

// apply runs r through the stages; a nil record was dropped. An error is
// a recordError naming the transform that failed. A panic in a transform
// or a predicate is its error: one recover per record, not a call per
// stage, keeps the chain's own cost off the record's way.
//
// own.Parts ends as the returned record's key and value that the chain
// made for it and nothing else holds (internal/owned); a stage may take
// own.Spare.
func (c *chain) apply(r *connect.Record, own *owned.State[connect.Struct]) (out *connect.Record, err error) {
	i := 0
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &recordError{stage: stageTransformation, class: c.stages[i].class, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	// The connector's key and value are never the chain's to change; nor
	// is what a transformation or a predicate of someone else's was
	// shown, as it may keep it.
	own.Parts = 0
	for ; i < len(c.stages); i++ {
		st := &c.stages[i]
		if st.pred != nil {
			skip := st.pred.Test(r) == st.negate
			own.Parts = 0
			if skip {
				continue
			}
		}
		var next *connect.Record
		var err error
		if st.owning != nil {
			next, err = st.owning.ApplyOwned(r, own)
		} else {
			next, err = st.t.Apply(r)
			own.Parts = 0
		}
		if err != nil {
			return nil, &recordError{stage: stageTransformation, class: st.class, err: err}
		}
		if next == nil {
			return nil, nil
		}
		r = next
	}
	return r, nil
}

// valueNeeds is what a sink's value converter, conv, need build of a
// value for this chain: only the top-level fields that the first stage
// reads, when it always applies (no predicate: one that says no would
// pass the whole value on) and says which it reads. Nil when conv builds
// every field.
func (c *chain) valueNeeds(conv connect.Converter) *valuefields.Needs {
	if c == nil || len(c.stages) == 0 || c.stages[0].pred != nil {
		return nil
	}
	r, ok := c.stages[0].t.(valuefields.Reader)
	if _, converts := conv.(valuefields.Converter); !ok || !converts {
		return nil
	}
	return valuefields.New(r)
}

// close closes the stages' transforms and predicates that are io.Closers.
func (c *chain) close() {
	if c == nil {
		return
	}
	closed := map[any]bool{}
	for _, st := range c.stages {
		for _, p := range []any{st.t, st.pred} {
			if p != nil && !closed[p] {
				closed[p] = true
				closePlugin(p)
			}
		}
	}
}

func closePlugin(p any) {
	if cl, ok := p.(io.Closer); ok {
		safeCall(cl.Close)
	}
}
