package javatime

import (
	"errors"
	"testing"
	"time"
)

// The expected strings and instants below were produced by Java 17's
// SimpleDateFormat with -Duser.timezone=UTC -Duser.language=en
// -Duser.country=US.

func TestFormatMatchesJava(t *testing.T) {
	tests := []struct {
		pattern string
		millis  int64
		want    string
	}{
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 0, "1970-01-01T00:00:00.000Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 1700000000123, "2023-11-14T22:13:20.123Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", -1, "1969-12-31T23:59:59.999Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", -62135596800000, "0001-01-03T00:00:00.000Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", -12219292800001, "1582-10-04T23:59:59.999Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 1735603200000, "2024-12-31T00:00:00.000Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 1704067199999, "2023-12-31T23:59:59.999Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", 951782400000, "2000-02-29T00:00:00.000Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", -63244800000000, "0036-11-10T00:00:00.000Z"},
		{"yyyyMMdd", 0, "19700101"},
		{"yyyyMMdd", 1700000000123, "20231114"},
		{"yyyyMMdd", -1, "19691231"},
		{"yyyyMMdd", -62135596800000, "00010103"},
		{"yyyyMMdd", -12219292800001, "15821004"},
		{"yyyyMMdd", 1735603200000, "20241231"},
		{"yyyyMMdd", 1704067199999, "20231231"},
		{"yyyyMMdd", 951782400000, "20000229"},
		{"yyyyMMdd", -63244800000000, "00361110"},
		{"yy-M-d h:m:s a", 0, "70-1-1 12:0:0 AM"},
		{"yy-M-d h:m:s a", 1700000000123, "23-11-14 10:13:20 PM"},
		{"yy-M-d h:m:s a", -1, "69-12-31 11:59:59 PM"},
		{"yy-M-d h:m:s a", -62135596800000, "01-1-3 12:0:0 AM"},
		{"yy-M-d h:m:s a", -12219292800001, "82-10-4 11:59:59 PM"},
		{"yy-M-d h:m:s a", 1735603200000, "24-12-31 12:0:0 AM"},
		{"yy-M-d h:m:s a", 1704067199999, "23-12-31 11:59:59 PM"},
		{"yy-M-d h:m:s a", 951782400000, "00-2-29 12:0:0 AM"},
		{"yy-M-d h:m:s a", -63244800000000, "36-11-10 12:0:0 AM"},
		{"G yyyy MMM MMMM EEE EEEE", 0, "AD 1970 Jan January Thu Thursday"},
		{"G yyyy MMM MMMM EEE EEEE", 1700000000123, "AD 2023 Nov November Tue Tuesday"},
		{"G yyyy MMM MMMM EEE EEEE", -1, "AD 1969 Dec December Wed Wednesday"},
		{"G yyyy MMM MMMM EEE EEEE", -62135596800000, "AD 0001 Jan January Mon Monday"},
		{"G yyyy MMM MMMM EEE EEEE", -12219292800001, "AD 1582 Oct October Thu Thursday"},
		{"G yyyy MMM MMMM EEE EEEE", 1735603200000, "AD 2024 Dec December Tue Tuesday"},
		{"G yyyy MMM MMMM EEE EEEE", 1704067199999, "AD 2023 Dec December Sun Sunday"},
		{"G yyyy MMM MMMM EEE EEEE", 951782400000, "AD 2000 Feb February Tue Tuesday"},
		{"G yyyy MMM MMMM EEE EEEE", -63244800000000, "BC 0036 Nov November Mon Monday"},
		{"YYYY ww W D F u", 0, "1970 01 1 1 1 4"},
		{"YYYY ww W D F u", 1700000000123, "2023 46 3 318 2 2"},
		{"YYYY ww W D F u", -1, "1970 01 5 365 5 3"},
		{"YYYY ww W D F u", -62135596800000, "0001 02 2 3 1 1"},
		{"YYYY ww W D F u", -12219292800001, "1582 40 1 277 1 4"},
		{"YYYY ww W D F u", 1735603200000, "2025 01 5 366 5 2"},
		{"YYYY ww W D F u", 1704067199999, "2024 01 6 365 5 7"},
		{"YYYY ww W D F u", 951782400000, "2000 10 5 60 5 2"},
		{"YYYY ww W D F u", -63244800000000, "-0035 46 3 314 2 1"},
		{"k K h H S SS SSSS", 0, "24 0 12 0 0 00 0000"},
		{"k K h H S SS SSSS", 1700000000123, "22 10 10 22 123 123 0123"},
		{"k K h H S SS SSSS", -1, "23 11 11 23 999 999 0999"},
		{"k K h H S SS SSSS", -62135596800000, "24 0 12 0 0 00 0000"},
		{"k K h H S SS SSSS", -12219292800001, "23 11 11 23 999 999 0999"},
		{"k K h H S SS SSSS", 1735603200000, "24 0 12 0 0 00 0000"},
		{"k K h H S SS SSSS", 1704067199999, "23 11 11 23 999 999 0999"},
		{"k K h H S SS SSSS", 951782400000, "24 0 12 0 0 00 0000"},
		{"k K h H S SS SSSS", -63244800000000, "24 0 12 0 0 00 0000"},
		{"z zzzz Z X XX XXX", 0, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", 1700000000123, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", -1, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", -62135596800000, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", -12219292800001, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", 1735603200000, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", 1704067199999, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", 951782400000, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"z zzzz Z X XX XXX", -63244800000000, "UTC Coordinated Universal Time +0000 Z Z Z"},
		{"'it''s' ''yyyy''", 0, "it's '1970'"},
		{"'it''s' ''yyyy''", 1700000000123, "it's '2023'"},
		{"'it''s' ''yyyy''", -1, "it's '1969'"},
		{"'it''s' ''yyyy''", -62135596800000, "it's '0001'"},
		{"'it''s' ''yyyy''", -12219292800001, "it's '1582'"},
		{"'it''s' ''yyyy''", 1735603200000, "it's '2024'"},
		{"'it''s' ''yyyy''", 1704067199999, "it's '2023'"},
		{"'it''s' ''yyyy''", 951782400000, "it's '2000'"},
		{"'it''s' ''yyyy''", -63244800000000, "it's '0036'"},
		{"yyyyy.yyy.y", 0, "01970.1970.1970"},
		{"yyyyy.yyy.y", 1700000000123, "02023.2023.2023"},
		{"yyyyy.yyy.y", -1, "01969.1969.1969"},
		{"yyyyy.yyy.y", -62135596800000, "00001.001.1"},
		{"yyyyy.yyy.y", -12219292800001, "01582.1582.1582"},
		{"yyyyy.yyy.y", 1735603200000, "02024.2024.2024"},
		{"yyyyy.yyy.y", 1704067199999, "02023.2023.2023"},
		{"yyyyy.yyy.y", 951782400000, "02000.2000.2000"},
		{"yyyyy.yyy.y", -63244800000000, "00036.036.36"},
	}
	for _, tc := range tests {
		f, err := Compile(tc.pattern, time.UTC)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		if got := f.Format(time.UnixMilli(tc.millis)); got != tc.want {
			t.Errorf("Format(%q, %d) = %q, want %q", tc.pattern, tc.millis, got, tc.want)
		}
	}
}

func TestParseMatchesJava(t *testing.T) {
	tests := []struct {
		pattern, text string
		millis        int64
		ok            bool
	}{
		{"yyyy-MM-dd", "2024-02-30", 1709251200000, true},
		{"yyyy-MM-dd", "2024-13-01", 1735689600000, true},
		{"yyyy-MM-dd HH:mm", "2024-01-01 25:61", 1704160860000, true},
		{"yyyyMMdd", "20240315", 1710460800000, true},
		{"yyyyMMddHHmmss", "20240315102030", 1710498030000, true},
		{"yyyy-MM-dd", "  2024-03-15trailing", 1710460800000, true},
		{"yyyy-MM-dd", "2024-3-5", 1709596800000, true},
		{"dd/MM/yy", "01/02/03", 1044057600000, true},
		{"dd/MM/yy", "01/02/99", 917827200000, true},
		{"MMM d, yyyy", "jAn 5, 2020", 1578182400000, true},
		{"MMMM d, yyyy", "September 5, 2020", 1599264000000, true},
		{"EEE, d MMM yyyy HH:mm:ss Z", "Wed, 4 Jul 2001 12:08:56 -0700", 994273736000, true},
		{"yyyy-MM-dd'T'HH:mm:ssXXX", "2001-07-04T12:08:56+05:30", 994228736000, true},
		{"yyyy-MM-dd'T'HH:mm:ssX", "2001-07-04T12:08:56Z", 994248536000, true},
		{"yyyy-MM-dd z", "2001-07-04 GMT+3:00", 994194000000, true},
		{"yyyy-MM-dd z", "2001-07-04 UTC", 994204800000, true},
		{"h:mm a", "5:30 PM", 63000000, true},
		{"h:mm a", "12:30 AM", 1800000, true},
		{"yyyy-MM-dd", "2024/03/15", 0, false},
		{"yyyy-MM-dd", "abc", 0, false},
		{"yyyy ww", "2024 10", 1709424000000, true},
		{"yyyy D", "2024 60", 1709164800000, true},
		{"yyyy-MM-dd", "-5-01-01", -62325158400000, true},
		{"G yyyy", "BC 10", -62451388800000, true},
		{"yyyy-MM-dd", "1500-03-01", -14825808000000, true},
		{"yyyyMMdd", "2024031", 1709251200000, true},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-03-15 10:20:30.5", 1710498030005, true},
		{"yyyy-MM-dd", "2024--03-15", 1694736000000, true},
		{"yyyy-MM-dd EEE", "2024-03-15 Mon", 1710460800000, true},
		{"yyyy F E MMM", "2024 2 Tue Mar", 1710201600000, true},
		{"yyyy-MM-dd", "2024-03-15", 1710460800000, true},
	}
	for _, tc := range tests {
		f, err := Compile(tc.pattern, time.UTC)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		got, err := f.Parse(tc.text)
		if !tc.ok {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("Parse(%q, %q) = %v, %v; want a ParseError", tc.pattern, tc.text, got, err)
			} else if want := `Unparseable date: "` + tc.text + `"`; err.Error() != want {
				t.Errorf("Parse(%q, %q) error %q, want %q", tc.pattern, tc.text, err, want)
			}
			continue
		}
		if err != nil || got.UnixMilli() != tc.millis {
			t.Errorf("Parse(%q, %q) = %d, %v; want %d", tc.pattern, tc.text, got.UnixMilli(), err, tc.millis)
		}
	}
}

