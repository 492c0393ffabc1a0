package worker

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ConfigLogger is the logger worker keys are reported on: Kafka's
// AbstractConfig's, which logs the keys a worker does not know.
const ConfigLogger = "org.apache.kafka.common.config.AbstractConfig"

// LogUnknownKeys logs at WARN each key of a mode worker's props that it
// does not know, with Kafka's message, naming the known key it is likely a
// typo of (or the mode whose key it is); and each key Kafka knows that
// connectd takes without using it, saying why.
func LogUnknownKeys(log *slog.Logger, props map[string]string, mode Mode) {
	for _, k := range slices.Sorted(maps.Keys(props)) {
		known, why := lookupKey(k, mode)
		if known {
			if why != "" {
				log.Warn(fmt.Sprintf("The configuration '%s' was supplied but connectd does not use it: %s.", k, why))
			}
			continue
		}
		msg := fmt.Sprintf("The configuration '%s' was supplied but isn't a known config.", k)
		other := otherMode(mode)
		if ok, _ := lookupKey(k, other); ok {
			msg += fmt.Sprintf(" It is a %s worker's key.", other)
		} else if s := suggestKey(k, mode); s != "" {
			msg += fmt.Sprintf(" Did you mean '%s'?", s)
		}
		log.Warn(msg)
	}
}

func otherMode(mode Mode) Mode {
	if mode == Distributed {
		return Standalone
	}
	return Distributed
}

func (m Mode) covers(mode Mode) bool { return m == Both || m == mode }

// modeDef is what a mode worker declares beyond commonDef.
func modeDef(mode Mode) *connect.ConfigDef {
	if mode == Distributed {
		return distributedDef
	}
	return standaloneDef
}

// lookupKey says whether a mode worker knows k, and, if it takes k
// without using it, why.
func lookupKey(k string, mode Mode) (known bool, why string) {
	if commonDef.Key(k) != nil || modeDef(mode).Key(k) != nil || slices.Contains(securityKeys, k) {
		return true, ""
	}
	for _, u := range unusedKeys {
		if u.name == k && u.modes.covers(mode) {
			return true, u.why
		}
	}
	// offset.storage.file.filename is a standalone key, not a setting of
	// the distributed worker's offsets topic.
	if modeDef(otherMode(mode)).Key(k) != nil {
		return false, ""
	}
	for _, f := range keyFamilies {
		if strings.HasPrefix(k, f.prefix) && f.modes.covers(mode) {
			return true, f.why
		}
	}
	return false, ""
}

// suggestKey returns the key of a mode worker that k is likely a typo of:
// the nearest within two edits, or one with the same words in another
// order; "" if none is.
func suggestKey(k string, mode Mode) string {
	names := slices.Clone(securityKeys)
	for _, d := range []*connect.ConfigDef{commonDef, modeDef(mode)} {
		for _, key := range d.Keys() {
			names = append(names, key.Name)
		}
	}
	for _, u := range unusedKeys {
		if u.modes.covers(mode) {
			names = append(names, u.name)
		}
	}
	slices.Sort(names)
	words := sortedWords(k)
	best, bestDist := "", 3
	for _, n := range names {
		if slices.Equal(sortedWords(n), words) {
			return n
		}
		if d := editDistance(k, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func sortedWords(k string) []string {
	w := strings.Split(k, ".")
	slices.Sort(w)
	return w
}

// editDistance is the Levenshtein distance of a and b, in bytes (keys are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// KeyDoc describes a worker key, or a family of keys, for `connectd config`.
type KeyDoc struct {
	// Name is the key, or for a family its prefix followed by "*".
	Name  string
	Modes Mode
	// Type is the ConfigDef type; "" for a key whose parsing is not in the
	// spec (the security keys) and for families.
	Type connect.ConfigType
	// Default is what an unset key means, nil for none; Required says
	// that it must be set.
	Default  *string
	Required bool
	Doc      string
}

// Keys lists every worker key and family connectd knows, by name, from
// the spec that parses them.
func Keys() []KeyDoc {
	var out []KeyDoc
	for _, d := range []struct {
		def   *connect.ConfigDef
		modes Mode
	}{{commonDef, Both}, {standaloneDef, Standalone}, {distributedDef, Distributed}} {
		for _, k := range d.def.Keys() {
			doc := KeyDoc{Name: k.Name, Modes: d.modes, Type: k.Type, Required: k.Required, Doc: k.Doc}
			if k.Default != nil {
				doc.Default = connect.FormatValue(k.Default)
			}
			out = append(out, doc)
		}
	}
	for _, k := range securityKeys {
		out = append(out, KeyDoc{Name: k, Modes: Both,
			Doc: "Connection security of the worker's Kafka clients, read as Kafka's clients read it (PEM stores only; SASL PLAIN and SCRAM only); also under producer., consumer. and admin."})
	}
	for _, u := range unusedKeys {
		out = append(out, KeyDoc{Name: u.name, Modes: u.modes, Doc: "Kafka's; not used: " + u.why + "."})
	}
	for _, f := range keyFamilies {
		doc := f.doc
		if f.why != "" {
			doc += " Not used: " + f.why + "."
		}
		out = append(out, KeyDoc{Name: f.prefix + "*", Modes: f.modes, Doc: doc})
	}
	slices.SortFunc(out, func(a, b KeyDoc) int { return strings.Compare(a.Name, b.Name) })
	return out
}
