// Package javajson writes and reads JSON exactly as Apache Kafka Connect's
// Java runtime does (Jackson's compact output through the JsonConverter).
//
// Byte equality matters: offsets-topic keys are compared, compacted and
// partitioned by their exact bytes, so a Go worker that wants to share
// offsets with Java workers must produce the same text. Three things differ
// from encoding/json: object fields come in java.util.HashMap iteration
// order, strings are escaped as Jackson escapes them (no HTML escaping, raw
// U+2028), and doubles are printed in Java's Double.toString form.
package javajson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Marshal encodes v as Jackson would. Supported values: nil, bool, string,
// all Go integer kinds, float32 (Java float), float64 (Java double),
// []any, and map[string]any (fields in Java HashMap order).
func Marshal(v any) ([]byte, error) {
	return Append(nil, v)
}

// Append is Marshal appending to dst.
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		return AppendString(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case float32:
		return AppendFloat(dst, x), nil
	case float64:
		return AppendDouble(dst, x), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = Append(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		if len(x) <= smallMap {
			var buf [smallMap]string
			return appendEntries(dst, x, smallMapOrder(buf[:0], x))
		}
		return appendEntries(dst, x, HashMapOrder(sortedKeys(x)))
	default:
		return nil, fmt.Errorf("javajson: cannot encode %T", v)
	}
}

// smallMap is the size up to which Append orders a map's keys on the
// stack. Offsets and source partitions have one to a few keys, and a
// GET of 100,000 of them spent most of its allocations ordering keys.
const smallMap = 8

// smallMapOrder appends the keys of m, a map of at most smallMap
// entries, to keys in the order HashMapOrder gives its sorted keys (a
// HashMap of so few entries has 16 buckets), without allocating when keys
// has room.
func smallMapOrder(keys []string, m map[string]any) []string {
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sorts, both stable: by key, then by bucket.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	const mask = 16 - 1
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && spread(keys[j])&mask < spread(keys[j-1])&mask; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// appendEntries appends m as a JSON object, its entries in keys' order.
func appendEntries(dst []byte, m map[string]any, keys []string) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = Append(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const hexDigits = "0123456789ABCDEF"

// AppendString appends s as a JSON string the way Jackson writes it: only
// '"', '\\' and control characters are escaped; the short forms \b \t \n \f
// \r are used where they exist, and \u00XX with uppercase hex otherwise.
// Invalid UTF-8 becomes U+FFFD, as it would when Java decoded the bytes.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// Most strings need no escaping: copy up to the first byte that may.
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				dst = append(dst, c)
			}
		}
		i++
	}
	return append(dst, '"')
}

// AppendDouble appends f as Jackson writes a double: in Java's
// Double.toString form ("1.0", "1.5E10", "1.0E-5"), NaN and the
// infinities quoted.
func AppendDouble(dst []byte, f float64) []byte {
	return appendJSONFloat(dst, f, 64)
}

// AppendFloat appends f as Jackson writes a float (Float.toString).
func AppendFloat(dst []byte, f float32) []byte {
	return appendJSONFloat(dst, float64(f), 32)
}

// AppendDoubleString appends Double.toString(f), NaN and the infinities
// as Java spells them, unquoted.
func AppendDoubleString(dst []byte, f float64) []byte {
	return appendJavaFloat(dst, f, 64)
}

// AppendFloatString appends Float.toString(f).
func AppendFloatString(dst []byte, f float32) []byte {
	return appendJavaFloat(dst, float64(f), 32)
}

func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// Jackson quotes non-numeric numbers by default.
		dst = append(dst, '"')
		return append(appendJavaFloat(dst, f, bits), '"')
	}
	return appendJavaFloat(dst, f, bits)
}

func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bits)
		if !bytes.ContainsRune(dst[start:], '.') {
			dst = append(dst, '.', '0')
		}
		return dst
	}
	// Computerized scientific notation: d.dddE[-]n with at least one
	// fractional digit.
	s := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	dst = append(dst, mant...)
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = strings.TrimLeft(exp[1:], "0")
	if exp == "" {
		exp = "0"
	}
	return append(dst, exp...)
}

// HashMapOrder returns keys in the order a java.util.HashMap holding them
// iterates, given the order they were inserted in. The table starts at 16
// buckets and doubles whenever the size passes 3/4 of it; resizing keeps
// the relative order of entries that share a bucket, so the final order is
// the insertion order sorted stably by bucket index: a counting sort, each
// key hashed once (GET /connectors?expand=status orders thousands).
func HashMapOrder(keys []string) []string {
	capacity := 16
	for float64(len(keys)) > 0.75*float64(capacity) {
		capacity *= 2
	}
	mask := uint32(capacity - 1)
	buckets := make([]uint32, len(keys))
	// next[b] is where bucket b's next key goes once the counts are summed.
	next := make([]int, capacity+1)
	for i, k := range keys {
		buckets[i] = spread(k) & mask
		next[buckets[i]+1]++
	}
	for b := 1; b <= capacity; b++ {
		next[b] += next[b-1]
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[next[buckets[i]]] = k
		next[buckets[i]]++
	}
	return out
}

// spread is HashMap.hash: String.hashCode with its high bits folded down.
func spread(s string) uint32 {
	h := JavaStringHash(s)
	return h ^ (h >> 16)
}

// JavaStringHash is java.lang.String.hashCode over the UTF-16 code units
// of s, as an unsigned 32-bit value.
func JavaStringHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16Surrogates(r)
			h = 31*h + uint32(r1)
			h = 31*h + uint32(r2)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// ErrBigInteger reports an integer literal outside the range of a Java long.
var ErrBigInteger = errors.New("integer does not fit in a long")

// Unmarshal decodes JSON the way Kafka's schemaless JsonConverter does:
// integral numbers become int64, other numbers float64, objects
// map[string]any, arrays []any. An integer outside the int64 range is an
// error wrapping ErrBigInteger, where Java would hold a BigInteger that
// Connect later refuses. Trailing data after the value is an error.
func Unmarshal(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data[dec.InputOffset():])) > 0 {
		return nil, errors.New("javajson: trailing data after JSON value")
	}
	return Normalize(v)
}

// Normalize converts the json.Number values in a value decoded by
// encoding/json (with UseNumber) to int64 or float64, in place.
func Normalize(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case []any:
		for i, e := range x {
			n, err := Normalize(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	case map[string]any:
		for k, e := range x {
			n, err := Normalize(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	default:
		return v, nil
	}
}

func number(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrBigInteger, s)
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Out of range: Java's Double.parseDouble gives Infinity, which
		// Jackson cannot write back; refuse it here.
		return nil, fmt.Errorf("number %s is out of range for a double", s)
	}
	return f, nil
}