func TestCompileRefusesWhatJavaRefuses(t *testing.T) {
	tests := []struct{ pattern, err string }{
		{"yyyy-qq", "Illegal pattern character 'q'"},
		{"'abc", "Unterminated quote"},
		{"XXXX", "invalid ISO 8601 format: length=4"},
		{"ab", "Illegal pattern character 'b'"},
		{"yyyy-MM-dd'T'", ""},
		{"é", ""},
	}
	for _, tc := range tests {
		_, err := Compile(tc.pattern, time.UTC)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Compile(%q): %v", tc.pattern, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("Compile(%q) error %v, want %q", tc.pattern, err, tc.err)
		}
	}
}

func TestPatternIsKeptAsWritten(t *testing.T) {
	f, err := Compile("yyyy-MM-dd'T'HH", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pattern() != "yyyy-MM-dd'T'HH" {
		t.Errorf("Pattern() = %q", f.Pattern())
	}
}

func TestTwoDigitYearsFallInTheCenturyBeforeNowAndAfter(t *testing.T) {
	f, err := Compile("yy", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	// The year 79 years ago and the one 19 years ahead, by their last two
	// digits, both read back as themselves.
	for _, y := range []int{now.Year() - 79, now.Year() + 19} {
		got, err := f.Parse(f.Format(time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC)))
		if err != nil || got.Year() != y {
			t.Errorf("year %d read back as %v, %v", y, got, err)
		}
	}
}

func TestFormatInAnotherZone(t *testing.T) {
	loc := time.FixedZone("", 5*3600+30*60)
	f, err := Compile("yyyy-MM-dd HH:mm z Z XXX", loc)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(0)
	if got, want := f.Format(ts), "1970-01-01 05:30 GMT+05:30 +0530 +05:30"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	back, err := f.Parse("1970-01-01 05:30 GMT+05:30 +0530 +05:30")
	if err != nil || !back.Equal(ts) {
		t.Errorf("Parse = %v, %v", back, err)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "'", "''", "G yy MMMM EEEE a z", "XXXX", "q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		fm, err := Compile(pattern, time.UTC)
		if err != nil {
			return
		}
		for _, ms := range []int64{0, -1, 1700000000123, -62135596800000, 253402300799999} {
			fm.Format(time.UnixMilli(ms))
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("yyyy-MM-dd HH:mm:ss.SSS Z", "2024-03-15 10:20:30.5 -0700")
	f.Add("yyyyMMddHHmmss", "20240315102030")
	f.Add("EEE, d MMM yy h:mm a zzzz", "Wed, 4 Jul 01 12:08 PM GMT+3:00")
	f.Add("G yyyy ww u F D XXX", "BC 10 52 7 5 366 +05:30")
	f.Fuzz(func(t *testing.T, pattern, text string) {
		fm, err := Compile(pattern, time.UTC)
		if err != nil {
			return
		}
		got, err := fm.Parse(text)
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("Parse(%q, %q): %v is not a ParseError", pattern, text, err)
		}
		if err == nil {
			fm.Format(got)
		}
	})
}
