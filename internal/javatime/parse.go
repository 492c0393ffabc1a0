package javatime

import (
	"fmt"
	"strings"
	"time"
)

// The calendar fields a parse sets, as Java's CalendarBuilder records
// them: a value and the order it was set in, since Calendar resolves
// conflicting fields by which was set last.
const (
	fEra = iota
	fYear
	fWeekYear
	fMonth
	fWeekOfYear
	fWeekOfMonth
	fDayOfYear
	fDay
	fDayOfWeekInMonth
	fDayOfWeek
	fAmPm
	fHour      // 0..11, 'K' and 'h'
	fHourOfDay // 0..23, 'H' and 'k'
	fMinute
	fSecond
	fMillis
	fZone
	numFields
)

type builder struct {
	value [numFields]int64
	stamp [numFields]int
	next  int
}

func (b *builder) set(field int, v int64) {
	b.next++
	b.value[field] = v
	b.stamp[field] = b.next
}

func (b *builder) isSet(field int) bool { return b.stamp[field] > 0 }

// ParseError is Java's ParseException: the text did not match the pattern.
type ParseError struct {
	Text string
	// Offset is where in Text the mismatch was found.
	Offset int
}

func (e *ParseError) Error() string { return fmt.Sprintf("Unparseable date: %q", e.Text) }

// Parse reads a time from the beginning of s as SimpleDateFormat.parse
// does: leniently (out-of-range fields carry over), skipping spaces and
// tabs before each field, ignoring whatever follows the pattern. A zone in
// the text overrides the format's.
func (f *Format) Parse(s string) (time.Time, error) {
	var b builder
	pos := 0
	ambiguousYear := false
	for i, it := range f.items {
		if it.letter == 0 {
			if !strings.HasPrefix(s[pos:], it.literal) {
				return time.Time{}, &ParseError{Text: s, Offset: pos}
			}
			pos += len(it.literal)
			continue
		}
		obeyCount, minusDelim := false, false
		if i+1 < len(f.items) {
			next := f.items[i+1]
			obeyCount = abutsNumber(next)
			minusDelim = next.letter == 0 && next.literal[0] == '-'
		}
		np, amb, ok := f.subParse(s, pos, it, obeyCount, minusDelim, &b)
		if !ok {
			return time.Time{}, &ParseError{Text: s, Offset: pos}
		}
		ambiguousYear = ambiguousYear || amb
		pos = np
	}
	ms := f.establish(&b)
	if ambiguousYear && ms < f.centuryStart {
		b.value[fYear] += 100
		ms = f.establish(&b)
	}
	return time.UnixMilli(ms).In(f.loc), nil
}

