// Package secrets hides a connector's secrets in what the runtime shows
// of it: log lines, status traces, validation messages.
package secrets

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Hider hides a connector's secrets where a connector's or a driver's
// message may quote a value it was given: a role name a database refused,
// a URL. Kafka shows PASSWORD values as [hidden]; connectd also hides
// every value a config provider gave, which is why it came from one.
type Hider []string

// MinLength is the shortest value hidden: hiding "on" or "1" in every
// message would make messages unreadable and tell nothing about a secret.
const MinLength = 3

// Of are the values of config that messages must not show: those
// of keys def says are PASSWORD, those of keys named as Kafka names its
// passwords (…password, sasl.jaas.config), and those fromProviders says
// came from a config provider.
func Of(def *connect.ConfigDef, config map[string]string, fromProviders map[string]bool) Hider {
	var values []string
	for k, v := range config {
		secret := fromProviders[k] || strings.HasSuffix(strings.ToLower(k), "password") || strings.HasSuffix(k, "sasl.jaas.config")
		if def != nil {
			if key := def.Key(k); key != nil && key.Type == connect.ConfigPassword {
				secret = true
			}
		}
		if secret {
			values = append(values, v)
		}
	}
	return New(values...)
}

// New hides values, those of at least MinLength bytes.
func New(values ...string) Hider {
	var h Hider
	for _, v := range values {
		if len(v) >= MinLength && !slices.Contains(h, v) {
			h = append(h, v)
		}
	}
	// The longest first, so that a secret holding another is hidden whole.
	slices.SortFunc(h, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return h
}

// Merge is h and o's secrets.
func (h Hider) Merge(o Hider) Hider {
	return New(append(slices.Clone(h), o...)...)
}

// Hide is s with every secret replaced by [hidden].
func (h Hider) Hide(s string) string {
	for _, secret := range h {
		s = strings.ReplaceAll(s, secret, "[hidden]")
	}
	return s
}

// Err is err with its message's secrets hidden; errors.Is and As still
// see what it wraps.
func (h Hider) Err(err error) error {
	if err == nil || len(h) == 0 {
		return err
	}
	msg := h.Hide(err.Error())
	if msg == err.Error() {
		return err
	}
	return &hiddenError{msg: msg, err: err}
}

type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// hidingHandler hides secrets in each record's message and attribute
// values, whatever logged them.
type hidingHandler struct {
	slog.Handler
	secrets Hider
}

func (x hidingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, x.secrets.Hide(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(x.attr(a))
		return true
	})
	return x.Handler.Handle(ctx, out)
}

func (x hidingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	hidden := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		hidden[i] = x.attr(a)
	}
	return hidingHandler{x.Handler.WithAttrs(hidden), x.secrets}
}

func (x hidingHandler) WithGroup(name string) slog.Handler {
	return hidingHandler{x.Handler.WithGroup(name), x.secrets}
}

func (x hidingHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, x.secrets.Hide(v.String()))
	case slog.KindGroup:
		group := v.Group()
		hidden := make([]any, len(group))
		for i, g := range group {
			hidden[i] = x.attr(g)
		}
		return slog.Group(a.Key, hidden...)
	case slog.KindAny:
		// An error, a record's value, a map: hidden as the text the
		// handler would print, when that shows a secret.
		s := fmt.Sprint(v.Any())
		if h := x.secrets.Hide(s); h != s {
			return slog.String(a.Key, h)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Logger is log naming the task or connector in every line (attrs), as
// Kafka's [name|task-0] log context does, with its secrets hidden.
func (h Hider) Logger(log *slog.Logger, attrs ...any) *slog.Logger {
	if len(h) > 0 {
		log = slog.New(hidingHandler{log.Handler(), h})
	}
	return log.With(attrs...)
}
