// Package client is a Go client for the Kafka Connect REST API, and its
// types are the REST bodies as connectd's own worker declares them. It works
// against connectd and Apache Kafka Connect 3.6 and later (some endpoints
// need newer versions: PATCH config 3.8, GET /health 3.9).
//
// Every method takes a context. A response outside 2xx is returned as an
// *Error carrying the HTTP status and Kafka Connect's message:
//
//	c, err := client.New("http://localhost:8083")
//	...
//	status, err := c.Status(ctx, "file-src")
//	var cerr *client.Error
//	if errors.As(err, &cerr) && cerr.StatusCode == 404 { ... }
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Kafka Connect worker (any worker of a distributed
// cluster forwards as needed). It is safe for concurrent use.
type Client struct {
	base      string // scheme://host[:port][/prefix], no trailing slash
	hc        *http.Client
	user      string
	pass      string
	basicAuth bool
	timeout   time.Duration
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithBasicAuth sends HTTP basic credentials with every request, as for a
// worker with the BasicAuthSecurityRestExtension.
func WithBasicAuth(user, pass string) Option {
	return func(c *Client) { c.user, c.pass, c.basicAuth = user, pass, true }
}

// WithTLSConfig talks HTTPS with this TLS configuration (trusted CAs,
// client certificates, verification), through a copy of
// http.DefaultTransport. It replaces a client set by WithHTTPClient before
// it; a nil cfg is ignored.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *Client) {
		if cfg == nil {
			return
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cfg.Clone()
		c.hc = &http.Client{Transport: tr}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.userAgent = ua }
}

// WithTimeout bounds every call, including reading the response. Zero or
// negative means no bound beyond the context's. Kafka Connect itself gives
// up on herder requests after 90 s.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) { c.timeout = d }
}

// New returns a client for the worker at baseURL, such as
// "http://localhost:8083". A path prefix (for a worker behind a proxy) is
// kept; a trailing slash is ignored.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("client: bad base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: bad base URL %q: want http(s)://host[:port]", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: bad base URL %q: no query or fragment allowed", baseURL)
	}
	c := &Client{hc: http.DefaultClient}
	if u.User != nil {
		// Credentials in the URL act as WithBasicAuth unless overridden.
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		c.basicAuth = true
		u.User = nil
	}
	c.base = strings.TrimRight(u.String(), "/")
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL is the worker URL the client talks to.
func (c *Client) BaseURL() string { return c.base }

// Proxy is a reverse proxy to the worker: each request goes to its path
// under BaseURL, with this client's credentials and TLS settings, without
// the browser's Origin, Referer and cookies. It is for a tool that serves
// a page of its own talking to the worker (connectctl console), which
// screens the requests itself.
func (c *Client) Proxy() http.Handler {
	target, _ := url.Parse(c.base) // New checked it
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			for _, h := range []string{"Origin", "Referer", "Cookie", "Authorization"} {
				r.Out.Header.Del(h)
			}
			if c.basicAuth {
				r.Out.SetBasicAuth(c.user, c.pass)
			}
			if c.userAgent != "" {
				r.Out.Header.Set("User-Agent", c.userAgent)
			}
		},
		Transport: c.hc.Transport,
	}
}

// Error is a response outside 2xx. ErrorCode and Message come from Kafka
// Connect's body {"error_code":N,"message":"..."}; when the body has
// another shape, Message is its text (or the HTTP status text if empty)
// and ErrorCode is 0.
type Error struct {
	StatusCode int
	ErrorCode  int
	Message    string
}

func (e *Error) Error() string { return e.Message }

// IsNotFound reports whether err is an *Error with status 404.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is an *Error with status 409 (the
// connector exists, or a rebalance is in progress).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == status
}

