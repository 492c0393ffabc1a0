package rest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
	"golang.org/x/sync/semaphore"
)

// Herder is what the REST API needs from the worker's herder. Methods that
// take a context must give up when it is done; the context carries the
// request timeout. Those that change a connector, restart it or its tasks,
// or change its offsets may answer *herder.RequestTargetError: the request
// is then sent to the worker it names.
type Herder interface {
	ServerInfo() client.ServerInfo
	Health(ctx context.Context) (int, client.WorkerStatus)
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (*client.ConnectorInfo, error)
	ConnectorStatus(ctx context.Context, name string) (*client.ConnectorStatus, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// initialState "" means default; initialOffsets nil means none
	// (KIP-995 "initial_offsets" in the POST body, same shape as the PATCH
	// offsets list).
	CreateConnector(ctx context.Context, name string, config map[string]string, initialState herder.TargetState, initialOffsets []client.ConnectorOffset) (*client.ConnectorInfo, error)
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) (info *client.ConnectorInfo, created bool, err error)
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*client.ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error
	TaskConfigs(ctx context.Context, name string) ([]client.TaskInfo, error)
	TaskStatus(ctx context.Context, name string, task int) (*client.TaskState, error)
	RestartConnector(ctx context.Context, name string) error
	RestartConnectorAndTasks(ctx context.Context, name string, includeTasks, onlyFailed bool) (*client.ConnectorStatus, error)
	RestartTask(ctx context.Context, name string, task int) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error
	ConnectorTopics(ctx context.Context, name string) ([]string, error)
	ResetConnectorTopics(ctx context.Context, name string) error
	ConnectorOffsets(ctx context.Context, name string) (*client.ConnectorOffsets, error)
	AlterConnectorOffsets(ctx context.Context, name string, offsets []client.ConnectorOffset) (string, error)
	ResetConnectorOffsets(ctx context.Context, name string) (string, error)
	// OffsetsHistory is connectd's own: a standalone worker's record of a
	// source connector's commits.
	OffsetsHistory(ctx context.Context, name string) (*client.OffsetsHistory, error)
	Plugins(connectorsOnly bool) []client.PluginInfo
	PluginConfig(plugin string) ([]client.ConfigKeyInfo, error)
	ValidateConfig(ctx context.Context, plugin string, config map[string]string) (*client.ConfigInfos, error)
}

// DefaultRequestTimeout is Kafka Connect's REST request timeout.
const DefaultRequestTimeout = 90 * time.Second

// Defaults of connectd's own limits on request bodies (Kafka Connect has
// none). 4 MiB holds the PATCH of tens of thousands of offsets.
const (
	DefaultMaxRequestBytes = 4 << 20
	DefaultBodyTimeout     = 30 * time.Second
)

// Options configure the handler.
type Options struct {
	// AdminEnabled serves /admin/loggers on these listeners: Kafka does
	// unless admin.listeners is set (NewAdmin serves them there), so
	// DefaultOptions sets it; the zero Options leave it off.
	AdminEnabled bool
	// RequestTimeout bounds every herder call; 0 means 90 s.
	RequestTimeout time.Duration
	// MaxRequestBytes bounds a request's body (rest.request.max.bytes);
	// 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// BodyTimeout bounds the time a client takes to send a request's
	// body, from the end of its headers (rest.request.body.timeout.ms);
	// 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Logger receives one record per request and the errors behind 500s;
	// nil discards them.
	Logger *slog.Logger
	// Console, if set, serves the web console at /ui, behind the same
	// screening as the API.
	Console http.Handler
	// Metrics, if set, serves GET /metrics.
	Metrics http.Handler
	// Client forwards requests to other workers; nil: http.DefaultClient.
	Client *http.Client
	// Auth asks for HTTP basic credentials, checked against Credentials
	// (user to password), as Kafka's BasicAuthSecurityRestExtension does.
	Auth        bool
	Credentials map[string]string
	// CORSOrigins are the other origins whose requests are answered
	// (access.control.allow.origin: origins, * a wildcard), with the
	// methods CORSMethods; none: same origin only.
	CORSOrigins, CORSMethods []string
	// Headers are set or added on every response
	// (response.http.headers.config).
	Headers []HeaderRule
}

// InternalHerder is implemented by herders of a cluster, which take the
// task configs a member's connector generated (POST
// /connectors/{name}/tasks, signed with the cluster's session key).
type InternalHerder interface {
	SubmitTaskConfigs(ctx context.Context, name string, body []byte, header http.Header) error
}

// Fencer is implemented by herders of a cluster, whose leader fences out
// a source connector's zombie tasks before a new generation of them runs
// exactly once (PUT /connectors/{name}/fence, signed with the cluster's
// session key).
type Fencer interface {
	FenceZombies(ctx context.Context, name string, body []byte, header http.Header) error
}

// DefaultOptions are Kafka Connect's defaults: admin endpoints on, a 90 s
// request timeout.
func DefaultOptions() Options {
	return Options{AdminEnabled: true, RequestTimeout: DefaultRequestTimeout}
}