// abutsNumber is Java's shouldObeyCount: a numeric field right after
// another ends it after its count of digits.
func abutsNumber(it item) bool {
	switch it.letter {
	case 'M', 'L':
		return it.count <= 2
	case 'y', 'd', 'k', 'H', 'm', 's', 'S', 'D', 'F', 'w', 'W', 'K', 'h', 'Y':
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads an integer as Java's DecimalFormat does for a date field:
// an optional minus sign and ASCII digits, all of them or, when limit >
// 0, those of the first limit characters. Like Number.intValue, the value
// keeps its low 32 bits.
func number(s string, pos, limit int) (int64, int, bool) {
	end := len(s)
	if limit > 0 {
		if pos+limit > len(s) {
			return 0, pos, false
		}
		end = pos + limit
	}
	i := pos
	neg := false
	if i < end && s[i] == '-' {
		neg = true
		i++
	}
	start := i
	var v uint64
	overflow := false
	for i < end && isDigit(s[i]) {
		d := uint64(s[i] - '0')
		if v > (1<<63)/10 {
			overflow = true
		}
		v = v*10 + d
		i++
	}
	if i == start {
		return 0, pos, false
	}
	if overflow || v > 1<<63 || (!neg && v == 1<<63) {
		// DecimalFormat returns a Double past a long, and intValue of a
		// Double saturates.
		if neg {
			return -1 << 31, i, true
		}
		return 1<<31 - 1, i, true
	}
	n := int64(v)
	if neg {
		n = -n
	}
	return int64(int32(n)), i, true
}

// matchText finds the longest of names that s starts with at pos, ignoring
// case; it returns the name's index.
func matchText(s string, pos int, names []string) (int, int, bool) {
	best, bestLen := -1, 0
	for i, n := range names {
		if len(n) > bestLen && len(s)-pos >= len(n) && strings.EqualFold(s[pos:pos+len(n)], n) {
			best, bestLen = i, len(n)
		}
	}
	return best, pos + bestLen, best >= 0
}

// subParse reads the field it at pos and records it in b. It returns the
// position after the field and whether the field was a two-digit year.
func (f *Format) subParse(s string, pos int, it item, obeyCount, minusDelim bool, b *builder) (int, bool, bool) {
	for pos < len(s) && (s[pos] == ' ' || s[pos] == '\t') {
		pos++
	}
	if pos >= len(s) {
		return pos, false, false
	}
	num := func() (int64, int, bool) {
		limit := 0
		if obeyCount {
			limit = it.count
		}
		v, np, ok := number(s, pos, limit)
		// A minus sign followed by the literal '-' of the pattern is that
		// literal, not the field's sign.
		if ok && minusDelim && v < 0 && ((np < len(s) && s[np] != '-') || (np == len(s) && s[np-1] == '-')) {
			v, np = -v, np-1
		}
		return v, np, ok
	}
	switch it.letter {
	case 'G':
		i, np, ok := matchText(s, pos, eras)
		if ok {
			b.set(fEra, int64(i))
		}
		return np, false, ok
	case 'y', 'Y':
		v, np, ok := num()
		if !ok {
			return pos, false, false
		}
		field := fYear
		if it.letter == 'Y' {
			field = fWeekYear
		}
		amb := false
		if it.count <= 2 && np-pos == 2 && isDigit(s[pos]) && isDigit(s[pos+1]) {
			// A two-digit year is the one in the 100 years from the
			// century start; the year of the start itself is decided
			// once the whole date is known.
			two := f.centuryStartYear % 100
			amb = v == two
			century := f.centuryStartYear / 100 * 100
			if v < two {
				century += 100
			}
			v += century
		}
		b.set(field, v)
		return np, amb && field == fYear, true
	case 'M', 'L':
		if it.count <= 2 {
			v, np, ok := num()
			if ok {
				b.set(fMonth, v)
			}
			return np, false, ok
		}
		if i, np, ok := matchText(s, pos, months); ok {
			b.set(fMonth, int64(i)+1)
			return np, false, true
		}
		i, np, ok := matchText(s, pos, shortMonths)
		if ok {
			b.set(fMonth, int64(i)+1)
		}
		return np, false, ok
	case 'E':
		if i, np, ok := matchText(s, pos, weekdays); ok {
			b.set(fDayOfWeek, int64(i)+1)
			return np, false, true
		}
		i, np, ok := matchText(s, pos, shortWeekdays)
		if ok {
			b.set(fDayOfWeek, int64(i)+1)
		}
		return np, false, ok
	case 'a':
		i, np, ok := matchText(s, pos, ampms)
		if ok {
			b.set(fAmPm, int64(i))
		}
		return np, false, ok
	case 'z', 'Z':
		return parseZone(s, pos, b)
	case 'X':
		return parseISOZone(s, pos, it.count, b)
	}
	v, np, ok := num()
	if !ok {
		return pos, false, false
	}
	switch it.letter {
	case 'w':
		b.set(fWeekOfYear, v)
	case 'W':
		b.set(fWeekOfMonth, v)
	case 'D':
		b.set(fDayOfYear, v)
	case 'd':
		b.set(fDay, v)
	case 'F':
		b.set(fDayOfWeekInMonth, v)
	case 'u':
		// ISO's 1 (Monday) to 7 (Sunday), as Calendar.DAY_OF_WEEK.
		b.set(fDayOfWeek, floorMod(v, 7)+1)
	case 'H':
		b.set(fHourOfDay, v)
	case 'k':
		if v == 24 {
			v = 0
		}
		b.set(fHourOfDay, v)
	case 'K':
		b.set(fHour, v)
	case 'h':
		if v == 12 {
			v = 0
		}
		b.set(fHour, v)
	case 'm':
		b.set(fMinute, v)
	case 's':
		b.set(fSecond, v)
	case 'S':
		b.set(fMillis, v)
	}
	return np, false, true
}

// parseZone reads what 'z' and 'Z' accept: GMT or UTC, optionally followed
// by an offset as +h:mm or +hh:mm, or an RFC 822 offset +hhmm.
func parseZone(s string, pos int, b *builder) (int, bool, bool) {
	c := s[pos]
	if c == '+' || c == '-' {
		np, ok := numericZone(s, pos+1, sign(c), 0, false, b)
		return np, false, ok
	}
	for _, name := range []string{"Coordinated Universal Time", "Greenwich Mean Time", "GMT", "UTC", "UT"} {
		if len(s)-pos < len(name) || !strings.EqualFold(s[pos:pos+len(name)], name) {
			continue
		}
		np := pos + len(name)
		if name == "GMT" && np < len(s) && (s[np] == '+' || s[np] == '-') {
			np2, ok := numericZone(s, np+1, sign(s[np]), 0, true, b)
			return np2, false, ok
		}
		b.set(fZone, 0)
		return np, false, true
	}
	return pos, false, false
}

// parseISOZone reads an ISO 8601 offset: Z, or ±hh, ±hhmm, ±hh:mm by
// count.
func parseISOZone(s string, pos, count int, b *builder) (int, bool, bool) {
	switch s[pos] {
	case 'Z':
		b.set(fZone, 0)
		return pos + 1, false, true
	case '+', '-':
		np, ok := numericZone(s, pos+1, sign(s[pos]), count, count == 3, b)
		return np, false, ok
	}
	return pos, false, false
}

func sign(c byte) int64 {
	if c == '-' {
		return -1
	}
	return 1
}

// numericZone is Java's subParseNumericZone: hh (one digit only with a
// colon and no count), then unless count is 1 the minutes, after a colon
// when colon is set.
func numericZone(s string, pos int, sgn int64, count int, colon bool, b *builder) (int, bool) {
	i := pos
	at := func() (byte, bool) {
		if i >= len(s) {
			return 0, false
		}
		c := s[i]
		i++
		return c, true
	}
	c, ok := at()
	if !ok || !isDigit(c) {
		return pos, false
	}
	hours := int64(c - '0')
	if c, ok = at(); !ok {
		return pos, false
	}
	if isDigit(c) {
		hours = hours*10 + int64(c-'0')
	} else {
		if count > 0 || !colon {
			return pos, false
		}
		i--
	}
	if hours > 23 {
		return pos, false
	}
	var minutes int64
	if count != 1 {
		if c, ok = at(); !ok {
			return pos, false
		}
		if colon {
			if c != ':' {
				return pos, false
			}
			if c, ok = at(); !ok {
				return pos, false
			}
		}
		if !isDigit(c) {
			return pos, false
		}
		minutes = int64(c - '0')
		if c, ok = at(); !ok || !isDigit(c) {
			return pos, false
		}
		minutes = minutes*10 + int64(c-'0')
		if minutes > 59 {
			return pos, false
		}
	}
	b.set(fZone, sgn*(hours*60+minutes)*60_000)
	return i, true
}

// establish turns the parsed fields into milliseconds since the epoch as
// a lenient GregorianCalendar does: unset fields take their values of
// 1970-01-01T00:00:00.000, the most recently set of competing fields
// decides, and values out of their range carry into the next field.
func (f *Format) establish(b *builder) int64 {
	year := int64(1970)
	if b.isSet(fYear) {
		year = b.value[fYear]
	}
	// The week year rules the year when it was set after the year.
	if b.stamp[fWeekYear] > b.stamp[fYear] {
		year = b.value[fWeekYear]
	}
	if b.isSet(fEra) && b.value[fEra] == 0 {
		year = 1 - year
	}
	month := int64(1)
	if b.isSet(fMonth) {
		month = b.value[fMonth]
	}
	year += floorDiv(month-1, 12)
	month = floorMod(month-1, 12) + 1

	dow := int64(1)
	if b.isSet(fDayOfWeek) {
		dow = b.value[fDayOfWeek]
	}
	var day int64
	switch resolveDate(b) {
	case fDayOfYear:
		day = civilDays(year, 1, 1) + b.value[fDayOfYear] - 1
	case fWeekOfYear:
		day = week1Start(year) + 7*(b.value[fWeekOfYear]-1) + dow - 1
	case fWeekOfMonth:
		first := civilDays(year, month, 1)
		day = first - (dayOfWeek(first) - 1) + 7*(b.value[fWeekOfMonth]-1) + dow - 1
	case fDayOfWeekInMonth:
		n := b.value[fDayOfWeekInMonth]
		if n > 0 {
			first := civilDays(year, month, 1)
			day = first + floorMod(dow-dayOfWeek(first), 7) + 7*(n-1)
		} else {
			last := civilDays(year, month+1, 1) - 1
			if month == 12 {
				last = civilDays(year+1, 1, 1) - 1
			}
			day = last - floorMod(dayOfWeek(last)-dow, 7) + 7*(n+1)
		}
	default:
		d := int64(1)
		if b.isSet(fDay) {
			d = b.value[fDay]
		}
		day = civilDays(year, month, 1) + d - 1
	}

	var hour int64
	if b.stamp[fHourOfDay] >= max(b.stamp[fHour], b.stamp[fAmPm]) && b.isSet(fHourOfDay) {
		hour = b.value[fHourOfDay]
	} else {
		hour = b.value[fHour] + 12*b.value[fAmPm]
	}
	ms := day*msPerDay + hour*3_600_000 + b.value[fMinute]*60_000 + b.value[fSecond]*1000 + b.value[fMillis]
	if b.isSet(fZone) {
		return ms - b.value[fZone]
	}
	return f.utcOf(ms)
}

// resolveDate is the date part of Calendar's field resolution: of the
// groups of fields that fix a day, the one with the most recently set
// field, all of whose fields are set; else week or day fields on their
// own; else the day of the month.
func resolveDate(b *builder) int {
	groups := [][]int{
		{fDay},
		{fWeekOfYear, fDayOfWeek},
		{fWeekOfMonth, fDayOfWeek},
		{fDayOfWeekInMonth, fDayOfWeek},
		{fDayOfYear},
	}
	best, bestStamp := -1, 0
	for _, g := range groups {
		st := 0
		for _, fl := range g {
			if !b.isSet(fl) {
				st = 0
				break
			}
			st = max(st, b.stamp[fl])
		}
		if st > bestStamp {
			best, bestStamp = g[0], st
		}
	}
	if best >= 0 {
		return best
	}
	for _, fl := range []int{fWeekOfYear, fWeekOfMonth, fDayOfWeekInMonth} {
		if b.isSet(fl) {
			return fl
		}
	}
	return fDay
}

// utcOf turns local wall-clock milliseconds in the format's zone into
// milliseconds since the epoch.
func (f *Format) utcOf(local int64) int64 {
	if f.loc == time.UTC {
		return local
	}
	_, off := time.UnixMilli(local).In(f.loc).Zone()
	guess := local - int64(off)*1000
	_, off2 := time.UnixMilli(guess).In(f.loc).Zone()
	return local - int64(off2)*1000
}
