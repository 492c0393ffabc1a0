package properties

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTemp(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConnectorConfig(t *testing.T) {
	const (
		missing  = "Connector configuration at '%s' is missing the mandatory 'name' configuration"
		mismatch = "Connector name configuration in 'config' doesn't match the one specified in 'name' at '%s'"
	)
	tests := []struct {
		name      string
		file      string
		content   string
		wantName  string
		wantCfg   map[string]string
		wantState string
		wantErr   string // %s is the path
	}{
		{
			name: "properties", file: "connect-file-source.properties",
			content:  "name=local-file-source\nconnector.class=FileStreamSource\ntasks.max=1\nfile=test.txt\ntopic=connect-test\n",
			wantName: "local-file-source",
			wantCfg:  map[string]string{"name": "local-file-source", "connector.class": "FileStreamSource", "tasks.max": "1", "file": "test.txt", "topic": "connect-test"},
		},
		{
			name: "properties with escapes", file: "c.properties",
			content:  "# comment\nname = my\\ conn\nfile=C:\\\\tmp\\\\in.txt\ntopic=t\\u00e9\\\n  st\n",
			wantName: "my conn",
			wantCfg:  map[string]string{"name": "my conn", "file": `C:\tmp\in.txt`, "topic": "tést"},
		},
		{
			name: "properties missing name", file: "c.properties",
			content: "connector.class=FileStreamSource\n", wantErr: missing,
		},
		{
			name: "properties malformed unicode", file: "c.properties",
			content: "name=x\nfile=\\u12\n", wantErr: `%s: line 2: Malformed \uxxxx encoding.`,
		},
		{
			name: "flat json", file: "c.json",
			content:  `{"name":"file-src","connector.class":"FileStreamSource","tasks.max":"1","file":"/tmp/in.txt","topic":"lines"}`,
			wantName: "file-src",
			wantCfg:  map[string]string{"name": "file-src", "connector.class": "FileStreamSource", "tasks.max": "1", "file": "/tmp/in.txt", "topic": "lines"},
		},
		{
			name: "flat json scalars as text", file: "c.json",
			content:  `{"name":"n","tasks.max":1,"errors.retry.timeout":-1.50,"big":12345678901234567890,"exp":1e3,"enabled":true,"off":false}`,
			wantName: "n",
			wantCfg:  map[string]string{"name": "n", "tasks.max": "1", "errors.retry.timeout": "-1.50", "big": "12345678901234567890", "exp": "1e3", "enabled": "true", "off": "false"},
		},
		{
			name: "flat json numeric name", file: "c.json",
			content:  `{"name":42}`,
			wantName: "42", wantCfg: map[string]string{"name": "42"},
		},
		{
			name: "flat json initial_state is just a key", file: "c.json",
			content:  `{"name":"n","initial_state":"STOPPED"}`,
			wantName: "n", wantCfg: map[string]string{"name": "n", "initial_state": "STOPPED"},
		},
		{
			name: "flat json missing name", file: "c.json",
			content: `{"connector.class":"FileStreamSource"}`, wantErr: missing,
		},
		{
			name: "flat json empty object", file: "c.json",
			content: `{}`, wantErr: missing,
		},
		{
			name: "flat json null name", file: "c.json",
			content: `{"name":null,"a":"b"}`, wantErr: missing,
		},
		{
			name: "flat json null value", file: "c.json",
			content: `{"name":"n","a":null}`, wantErr: "Connector configuration at '%s' has a null value for 'a'",
		},
		{
			name: "flat json trailing content ignored", file: "c.json",
			content:  "{\"name\":\"n\"}\n garbage",
			wantName: "n", wantCfg: map[string]string{"name": "n"},
		},
		{
			name: "flat json with bom", file: "c.json",
			content:  "\uFEFF{\"name\":\"n\"}",
			wantName: "n", wantCfg: map[string]string{"name": "n"},
		},
		{
			name: "create request", file: "c.json",
			content:   `{"name":"file-src","config":{"connector.class":"FileStreamSource","tasks.max":"1","file":"/tmp/in.txt","topic":"lines"},"initial_state":"STOPPED"}`,
			wantName:  "file-src",
			wantCfg:   map[string]string{"name": "file-src", "connector.class": "FileStreamSource", "tasks.max": "1", "file": "/tmp/in.txt", "topic": "lines"},
			wantState: "STOPPED",
		},
		{
			name: "create request pretty, lower-case state, unknown fields", file: "c.json",
			content: `{
  "name": "sink",
  "config": {"connector.class": "FileStreamSink", "tasks.max": 2, "topics": "lines", "name": "sink"},
  "initial_state": "paused",
  "offsets": [{"partition": {"kafka_topic": "lines", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}],
  "extra": {"nested": [1, 2]}
}`,
			wantName:  "sink",
			wantCfg:   map[string]string{"name": "sink", "connector.class": "FileStreamSink", "tasks.max": "2", "topics": "lines"},
			wantState: "PAUSED",
		},
		{
			name: "create request without initial_state", file: "c.json",
			content:  `{"name":"n","config":{}}`,
			wantName: "n", wantCfg: map[string]string{"name": "n"},
		},
		{
			name: "create request null initial_state", file: "c.json",
			content:  `{"name":"n","config":{"a":"b"},"initial_state":null}`,
			wantName: "n", wantCfg: map[string]string{"name": "n", "a": "b"},
		},
		{
			name: "create request name mismatch", file: "c.json",
			content: `{"name":"a","config":{"name":"b"}}`, wantErr: mismatch,
		},
		{
			name: "create request config name without name", file: "c.json",
			content: `{"config":{"name":"b"}}`, wantErr: mismatch,
		},
		{
			name: "create request no name at all", file: "c.json",
			content: `{"config":{"a":"b"}}`, wantErr: missing,
		},
		{
			name: "create request without config", file: "c.json",
			content: `{"name":"n","initial_state":{}}`, wantErr: missing, // neither JSON shape binds; the .properties reading has no name
		},
		{
			name: "create request null config", file: "c.json",
			content: `{"name":"n","config":null,"x":[]}`, wantErr: "Connector configuration at '%s' has no 'config' object",
		},
		{
			name: "create request bad initial_state falls through", file: "c.json",
			content: `{"name":"n","config":{},"initial_state":"STARTED"}`, wantErr: missing,
		},
		{
			name: "create request nested config value falls through", file: "c.json",
			content: `{"name":"n","config":{"a":{}}}`, wantErr: missing,
		},
		{
			name: "json array falls through", file: "c.json",
			content: `["name=x"]`, wantErr: missing,
		},
		{
			// Not JSON at all, but a .properties file that happens to
			// start with a brace.
			name: "brace properties", file: "c.properties",
			content:  "{=1\nname=x\n",
			wantName: "x", wantCfg: map[string]string{"{": "1", "name": "x"},
		},
		{
			// Kafka would say only that the name is missing.
			name: "json with a trailing comma", file: "c.json",
			content: "{\n  \"name\": \"x\",\n  \"file\": \"in.txt\",\n}\n",
			wantErr: "Connector configuration at '%s' is not valid JSON: line 4, column 1: invalid character '}' looking for beginning of object key string",
		},
		{
			name: "json cut short", file: "c.json",
			content: "{\"name\": \"x\", \"config\": {\"file\": \"in.txt\"",
			wantErr: "Connector configuration at '%s' is not valid JSON: line 1, column 41: unexpected end of JSON input",
		},
		{
			name: "empty file", file: "c.properties",
			content: "", wantErr: missing,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, tt.file, tt.content)
			name, cfg, state, err := LoadConnectorConfig(path)
			if tt.wantErr != "" {
				want := strings.ReplaceAll(tt.wantErr, "%s", path)
				if err == nil || err.Error() != want {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if name != tt.wantName || state != tt.wantState || !maps.Equal(cfg, tt.wantCfg) {
				t.Errorf("got (%q, %q, %q)\nwant (%q, %q, %q)", name, cfg, state, tt.wantName, tt.wantCfg, tt.wantState)
			}
		})
	}
}

func TestLoadConnectorConfigMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.properties")
	_, _, _, err := LoadConnectorConfig(path)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v", err)
	}
}