func parseError(status int, body []byte) *Error {
	e := &Error{StatusCode: status}
	var shaped struct {
		ErrorCode *int    `json:"error_code"`
		Message   *string `json:"message"`
	}
	text := strings.TrimSpace(string(body))
	if err := json.Unmarshal(body, &shaped); err == nil && (shaped.ErrorCode != nil || shaped.Message != nil) {
		if shaped.ErrorCode != nil {
			e.ErrorCode = *shaped.ErrorCode
		}
		if shaped.Message != nil {
			text = *shaped.Message
		} else {
			text = "" // {"error_code":500,"message":null}, e.g. for a Java NPE
		}
	}
	if text == "" {
		text = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	e.Message = text
	return e
}

// maxBody bounds how much of a response is read.
const maxBody = 64 << 20

// do sends a request to path (already escaped, starting with "/") and
// decodes a 2xx body into out unless the status is 204 or out is nil. It
// returns the status code.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) (int, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("client: encoding %s %s body: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.basicAuth {
		req.SetBasicAuth(c.user, c.pass)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("client: reading %s %s response: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, parseError(resp.StatusCode, data)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return resp.StatusCode, fmt.Errorf("client: %s %s: empty response body (status %d)", method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("client: decoding %s %s response: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// connectorPath is /connectors/{name}{suffix} with name path-escaped.
func connectorPath(name, suffix string) (string, error) {
	if name == "" {
		return "", errors.New("client: empty connector name")
	}
	return "/connectors/" + url.PathEscape(name) + suffix, nil
}

func (c *Client) connectorDo(ctx context.Context, method, name, suffix string, query url.Values, body, out any) (int, error) {
	path, err := connectorPath(name, suffix)
	if err != nil {
		return 0, err
	}
	return c.do(ctx, method, path, query, body, out)
}

// ServerInfo returns the worker's version, commit and Kafka cluster id
// (GET /).
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	var out ServerInfo
	if _, err := c.do(ctx, http.MethodGet, "/", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health returns the worker's health (GET /health, Kafka 3.9+). A worker
// that is starting (503) or unhealthy (500) answers with an *Error whose
// Message is the worker's message.
func (c *Client) Health(ctx context.Context) (*WorkerStatus, error) {
	var out WorkerStatus
	if _, err := c.do(ctx, http.MethodGet, "/health", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Connectors lists the connector names (GET /connectors), in the server's
// order.
func (c *Client) Connectors(ctx context.Context) ([]string, error) {
	var out []string
	if _, err := c.do(ctx, http.MethodGet, "/connectors", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// ConnectorsExpanded lists the connectors with their status and/or info
// (GET /connectors?expand=...). expand holds "status" and/or "info"; with
// none, both are asked for. Connectors the server cannot describe yet are
// left out by the server.
func (c *Client) ConnectorsExpanded(ctx context.Context, expand ...string) (map[string]ConnectorExpanded, error) {
	if len(expand) == 0 {
		expand = []string{"status", "info"}
	}
	var out map[string]ConnectorExpanded
	if _, err := c.do(ctx, http.MethodGet, "/connectors", url.Values{"expand": expand}, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Connector returns a connector's config and task ids
// (GET /connectors/{name}).
func (c *Client) Connector(ctx context.Context, name string) (*ConnectorInfo, error) {
	var out ConnectorInfo
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Config returns a connector's raw config (GET /connectors/{name}/config).
func (c *Client) Config(ctx context.Context, name string) (map[string]string, error) {
	var out map[string]string
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/config", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

type createRequest struct {
	Name         string            `json:"name,omitempty"`
	Config       map[string]string `json:"config,omitempty"`
	InitialState string            `json:"initial_state,omitempty"`
	Offsets      []ConnectorOffset `json:"initial_offsets,omitempty"`
}

// CreateConnector creates a connector (POST /connectors). initialState is
// "", RUNNING, PAUSED or STOPPED (Kafka 3.5+). initialOffsets, if any, are
// sent as "initial_offsets" (KIP-995, which connectd accepts; Apache Kafka
// Connect 3.x rejects the field with a 500). Empty fields are left out of the
// body. A connector that exists already gives a 409 *Error.
func (c *Client) CreateConnector(ctx context.Context, name string, config map[string]string, initialState string, initialOffsets []ConnectorOffset) (*ConnectorInfo, error) {
	body := createRequest{Name: name, Config: config, InitialState: initialState, Offsets: initialOffsets}
	var out ConnectorInfo
	if _, err := c.do(ctx, http.MethodPost, "/connectors", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutConfig creates or replaces a connector's config
// (PUT /connectors/{name}/config). created is true when the connector is
// new (201), false when it was updated (200).
func (c *Client) PutConfig(ctx context.Context, name string, config map[string]string) (info *ConnectorInfo, created bool, err error) {
	if config == nil {
		config = map[string]string{}
	}
	var out ConnectorInfo
	status, err := c.connectorDo(ctx, http.MethodPut, name, "/config", nil, config, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// PatchConfig changes some keys of a connector's config
// (PATCH /connectors/{name}/config, Kafka 3.8+). A nil value removes the
// key.
func (c *Client) PatchConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error) {
	if patch == nil {
		patch = map[string]*string{}
	}
	var out ConnectorInfo
	if _, err := c.connectorDo(ctx, http.MethodPatch, name, "/config", nil, patch, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes a connector (DELETE /connectors/{name}). Its offsets are
// kept by the worker.
func (c *Client) Delete(ctx context.Context, name string) error {
	_, err := c.connectorDo(ctx, http.MethodDelete, name, "", nil, nil, nil)
	return err
}

// Status returns the state of a connector and its tasks
// (GET /connectors/{name}/status).
func (c *Client) Status(ctx context.Context, name string) (*ConnectorStatus, error) {
	var out ConnectorStatus
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/status", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Tasks returns the task configs of a connector
// (GET /connectors/{name}/tasks).
func (c *Client) Tasks(ctx context.Context, name string) ([]TaskInfo, error) {
	var out []TaskInfo
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/tasks", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// TaskStatus returns the state of one task
// (GET /connectors/{name}/tasks/{task}/status).
func (c *Client) TaskStatus(ctx context.Context, name string, task int) (*TaskState, error) {
	var out TaskState
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/tasks/"+strconv.Itoa(task)+"/status", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Restart restarts a connector (POST /connectors/{name}/restart). With
// neither flag set, only the connector instance is restarted and the
// result is nil (204). Otherwise (KIP-745) the restart is asynchronous and
// the result shows the instances being restarted as RESTARTING (202).
// Only flags that are true are sent.
func (c *Client) Restart(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStatus, error) {
	q := url.Values{}
	if includeTasks {
		q.Set("includeTasks", "true")
	}
	if onlyFailed {
		q.Set("onlyFailed", "true")
	}
	var out ConnectorStatus
	status, err := c.connectorDo(ctx, http.MethodPost, name, "/restart", q, nil, &out)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNoContent {
		return nil, nil
	}
	return &out, nil
}

// RestartTask restarts one task
// (POST /connectors/{name}/tasks/{task}/restart).
func (c *Client) RestartTask(ctx context.Context, name string, task int) error {
	_, err := c.connectorDo(ctx, http.MethodPost, name, "/tasks/"+strconv.Itoa(task)+"/restart", nil, nil, nil)
	return err
}

// Pause pauses a connector and its tasks (PUT /connectors/{name}/pause).
func (c *Client) Pause(ctx context.Context, name string) error {
	_, err := c.connectorDo(ctx, http.MethodPut, name, "/pause", nil, nil, nil)
	return err
}

// Resume resumes a paused or stopped connector
// (PUT /connectors/{name}/resume).
func (c *Client) Resume(ctx context.Context, name string) error {
	_, err := c.connectorDo(ctx, http.MethodPut, name, "/resume", nil, nil, nil)
	return err
}

// Stop stops a connector and shuts down its tasks
// (PUT /connectors/{name}/stop, Kafka 3.5+). A stopped connector's
// offsets can be altered or reset.
func (c *Client) Stop(ctx context.Context, name string) error {
	_, err := c.connectorDo(ctx, http.MethodPut, name, "/stop", nil, nil, nil)
	return err
}

// Topics returns the topics a connector has used since it was created or
// its topics were last reset (GET /connectors/{name}/topics).
func (c *Client) Topics(ctx context.Context, name string) ([]string, error) {
	var out map[string]struct {
		Topics []string `json:"topics"`
	}
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/topics", nil, nil, &out); err != nil {
		return nil, err
	}
	if t, ok := out[name]; ok {
		return t.Topics, nil
	}
	if len(out) == 1 {
		for _, t := range out {
			return t.Topics, nil
		}
	}
	return nil, nil
}

// ResetTopics clears a connector's set of active topics
// (PUT /connectors/{name}/topics/reset).
func (c *Client) ResetTopics(ctx context.Context, name string) error {
	_, err := c.connectorDo(ctx, http.MethodPut, name, "/topics/reset", nil, nil, nil)
	return err
}

// Offsets returns a connector's offsets (GET /connectors/{name}/offsets,
// Kafka 3.5+).
func (c *Client) Offsets(ctx context.Context, name string) ([]ConnectorOffset, error) {
	var out ConnectorOffsets
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/offsets", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Offsets, nil
}

// OffsetsHistory returns the commits of a source connector's offsets that
// a standalone connectd worker recorded (GET
// /connectors/{name}/offsets/history, connectd only). Other workers
// answer 404: their history is their offsets topic.
func (c *Client) OffsetsHistory(ctx context.Context, name string) (*OffsetsHistory, error) {
	var out OffsetsHistory
	if _, err := c.connectorDo(ctx, http.MethodGet, name, "/offsets/history", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

type message struct {
	Message string `json:"message"`
}

// AlterOffsets alters some of a stopped connector's offsets
// (PATCH /connectors/{name}/offsets, Kafka 3.6+) and returns the worker's
// message. An entry with a nil Offset resets that partition. A connector
// that is not stopped gives a 400 *Error.
func (c *Client) AlterOffsets(ctx context.Context, name string, offsets []ConnectorOffset) (string, error) {
	if offsets == nil {
		offsets = []ConnectorOffset{}
	}
	var out message
	if _, err := c.connectorDo(ctx, http.MethodPatch, name, "/offsets", nil, ConnectorOffsets{Offsets: offsets}, &out); err != nil {
		return "", err
	}
	return out.Message, nil
}

// ResetOffsets resets all of a stopped connector's offsets
// (DELETE /connectors/{name}/offsets, Kafka 3.6+) and returns the worker's
// message.
func (c *Client) ResetOffsets(ctx context.Context, name string) (string, error) {
	var out message
	if _, err := c.connectorDo(ctx, http.MethodDelete, name, "/offsets", nil, nil, &out); err != nil {
		return "", err
	}
	return out.Message, nil
}

// Plugins lists the installed plugins (GET /connector-plugins). With
// connectorsOnly false, converters, transformations and predicates are
// included.
func (c *Client) Plugins(ctx context.Context, connectorsOnly bool) ([]PluginInfo, error) {
	q := url.Values{"connectorsOnly": {strconv.FormatBool(connectorsOnly)}}
	var out []PluginInfo
	if _, err := c.do(ctx, http.MethodGet, "/connector-plugins", q, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func pluginPath(plugin, suffix string) (string, error) {
	if plugin == "" {
		return "", errors.New("client: empty plugin name")
	}
	return "/connector-plugins/" + url.PathEscape(plugin) + suffix, nil
}

// PluginConfig returns a plugin's config keys
// (GET /connector-plugins/{plugin}/config). plugin is a class name or
// alias.
func (c *Client) PluginConfig(ctx context.Context, plugin string) ([]ConfigKeyInfo, error) {
	path, err := pluginPath(plugin, "/config")
	if err != nil {
		return nil, err
	}
	var out []ConfigKeyInfo
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Validate validates a connector config against a connector plugin
// (PUT /connector-plugins/{plugin}/config/validate). The config must hold
// connector.class. Validation errors are in the result (ErrorCount), not
// in err.
func (c *Client) Validate(ctx context.Context, plugin string, config map[string]string) (*ConfigInfos, error) {
	path, err := pluginPath(plugin, "/config/validate")
	if err != nil {
		return nil, err
	}
	if config == nil {
		config = map[string]string{}
	}
	var out ConfigInfos
	if _, err := c.do(ctx, http.MethodPut, path, nil, config, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Loggers returns the loggers with an explicit level, and root
// (GET /admin/loggers).
func (c *Client) Loggers(ctx context.Context) (map[string]LoggerLevel, error) {
	var out map[string]LoggerLevel
	if _, err := c.do(ctx, http.MethodGet, "/admin/loggers", nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func loggerPath(name string) (string, error) {
	if name == "" {
		return "", errors.New("client: empty logger name")
	}
	return "/admin/loggers/" + url.PathEscape(name), nil
}

// Logger returns one logger's level (GET /admin/loggers/{name}).
func (c *Client) Logger(ctx context.Context, name string) (*LoggerLevel, error) {
	path, err := loggerPath(name)
	if err != nil {
		return nil, err
	}
	var out LoggerLevel
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetLogger sets the level of a logger and its descendants
// (PUT /admin/loggers/{name}). scope is "" (the worker default),
// "worker" or "cluster" (Kafka 3.7+). With worker scope the result is the
// sorted list of affected loggers; with cluster scope the server answers
// 204 and the result is nil.
func (c *Client) SetLogger(ctx context.Context, name, level, scope string) ([]string, error) {
	path, err := loggerPath(name)
	if err != nil {
		return nil, err
	}
	var q url.Values
	if scope != "" {
		q = url.Values{"scope": {scope}}
	}
	var out []string
	if _, err := c.do(ctx, http.MethodPut, path, q, map[string]string{"level": level}, &out); err != nil {
		return nil, err
	}
	return out, nil
}
