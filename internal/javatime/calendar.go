package javatime

// The calendar arithmetic of Java's default GregorianCalendar: Julian
// before the Gregorian cutover of 1582-10-15, Gregorian from it on, with
// the week rules of the en_US locale (weeks start on Sunday, and week 1
// is the one holding January 1), which are what a JVM without a locale
// setting uses.

const (
	msPerDay int64 = 86_400_000
	// cutoverDay is 1582-10-15 in days since 1970-01-01.
	cutoverDay int64 = -141427
	// cutoverYear is the year the Julian calendar ends in.
	cutoverYear = 1582
	// unixJDN is the Julian day number of 1970-01-01.
	unixJDN int64 = 2440588
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// gregorianDays is the day number (since 1970-01-01) of a proleptic
// Gregorian date; month is 1..12.
func gregorianDays(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// julianDays is the day number of a Julian calendar date.
func julianDays(y, m, d int64) int64 {
	a := floorDiv(14-m, 12)
	yy := y + 4800 - a
	mm := m + 12*a - 3
	jdn := d + (153*mm+2)/5 + 365*yy + floorDiv(yy, 4) - 32083
	return jdn - unixJDN
}

// civilDays is the day number of year y (astronomical: 0 is 1 BC), month
// m (1..12), day d, in the calendar Java uses for that date.
func civilDays(y, m, d int64) int64 {
	if g := gregorianDays(y, m, d); g >= cutoverDay {
		return g
	}
	return julianDays(y, m, d)
}

// dateOf is the year (astronomical), month (1..12) and day of day number n.
func dateOf(n int64) (y, m, d int64) {
	if n >= cutoverDay {
		z := n + 719468
		era := floorDiv(z, 146097)
		doe := z - era*146097
		yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
		y = yoe + era*400
		doy := doe - (365*yoe + yoe/4 - yoe/100)
		mp := (5*doy + 2) / 153
		d = doy - (153*mp+2)/5 + 1
		if mp < 10 {
			m = mp + 3
		} else {
			m = mp - 9
		}
		if m <= 2 {
			y++
		}
		return y, m, d
	}
	c := n + unixJDN + 32082
	dd := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*dd, 4)
	mm := (5*e + 2) / 153
	d = e - (153*mm+2)/5 + 1
	m = mm + 3 - 12*(mm/10)
	y = dd - 4800 + mm/10
	return y, m, d
}

// dayOfWeek is Calendar.DAY_OF_WEEK of day number n: 1 is Sunday.
func dayOfWeek(n int64) int64 { return floorMod(n+4, 7) + 1 }

// week1Start is the Sunday that begins week 1 of year y.
func week1Start(y int64) int64 {
	jan1 := civilDays(y, 1, 1)
	return jan1 - (dayOfWeek(jan1) - 1)
}

// weekOfYear is Calendar.WEEK_OF_YEAR of day n in year y, and the week
// year it counts in: the last days of December fall in week 1 of the next
// year when that week holds its January 1.
func weekOfYear(n, y int64) (week, weekYear int64) {
	if next := week1Start(y + 1); n >= next {
		return 1, y + 1
	}
	return floorDiv(n-week1Start(y), 7) + 1, y
}

// fields are a date's calendar fields, as Java's Calendar computes them.
type fields struct {
	year, month, day     int64 // astronomical year, 1..12, 1..31
	dayOfYear, dayOfWeek int64
	weekOfYear, weekYear int64
	weekOfMonth          int64
	dayOfWeekInMonth     int64
	hour, minute, second int64 // hour 0..23
	millis               int64
}

func fieldsOf(localMillis int64) fields {
	n := floorDiv(localMillis, msPerDay)
	ms := floorMod(localMillis, msPerDay)
	var f fields
	f.year, f.month, f.day = dateOf(n)
	f.dayOfYear = n - civilDays(f.year, 1, 1) + 1
	f.dayOfWeek = dayOfWeek(n)
	f.weekOfYear, f.weekYear = weekOfYear(n, f.year)
	first := n - f.day + 1
	f.weekOfMonth = floorDiv(n-(first-(dayOfWeek(first)-1)), 7) + 1
	f.dayOfWeekInMonth = (f.day-1)/7 + 1
	f.hour = ms / 3_600_000
	f.minute = ms / 60_000 % 60
	f.second = ms / 1000 % 60
	f.millis = ms % 1000
	return f
}