type server struct {
	h        Herder
	loggers  *logging.Registry
	timeout  time.Duration
	maxBody  int64
	bodyTime time.Duration
	bodies   *semaphore.Weighted // room for the bodies endpoints hold
	log      *slog.Logger
	mux      *http.ServeMux
	client   *http.Client // forwards to other workers
	auth     *basicAuth   // nil: no authentication
	cors     *cors        // nil: same origin only
	headers  []HeaderRule
	// expandBytes is the size of the last expand answer's documents, the
	// next one's first buffer.
	expandBytes atomic.Int64
}

// New returns the REST API over h. loggers backs /admin/loggers, which is
// served only when opts.AdminEnabled is set and loggers is not nil.
func New(h Herder, loggers *logging.Registry, opts Options) http.Handler {
	s := newServer(h, loggers, opts)
	if opts.Auth {
		s.auth = &basicAuth{users: opts.Credentials}
	}
	if len(opts.CORSOrigins) > 0 {
		s.cors = newCORS(opts.CORSOrigins, opts.CORSMethods)
	}
	s.headers = opts.Headers
	s.routes()
	if opts.AdminEnabled && loggers != nil {
		s.adminRoutes()
	}
	if opts.Metrics != nil {
		s.mux.Handle("GET /metrics", opts.Metrics)
	}
	if opts.Console != nil {
		// The body was read by the screening: the console reads it again.
		console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = io.NopCloser(bytes.NewReader(requestBody(r)))
			opts.Console.ServeHTTP(w, r)
		})
		s.mux.Handle("/ui", console)
		s.mux.Handle("/ui/", console)
	}
	return s
}

// NewAdmin returns the admin endpoints alone, for admin.listeners. As in
// Kafka, the REST extensions (basic authentication), CORS and the
// response headers guard the regular listeners only: the admin listeners
// are meant to be reachable by operators alone.
func NewAdmin(loggers *logging.Registry, opts Options) http.Handler {
	s := newServer(nil, loggers, Options{RequestTimeout: opts.RequestTimeout, MaxRequestBytes: opts.MaxRequestBytes, BodyTimeout: opts.BodyTimeout, Logger: opts.Logger})
	s.adminRoutes()
	return s
}

