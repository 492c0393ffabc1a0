// Package properties reads Java .properties files the way
// java.util.Properties.load does (JDK 9+ LineReader and loadConvert), and
// connector config files the way Kafka Connect standalone mode does.
//
// The grammar, in short:
//
//   - A natural line ends at \n, \r or \r\n. Leading blanks (space, \t, \f)
//     of a line are skipped; lines that are then empty are skipped.
//   - A line whose first non-blank character is '#' or '!' is a comment,
//     unless it continues a previous line.
//   - A line ending in an odd number of backslashes continues on the next
//     line; the backslash is dropped, and so are the next line's leading
//     blanks. An empty continuation line ends the logical line.
//   - The key ends at the first unescaped '=', ':' or blank. Blanks around
//     the separator are skipped, and one '=' or ':' after blanks is taken as
//     the separator.
//   - Escapes: \t \n \r \f, \uXXXX (exactly four hex digits; a surrogate
//     pair makes one code point), and a backslash before any other
//     character stands for that character.
//   - Later duplicates win.
//
// One deliberate difference: Kafka's Utils.loadProps hands Properties.load
// an InputStream, which Java decodes as ISO-8859-1. This package reads the
// input as UTF-8 (like Properties.load(Reader) with a UTF-8 reader), which
// is what Go programs and most editors write. Pure-ASCII files, and files
// that spell non-ASCII characters as \uXXXX, read the same either way. A
// leading UTF-8 byte-order mark is dropped.
package properties

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is a malformed logical line. Line is the 1-based number of
// the natural line the logical line starts on.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// errMalformedUnicode has Java's IllegalArgumentException text.
var errMalformedUnicode = errors.New(`Malformed \uxxxx encoding.`)

// Parse reads a .properties document from r.
func Parse(r io.Reader) (map[string]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parseBytes(data, false)
}

