package herder

import (
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/storage"
)

// The herder reads the config store's own snapshot: a connector whose task
// configs are inconsistent must have no entry in Tasks, which is what keeps
// a reconcile pass from starting its tasks.
func TestClusterConfigOfSnapshot(t *testing.T) {
	tasks := []map[string]string{{"task": "0"}}
	got := clusterConfig(storage.ConfigState{
		Offset:     7,
		SessionKey: &storage.SessionKey{Key: []byte("k"), Algorithm: storage.SessionKeyAlgorithm, CreationTimestamp: 1700000000123},
		Connectors: map[string]storage.ConnectorConfigState{
			"ok":   {Config: map[string]string{"name": "ok"}, TargetState: storage.TargetStatePaused, TaskCount: 1, Tasks: tasks, Generation: 3},
			"torn": {Config: map[string]string{"name": "torn"}, TargetState: storage.TargetStateStarted, TaskCount: 2, Inconsistent: true},
		},
	})
	want := ClusterConfig{
		Offset:       7,
		Connectors:   map[string]map[string]string{"ok": {"name": "ok"}, "torn": {"name": "torn"}},
		Targets:      map[string]TargetState{"ok": Paused, "torn": Started},
		Tasks:        map[string][]map[string]string{"ok": tasks},
		SessionKey:   []byte("k"),
		KeyCreated:   time.UnixMilli(1700000000123),
		Inconsistent: map[string]bool{"torn": true},
		Generations:  map[string]int{"ok": 3, "torn": 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("clusterConfig =\n%+v\nwant\n%+v", got, want)
	}
}
