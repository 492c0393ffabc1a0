// Package javaregex runs the regular expressions Kafka Connect's configs
// hold (topics.regex, RegexRouter, TopicNameMatches, ...) as Java's
// java.util.regex does where RE2 can: Matcher.matches() is a whole-string
// match, and replacements follow Matcher.appendReplacement's rules for
// $n, ${name} and backslash escapes. Java syntax that RE2 lacks
// (lookaround, backreferences, possessive quantifiers, atomic groups) is
// refused with a message that names it, rather than read differently.
package javaregex

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Pattern is a compiled Java regular expression.
type Pattern struct {
	source string
	whole  *regexp.Regexp // anchored at both ends: Matcher.matches()
	first  *regexp.Regexp // unanchored: Matcher.find()
	groups int
	names  map[string]int
}

// Compile compiles a Java regular expression.
func Compile(expr string) (*Pattern, error) {
	if what := unsupported(expr); what != "" {
		return nil, fmt.Errorf("the regular expression %q uses %s, which connectd's regular expressions (RE2) do not support", expr, what)
	}
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		// The error of the expression as given, not of the anchored one.
		if _, e := regexp.Compile(expr); e != nil {
			err = e
		}
		return nil, err
	}
	p := &Pattern{source: expr, whole: re, first: regexp.MustCompile(`(?:` + expr + `)`), groups: re.NumSubexp(), names: map[string]int{}}
	for i, n := range re.SubexpNames() {
		if n != "" {
			p.names[n] = i
		}
	}
	return p, nil
}

// String returns the expression as given.
func (p *Pattern) String() string { return p.source }

// Matches reports whether the whole of s matches, as Java's
// Pattern.matcher(s).matches().
func (p *Pattern) Matches(s string) bool { return p.whole.MatchString(s) }

// ReplaceWhole returns replacement with s's groups substituted when the
// whole of s matches (Kafka's RegexRouter: matcher.matches() then
// replaceFirst), and false when it does not.
func (p *Pattern) ReplaceWhole(s, replacement string) (string, bool, error) {
	m := p.whole.FindStringSubmatchIndex(s)
	if m == nil {
		return "", false, nil
	}
	out, err := p.expand(s, m, replacement)
	return out, err == nil, err
}

// ReplaceFirst is Java's Matcher.replaceFirst: the first match found in
// s (which, after a successful Matches, starts at 0 but may end before
// the end of s) replaced, the rest of s kept; s as it is when nothing
// matches.
func (p *Pattern) ReplaceFirst(s, replacement string) (string, error) {
	m := p.first.FindStringSubmatchIndex(s)
	if m == nil {
		return s, nil
	}
	out, err := p.expand(s, m, replacement)
	if err != nil {
		return "", err
	}
	return s[:m[0]] + out + s[m[1]:], nil
}

// CheckReplacement reports the error a replacement would meet with any
// input: a group this pattern does not have, a trailing backslash or $.
func (p *Pattern) CheckReplacement(replacement string) error {
	m := make([]int, 2*(p.groups+1))
	for i := range m {
		m[i] = -1
	}
	m[0], m[1] = 0, 0
	_, err := p.expand("", m, replacement)
	return err
}

// expand is Java's Matcher.appendReplacement for one match.
func (p *Pattern) expand(s string, m []int, repl string) (string, error) {
	var b strings.Builder
	group := func(g int) {
		if m[2*g] >= 0 {
			b.WriteString(s[m[2*g]:m[2*g+1]])
		}
	}
	for i := 0; i < len(repl); {
		c := repl[i]
		switch c {
		case '\\':
			i++
			if i == len(repl) {
				return "", fmt.Errorf("character to be escaped is missing")
			}
			b.WriteByte(repl[i])
			i++
		case '$':
			i++
			if i == len(repl) {
				return "", fmt.Errorf("Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				g, ok := p.names[name]
				if !ok {
					return "", fmt.Errorf("No group with name {%s}", name)
				}
				group(g)
				i += end + 1
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return "", fmt.Errorf("Illegal group reference")
			}
			// The first digit is always a group; Java takes each further
			// digit only while the number stays a group of the pattern.
			g := int(repl[i] - '0')
			i++
			for i < len(repl) && repl[i] >= '0' && repl[i] <= '9' {
				n := g*10 + int(repl[i]-'0')
				if n > p.groups {
					break
				}
				g = n
				i++
			}
			if g > p.groups {
				return "", fmt.Errorf("No group %s", strconv.Itoa(g))
			}
			group(g)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// unsupported names the first Java-only construct of expr, outside
// character classes and escapes, or "".
func unsupported(expr string) string {
	inClass := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\':
			if i+1 < len(expr) {
				n := expr[i+1]
				if !inClass && n >= '1' && n <= '9' {
					return "a backreference (\\" + string(n) + ")"
				}
				if n == 'k' && i+2 < len(expr) && expr[i+2] == '<' {
					return "a named backreference (\\k<...>)"
				}
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			if i+1 < len(expr) && expr[i+1] == ']' {
				i++ // a ] first in a class is a literal
			}
		case c == '(' && strings.HasPrefix(expr[i:], "(?="):
			return "a lookahead (?=...)"
		case c == '(' && strings.HasPrefix(expr[i:], "(?!"):
			return "a negative lookahead (?!...)"
		case c == '(' && strings.HasPrefix(expr[i:], "(?<="):
			return "a lookbehind (?<=...)"
		case c == '(' && strings.HasPrefix(expr[i:], "(?<!"):
			return "a negative lookbehind (?<!...)"
		case c == '(' && strings.HasPrefix(expr[i:], "(?>"):
			return "an atomic group (?>...)"
		case (c == '+') && i > 0 && isQuantifierEnd(expr, i):
			return "a possessive quantifier (" + expr[i-1:i+1] + ")"
		}
	}
	return ""
}

// isQuantifierEnd reports whether the '+' at i follows a quantifier,
// which makes it possessive.
func isQuantifierEnd(expr string, i int) bool {
	prev := expr[i-1]
	if prev == '*' || prev == '?' || prev == '}' {
		return !(i >= 2 && expr[i-2] == '\\')
	}
	if prev == '+' {
		return !(i >= 2 && expr[i-2] == '\\') && !(i >= 2 && isQuantifierEnd(expr, i-1))
	}
	return false
}
