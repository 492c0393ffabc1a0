package logging

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RootLoggerName is the name of the root logger in the REST API. It is
// matched case-insensitively.
const RootLoggerName = "root"

// LoggerAttr is the record attribute naming the logger that wrote it.
const LoggerAttr = "logger"

// The Kafka (log4j) levels that slog does not have. DEBUG, INFO, WARN and
// ERROR are slog's own levels.
const (
	LevelAll   = slog.Level(math.MinInt32)
	LevelTrace = slog.Level(-8)
	LevelFatal = slog.Level(12)
	LevelOff   = slog.Level(math.MaxInt32)
)

// ErrInvalidLevel is returned for a level name Kafka does not know.
var ErrInvalidLevel = errors.New("invalid log level")

// ParseLevel maps a Kafka level name (TRACE, DEBUG, INFO, WARN, ERROR,
// FATAL, OFF, or log4j's ALL; any case) to its slog level and canonical
// name.
func ParseLevel(s string) (slog.Level, string, error) {
	name := strings.ToUpper(s)
	switch name {
	case "ALL":
		return LevelAll, name, nil
	case "TRACE":
		return LevelTrace, name, nil
	case "DEBUG":
		return slog.LevelDebug, name, nil
	case "INFO", "\u0130NFO": // log4j accepts the Turkish-locale spelling too
		return slog.LevelInfo, "INFO", nil
	case "WARN":
		return slog.LevelWarn, name, nil
	case "ERROR":
		return slog.LevelError, name, nil
	case "FATAL":
		return LevelFatal, name, nil
	case "OFF":
		return LevelOff, name, nil
	}
	return 0, "", ErrInvalidLevel
}

// LevelName is the Kafka name of a record's level: the nearest Kafka level
// at or below l.
func LevelName(l slog.Level) string {
	switch {
	case l >= LevelFatal:
		return "FATAL"
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARN"
	case l >= slog.LevelInfo:
		return "INFO"
	case l >= slog.LevelDebug:
		return "DEBUG"
	default:
		return "TRACE"
	}
}

// LoggerLevel is the REST entity for one logger's level.
type LoggerLevel struct {
	Level string `json:"level"`
	// LastModified is the epoch-ms time of the last change made through
	// SetLevel, or nil.
	LastModified *int64 `json:"last_modified"`
}

// node is one logger. explicit is empty unless a level was set on it;
// effective is read on every log call, so it is kept up to date by
// SetLevel and read without locks.
type node struct {
	explicit     string
	explicitLvl  slog.Level
	lastModified *int64
	effective    atomic.Int64
}

func (n *node) level() slog.Level { return slog.Level(n.effective.Load()) }

// Registry holds the loggers and their levels. It is safe for concurrent
// use.
type Registry struct {
	mu      sync.Mutex
	root    *node
	loggers map[string]*node // every known logger except root
	handler *Handler
	now     func() time.Time
}

// NewRegistry returns a registry whose root level is INFO and whose
// loggers write text records to w.
func NewRegistry(w io.Writer) *Registry {
	r := &Registry{
		root:    &node{explicit: "INFO", explicitLvl: slog.LevelInfo},
		loggers: map[string]*node{},
		now:     time.Now,
	}
	r.root.effective.Store(int64(slog.LevelInfo))
	r.handler = &Handler{
		reg:  r,
		node: r.root,
		text: slog.NewTextHandler(w, &slog.HandlerOptions{
			Level:       LevelAll,
			ReplaceAttr: replaceLevel,
		}),
	}
	return r
}

func replaceLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(LevelName(l))
		}
	}
	return a
}

// Handler returns the root handler. Records written through it are
// filtered by the root level; WithAttrs with a logger attribute gives the
// handler of that logger.
func (r *Registry) Handler() slog.Handler { return r.handler }

// Logger returns the logger named name ("" or "root", in any case, for
// the root logger). The name becomes known to the registry, as a log4j
// logger does once it is created.
func (r *Registry) Logger(name string) *slog.Logger {
	return slog.New(r.handler.named(name))
}

// node returns the node for name ("" or "root" give root), creating it
// if needed.
func (r *Registry) node(name string) *node {
	if name == "" || strings.EqualFold(name, RootLoggerName) {
		return r.root
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookup(name)
}

// lookup returns the node for name, creating it if needed. r.mu is held.
func (r *Registry) lookup(name string) *node {
	if n, ok := r.loggers[name]; ok {
		return n
	}
	n := &node{}
	n.effective.Store(int64(r.ancestor(name).explicitLvl))
	r.loggers[name] = n
	return n
}

// ancestor is the nearest dotted ancestor of name with an explicit level,
// else root. r.mu is held.
func (r *Registry) ancestor(name string) *node {
	for {
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			return r.root
		}
		name = name[:i]
		if n, ok := r.loggers[name]; ok && n.explicit != "" {
			return n
		}
	}
}

// source is the node whose explicit level applies to n, named name.
// r.mu is held.
func (r *Registry) source(name string, n *node) *node {
	if n.explicit != "" {
		return n
	}
	return r.ancestor(name)
}

func levelOf(n, source *node) LoggerLevel {
	return LoggerLevel{Level: source.explicit, LastModified: n.lastModified}
}

// Levels returns the loggers that have an explicitly set level, plus root.
func (r *Registry) Levels() map[string]LoggerLevel {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]LoggerLevel{RootLoggerName: levelOf(r.root, r.root)}
	for name, n := range r.loggers {
		if n.explicit != "" {
			out[name] = levelOf(n, n)
		}
	}
	return out
}

// Level returns the level of a known logger: its own if set, else its
// effective level. "root" is matched in any case; an unknown name gives
// false.
func (r *Registry) Level(name string) (LoggerLevel, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.EqualFold(name, RootLoggerName) {
		return levelOf(r.root, r.root), true
	}
	n, ok := r.loggers[name]
	if !ok {
		return LoggerLevel{}, false
	}
	return levelOf(n, r.source(name, n)), true
}

// SetLevel sets level on the namespace logger (creating it) and on every
// known logger whose name starts with namespace, and returns their names
// sorted. As in Kafka, "starts with" is a plain string prefix, a namespace
// of "root" (any case) covers every logger, and a logger whose level is
// already the requested one is listed but keeps its modification time
// (and, if its level was inherited, stays without a level of its own).
func (r *Registry) SetLevel(namespace, level string) ([]string, error) {
	lvl, name, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		return nil, errors.New("logger namespace may not be empty")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	isRoot := strings.EqualFold(namespace, RootLoggerName)
	var names []string
	var nodes []*node
	if isRoot {
		names, nodes = append(names, RootLoggerName), append(nodes, r.root)
	} else {
		r.lookup(namespace)
	}
	for loggerName, n := range r.loggers {
		if isRoot || strings.HasPrefix(loggerName, namespace) {
			names, nodes = append(names, loggerName), append(nodes, n)
		}
	}
	// Decide every change against the levels as they were, so the
	// outcome does not depend on the order the loggers are visited in.
	changed := make([]bool, len(nodes))
	for i, n := range nodes {
		changed[i] = r.source(names[i], n).explicit != name
	}
	now := r.now().UnixMilli()
	for i, n := range nodes {
		if changed[i] {
			n.explicit, n.explicitLvl, n.lastModified = name, lvl, &now
		}
	}
	r.root.effective.Store(int64(r.root.explicitLvl))
	for loggerName, n := range r.loggers {
		n.effective.Store(int64(r.source(loggerName, n).explicitLvl))
	}
	slices.Sort(names)
	return names, nil
}
