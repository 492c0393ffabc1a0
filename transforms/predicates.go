package transforms

import (
	"errors"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javaregex"
)

// predicatePlugin is the plugin of the predicate class
// PredicatesPackage.name.
func predicatePlugin(name string, newP func() connect.Predicate) connect.Plugin {
	return connect.Plugin{Class: PredicatesPackage + "." + name, Type: connect.PluginPredicate, Version: kafkaVersion, New: func() any { return newP() }}
}

// nonEmptyString is Kafka's NonEmptyString.
func nonEmptyString(v any) error {
	if s, ok := v.(string); ok && s == "" {
		return errors.New("String must be non-empty")
	}
	return nil
}

// TopicNameMatches is Kafka's TopicNameMatches predicate: true for a
// record whose whole topic matches pattern.
type TopicNameMatches struct {
	pattern *javaregex.Pattern
}

var topicNameMatchesConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "pattern", Type: connect.ConfigString, Required: true,
		Validator: func(v any) error {
			if err := nonEmptyString(v); err != nil {
				return err
			}
			return regexValidator(v)
		},
		Importance: connect.Medium, Doc: "A Java regular expression for matching against the name of a record's topic."})

// Config returns TopicNameMatches' keys.
func (p *TopicNameMatches) Config() *connect.ConfigDef { return topicNameMatchesConfig }

// Configure compiles pattern.
func (p *TopicNameMatches) Configure(config map[string]string) error {
	pc, err := topicNameMatchesConfig.Parse(config)
	if err != nil {
		return err
	}
	p.pattern, err = javaregex.Compile(pc.String("pattern"))
	return err
}

// Test reports whether the whole topic matches.
func (p *TopicNameMatches) Test(r *connect.Record) bool { return p.pattern.Matches(r.Topic) }

// HasHeaderKey is Kafka's HasHeaderKey predicate: true for a record with
// at least one header named name.
type HasHeaderKey struct {
	name string
}

var hasHeaderKeyConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Required: true, Validator: nonEmptyString,
		Importance: connect.Medium, Doc: "The header name."})

// Config returns HasHeaderKey's keys.
func (p *HasHeaderKey) Config() *connect.ConfigDef { return hasHeaderKeyConfig }

// Configure reads name.
func (p *HasHeaderKey) Configure(config map[string]string) error {
	pc, err := hasHeaderKeyConfig.Parse(config)
	if err != nil {
		return err
	}
	p.name = pc.String("name")
	return nil
}

// Test reports whether a header has the name.
func (p *HasHeaderKey) Test(r *connect.Record) bool {
	for _, h := range r.Headers {
		if h.Key == p.name {
			return true
		}
	}
	return false
}

// RecordIsTombstone is Kafka's RecordIsTombstone predicate: true for a
// record whose value is null.
type RecordIsTombstone struct{}

var recordIsTombstoneConfig = connect.NewConfigDef()

// Config returns RecordIsTombstone's keys: none.
func (*RecordIsTombstone) Config() *connect.ConfigDef { return recordIsTombstoneConfig }

// Configure accepts the (keyless) config.
func (*RecordIsTombstone) Configure(map[string]string) error { return nil }

// Test reports whether the value is null.
func (*RecordIsTombstone) Test(r *connect.Record) bool { return r.Value == nil }
