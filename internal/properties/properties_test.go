package properties

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The expectations below follow java.util.Properties.load (JDK 17) run on
// the same text through a Reader.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"blank lines", "\n\n  \t\f\n\r\n", map[string]string{}},
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"space separator", "a b", map[string]string{"a": "b"}},
		{"tab separator", "a\tb", map[string]string{"a": "b"}},
		{"form feed separator", "a\fb", map[string]string{"a": "b"}},
		{"blanks around separator", "  a  =  b  ", map[string]string{"a": "b  "}},
		{"blank then equals", "a \t= b", map[string]string{"a": "b"}},
		{"blank then colon", "a : b", map[string]string{"a": "b"}},
		{"only first separator", "a==b", map[string]string{"a": "=b"}},
		{"blank separator then equals kept", "a = = b", map[string]string{"a": "= b"}},
		{"colon in value", "url=http://x:8083/a", map[string]string{"url": "http://x:8083/a"}},
		{"key only", "key", map[string]string{"key": ""}},
		{"key and separator only", "key=", map[string]string{"key": ""}},
		{"key blank", "key   ", map[string]string{"key": ""}},
		{"empty key", "=value", map[string]string{"": "value"}},
		{"empty key colon", ":value", map[string]string{"": "value"}},
		{"hash comment", "# c\na=b", map[string]string{"a": "b"}},
		{"bang comment", "! c\na=b", map[string]string{"a": "b"}},
		{"indented comment", "   \t# c\na=b", map[string]string{"a": "b"}},
		{"hash inside value", "a=b # not a comment", map[string]string{"a": "b # not a comment"}},
		{"hash key", "b#c=d", map[string]string{"b#c": "d"}},
		{"comment does not continue", "# c \\\na=b", map[string]string{"a": "b"}},
		{"crlf", "a=b\r\nc=d\r\n", map[string]string{"a": "b", "c": "d"}},
		{"cr only", "a=b\rc=d", map[string]string{"a": "b", "c": "d"}},
		{"duplicates last wins", "a=1\na=2\na=3", map[string]string{"a": "3"}},
		{"no final newline", "a=1\nb=2", map[string]string{"a": "1", "b": "2"}},

		// Continuations.
		{"continuation", "a=b\\\n   c", map[string]string{"a": "bc"}},
		{"continuation keeps inner blanks", "a=b \\\n   c", map[string]string{"a": "b c"}},
		{"continuation crlf", "a=b\\\r\n\tc\r\nd=e", map[string]string{"a": "bc", "d": "e"}},
		{"continuation cr", "a=b\\\r  c\rd=e", map[string]string{"a": "bc", "d": "e"}},
		{"continuation in key", "ke\\\n  y=v", map[string]string{"key": "v"}},
		{"continuation before separator", "key\\\n  =v", map[string]string{"key": "v"}},
		{"multiple continuations", "a=1,\\\n  2,\\\n  3", map[string]string{"a": "1,2,3"}},
		{"even backslashes do not continue", "a=b\\\\\nc=d", map[string]string{"a": "b\\", "c": "d"}},
		{"three backslashes continue", "a=b\\\\\\\nc", map[string]string{"a": "b\\c"}},
		{"continuation line starting with hash", "a=b\\\n  #c", map[string]string{"a": "b#c"}},
		{"empty continuation line ends", "a=b\\\n\nc=d", map[string]string{"a": "b", "c": "d"}},
		{"blank continuation line ends", "a=b\\\n   \nc=d", map[string]string{"a": "b", "c": "d"}},
		{"continuation at eof", "a=b\\", map[string]string{"a": "b"}},
		{"continuation then eof after newline", "a=b\\\n", map[string]string{"a": "b"}},
		{"lone backslash", "\\", map[string]string{"": ""}},
		{"lone backslash lf at eof", "\\\n", map[string]string{"": ""}},
		{"lone backslash crlf at eof", "\\\r\n", map[string]string{}}, // Java's quirk
		{"continuation crlf at eof", "a=b\\\r\n", map[string]string{"a": "b"}},
		{"backslash line then comment", "\\\n#c=d\ne=f", map[string]string{"e": "f"}},

		// Escapes.
		{"escapes", `a=\t\n\r\f`, map[string]string{"a": "\t\n\r\f"}},
		{"other escapes are the char", `a=\a\b\z\"\'\\`, map[string]string{"a": `abz"'\`}},
		{"escaped separators in key", `a\=b\:c\ d=e`, map[string]string{"a=b:c d": "e"}},
		{"escaped hash key", `\#a=b`, map[string]string{"#a": "b"}},
		{"escaped leading blank in value", `a=\ \ b`, map[string]string{"a": "  b"}},
		{"windows path", `path=C:\\Users\\x`, map[string]string{"path": `C:\Users\x`}},
		{"unicode escape", `a=\u0041\u00e9\u00E9`, map[string]string{"a": "Aéé"}},
		{"unicode escape in key", `\u006bey=v`, map[string]string{"key": "v"}},
		{"unicode escaped separator is literal", `a\u003db=c`, map[string]string{"a=b": "c"}},
		{"unicode nul", `a=x\u0000y`, map[string]string{"a": "x\x00y"}},
		{"surrogate pair", `a=\uD83D\uDE00`, map[string]string{"a": "😀"}},
		{"lone high surrogate", `a=\uD83Dx`, map[string]string{"a": "\uFFFDx"}},
		{"lone low surrogate", `a=\uDE00`, map[string]string{"a": "\uFFFD"}},
		{"utf8 literal", "name=café ☕\nk☃=v", map[string]string{"name": "café ☕", "k☃": "v"}},
		{"bom dropped", "\uFEFFname=x", map[string]string{"name": "x"}},
		{"continuation then escape", "a=\\\n  \\u0041", map[string]string{"a": "A"}},

		// The shipped examples.
		{"connect-file-source", "name=local-file-source\nconnector.class=FileStreamSource\ntasks.max=1\nfile=test.txt\ntopic=connect-test\n",
			map[string]string{"name": "local-file-source", "connector.class": "FileStreamSource", "tasks.max": "1", "file": "test.txt", "topic": "connect-test"}},
		{"javadoc example", "Truth = Beauty\n  Truth:Beauty\nTruth                    :Beauty\nfruits                           apple, banana, pear, \\\n                                  cantaloupe, watermelon, \\\n                                  kiwi, mango\ncheeses\n",
			map[string]string{"Truth": "Beauty", "fruits": "apple, banana, pear, cantaloupe, watermelon, kiwi, mango", "cheeses": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("Parse(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseMalformedUnicode(t *testing.T) {
	tests := []struct {
		in   string
		line int
	}{
		{`a=\u12`, 1},
		{`a=\uXYZW`, 1},
		{"a=1\n\n# c\nb=\\u00g0", 4},
		{"\\u12=x", 1},
		{"a=1\nb=x\\\n  \\u1", 2}, // a logical line is named by its first natural line
		{"a=\\u", 1},
		{"a=1\r\n\r\n# c\r\nb=\\uZZZZ", 4},
		{"a=1\r\rb=\\u", 3},
		{"  # c \\\n\t\\u1=x", 2},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Parse(%q) = %v, want *SyntaxError", tt.in, err)
		}
		if se.Line != tt.line || se.Msg != `Malformed \uxxxx encoding.` {
			t.Errorf("Parse(%q) = %+v, want line %d", tt.in, se, tt.line)
		}
		if want := "line " + strconv.Itoa(tt.line) + `: Malformed \uxxxx encoding.`; err.Error() != want {
			t.Errorf("Parse(%q) error %q, want %q", tt.in, err, want)
		}
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "w.properties")
	if err := os.WriteFile(good, []byte("bootstrap.servers=localhost:9092\noffset.flush.interval.ms=10000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ParseFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"bootstrap.servers": "localhost:9092", "offset.flush.interval.ms": "10000"}; !maps.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}

	bad := filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(bad, []byte("a=1\nb=\\uZZZZ\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ParseFile(bad)
	if err == nil || err.Error() != bad+`: line 2: Malformed \uxxxx encoding.` {
		t.Errorf("ParseFile(bad) = %v", err)
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("ParseFile(bad) error does not unwrap to line 2: %v", err)
	}

	missing := filepath.Join(dir, "missing.properties")
	if _, err := ParseFile(missing); err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile(missing) = %v", err)
	}
}

func TestStoreRoundTrip(t *testing.T) {
	m := map[string]string{
		"":              "",
		"plain":         "value",
		" lead":         " lead and trail ",
		"a=b:c d#e!f":   "x=y:z#!",
		"tabs\tand\nnl": "\r\f\t\n",
		"back\\slash":   "\\",
		"unicode☃":      "café \uFEFF",
		"\uFEFFbom":     "v",
		"ctl\x01":       "\x7f",
	}
	var buf bytes.Buffer
	if err := Store(&buf, m); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(&buf)
	if err != nil {
		t.Fatalf("Parse(Store): %v", err)
	}
	if !maps.Equal(got, m) {
		t.Errorf("round trip\n got %q\nwant %q", got, m)
	}

	buf.Reset()
	if err := Store(&buf, map[string]string{"name": "x", "a b": " c"}); err != nil {
		t.Fatal(err)
	}
	if want := "a\\ b=\\ c\nname=x\n"; buf.String() != want {
		t.Errorf("Store = %q, want %q", buf.String(), want)
	}
}

// A worker's file that is not a properties file at all is refused with its
// name and the line, while every shape of a Java properties line is read.
func TestParseConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.properties", "# comment\n! another\n\nbootstrap.servers=a:9092,\\\n    b:9092\n"+
		"listeners http://:8083\nrest.advertised.host.name:\nclient.id = w\\u00e9\n"+
		"key.converter.schemas.enable=false\ncomment.latin1=caf\xe9\r\nproducer.sasl.jaas.config=x \\\n  y\n")
	got, err := ParseConfigFile(good)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers": "a:9092,b:9092", "listeners": "http://:8083", "rest.advertised.host.name": "",
		"client.id": "wé", "key.converter.schemas.enable": "false", "comment.latin1": "caf\xe9", "producer.sasl.jaas.config": "x y",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, c := range []struct{ content, want string }{
		{"a=1\n{\n  \"name\": \"x\"\n}\n", `line 2: not a properties file: "{" is not a config key`},
		{"a=1\r\nb=2\r\ngarbage\r\n", `line 3: not a properties file: "garbage" has no value (write garbage= for an empty one)`},
		{"a=1\nb=2\x00\x01\n", "line 2: not a properties file: control character 0x00 (binary data)"},
		{"\x1f\x8b\x08\x00", "line 1: not a properties file: control character 0x1f (binary data)"},
		{"a=1\n-key=2\n", `line 2: not a properties file: "-key" is not a config key`},
		{"a=1\nmy\\ key=2\n", `line 2: not a properties file: "my key" is not a config key`},
	} {
		path := write("bad.properties", c.content)
		_, err := ParseConfigFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": "+c.want) {
			t.Errorf("%q: got %v, want %s: %s", c.content, err, path, c.want)
		}
		// Java's loader, and so ParseFile, takes it all the same.
		if _, err := ParseFile(path); err != nil {
			t.Errorf("ParseFile(%q): %v", c.content, err)
		}
	}
}
