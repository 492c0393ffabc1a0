package storage

import (
	"reflect"
	"testing"
)

func addFixtureSeeds(f *testing.F, names ...string) {
	for _, name := range names {
		for _, r := range loadFixture(f, name) {
			f.Add(r.Key, r.Value, r.Value == nil)
		}
	}
}

// FuzzDecodeConfigRecord: no input makes the decoder panic, and whatever it
// accepts survives a round trip through the encoders.
func FuzzDecodeConfigRecord(f *testing.F) {
	addFixtureSeeds(f, "configs.records")
	for _, s := range [][2]string{
		{"task-a--1", `{"properties":{"x":null}}`},
		{"task-", `{}`},
		{"task----", `{}`},
		{"commit-x", `{"tasks":-5}`},
		{"commit-x", `{"tasks":99999999999999999999999}`},
		{"target-state-x", `{"state":"PAUSED","state.v2":null}`},
		{"session-key", `{"key":"AQ","algorithm":"","creation-timestamp":-1}`},
		{"connector-x", `{"properties":{"a":1e400}}`},
		{"connector-x", "\xff"},
		{"connector-x", `  `},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), false)
	}
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		rec, err := DecodeConfigRecord(key, value)
		if err != nil || rec.Tombstone {
			return
		}
		if rec.Type == ConfigRecordTask {
			again, err := DecodeConfigRecord([]byte(TaskConfigKey(rec.Name, rec.Task)), value)
			if err != nil || again.Name != rec.Name || again.Task != rec.Task {
				t.Fatalf("task key %q → (%q, %d) does not round-trip: %+v %v", key, rec.Name, rec.Task, again, err)
			}
		}
		var enc []byte
		switch rec.Type {
		case ConfigRecordConnector, ConfigRecordTask:
			enc = EncodeConnectorConfig(rec.Properties)
		case ConfigRecordTargetState:
			enc, err = EncodeTargetState(rec.TargetState)
			if err != nil {
				t.Fatalf("decoded an unwritable target state %q", rec.TargetState)
			}
		case ConfigRecordCommit:
			enc = EncodeTaskCommit(rec.TaskCount)
		case ConfigRecordTaskCount:
			enc = EncodeTaskCount(rec.TaskCount)
		case ConfigRecordRestart:
			enc = EncodeRestartRequest(rec.OnlyFailed, rec.IncludeTasks)
		case ConfigRecordSessionKey:
			enc = EncodeSessionKey(rec.SessionKey)
			if rec.SessionKey.Algorithm == "" {
				rec.SessionKey.Algorithm = SessionKeyAlgorithm
			}
		case ConfigRecordLoggerLevel:
			enc = EncodeLoggerLevel(rec.Level)
		default:
			t.Fatalf("no error but type %v", rec.Type)
		}
		again, err := DecodeConfigRecord(key, enc)
		if err != nil {
			t.Fatalf("re-decoding our encoding %s of %+v: %v", enc, rec, err)
		}
		if rec.SessionKey.Key != nil && len(rec.SessionKey.Key) == 0 {
			rec.SessionKey.Key = again.SessionKey.Key // nil and empty decode alike
		}
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("round trip changed the record:\n before %+v\n after  %+v\n via %s", rec, again, enc)
		}
	})
}

// FuzzDecodeStatusRecord: no input makes the decoder panic, and accepted
// statuses survive a round trip through the encoders and key builders.
func FuzzDecodeStatusRecord(f *testing.F) {
	addFixtureSeeds(f, "status.records")
	for _, s := range [][2]string{
		{"status-task--1", `{"state":"RUNNING","trace":null,"worker_id":null,"generation":1}`},
		{"status-task-a-b-", `{}`},
		{"status-topic-:", `{}`},
		{"status-topic-a:", `{}`},
		{"status-topic-a:connector-b", `{"topic":{"name":"a","connector":"b","task":4294967296,"discoverTimestamp":1}}`},
		{"status-connector-x", `{"state":"DESTROYED","trace":"\u0000\u2028","worker_id":"w","generation":-1}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), false)
	}
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		}
		ev, err := DecodeStatusRecord(key, value)
		if err != nil || ev.Tombstone {
			return
		}
		switch ev.Kind {
		case StatusEventTopic:
			again, err := DecodeStatusRecord(key, EncodeTopicStatus(ev.TopicStatus))
			if err != nil || again.TopicStatus != ev.TopicStatus {
				t.Fatalf("topic status round trip: %+v → %+v (%v)", ev.TopicStatus, again.TopicStatus, err)
			}
		case StatusEventConnector, StatusEventTask:
			if ev.Status.State == StateDestroyed {
				return // never written, only tombstoned
			}
			again, err := DecodeStatusRecord([]byte(ev.Status.Key()), EncodeStatus(ev.Status))
			if err != nil || again.Status != ev.Status {
				t.Fatalf("status round trip via key %q: %+v → %+v (%v)", ev.Status.Key(), ev.Status, again.Status, err)
			}
		default:
			t.Fatalf("no error but kind %d", ev.Kind)
		}
	})
}
