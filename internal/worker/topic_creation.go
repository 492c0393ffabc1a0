package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javaregex"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// KIP-158's keys: the worker's switch, and a source connector's groups.
const (
	TopicCreationEnableConfig = "topic.creation.enable"
	TopicCreationPrefix       = "topic.creation."
	TopicCreationGroupsConfig = TopicCreationPrefix + "groups"
	defaultTopicGroup         = "default"
)

// Documentation strings of TopicCreationConfig.
const (
	tcIncludeDoc = "A list of regular expression literals used to match the topic names used by the source connector. " +
		"This list is used to include topics that should be created using the topic settings defined by this group."
	tcExcludeDoc = "A list of regular expression literals used to match the topic names used by the source connector. " +
		"This list is used to exclude topics from being created with the topic settings defined by this group. " +
		"Note that exclusion rules have precedent and override any inclusion rules for the topics."
	tcReplicationDoc = "The replication factor for new topics created for this connector using this group. " +
		"This value may be -1 to use the broker's" + "default replication factor, or may be a positive number not larger than the number of " +
		"brokers in the Kafka cluster. A value larger than the number of brokers in the Kafka cluster " +
		"will result in an error when the new topic is created. For the default group this configuration " +
		"is required. For any other group defined in topic.creation.groups this config is " +
		"optional and if it's missing it gets the value of the default group"
	tcPartitionsDoc = "The number of partitions new topics created for this connector. " +
		"This value may be -1 to use the broker's default number of partitions, " +
		"or a positive number representing the desired number of partitions. " +
		"For the default group this configuration is required. For any " +
		"other group defined in topic.creation.groups this config is optional and if it's " +
		"missing it gets the value of the default group"
)

// UsesTopicCreation says whether a source connector's config has any
// topic.creation.* key, which is what turns KIP-158 on for it.
func UsesTopicCreation(props map[string]string) bool {
	for k := range props {
		if strings.HasPrefix(k, TopicCreationPrefix) {
			return true
		}
	}
	return false
}

// topicGroup is one of a connector's topic creation groups
// (TopicCreationGroup).
type topicGroup struct {
	name              string
	include, exclude  *javaregex.Pattern // each list joined with '|'
	partitions        int32
	replicationFactor int16
	configs           map[string]*string // every other topic.creation.<group>.* key
}

// matches is TopicCreationGroup.matches: exclusions win.
func (g *topicGroup) matches(topic string) bool {
	return !g.exclude.Matches(topic) && g.include.Matches(topic)
}

func regexListValid(v any) error {
	l, _ := v.([]string)
	for _, e := range l {
		if _, err := javaregex.Compile(e); err != nil {
			return fmt.Errorf("Syntax error in regular expression: %v", err)
		}
	}
	return nil
}

func partitionsValid(v any) error {
	if n, _ := v.(int32); n != -1 && n < 1 {
		return errors.New("Number of partitions must be positive, or -1 to use the broker's default")
	}
	return nil
}

func replicationValid(v any) error {
	if n, _ := v.(int16); n != -1 && n < 1 {
		return errors.New("Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default")
	}
	return nil
}

func groupsValid(v any) error {
	l, _ := v.([]string)
	seen := map[string]bool{}
	for _, g := range l {
		if seen[g] {
			return errors.New("Duplicate alias provided.")
		}
		seen[g] = true
	}
	return nil
}