func newServer(h Herder, loggers *logging.Registry, opts Options) *server {
	s := &server{h: h, loggers: loggers, timeout: opts.RequestTimeout, maxBody: opts.MaxRequestBytes, bodyTime: opts.BodyTimeout, log: opts.Logger, mux: http.NewServeMux(), client: opts.Client}
	if s.timeout <= 0 {
		s.timeout = DefaultRequestTimeout
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxRequestBytes
	}
	if s.bodyTime <= 0 {
		s.bodyTime = DefaultBodyTimeout
	}
	s.bodies = semaphore.NewWeighted(bodiesAtOnce * s.maxBody)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

func (s *server) routes() {
	s.handle("GET /{$}", s.serverInfo)
	s.handle("GET /health", s.health)

	for _, root := range []string{"/connectors", "/connectors/{$}"} {
		s.handle("GET "+root, s.listConnectors)
		s.handle("POST "+root, s.createConnector)
	}
	s.handle("GET /connectors/{name}", s.getConnector)
	s.handle("DELETE /connectors/{name}", s.deleteConnector)
	s.handle("GET /connectors/{name}/config", s.getConfig)
	s.handle("PUT /connectors/{name}/config", s.putConfig)
	s.handle("PATCH /connectors/{name}/config", s.patchConfig)
	s.handle("GET /connectors/{name}/status", s.getStatus)
	s.handle("GET /connectors/{name}/tasks", s.getTasks)
	s.handle("GET /connectors/{name}/tasks/{task}/status", s.getTaskStatus)
	s.handle("POST /connectors/{name}/tasks/{task}/restart", s.restartTask)
	s.handle("POST /connectors/{name}/restart", s.restartConnector)
	s.handle("PUT /connectors/{name}/pause", s.pause)
	s.handle("PUT /connectors/{name}/resume", s.resume)
	s.handle("PUT /connectors/{name}/stop", s.stop)
	s.handle("GET /connectors/{name}/topics", s.getTopics)
	s.handle("PUT /connectors/{name}/topics/reset", s.resetTopics)
	s.handle("GET /connectors/{name}/offsets", s.getOffsets)
	s.handle("GET /connectors/{name}/offsets/history", s.getOffsetsHistory)
	s.handle("PATCH /connectors/{name}/offsets", s.alterOffsets)
	s.handle("DELETE /connectors/{name}/offsets", s.resetOffsets)
	// The inter-worker endpoints: a cluster's herder takes task configs
	// from its members; a standalone one answers as Kafka's does.
	if ih, ok := s.h.(InternalHerder); ok {
		s.handle("POST /connectors/{name}/tasks", func(w http.ResponseWriter, r *http.Request) error {
			if err := ih.SubmitTaskConfigs(r.Context(), r.PathValue("name"), requestBody(r), r.Header); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
	} else {
		s.handle("POST /connectors/{name}/tasks", unsupported("Kafka Connect in standalone mode does not support externally setting task configurations."))
	}
	if f, ok := s.h.(Fencer); ok {
		s.handle("PUT /connectors/{name}/fence", func(w http.ResponseWriter, r *http.Request) error {
			if err := doOrForward(r, func(ctx context.Context) error {
				return f.FenceZombies(ctx, r.PathValue("name"), requestBody(r), r.Header)
			}); err != nil {
				return err
			}
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
	} else {
		s.handle("PUT /connectors/{name}/fence", unsupported("Kafka Connect in standalone mode does not support exactly-once source connectors."))
	}

	for _, root := range []string{"/connector-plugins", "/connector-plugins/{$}"} {
		s.handle("GET "+root, s.listPlugins)
	}
	s.handle("GET /connector-plugins/{plugin}/config", s.pluginConfig)
	s.handle("PUT /connector-plugins/{plugin}/config/validate", s.validate)
}

func (s *server) adminRoutes() {
	for _, root := range []string{"/admin/loggers", "/admin/loggers/{$}"} {
		s.handle("GET "+root, s.listLoggers)
	}
	s.handle("GET /admin/loggers/{logger}", s.getLogger)
	s.handle("PUT /admin/loggers/{logger}", s.setLogger)
}

// handlerFunc is an endpoint. It writes its success response itself and
// returns any failure for ServeHTTP to render.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *server) handle(pattern string, f handlerFunc) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
		defer cancel()
		if s.client != nil {
			ctx = context.WithValue(ctx, clientKey{}, s.client)
		}
		if err := f(w, r.WithContext(ctx)); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func unsupported(msg string) handlerFunc {
	return func(http.ResponseWriter, *http.Request) error { return herder.Internal("%s", msg) }
}

// ServeHTTP routes the request. Unknown paths and wrong methods get
// Kafka's JSON 404 and 405 bodies, and a panic becomes a 500. Before an
// endpoint runs, the request is screened (guard.go) and its body read.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic serving REST request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !sw.wroteHeader {
				writeErrorBody(sw, http.StatusInternalServerError, panicMessage(p))
			}
		}
		status := sw.status
		if !sw.wroteHeader {
			status = http.StatusOK // what net/http sends for a handler that writes nothing
		}
		// Probes and scrapes come every few seconds: their lines are
		// DEBUG, unless they fail.
		level := slog.LevelInfo
		if r.Method == http.MethodGet && (r.URL.Path == "/health" || r.URL.Path == "/metrics") && status < 500 {
			level = slog.LevelDebug
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "uri", r.URL.RequestURI(), "status", status, "bytes", sw.bytes, "duration_ms", time.Since(start).Milliseconds())
	}()
	// Until the body is read, the connection has bodyTime to deliver
	// it; so has whatever the server discards of a body left unread.
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(s.bodyTime)
	_ = rc.SetReadDeadline(deadline) // unsupported only off a real connection
	setHeaders(sw.Header(), s.headers)
	if s.cors.preflight(sw, r) {
		return
	}
	if s.auth != nil && !s.auth.allows(r) {
		s.auth.refuse(sw)
		return
	}
	if err := s.cors.refuse(sw, r); err != nil {
		s.refuse(sw, r, err)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		// No route: the mux answers 404, 405 (with Allow) or a redirect
		// to the clean path. Keep its status and headers, not its text.
		s.mux.ServeHTTP(&routeErrorWriter{statusWriter: sw}, r)
		return
	}
	if err := refuseMediaType(r); err != nil {
		s.refuse(sw, r, err)
		return
	}
	r, release, err := s.readBody(w, r, deadline)
	if err != nil {
		s.refuse(sw, r, err)
		return
	}
	defer release()
	// The endpoint may take long (a stop waits for its tasks): a read
	// deadline passing meanwhile would cancel the request's context.
	_ = rc.SetReadDeadline(time.Time{})
	s.mux.ServeHTTP(sw, r)
}

// statusWriter remembers what was written, for the request log and to
// know whether a panic can still be answered.
type statusWriter struct {
	http.ResponseWriter
	status      int
	bytes       int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routeErrorWriter turns the mux's plain-text 404 and 405 into Kafka's
// JSON error bodies.
type routeErrorWriter struct {
	*statusWriter
	replaced bool
}

func (w *routeErrorWriter) WriteHeader(code int) {
	if code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
		w.replaced = true
		w.Header().Del("X-Content-Type-Options")
		writeErrorBody(w.statusWriter, code, "HTTP "+strconv.Itoa(code)+" "+http.StatusText(code))
		return
	}
	w.statusWriter.WriteHeader(code)
}

func (w *routeErrorWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	return w.statusWriter.Write(b)
}
