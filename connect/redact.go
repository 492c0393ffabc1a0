package connect

import (
	"slices"
	"strings"
)

// urlSecretSpans returns where a URL (a JDBC URL, say) holds passwords,
// in order and apart: the values of its password= parameters (up to the
// next & or ;, so that Connector/J's (key=value,...) forms are hidden
// past them rather than in part), and the password of its user info
// (//user:password@host), or the whole user info of a form without //
// (jdbc:oracle:thin:user/password@host). The user info ends at the last
// @, since a password may hold one: an @ in a parameter makes more
// hidden than needed, never less.
func urlSecretSpans(s string) [][2]int {
	var spans [][2]int
	lower := strings.ToLower(s)
	for from := 0; ; {
		i := strings.Index(lower[from:], "password=")
		if i < 0 {
			break
		}
		start := from + i + len("password=")
		end := strings.IndexAny(s[start:], "&;")
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		spans = append(spans, [2]int{start, end})
		from = end
	}
	if at := strings.LastIndex(s, "@"); at > 0 {
		start := -1
		if d := strings.Index(s, "//"); d >= 0 && d+2 <= at {
			if c := strings.Index(s[d+2:at], ":"); c >= 0 {
				start = d + 2 + c + 1
			}
		} else {
			start = strings.LastIndex(s[:at], ":") + 1
		}
		if start >= 0 && start < at {
			spans = append(spans, [2]int{start, at})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := spans[:0]
	for _, sp := range spans {
		if n := len(merged); n > 0 && sp[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// RedactURL hides, as [hidden], the passwords a URL holds in its user
// info or its password= parameters, for messages, logs and traces.
func RedactURL(s string) string {
	var b strings.Builder
	last := 0
	for _, sp := range urlSecretSpans(s) {
		b.WriteString(s[last:sp[0]])
		b.WriteString("[hidden]")
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// URLSecrets returns the passwords RedactURL hides, as the URL writes
// them, so that a message that repeats them (a driver's error) can hide
// them too.
func URLSecrets(s string) []string {
	var out []string
	for _, sp := range urlSecretSpans(s) {
		out = append(out, s[sp[0]:sp[1]])
	}
	return out
}

// RedactConfigValue is how a message that quotes a whole config, before
// the connector's definitions say which keys are passwords, shows one
// value: [hidden] for a key whose name ends in "password"
// (connection.password, database.password, ...), else the value with the
// passwords of any URL in it hidden (RedactURL).
func RedactConfigValue(key, value string) string {
	if strings.HasSuffix(strings.ToLower(key), "password") {
		return "[hidden]"
	}
	return RedactURL(value)
}
