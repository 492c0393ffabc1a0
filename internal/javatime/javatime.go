// Package javatime formats and parses times as Java's SimpleDateFormat
// does in the en_US locale with its default, lenient GregorianCalendar:
// the pattern letters G y Y M L w W D d F E u a H k K h m s S z Z X,
// text or number by how many times a letter repeats, ” for a quote and
// 'text' for literal text. A pattern is compiled once into a Format that
// is safe for concurrent use.
package javatime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// item is one element of a compiled pattern: a field letter repeated
// count times, or literal text when letter is 0.
type item struct {
	letter  byte
	count   int
	literal string
}

// Format is a compiled SimpleDateFormat pattern in a time zone.
type Format struct {
	pattern string
	items   []item
	loc     *time.Location
	// centuryStart is the start of the 100 years a two-digit year falls
	// in, 80 years before the format was made, as Java's
	// defaultCenturyStart.
	centuryStart     int64
	centuryStartYear int64
}

// patternLetters are the letters SimpleDateFormat knows.
const patternLetters = "GyYMLwWDdFEuaHkKhmsSzZX"

// Compile compiles a SimpleDateFormat pattern for the zone loc; it refuses
// what Java's constructor refuses, with Java's IllegalArgumentException
// message.
func Compile(pattern string, loc *time.Location) (*Format, error) {
	if loc == nil {
		loc = time.UTC
	}
	f := &Format{pattern: pattern, loc: loc}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			f.items = append(f.items, item{literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			end := -1
			var quoted strings.Builder
			for j := i + 1; j < len(pattern); j++ {
				if pattern[j] != '\'' {
					quoted.WriteByte(pattern[j])
					continue
				}
				if j+1 < len(pattern) && pattern[j+1] == '\'' {
					quoted.WriteByte('\'')
					j++
					continue
				}
				end = j
				break
			}
			if end < 0 {
				return nil, fmt.Errorf("Unterminated quote")
			}
			lit.WriteString(quoted.String())
			i = end + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if strings.IndexByte(patternLetters, c) < 0 {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			if c == 'X' && n > 3 {
				return nil, fmt.Errorf("invalid ISO 8601 format: length=%d", n)
			}
			flush()
			f.items = append(f.items, item{letter: c, count: n})
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	now := time.Now().In(loc)
	start := now.AddDate(-80, 0, 0)
	_, off := start.Zone()
	f.centuryStart = start.UnixMilli()
	f.centuryStartYear = fieldsOf(f.centuryStart + int64(off)*1000).year
	return f, nil
}

// Pattern is the pattern the format was compiled from (Java's toPattern).
func (f *Format) Pattern() string { return f.pattern }

var (
	months      = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	// weekdays and shortWeekdays are indexed by DAY_OF_WEEK - 1.
	weekdays      = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	shortWeekdays = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	eras          = []string{"BC", "AD"}
	ampms         = []string{"AM", "PM"}
)

// Format renders t as SimpleDateFormat.format does.
func (f *Format) Format(t time.Time) string {
	t = t.In(f.loc)
	_, off := t.Zone()
	offMs := int64(off) * 1000
	fl := fieldsOf(t.UnixMilli() + offMs)
	var b []byte
	for _, it := range f.items {
		if it.letter == 0 {
			b = append(b, it.literal...)
			continue
		}
		switch it.letter {
		case 'G':
			b = append(b, eras[eraOf(fl.year)]...)
		case 'y':
			b = appendYear(b, yearOfEra(fl.year), it.count)
		case 'Y':
			// Java shows the week year as a signed proleptic year, with
			// no era.
			b = appendYear(b, fl.weekYear, it.count)
		case 'M', 'L':
			switch {
			case it.count >= 4:
				b = append(b, months[fl.month-1]...)
			case it.count == 3:
				b = append(b, shortMonths[fl.month-1]...)
			default:
				b = pad(b, fl.month, it.count)
			}
		case 'w':
			b = pad(b, fl.weekOfYear, it.count)
		case 'W':
			b = pad(b, fl.weekOfMonth, it.count)
		case 'D':
			b = pad(b, fl.dayOfYear, it.count)
		case 'd':
			b = pad(b, fl.day, it.count)
		case 'F':
			b = pad(b, fl.dayOfWeekInMonth, it.count)
		case 'E':
			if it.count >= 4 {
				b = append(b, weekdays[fl.dayOfWeek-1]...)
			} else {
				b = append(b, shortWeekdays[fl.dayOfWeek-1]...)
			}
		case 'u':
			u := fl.dayOfWeek - 1
			if u == 0 {
				u = 7
			}
			b = pad(b, u, it.count)
		case 'a':
			b = append(b, ampms[fl.hour/12]...)
		case 'H':
			b = pad(b, fl.hour, it.count)
		case 'k':
			h := fl.hour
			if h == 0 {
				h = 24
			}
			b = pad(b, h, it.count)
		case 'K':
			b = pad(b, fl.hour%12, it.count)
		case 'h':
			h := fl.hour % 12
			if h == 0 {
				h = 12
			}
			b = pad(b, h, it.count)
		case 'm':
			b = pad(b, fl.minute, it.count)
		case 's':
			b = pad(b, fl.second, it.count)
		case 'S':
			b = pad(b, fl.millis, it.count)
		case 'z':
			b = append(b, f.zoneName(offMs, it.count >= 4)...)
		case 'Z':
			b = appendOffset(b, offMs, true, false)
		case 'X':
			if offMs == 0 {
				b = append(b, 'Z')
				break
			}
			b = appendOffset(b, offMs, it.count >= 2, it.count == 3)
		}
	}
	return string(b)
}

// zoneName is what 'z' shows: UTC's names, and for any other zone the
// custom-zone form Java shows for a zone it knows only by its offset.
func (f *Format) zoneName(offMs int64, long bool) string {
	if f.loc == time.UTC {
		if long {
			return "Coordinated Universal Time"
		}
		return "UTC"
	}
	return string(appendOffset([]byte("GMT"), offMs, true, true))
}

func eraOf(year int64) int {
	if year <= 0 {
		return 0
	}
	return 1
}

func yearOfEra(year int64) int64 {
	if year <= 0 {
		return 1 - year
	}
	return year
}

// appendYear writes a year as 'y' does: two digits for yy, else at least
// count digits.
func appendYear(b []byte, y int64, count int) []byte {
	if count == 2 {
		return pad(b, y%100, 2)
	}
	return pad(b, y, count)
}

// pad writes n with at least min digits.
func pad(b []byte, n int64, min int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < min; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendOffset writes a zone offset as ±hh, ±hhmm or ±hh:mm.
func appendOffset(b []byte, offMs int64, minutes, colon bool) []byte {
	sign := byte('+')
	if offMs < 0 {
		sign = '-'
		offMs = -offMs
	}
	m := offMs / 60_000
	b = append(b, sign)
	b = pad(b, m/60, 2)
	if minutes {
		if colon {
			b = append(b, ':')
		}
		b = pad(b, m%60, 2)
	}
	return b
}
