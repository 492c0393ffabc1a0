package properties

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

var parseSeeds = []string{
	"",
	"a=b",
	"a:b\nc d\ne\tf\n",
	"# comment\n! comment\n  key = value  \n",
	"a=b\\\n   c\\\r\n  d\\\r  e",
	"a=b\\\\\nc=\\\\\\\nd",
	`k\ e\=y\:=\t\n\r\f\u0041\uD83D\uDE00\z`,
	`a=\u12`,
	`a=\uXYZW`,
	"\\",
	"\\\r\n",
	"\\\n#c=d",
	"\uFEFFname=café",
	"\xff\xfe=\x80",
	"a=b\\\n\n\\\n",
	"Truth = Beauty\n  Truth:Beauty\nfruits apple, banana, \\\n   kiwi\ncheeses\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(bytes.NewReader(data))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 {
				t.Fatalf("error %v is not a *SyntaxError with a line", err)
			}
			if se.Line > bytes.Count(data, []byte("\n"))+bytes.Count(data, []byte("\r"))+1 {
				t.Fatalf("line %d past the end of the input", se.Line)
			}
			return
		}
		// The strict reading of a worker's file refuses, with a line, or
		// reads exactly what Java's loader does.
		strict, err := parseBytes(data, true)
		var se *SyntaxError
		switch {
		case err == nil && !maps.Equal(strict, m):
			t.Fatalf("strict reading differs\n got %q\nwant %q", strict, m)
		case err != nil && (!errors.As(err, &se) || se.Line < 1):
			t.Fatalf("strict error %v is not a *SyntaxError with a line", err)
		}
		// Store writes what Parse reads back unchanged.
		var buf bytes.Buffer
		if err := Store(&buf, m); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf)
		if err != nil {
			t.Fatalf("Parse(Store(m)): %v\n%q", err, buf.String())
		}
		if !maps.Equal(back, m) {
			t.Fatalf("round trip differs\n got %q\nwant %q\nvia %q", back, m, buf.String())
		}
	})
}

func FuzzLoadConnectorConfig(f *testing.F) {
	seeds := []string{
		`{"name":"file-src","connector.class":"FileStreamSource","tasks.max":"1"}`,
		`{"name":"n","tasks.max":1,"enabled":true,"x":1.5e3}`,
		`{"name":"file-src","config":{"connector.class":"FileStreamSource"},"initial_state":"STOPPED"}`,
		`{"name":"a","config":{"name":"b"}}`,
		`{"config":{"name":"b"},"initial_state":"paused","offsets":[]}`,
		`{"name":"n","config":null}`,
		`{"name":null}`,
		`{"name":"n","a":null}`,
		`{"name":"n","config":{"a":[1]}}`,
		`[1,2]`,
		`"name"`,
		"{\"name\":\"x\"} trailing",
		"\uFEFF{\"name\":\"x\"}",
		"name=local-file-source\nconnector.class=FileStreamSource\n",
		"name=\\u12",
		"{=1\nname=x",
		"{\n  \"name\": \"x\",\n}\n",
		"",
	}
	for _, s := range append(seeds, parseSeeds...) {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "connector.conf")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		name, cfg, state, err := LoadConnectorConfig(path)
		if err != nil {
			if !bytes.Contains([]byte(err.Error()), []byte(path)) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if got, ok := cfg["name"]; !ok || got != name {
			t.Fatalf("config name %q (present %v) != name %q", got, ok, name)
		}
		switch state {
		case "", "RUNNING", "PAUSED", "STOPPED":
		default:
			t.Fatalf("initial state %q", state)
		}
	})
}
