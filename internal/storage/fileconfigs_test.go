package storage

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func openConfigs(t testing.TB, path string) *ConfigFileStore {
	t.Helper()
	s, err := OpenConfigFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goldenConnectors is the content of testdata/golden_connectors.json, in
// List order.
var goldenConnectors = []StoredConnector{
	{Name: "jdbc-orders", TargetState: TargetStatePaused, Config: map[string]string{
		"name":            "jdbc-orders",
		"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
		"connection.url":  "jdbc:postgresql://db:5432/shop?user=a&password=<secret>",
		"tasks.max":       "2",
		"query":           "SELECT * FROM \"orders\"\nWHERE id > 0",
	}},
	{Name: "local-file-source", TargetState: TargetStateStarted, Config: map[string]string{
		"name":            "local-file-source",
		"connector.class": "FileStreamSource",
		"file":            "/tmp/test.txt",
		"topic":           "connect-test",
	}},
	{Name: "ünïcødé ✓", TargetState: TargetStateStopped, Config: map[string]string{
		"connector.class": "FileStreamSink",
		"topics":          "t\u2028x",
		"empty":           "",
		"path":            `C:\data\out.txt`,
	}},
}

func TestConfigFileStoreGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connectors.json")
	s := openConfigs(t, path)
	for i := len(goldenConnectors) - 1; i >= 0; i-- { // insertion order must not matter
		if err := s.Put(goldenConnectors[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, "golden_connectors.json", mustReadFile(t, path))
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("connectors file mode: %v %v, want 0600 (configs hold credentials)", info.Mode(), err)
	}

	r := openConfigs(t, filepath.Join("testdata", "golden_connectors.json"))
	if got := r.List(); !reflect.DeepEqual(got, goldenConnectors) {
		t.Errorf("loaded golden file:\n got %#v\nwant %#v", got, goldenConnectors)
	}
}

func TestConfigFileStoreDurability(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connectors.json")
	if got := openConfigs(t, path).List(); len(got) != 0 {
		t.Fatalf("missing file: %v", got)
	}
	s := openConfigs(t, path)
	a := StoredConnector{Name: "a", Config: map[string]string{"k": "v"}, TargetState: TargetStateStarted}
	b := StoredConnector{Name: "b", TargetState: TargetStatePaused} // nil config is stored as empty
	for _, c := range []StoredConnector{a, b} {
		if err := s.Put(c); err != nil {
			t.Fatal(err)
		}
	}
	a.Config["k"] = "mutated after Put"
	a2 := StoredConnector{Name: "a", Config: map[string]string{"k": "v2"}, TargetState: TargetStateStopped}
	if err := s.Put(a2); err != nil {
		t.Fatal(err)
	}
	want := []StoredConnector{a2, {Name: "b", Config: map[string]string{}, TargetState: TargetStatePaused}}
	if got := openConfigs(t, path).List(); !reflect.DeepEqual(got, want) {
		t.Errorf("after reopen: %#v", got)
	}

	if err := s.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("never-existed"); err != nil {
		t.Errorf("deleting an unknown connector: %v", err)
	}
	r := openConfigs(t, path)
	if got := r.List(); len(got) != 1 || got[0].Name != "b" {
		t.Errorf("after delete and reopen: %#v", got)
	}
	if _, ok := r.Get("a"); ok {
		t.Error("deleted connector still there")
	}

	// Copies out, too.
	got, _ := r.Get("b")
	got.Config["x"] = "y"
	r.List()[0].Config["x"] = "y"
	if again, _ := r.Get("b"); len(again.Config) != 0 {
		t.Errorf("store changed through a returned map: %v", again.Config)
	}
}

func TestConfigFileStoreValidation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connectors.json")
	s := openConfigs(t, path)
	for name, c := range map[string]StoredConnector{
		"empty name":       {Name: "", TargetState: TargetStateStarted},
		"bad state":        {Name: "a", TargetState: "RUNNING"},
		"missing state":    {Name: "a"},
		"name mismatch":    {Name: "a", TargetState: TargetStateStarted, Config: map[string]string{"name": "b"}},
		"bad utf8 value":   {Name: "a", TargetState: TargetStateStarted, Config: map[string]string{"k": "\xff"}},
		"bad utf8 in name": {Name: "a\xff", TargetState: TargetStateStarted},
	} {
		if err := s.Put(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(s.List()) != 0 {
		t.Error("rejected connector stored")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("rejected Put wrote the file: %v", err)
	}
}

func TestConfigFileStoreRollback(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "connectors.json")
	s := openConfigs(t, path)
	orig := StoredConnector{Name: "a", Config: map[string]string{"k": "v"}, TargetState: TargetStateStarted}
	if err := s.Put(orig); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory at the target makes the rename fail, even
	// for root.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(path, "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(StoredConnector{Name: "a", Config: map[string]string{"k": "v2"}, TargetState: TargetStatePaused}); err == nil {
		t.Fatal("replacing Put succeeded although the write cannot")
	}
	if err := s.Put(StoredConnector{Name: "new", TargetState: TargetStateStarted}); err == nil {
		t.Fatal("creating Put succeeded although the write cannot")
	}
	if err := s.Delete("a"); err == nil {
		t.Fatal("Delete succeeded although the write cannot")
	}
	if got := s.List(); !reflect.DeepEqual(got, []StoredConnector{orig}) {
		t.Errorf("memory changed by failed writes: %#v", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestConfigFileStoreCorruptFiles(t *testing.T) {
	golden := string(mustReadFile(t, filepath.Join("testdata", "golden_connectors.json")))
	one := func(entry string) string {
		return `{"format":"connectd.connectors","version":1,"connectors":[` + entry + `]}`
	}
	tests := map[string]string{
		"empty":             "",
		"truncated":         golden[:len(golden)/2],
		"garbage":           "garbage",
		"trailing garbage":  golden + "}",
		"wrong format":      `{"format":"connectd.offsets","version":1,"connectors":[]}`,
		"wrong version":     `{"format":"connectd.connectors","version":0,"connectors":[]}`,
		"missing state":     one(`{"name":"a","config":{}}`),
		"bad state":         one(`{"name":"a","config":{},"target_state":"RUNNING"}`),
		"non-string config": one(`{"name":"a","config":{"tasks.max":1},"target_state":"STARTED"}`),
		"null config":       one(`{"name":"a","config":null,"target_state":"STARTED"}`),
		"name mismatch":     one(`{"name":"a","config":{"name":"b"},"target_state":"STARTED"}`),
		"empty name":        one(`{"name":"","config":{},"target_state":"STARTED"}`),
		"unknown field":     one(`{"name":"a","config":{},"target_state":"STARTED","tasks":[]}`),
		"duplicate": `{"format":"connectd.connectors","version":1,"connectors":[` +
			`{"name":"a","config":{},"target_state":"STARTED"},{"name":"a","config":{},"target_state":"PAUSED"}]}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "connectors.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := OpenConfigFileStore(path)
			var ce *CorruptFileError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "connectors file "+path+" is corrupted: ") {
				t.Errorf("got %v, want a *CorruptFileError naming %s", err, path)
			}
		})
	}

	dirPath := filepath.Join(t.TempDir(), "connectors.json")
	if err := os.Mkdir(dirPath, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenConfigFileStore(dirPath); err == nil || !strings.Contains(err.Error(), dirPath) {
		t.Errorf("directory at path: %v", err)
	}
}

// The connectors file is read at start-up; whatever it holds, opening it
// gives a store or an error, and a store saves what it loaded unchanged.
func FuzzOpenConfigFileStore(f *testing.F) {
	f.Add([]byte(`{"format":"connectd.connectors","version":1,"connectors":[{"name":"x","config":{"connector.class":"FileStreamSource","name":"x"},"target_state":"STOPPED"}]}`))
	f.Add([]byte(`{"format":"connectd.connectors","version":1,"connectors":[]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "connectors.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenConfigFileStore(path)
		if err != nil {
			return
		}
		before := s.List()
		for _, c := range before {
			if err := s.Put(c); err != nil {
				t.Fatalf("re-saving %+v: %v", c, err)
			}
		}
		again, err := OpenConfigFileStore(path)
		if err != nil {
			t.Fatalf("reopening a file this store wrote: %v", err)
		}
		if !reflect.DeepEqual(again.List(), before) {
			t.Fatalf("content changed across a save: %+v vs %+v", again.List(), before)
		}
	})
}
