package main

import (
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"strings"
	"testing"
	"time"
)

// java.time.Duration.parse's answers, from its documentation and source.
func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT15M":          15 * time.Minute,
		"pt15m":          15 * time.Minute,
		"PT20.345S":      20*time.Second + 345*time.Millisecond,
		"PT10H":          10 * time.Hour,
		"P2D":            48 * time.Hour,
		"P2DT3H4M":       51*time.Hour + 4*time.Minute,
		"PT-6H3M":        -6*time.Hour + 3*time.Minute,
		"-PT6H3M":        -6*time.Hour - 3*time.Minute,
		"-PT-6H+3M":      6*time.Hour - 3*time.Minute,
		"PT-1.5S":        -1500 * time.Millisecond,
		"PT1,5S":         1500 * time.Millisecond,
		"+P1D":           24 * time.Hour,
		"PT0.000000001S": 1,
		"15m":            15 * time.Minute, // Go's syntax, for convenience
		"2h30m":          150 * time.Minute,
	} {
		got, err := parseISODuration(in)
		if err != nil || got != want {
			t.Errorf("parseISODuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "P1DT", "PT1.5", "PT1.0000000001S", "1D", "P1H", "PT1D", "P1W", "P106752DT1H", "PT9223372037S", "abc"} {
		if d, err := parseISODuration(in); err == nil {
			t.Errorf("parseISODuration(%q) = %v, want an error", in, d)
		} else if !strings.Contains(err.Error(), "--by-duration") {
			t.Errorf("parseISODuration(%q): %v does not name the flag", in, err)
		}
	}
}

func FuzzParseISODuration(f *testing.F) {
	for _, s := range []string{"PT15M", "-P1DT-2H3M4.5S", "P106751DT23H47M16.854775807S", "15m", "PT", "P-0D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseISODuration(s)
		if err != nil {
			return
		}
		// What is accepted is either Go's syntax or reads back the same
		// from its own ISO form.
		if _, gerr := time.ParseDuration(s); gerr == nil {
			return
		}
		iso := isoOf(d)
		back, err := parseISODuration(iso)
		if err != nil || back != d {
			t.Fatalf("%q = %v; its ISO form %q reads %v, %v", s, d, iso, back, err)
		}
	})
}

// isoOf writes d as PTnS with nanoseconds.
func isoOf(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%sPT%d.%09dS", sign, d/time.Second, d%time.Second)
}

func TestParseResetCSV(t *testing.T) {
	got, err := parseResetCSV([]byte("orders,0,5\r\n orders , 1 , 7\n\norders,0,6\n"), "g")
	if err != nil || fmt.Sprint(got.List()) != "[{orders 0 6} {orders 1 7}]" {
		t.Errorf("no-group CSV: %v, %v", got.List(), err)
	}
	got, err = parseResetCSV([]byte("g,orders,0,5\nother,orders,1,7\n"), "g")
	if err != nil || fmt.Sprint(got.List()) != "[{orders 0 5}]" {
		t.Errorf("group CSV: %v, %v", got.List(), err)
	}
	for in, want := range map[string]string{
		"orders,0":                      `line 1: "orders,0": want topic,partition,offset`,
		"orders,0,5\ng,orders,1,2":      "line 2: 4 columns where the lines before have 3",
		"orders,-1,5":                   `line 1: partition "-1" is not a partition number`,
		"orders,0,x":                    `line 1: offset "x" is not an offset`,
		",0,1":                          "line 1: no topic",
		"orders,0,99999999999999999999": "is not an offset",
	} {
		if _, err := parseResetCSV([]byte(in), "g"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseResetCSV(%q) = %v, want %q", in, err, want)
		}
	}
}

func FuzzParseResetCSV(f *testing.F) {
	f.Add("orders,0,5\norders,1,7\n")
	f.Add("g,orders,0,5\nh,orders,1,7\n")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseResetCSV([]byte(s), "g")
		if err != nil {
			return
		}
		// What was read is written back by --export and read the same.
		var b strings.Builder
		for _, o := range got.List() {
			fmt.Fprintf(&b, "%s,%d,%d\n", o.Topic, o.Partition, o.Offset)
		}
		again, err := parseResetCSV([]byte(b.String()), "g")
		if err != nil || fmt.Sprint(again.List()) != fmt.Sprint(got.List()) {
			t.Fatalf("%q read %v; its export %q reads %v, %v", s, got.List(), b.String(), again.List(), err)
		}
	})
}

func TestParseTopicSpec(t *testing.T) {
	for in, want := range map[string]string{"orders": "{orders []}", "orders:0,2": "{orders [0 2]}", "a.b-c_d:3": "{a.b-c_d [3]}"} {
		s, err := groupoffsets.ParseTopicSpec(in)
		if err != nil || fmt.Sprint(s) != want {
			t.Errorf("groupoffsets.ParseTopicSpec(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, in := range []string{"", ":0", "orders:", "orders:x", "orders:-1", "orders:0,,1"} {
		if _, err := groupoffsets.ParseTopicSpec(in); err == nil {
			t.Errorf("groupoffsets.ParseTopicSpec(%q): no error", in)
		}
	}
}