// ParseFile reads the .properties file at path. Errors name the file.
func ParseFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *fs.PathError names the file
	}
	m, err := parseBytes(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseConfigFile reads the .properties file of config keys at path (a
// worker's file) as ParseFile does, but refuses a file that is not a
// properties file at all, naming the file and the line, where Java's
// loader would make keys of whatever it is given (a JSON document, a
// binary file, a stray word). The rule:
//
//   - The file is text: no control character but tab, form feed, CR and LF
//     (a NUL or an escape byte means binary data). Bytes that are not UTF-8
//     are allowed, for ISO-8859-1 files, which Java reads.
//   - Each logical line (comments, blank lines and continuations as Java
//     reads them) has a key of ASCII letters, digits, '.', '_' and '-',
//     starting with a letter or digit, as every Kafka key does, once
//     escapes are resolved.
//   - A line is a key and a value: a key alone, with neither '=' nor ':'
//     nor a value after a blank, is refused (write "key=" for an empty
//     value).
func ParseConfigFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := parseBytes(data, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func parseBytes(data []byte, strict bool) (map[string]string, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if strict {
		if err := checkText(data); err != nil {
			return nil, err
		}
	}
	lr := lineReader{in: data, lineNo: 1}
	m := make(map[string]string)
	for {
		line, start, ok := lr.readLine()
		if !ok {
			return m, nil
		}
		key, value, hasSep := splitKeyValue(line)
		k, err := loadConvert(key)
		if err != nil {
			return nil, &SyntaxError{Line: start, Msg: err.Error()}
		}
		v, err := loadConvert(value)
		if err != nil {
			return nil, &SyntaxError{Line: start, Msg: err.Error()}
		}
		if strict {
			if err := checkKey(k, v, hasSep); err != nil {
				return nil, &SyntaxError{Line: start, Msg: err.Error()}
			}
		}
		m[k] = v
	}
}

// checkText refuses binary data: a control character a text file does not
// hold, named with its natural line.
func checkText(data []byte) error {
	line := 1
	for i, c := range data {
		switch {
		case c == '\n':
			line++
		case c == '\r':
			if i+1 == len(data) || data[i+1] != '\n' {
				line++
			}
		case c == '\t' || c == '\f':
		case c < 0x20 || c == 0x7f:
			return &SyntaxError{Line: line, Msg: fmt.Sprintf("not a properties file: control character 0x%02x (binary data)", c)}
		}
	}
	return nil
}

func checkKey(k, v string, hasSep bool) error {
	if !configKey(k) {
		return fmt.Errorf("not a properties file: %q is not a config key (letters, digits, '.', '_' and '-')", k)
	}
	if !hasSep && v == "" {
		return fmt.Errorf("not a properties file: %q has no value (write %s= for an empty one)", k, k)
	}
	return nil
}

func configKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return k != ""
}

// lineReader is a port of java.util.Properties.LineReader. It works on
// bytes: every character it treats specially is ASCII, so multi-byte
// UTF-8 sequences pass through intact.
type lineReader struct {
	in     []byte
	off    int
	lineNo int // number of the natural line at off
	buf    []byte
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// readLine returns the next logical line with comments, leading blanks and
// continuations removed, and the number of the natural line it starts on.
// ok is false at the end of the input.
func (lr *lineReader) readLine() (line []byte, start int, ok bool) {
	buf := lr.buf[:0]
	skipWhiteSpace := true
	appendedLineBegin := false
	precedingBackslash := false
	start = lr.lineNo
	defer func() { lr.buf = buf }()

	for {
		if lr.off >= len(lr.in) {
			if len(buf) == 0 {
				return nil, 0, false
			}
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		c := lr.in[lr.off]
		lr.off++

		if skipWhiteSpace {
			if isBlank(c) {
				continue
			}
			if !appendedLineBegin && (c == '\r' || c == '\n') {
				lr.newline(c)
				continue
			}
			skipWhiteSpace = false
			appendedLineBegin = false
		}
		if len(buf) == 0 { // still at the start of a logical line
			if c == '#' || c == '!' {
				// Comment: consume the rest of the natural line.
				for lr.off < len(lr.in) {
					b := lr.in[lr.off]
					if b == '\r' || b == '\n' {
						break
					}
					lr.off++
				}
				skipWhiteSpace = true
				continue
			}
			start = lr.lineNo
		}

		if c != '\n' && c != '\r' {
			buf = append(buf, c)
			if c == '\\' {
				precedingBackslash = !precedingBackslash
			} else {
				precedingBackslash = false
			}
			continue
		}

		// End of a natural line. Like Java, look for the end of the input
		// before swallowing the \n of a \r\n pair: "\\\r\n" at the end is
		// a continuation onto nothing, "\\\n" at the end is not.
		lr.lineNo++
		crlf := c == '\r' && lr.off < len(lr.in) && lr.in[lr.off] == '\n'
		if len(buf) == 0 {
			lr.skipLF(crlf)
			skipWhiteSpace = true
			continue
		}
		if lr.off >= len(lr.in) {
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		lr.skipLF(crlf)
		if precedingBackslash {
			// The backslash is not part of the line; skip the next
			// line's leading blanks.
			buf = buf[:len(buf)-1]
			skipWhiteSpace = true
			appendedLineBegin = true
			precedingBackslash = false
			continue
		}
		return buf, start, true
	}
}

func (lr *lineReader) skipLF(crlf bool) {
	if crlf {
		lr.off++
	}
}

// newline accounts for the line terminator c just consumed, swallowing the
// \n of a \r\n pair.
func (lr *lineReader) newline(c byte) {
	if c == '\r' && lr.off < len(lr.in) && lr.in[lr.off] == '\n' {
		lr.off++
	}
	lr.lineNo++
}

// splitKeyValue is the key/value split of Properties.load0; hasSep says
// whether an '=' or ':' separated them.
func splitKeyValue(line []byte) (key, value []byte, hasSep bool) {
	limit := len(line)
	keyLen := 0
	valueStart := limit
	precedingBackslash := false
	for keyLen < limit {
		c := line[keyLen]
		if (c == '=' || c == ':') && !precedingBackslash {
			valueStart = keyLen + 1
			hasSep = true
			break
		} else if isBlank(c) && !precedingBackslash {
			valueStart = keyLen + 1
			break
		}
		if c == '\\' {
			precedingBackslash = !precedingBackslash
		} else {
			precedingBackslash = false
		}
		keyLen++
	}
	for valueStart < limit {
		c := line[valueStart]
		if !isBlank(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valueStart++
	}
	return line[:keyLen], line[valueStart:], hasSep
}

// loadConvert resolves escapes, as Properties.loadConvert does. \uXXXX
// escapes yield UTF-16 code units; a high surrogate followed by a low one
// becomes one code point, and an unpaired surrogate becomes U+FFFD (Go
// strings cannot hold one).
func loadConvert(in []byte) (string, error) {
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in), nil
	}
	var out strings.Builder
	out.Grow(len(in))
	var pending rune = -1 // unpaired high surrogate
	flush := func() {
		if pending >= 0 {
			out.WriteRune(utf8.RuneError)
			pending = -1
		}
	}
	for off := 0; off < len(in); {
		c := in[off]
		off++
		if c != '\\' {
			flush()
			out.WriteByte(c)
			continue
		}
		if off >= len(in) {
			// A lone trailing backslash; the line reader never leaves one,
			// but be safe: drop it, as it escapes nothing.
			break
		}
		c = in[off]
		off++
		if c == 'u' {
			if off > len(in)-4 {
				return "", errMalformedUnicode
			}
			var v rune
			for range 4 {
				d := in[off]
				off++
				switch {
				case '0' <= d && d <= '9':
					v = v<<4 + rune(d-'0')
				case 'a' <= d && d <= 'f':
					v = v<<4 + 10 + rune(d-'a')
				case 'A' <= d && d <= 'F':
					v = v<<4 + 10 + rune(d-'A')
				default:
					return "", errMalformedUnicode
				}
			}
			switch {
			case utf16.IsSurrogate(v) && v < 0xDC00: // high
				flush()
				pending = v
			case utf16.IsSurrogate(v): // low
				if pending >= 0 {
					out.WriteRune(utf16.DecodeRune(pending, v))
					pending = -1
				} else {
					out.WriteRune(utf8.RuneError)
				}
			default:
				flush()
				out.WriteRune(v)
			}
			continue
		}
		flush()
		switch c {
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		}
		out.WriteByte(c)
	}
	flush()
	return out.String(), nil
}

// Store writes m as a .properties document with keys sorted, escaping
// what Parse would otherwise read differently. It is the inverse of Parse
// for any map (Parse(Store(m)) == m).
func Store(w io.Writer, m map[string]string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(escape(k, true))
		bw.WriteByte('=')
		bw.WriteString(escape(m[k], false))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// escape is Properties.saveConvert, except that non-ASCII characters are
// written as UTF-8 rather than \uXXXX (this package reads UTF-8; U+FEFF is
// the exception), and invalid UTF-8 bytes are kept as they are.
func escape(s string, isKey bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.HasPrefix(s[i:], "\uFEFF") {
			// A byte-order mark would be dropped at the start of a file.
			b.WriteString(`\uFEFF`)
			i += len("\uFEFF") - 1
			continue
		}
		switch c {
		case ' ':
			if i == 0 || isKey {
				b.WriteByte('\\')
			}
			b.WriteByte(' ')
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}
