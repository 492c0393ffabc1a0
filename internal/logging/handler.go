package logging

import (
	"context"
	"log/slog"
	"strings"
)

// Handler is a slog.Handler that writes text records and drops those
// below the effective level of the logger it belongs to. The logger is
// named by a top-level "logger" attribute added with WithAttrs (as
// Registry.Logger does); without one the root level applies.
type Handler struct {
	reg     *Registry
	node    *node
	text    slog.Handler
	grouped bool // WithGroup was called: later attributes are not the logger's name
}

// Enabled reports whether a record at level l would be written.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.node.level()
}

// Handle writes the record.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	return h.text.Handle(ctx, r)
}

// WithAttrs returns a handler that adds attrs to every record. A string
// "logger" attribute at the top level switches to that logger's level.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	if !h.grouped {
		for _, a := range attrs {
			if a.Key == LoggerAttr && a.Value.Kind() == slog.KindString {
				c.node = h.reg.node(a.Value.String())
			}
		}
	}
	c.text = h.text.WithAttrs(attrs)
	return &c
}

// WithGroup returns a handler that puts later attributes in group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.grouped = true
	c.text = h.text.WithGroup(name)
	return &c
}

// named is the handler of the logger named name ("" is root).
func (h *Handler) named(name string) slog.Handler {
	if name == "" || strings.EqualFold(name, RootLoggerName) {
		name = RootLoggerName
	}
	return h.WithAttrs([]slog.Attr{slog.String(LoggerAttr, name)})
}
