package transforms

import (
	"fmt"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javaregex"
	"github.com/connectd/connectd/internal/owned"
)

// routePlugins are the routing and header transforms and the three
// predicates.
func routePlugins() []connect.Plugin {
	out := []connect.Plugin{
		transformPlugin("RegexRouter", func() connect.Transformation { return new(RegexRouter) }),
		transformPlugin("Filter", func() connect.Transformation { return new(Filter) }),
		transformPlugin("DropHeaders", func() connect.Transformation { return new(DropHeaders) }),
		transformPlugin("InsertHeader", func() connect.Transformation { return new(InsertHeader) }),
	}
	out = append(out, keyValuePlugins("HeaderFrom", func(p Part) connect.Transformation { return &HeaderFrom{part: p} })...)
	return append(out,
		predicatePlugin("TopicNameMatches", func() connect.Predicate { return new(TopicNameMatches) }),
		predicatePlugin("HasHeaderKey", func() connect.Predicate { return new(HasHeaderKey) }),
		predicatePlugin("RecordIsTombstone", func() connect.Predicate { return new(RecordIsTombstone) }),
	)
}

// regexValidator is Kafka's RegexValidator.
func regexValidator(v any) error {
	s, _ := v.(string)
	if _, err := javaregex.Compile(s); err != nil {
		return fmt.Errorf("Invalid regex: %v", err)
	}
	return nil
}

// RegexRouter is Kafka's RegexRouter: a record whose whole topic matches
// regex goes to the topic replacement makes of it ($n and ${name} are
// the match's groups).
type RegexRouter struct {
	regex       *javaregex.Pattern
	replacement string
	// last is the last topic routed and where it went: a connector's
	// records mostly go to a few topics, and the answer is a function of
	// the topic alone.
	last atomic.Pointer[routed]
}

type routed struct {
	in, out string
	matched bool
}

var regexRouterConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "regex", Type: connect.ConfigString, Required: true, Validator: regexValidator,
		Importance: connect.High, Doc: "Regular expression to use for matching."}).
	Define(connect.ConfigKey{Name: "replacement", Type: connect.ConfigString, Required: true,
		Importance: connect.High, Doc: "Replacement string."})

// Config returns RegexRouter's keys.
func (t *RegexRouter) Config() *connect.ConfigDef { return regexRouterConfig }

// Configure reads regex and replacement. A replacement that names a
// group the regex does not have, or ends in a lone \ or $, is refused
// here: Java would fail every matching record with it.
func (t *RegexRouter) Configure(config map[string]string) error {
	pc, err := regexRouterConfig.Parse(config)
	if err != nil {
		return err
	}
	re, err := javaregex.Compile(pc.String("regex"))
	if err != nil {
		return err
	}
	repl := pc.String("replacement")
	if err := re.CheckReplacement(repl); err != nil {
		return &connect.ConfigError{Name: "replacement", Message: fmt.Sprintf("Invalid value %s for configuration replacement: %v", repl, err)}
	}
	t.regex, t.replacement = re, repl
	return nil
}

// ApplyOwned is Apply in a worker's chain (internal/owned): the key and
// value stay what they were, the record's own or not.
func (t *RegexRouter) ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error) {
	return t.Apply(r)
}

// Apply reroutes the record when its whole topic matches.
func (t *RegexRouter) Apply(r *connect.Record) (*connect.Record, error) {
	if last := t.last.Load(); last != nil && last.in == r.Topic {
		if last.matched {
			r.Topic = last.out
		}
		return r, nil
	}
	topic, ok, err := t.regex.ReplaceWhole(r.Topic, t.replacement)
	if err != nil {
		return nil, err
	}
	t.last.Store(&routed{in: r.Topic, out: topic, matched: ok})
	if ok {
		r.Topic = topic
	}
	return r, nil
}