// TopicCreationGroupsKey is topic.creation.groups, as
// SourceConnectorConfig defines it.
func TopicCreationGroupsKey() connect.ConfigKey {
	return connect.ConfigKey{Name: TopicCreationGroupsConfig, Type: connect.ConfigList, Default: []string{}, Validator: groupsValid,
		Importance: connect.Low, Doc: "Groups of configurations for topics created by source connectors",
		Group: "Topic Creation", OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Topic Creation Groups"}
}

// TopicCreationDef is the definition of a source connector's
// topic.creation.* keys for its config, as SourceConnectorConfig.enrich
// makes it: the default group's replication factor and partitions are
// required, the other groups' default to them. It is nil when the config
// uses no topic creation.
func TopicCreationDef(props map[string]string) *connect.ConfigDef {
	if !UsesTopicCreation(props) {
		return nil
	}
	d := connect.NewConfigDef().Define(TopicCreationGroupsKey())
	groupKeys := func(group, configGroup string, rf, parts any, required bool) {
		p := TopicCreationPrefix + group + "."
		var inclDef any = []string{}
		regexes := regexListValid
		if group == defaultTopicGroup {
			// Kafka never reads the default group's lists, so it does
			// not check them either (defaultGroupConfigDef).
			inclDef, regexes = ".*", nil
		}
		d.Define(connect.ConfigKey{Name: p + "include", Type: connect.ConfigList, Default: inclDef, Validator: regexes, Importance: connect.Low,
			Doc: tcIncludeDoc, Group: configGroup, OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Inclusion Topic Pattern for " + configGroup})
		d.Define(connect.ConfigKey{Name: p + "exclude", Type: connect.ConfigList, Default: []string{}, Validator: regexes, Importance: connect.Low,
			Doc: tcExcludeDoc, Group: configGroup, OrderInGroup: 2, Width: connect.WidthLong, DisplayName: "Exclusion Topic Pattern for " + configGroup})
		d.Define(connect.ConfigKey{Name: p + "replication.factor", Type: connect.ConfigShort, Default: rf, Required: required, Validator: replicationValid, Importance: connect.Low,
			Doc: tcReplicationDoc, Group: configGroup, OrderInGroup: 3, Width: connect.WidthLong, DisplayName: "Replication Factor for Topics in " + configGroup})
		d.Define(connect.ConfigKey{Name: p + "partitions", Type: connect.ConfigInt, Default: parts, Required: required, Validator: partitionsValid, Importance: connect.Low,
			Doc: tcPartitionsDoc, Group: configGroup, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Partition Count for Topics in " + configGroup})
	}
	groupKeys(defaultTopicGroup, defaultTopicGroup, nil, nil, true)
	// The other groups' defaults are the default group's values; when
	// those are missing or bad, that is the error validation reports,
	// and -1 stands in.
	var rf, parts any = int16(-1), int32(-1)
	if pc, err := d.Parse(props); err == nil {
		rf, parts = pc.Get(TopicCreationPrefix+defaultTopicGroup+".replication.factor"), pc.Get(TopicCreationPrefix+defaultTopicGroup+".partitions")
	}
	for _, g := range topicGroupNames(props) {
		groupKeys(g, "Topic Creation: "+g, rf, parts, false)
	}
	return d
}

// topicGroupNames lists topic.creation.groups, each once, without
// "default", which always exists.
func topicGroupNames(props map[string]string) []string {
	raw := strings.TrimSpace(props[TopicCreationGroupsConfig])
	if raw == "" {
		return nil
	}
	var out []string
	for _, g := range strings.Split(raw, ",") {
		g = strings.TrimSpace(g)
		if g != defaultTopicGroup && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// parseTopicGroups reads a source connector's groups, the default one
// last, as TopicCreationGroup.configuredGroups; nil when the config uses
// no topic creation.
func parseTopicGroups(props map[string]string) ([]*topicGroup, error) {
	d := TopicCreationDef(props)
	if d == nil {
		return nil, nil
	}
	// SourceConnectorConfig drops the default group's include and
	// exclude: that group takes every topic no other group takes.
	props = maps.Clone(props)
	delete(props, TopicCreationPrefix+defaultTopicGroup+".include")
	delete(props, TopicCreationPrefix+defaultTopicGroup+".exclude")
	pc, err := d.Parse(props)
	if err != nil {
		return nil, err
	}
	var groups []*topicGroup
	for _, name := range append(topicGroupNames(props), defaultTopicGroup) {
		p := TopicCreationPrefix + name + "."
		g := &topicGroup{name: name, partitions: int32(pc.Int(p + "partitions")), configs: map[string]*string{}}
		g.replicationFactor, _ = pc.Get(p + "replication.factor").(int16)
		if g.include, err = javaregex.Compile(strings.Join(pc.List(p+"include"), "|")); err != nil {
			return nil, &connect.ConfigError{Name: p + "include", Message: fmt.Sprintf("Invalid value %s for configuration %s: Syntax error in regular expression: %v", props[p+"include"], p+"include", err)}
		}
		if g.exclude, err = javaregex.Compile(strings.Join(pc.List(p+"exclude"), "|")); err != nil {
			return nil, &connect.ConfigError{Name: p + "exclude", Message: fmt.Sprintf("Invalid value %s for configuration %s: Syntax error in regular expression: %v", props[p+"exclude"], p+"exclude", err)}
		}
		for k, v := range props {
			rest, ok := strings.CutPrefix(k, p)
			if !ok {
				continue
			}
			switch rest {
			case "include", "exclude", "replication.factor", "partitions":
			default:
				g.configs[rest] = &v
			}
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// topicCreation creates a source task's topics the first time the task
// sends to them (AbstractWorkerSourceTask.maybeCreateTopic).
type topicCreation struct {
	w         *Worker
	connector string
	conn      map[string]string
	groups    []*topicGroup // the default group last
	known     map[string]bool

	admin      *kadm.Client
	closeAdmin func()
}

// newTopicCreation returns nil when the worker's topic.creation.enable is
// false or the connector sets no topic.creation.* key.
func (w *Worker) newTopicCreation(connector string, connConfig map[string]string) (*topicCreation, error) {
	if !w.cfg.TopicCreation {
		return nil, nil
	}
	groups, err := parseTopicGroups(connConfig)
	if err != nil || groups == nil {
		return nil, err
	}
	for _, k := range []string{"include", "exclude"} {
		if v, ok := connConfig[TopicCreationPrefix+defaultTopicGroup+"."+k]; ok {
			w.log.Warn("The default topic creation group takes every topic no other group takes: its "+k+" is not used", "connector", connector, "key", TopicCreationPrefix+defaultTopicGroup+"."+k, "value", v)
		}
	}
	return &topicCreation{w: w, connector: connector, conn: connConfig, groups: groups, known: map[string]bool{}}, nil
}

func (tc *topicCreation) close() {
	if tc != nil && tc.closeAdmin != nil {
		tc.closeAdmin()
	}
}

// ensure makes sure topic exists before a record is sent to it: found, or
// created with the first group that matches it.
func (tc *topicCreation) ensure(ctx context.Context, topic string) error {
	if tc == nil || tc.known[topic] {
		return nil
	}
	if tc.admin == nil {
		adm, closeAdm, err := tc.w.Admin(tc.connector, tc.conn)
		if err != nil {
			return fmt.Errorf("Task failed to create new topic %s: %w", topic, err)
		}
		tc.admin, tc.closeAdmin = adm, closeAdm
	}
	// Kafka's admin client's default.api.timeout.ms.
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tc.w.log.Info("The task will send records to topic for the first time. Checking whether topic exists", "connector", tc.connector, "topic", topic)
	details, err := tc.admin.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("Task failed to create new topic %s: %w", topic, err)
	}
	if d, ok := details[topic]; ok && d.Err == nil {
		tc.w.log.Info("Topic already exists.", "connector", tc.connector, "topic", topic)
		tc.known[topic] = true
		return nil
	}
	g := tc.groups[len(tc.groups)-1]
	for _, cand := range tc.groups[:len(tc.groups)-1] {
		if cand.matches(topic) {
			g = cand
			break
		}
	}
	resp, err := tc.admin.CreateTopic(ctx, g.partitions, g.replicationFactor, g.configs, topic)
	if err == nil {
		err = resp.Err
	}
	switch {
	case err == nil:
		tc.w.log.Info("Created topic using creation group", "connector", tc.connector, "topic", topic, "group", g.name,
			"partitions", g.partitions, "replicationFactor", g.replicationFactor)
	case errors.Is(err, kerr.TopicAlreadyExists):
		tc.w.log.Info("Found existing topic", "connector", tc.connector, "topic", topic)
	default:
		msg := err.Error()
		if resp.ErrMessage != "" {
			msg += ": " + resp.ErrMessage
		}
		return fmt.Errorf("Task failed to create new topic %s (partitions=%d, replicationFactor=%d, configs=%v, group %s): %s. "+
			"Ensure that the task is authorized to create topics or that the topic exists and restart the task",
			topic, g.partitions, g.replicationFactor, configString(g.configs), g.name, msg)
	}
	tc.known[topic] = true
	return nil
}

func configString(m map[string]*string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + *m[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
