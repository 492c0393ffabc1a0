package logging

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestRegistry() (*Registry, *bytes.Buffer, *int64) {
	var buf bytes.Buffer
	r := NewRegistry(&buf)
	clock := new(int64)
	*clock = 1729800000000
	r.now = func() time.Time { return time.UnixMilli(*clock) }
	return r, &buf, clock
}

func ms(v int64) *int64 { return &v }

func TestParseLevel(t *testing.T) {
	cases := map[string]string{
		"trace": "TRACE", "Debug": "DEBUG", "INFO": "INFO", "warn": "WARN",
		"error": "ERROR", "fatal": "FATAL", "off": "OFF", "all": "ALL",
	}
	for in, want := range cases {
		_, got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "WARNING", "verbose", " info", "5"} {
		if _, _, err := ParseLevel(in); !errors.Is(err, ErrInvalidLevel) {
			t.Errorf("ParseLevel(%q) error = %v, want ErrInvalidLevel", in, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	r, _, _ := newTestRegistry()
	want := map[string]LoggerLevel{"root": {Level: "INFO"}}
	if got := r.Levels(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Levels() = %v, want %v", got, want)
	}
	for _, name := range []string{"root", "ROOT", "Root"} {
		if got, ok := r.Level(name); !ok || got != (LoggerLevel{Level: "INFO"}) {
			t.Errorf("Level(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := r.Level("org.apache.kafka"); ok {
		t.Error("an unknown logger has a level")
	}
	r.Logger("org.apache.kafka.connect.runtime.Worker")
	got, ok := r.Level("org.apache.kafka.connect.runtime.Worker")
	if !ok || got != (LoggerLevel{Level: "INFO"}) {
		t.Errorf("a known logger without a level: %v, %v; want its effective level INFO", got, ok)
	}
	if _, ok := r.Level("org.apache.kafka.connect"); ok {
		t.Error("an intermediate namespace became a logger")
	}
	if len(r.Levels()) != 1 {
		t.Errorf("a logger without its own level is listed: %v", r.Levels())
	}
}

func TestSetLevelFiltersAndTags(t *testing.T) {
	r, buf, _ := newTestRegistry()
	worker := r.Logger("org.apache.kafka.connect.runtime.Worker")
	other := r.Logger("org.apache.kafka.clients.Other")

	worker.Debug("hidden")
	if buf.Len() != 0 {
		t.Fatalf("DEBUG written at INFO: %q", buf)
	}
	worker.Info("shown", "k", 1)
	line := buf.String()
	for _, part := range []string{"level=INFO", `msg=shown`, "logger=org.apache.kafka.connect.runtime.Worker", "k=1"} {
		if !strings.Contains(line, part) {
			t.Errorf("record %q lacks %q", line, part)
		}
	}
	buf.Reset()

	affected, err := r.SetLevel("org.apache.kafka.connect", "debug")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"org.apache.kafka.connect", "org.apache.kafka.connect.runtime.Worker"}
	if !reflect.DeepEqual(affected, want) {
		t.Errorf("SetLevel affected %v, want %v", affected, want)
	}
	worker.Debug("now shown")
	other.Debug("still hidden")
	if got := buf.String(); !strings.Contains(got, "level=DEBUG") || strings.Contains(got, "still hidden") {
		t.Errorf("after SetLevel: %q", got)
	}
	buf.Reset()

	// A logger created later inherits from its nearest dotted ancestor.
	r.Logger("org.apache.kafka.connect.storage.KafkaOffsetBackingStore").Debug("inherited")
	if !strings.Contains(buf.String(), "inherited") {
		t.Error("a new logger did not inherit the namespace level")
	}
	buf.Reset()
	r.Logger("org.apache.kafka.connectors.X").Debug("not a child")
	if buf.Len() != 0 {
		t.Error("a new logger inherited from a namespace that is only a string prefix of it")
	}
}

func TestSetLevelPrefixAndLastModified(t *testing.T) {
	r, _, clock := newTestRegistry()
	r.Logger("a.b.C")
	r.Logger("a.bc.D") // a plain string prefix match, as in Kafka
	r.Logger("z")

	affected, err := r.SetLevel("a.b", "WARN")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.b", "a.b.C", "a.bc.D"}; !reflect.DeepEqual(affected, want) {
		t.Errorf("affected %v, want %v", affected, want)
	}
	t0 := ms(1729800000000)
	want := map[string]LoggerLevel{
		"root":   {Level: "INFO"},
		"a.b":    {Level: "WARN", LastModified: t0},
		"a.b.C":  {Level: "WARN", LastModified: t0},
		"a.bc.D": {Level: "WARN", LastModified: t0},
	}
	if got := r.Levels(); !reflect.DeepEqual(got, want) {
		t.Errorf("Levels() = %v, want %v", got, want)
	}

	// Setting the level a logger already has changes nothing but still
	// lists it.
	*clock += 1000
	affected, _ = r.SetLevel("a.b.C", "warn")
	if !reflect.DeepEqual(affected, []string{"a.b.C"}) {
		t.Errorf("affected %v", affected)
	}
	if got, _ := r.Level("a.b.C"); !reflect.DeepEqual(got, LoggerLevel{Level: "WARN", LastModified: t0}) {
		t.Errorf("unchanged logger got %v", got)
	}

	// A new namespace whose effective level is already the one asked for
	// gets no level of its own.
	affected, _ = r.SetLevel("q", "INFO")
	if !reflect.DeepEqual(affected, []string{"q"}) {
		t.Errorf("affected %v", affected)
	}
	if _, listed := r.Levels()["q"]; listed {
		t.Error("q got an explicit level equal to the inherited one")
	}
	if got, ok := r.Level("q"); !ok || got != (LoggerLevel{Level: "INFO"}) {
		t.Errorf("Level(q) = %v, %v", got, ok)
	}

	// root covers every logger.
	affected, _ = r.SetLevel("ROOT", "error")
	if want := []string{"a.b", "a.b.C", "a.bc.D", "q", "root", "z"}; !reflect.DeepEqual(affected, want) {
		t.Errorf("root affected %v, want %v", affected, want)
	}
	t1 := ms(1729800001000)
	for _, name := range affected {
		if got, _ := r.Level(name); !reflect.DeepEqual(got, LoggerLevel{Level: "ERROR", LastModified: t1}) {
			t.Errorf("after root ERROR, %s = %v", name, got)
		}
	}
}

func TestSetLevelErrors(t *testing.T) {
	r, _, _ := newTestRegistry()
	if _, err := r.SetLevel("a", "LOUD"); !errors.Is(err, ErrInvalidLevel) {
		t.Errorf("invalid level: %v", err)
	}
	if _, ok := r.Level("a"); ok {
		t.Error("a failed SetLevel created the logger")
	}
	if _, err := r.SetLevel("", "INFO"); err == nil {
		t.Error("empty namespace accepted")
	}
}

func TestTraceFatalAndOff(t *testing.T) {
	r, buf, _ := newTestRegistry()
	l := r.Logger("x")
	ctx := context.Background()
	r.SetLevel("x", "TRACE")
	l.Log(ctx, LevelTrace, "t")
	l.Log(ctx, LevelFatal, "f")
	if got := buf.String(); !strings.Contains(got, "level=TRACE") || !strings.Contains(got, "level=FATAL") {
		t.Errorf("got %q", got)
	}
	buf.Reset()
	r.SetLevel("x", "OFF")
	l.Log(ctx, LevelFatal, "f")
	l.Error("e")
	if buf.Len() != 0 {
		t.Errorf("OFF logger wrote %q", buf)
	}
	if l.Enabled(ctx, slog.LevelError) {
		t.Error("Enabled at OFF")
	}
}

func TestRootLoggerAndGroups(t *testing.T) {
	r, buf, _ := newTestRegistry()
	root := r.Logger("")
	root.Debug("hidden")
	root.Info("shown")
	if got := buf.String(); !strings.Contains(got, "logger=root") || strings.Contains(got, "hidden") {
		t.Errorf("root logger wrote %q", got)
	}
	buf.Reset()
	// A "logger" attribute inside a group does not rename the logger.
	slog.New(r.Handler()).WithGroup("g").With("logger", "y").Info("grouped")
	if !strings.Contains(buf.String(), "g.logger=y") {
		t.Errorf("got %q", buf)
	}
	if _, ok := r.Level("y"); ok {
		t.Error("a grouped logger attribute registered a logger")
	}
}

func TestConcurrentUse(t *testing.T) {
	r, _, _ := newTestRegistry()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := r.Logger("c.x")
			for j := range 200 {
				l.Debug("m", "j", j)
				if i == 0 && j%20 == 0 {
					r.SetLevel("c", []string{"DEBUG", "INFO"}[j/20%2])
				}
				r.Levels()
			}
		}()
	}
	wg.Wait()
}
