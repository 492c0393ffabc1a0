package worker

import (
	"testing"
)

func TestTopicGroups(t *testing.T) {
	groups, err := parseTopicGroups(map[string]string{
		"topic.creation.groups":                     "a, default, b",
		"topic.creation.default.partitions":         "2",
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.include":            "nothing", // dropped, as Kafka drops it
		"topic.creation.default.exclude":            "(",       // not even checked
		"topic.creation.default.segment.bytes":      "1024",
		"topic.creation.a.include":                  "a.*",
		"topic.creation.a.exclude":                  "ab",
		"topic.creation.b.include":                  "a.*,b",
		"topic.creation.b.partitions":               "9",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 3 || groups[0].name != "a" || groups[1].name != "b" || groups[2].name != "default" {
		t.Fatalf("groups %v", groups)
	}
	a, b, def := groups[0], groups[1], groups[2]
	if a.partitions != 2 || a.replicationFactor != 1 || b.partitions != 9 || len(a.configs) != 0 {
		t.Fatalf("a %+v, b %+v", a, b)
	}
	if v := def.configs["segment.bytes"]; v == nil || *v != "1024" || len(def.configs) != 1 {
		t.Fatalf("default's configs %v", def.configs)
	}
	for topic, want := range map[string][3]bool{
		"abc":  {true, true, true},
		"ab":   {false, true, true},
		"b":    {false, true, true},
		"xb":   {false, false, true},
		"xabc": {false, false, true},
	} {
		if got := [3]bool{a.matches(topic), b.matches(topic), def.matches(topic)}; got != want {
			t.Errorf("%s: matches %v, want %v", topic, got, want)
		}
	}
	props := map[string]string{"topic.creation.default.exclude": "(", "topic.creation.default.partitions": "1",
		"topic.creation.default.replication.factor": "1", "topic.creation.groups": "g", "topic.creation.g.exclude": "("}
	for _, v := range TopicCreationDef(props).Validate(props) {
		if bad := len(v.Errors) > 0; bad != (v.Name == "topic.creation.g.exclude") {
			t.Errorf("%s: errors %v", v.Name, v.Errors)
		}
	}
	if g, err := parseTopicGroups(map[string]string{"topic": "x"}); g != nil || err != nil {
		t.Fatalf("no topic.creation keys: %v %v", g, err)
	}
}

func FuzzTopicCreationConfig(f *testing.F) {
	f.Add("g", "1", "-1", "a.*,(b)", "x")
	f.Add("g,g", "0", "x", "(", "")
	f.Add("default", "", "", "", "[")
	f.Fuzz(func(t *testing.T, groups, parts, rf, include, exclude string) {
		props := map[string]string{
			"topic.creation.groups":                     groups,
			"topic.creation.default.partitions":         parts,
			"topic.creation.default.replication.factor": rf,
			"topic.creation.g.include":                  include,
			"topic.creation.g.exclude":                  exclude,
		}
		gs, err := parseTopicGroups(props)
		if err != nil {
			return
		}
		for _, g := range gs {
			g.matches(include)
		}
		TopicCreationDef(props).Validate(props)
	})
}
