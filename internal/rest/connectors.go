package rest

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/javajson"
)

func (s *server) serverInfo(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, s.h.ServerInfo())
}

func (s *server) health(w http.ResponseWriter, r *http.Request) error {
	type result struct {
		status int
		body   client.WorkerStatus
	}
	res, err := call(r.Context(), func(ctx context.Context) (result, error) {
		status, body := s.h.Health(ctx)
		return result{status, body}, nil
	})
	if err != nil {
		return err
	}
	if res.status < 200 || res.status > 599 {
		res.status = http.StatusInternalServerError
	}
	return writeJSON(w, res.status, res.body)
}

func (s *server) listConnectors(w http.ResponseWriter, r *http.Request) error {
	names, err := call(r.Context(), s.h.Connectors)
	if err != nil {
		return err
	}
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		return writeJSON(w, http.StatusOK, nonNil(names))
	}
	// One call for the whole answer: a goroutine per connector would cost
	// more than the lookups at thousands of connectors.
	body, err := call(r.Context(), func(ctx context.Context) ([]byte, error) {
		return s.expandConnectors(ctx, names, expand)
	})
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusOK, body)
	return nil
}

// expandConnectors builds {"<c>":{"status":...,"info":...}} as Kafka
// does: unknown expansions are ignored, a connector whose lookup says 404
// is left out, and both maps are Java HashMaps, written in their order.
func (s *server) expandConnectors(ctx context.Context, names, expand []string) ([]byte, error) {
	// The expansions Kafka knows, once each: a repeated one gives the
	// same document again.
	var keys []string
	for _, x := range expand {
		if (x == "status" || x == "info") && !slices.Contains(keys, x) {
			keys = append(keys, x)
		}
	}
	// Every document is encoded into one buffer, and each connector keeps
	// where its documents are in it: thousands of connectors are
	// thousands of encodings, which should cost no buffer and no map each.
	type span struct{ start, end int }
	encoded := make([]byte, 0, s.expandBytes.Load())
	spans := make([]span, 0, len(names)*len(keys)) // by connector, then by key
	kept := make([]string, 0, len(names))
	at := make(map[string]int, len(names)) // a connector's index in kept
connectors:
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		from, n := len(encoded), len(spans)
		for _, x := range keys {
			start := len(encoded)
			var err error
			if x == "status" {
				var st *client.ConnectorStatus
				if st, err = s.h.ConnectorStatus(ctx, name); err == nil {
					encoded = appendStatus(encoded, st)
				}
			} else {
				var info *client.ConnectorInfo
				if info, err = s.h.ConnectorInfo(ctx, name); err == nil {
					var doc []byte
					if doc, err = marshal(fixInfo(info)); err == nil {
						encoded = append(encoded, doc...)
					}
				}
			}
			var he *herder.Error
			if errors.As(err, &he) && he.Status == http.StatusNotFound {
				encoded, spans = encoded[:from], spans[:n]
				continue connectors
			} else if err != nil {
				return nil, err
			}
			spans = append(spans, span{start, len(encoded)})
		}
		if i, dup := at[name]; dup {
			// The last lookup of a name listed twice wins, in the place of
			// the first.
			copy(spans[i*len(keys):], spans[n:])
			spans = spans[:n]
			continue
		}
		at[name] = len(kept)
		kept = append(kept, name)
	}
	s.expandBytes.Store(int64(len(encoded)))
	keyOrder := javajson.HashMapOrder(keys)
	keyAt := make([]int, len(keyOrder)) // keyOrder[j] is keys[keyAt[j]]
	for j, k := range keyOrder {
		keyAt[j] = slices.Index(keys, k)
	}
	b := make([]byte, 0, len(encoded)+len(kept)*(48+16*len(keys))+2)
	b = append(b, '{')
	for i, name := range javajson.HashMapOrder(kept) {
		if i > 0 {
			b = append(b, ',')
		}
		b = javajson.AppendString(b, name)
		b = append(b, ':', '{')
		first := at[name] * len(keys)
		for j, k := range keyOrder {
			if j > 0 {
				b = append(b, ',')
			}
			sp := spans[first+keyAt[j]]
			b = javajson.AppendString(b, k)
			b = append(b, ':')
			b = append(b, encoded[sp.start:sp.end]...)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendStatus appends what marshal(fixStatus(st)) gives, without
// reflection: expand=status writes thousands of them.
func appendStatus(b []byte, st *client.ConnectorStatus) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, st.Name)
	b = append(b, `,"connector":`...)
	b = appendState(b, -1, st.Connector.State, st.Connector.WorkerID, st.Connector.Trace, st.Connector.Version)
	b = append(b, `,"tasks":[`...)
	for i, t := range st.Tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendState(b, t.ID, t.State, t.WorkerID, t.Trace, t.Version)
	}
	b = append(b, `],"type":`...)
	b = appendJSONString(b, st.Type)
	return append(b, '}')
}

// appendState appends a client.State (id < 0) or a client.TaskState.
func appendState(b []byte, id int, state, workerID, trace, version string) []byte {
	b = append(b, '{')
	if id >= 0 {
		b = append(b, `"id":`...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, ',')
	}
	b = append(b, `"state":`...)
	b = appendJSONString(b, state)
	b = append(b, `,"worker_id":`...)
	b = appendJSONString(b, workerID)
	if trace != "" {
		b = append(b, `,"trace":`...)
		b = appendJSONString(b, trace)
	}
	if version != "" {
		b = append(b, `,"version":`...)
		b = appendJSONString(b, version)
	}
	return append(b, '}')
}

// appendJSONString appends s as marshal does: printable ASCII other than
// '"' and '\\' as it is, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			doc, _ := marshal(s) // a string always encodes
			return append(b, doc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (s *server) createConnector(w http.ResponseWriter, r *http.Request) error {
	req, err := parseCreateRequest(requestBody(r))
	if err != nil {
		return err
	}
	config, err := checkedConfig(req.config, req.name)
	if err != nil {
		return err
	}
	info, err := orForward(r, func(ctx context.Context) (*client.ConnectorInfo, error) {
		return s.h.CreateConnector(ctx, req.name, config, req.initialState, req.initialOffsets)
	})
	if err != nil {
		return err
	}
	w.Header().Set("Location", location(r, req.name))
	return writeJSON(w, http.StatusCreated, fixInfo(info))
}

// checkedConfig runs the checks Kafka makes on a POST or PUT config
// before anything else: the name, then the connector class.
func checkedConfig(c *configMap, name string) (map[string]string, error) {
	if err := c.checkName(name); err != nil {
		return nil, err
	}
	if err := c.requireClass(); err != nil {
		return nil, err
	}
	return c.strings()
}

// location is the absolute URL of a connector, as JAX-RS resolves
// Kafka's relative Location against the request.
func location(r *http.Request, name string) string {
	u := url.URL{Scheme: "http", Host: r.Host, Path: "/connectors/" + name}
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return u.String()
}

// configBody reads and binds a flat config map body.
func configBody(r *http.Request) (*configMap, error) {
	return bindConfigBody(requestBody(r))
}

func bindConfigBody(body []byte) (*configMap, error) {
	raw, err := parseJSON(body)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, herder.BadRequest("Request body is missing: expected a JSON object of connector configuration strings")
	}
	return bindConfig(raw, "request body")
}

func (s *server) getConnector(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	info, err := call(r.Context(), func(ctx context.Context) (*client.ConnectorInfo, error) {
		return s.h.ConnectorInfo(ctx, name)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fixInfo(info))
}

func (s *server) getConfig(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	config, err := call(r.Context(), func(ctx context.Context) (map[string]string, error) {
		return s.h.ConnectorConfig(ctx, name)
	})
	if err != nil {
		return err
	}
	if config == nil {
		config = map[string]string{}
	}
	return writeJSON(w, http.StatusOK, config)
}

func (s *server) putConfig(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	c, err := configBody(r)
	if err != nil {
		return err
	}
	config, err := checkedConfig(c, name)
	if err != nil {
		return err
	}
	type result struct {
		info    *client.ConnectorInfo
		created bool
	}
	res, err := call(r.Context(), func(ctx context.Context) (result, error) {
		info, created, err := s.h.PutConnectorConfig(ctx, name, config)
		return result{info, created}, err
	})
	if target := requestTarget(err); target != nil {
		var status int
		status, err = forward(r, target.URL, &res.info)
		res.created = status == http.StatusCreated
	}
	if err != nil {
		return err
	}
	if !res.created {
		return writeJSON(w, http.StatusOK, fixInfo(res.info))
	}
	w.Header().Set("Location", location(r, name))
	return writeJSON(w, http.StatusCreated, fixInfo(res.info))
}

func (s *server) patchConfig(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	patch, err := bindPatch(requestBody(r), name)
	if err != nil {
		return err
	}
	info, err := orForward(r, func(ctx context.Context) (*client.ConnectorInfo, error) {
		return s.h.PatchConnectorConfig(ctx, name, patch)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fixInfo(info))
}

// bindPatch binds the body of a PATCH of connector name's config: a nil
// value removes its key.
func bindPatch(body []byte, name string) (map[string]*string, error) {
	c, err := bindConfigBody(body)
	if err != nil {
		return nil, err
	}
	if err := c.checkPatchName(name); err != nil {
		return nil, err
	}
	return c.vals, nil
}

func (s *server) deleteConnector(w http.ResponseWriter, r *http.Request) error {
	return s.noContent(w, r, http.StatusNoContent, s.h.DeleteConnector)
}

// noContent calls op on the connector named in the path and answers
// status with no body.
func (s *server) noContent(w http.ResponseWriter, r *http.Request, status int, op func(context.Context, string) error) error {
	name := r.PathValue("name")
	if err := doOrForward(r, func(ctx context.Context) error { return op(ctx, name) }); err != nil {
		return err
	}
	w.WriteHeader(status)
	return nil
}

func (s *server) getStatus(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	st, err := call(r.Context(), func(ctx context.Context) (*client.ConnectorStatus, error) {
		return s.h.ConnectorStatus(ctx, name)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fixStatus(st))
}

func (s *server) getTasks(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	tasks, err := call(r.Context(), func(ctx context.Context) ([]client.TaskInfo, error) {
		return s.h.TaskConfigs(ctx, name)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(tasks))
}

// taskParam is the {task} path value. Like a JAX-RS int parameter, a
// value that is not an int gives a plain 404.
func taskParam(r *http.Request) (int, error) {
	t, err := strconv.ParseInt(r.PathValue("task"), 10, 32)
	if err != nil {
		return 0, herder.NotFound("HTTP 404 Not Found")
	}
	return int(t), nil
}

func (s *server) getTaskStatus(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	task, err := taskParam(r)
	if err != nil {
		return err
	}
	st, err := call(r.Context(), func(ctx context.Context) (*client.TaskState, error) {
		return s.h.TaskStatus(ctx, name, task)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

func (s *server) restartTask(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	task, err := taskParam(r)
	if err != nil {
		return err
	}
	if err := doOrForward(r, func(ctx context.Context) error { return s.h.RestartTask(ctx, name, task) }); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// queryBool reads a boolean query parameter as JAX-RS does: absent or
// empty gives def, otherwise only "true" (any case, as Java's
// Boolean.valueOf) is true. A repeated parameter counts its first value.
func queryBool(r *http.Request, key string, def bool) bool {
	vals, ok := r.URL.Query()[key]
	if !ok || vals[0] == "" {
		return def
	}
	return strings.EqualFold(vals[0], "true")
}

func (s *server) restartConnector(w http.ResponseWriter, r *http.Request) error {
	includeTasks := queryBool(r, "includeTasks", false)
	onlyFailed := queryBool(r, "onlyFailed", false)
	if !includeTasks && !onlyFailed {
		return s.noContent(w, r, http.StatusNoContent, s.h.RestartConnector)
	}
	name := r.PathValue("name")
	st, err := orForward(r, func(ctx context.Context) (*client.ConnectorStatus, error) {
		return s.h.RestartConnectorAndTasks(ctx, name, includeTasks, onlyFailed)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, fixStatus(st))
}

func (s *server) pause(w http.ResponseWriter, r *http.Request) error {
	return s.noContent(w, r, http.StatusAccepted, s.h.PauseConnector)
}

func (s *server) resume(w http.ResponseWriter, r *http.Request) error {
	return s.noContent(w, r, http.StatusAccepted, s.h.ResumeConnector)
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) error {
	return s.noContent(w, r, http.StatusNoContent, s.h.StopConnector)
}

func (s *server) getTopics(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	topics, err := call(r.Context(), func(ctx context.Context) ([]string, error) {
		return s.h.ConnectorTopics(ctx, name)
	})
	if err != nil {
		return err
	}
	type activeTopics struct {
		Topics []string `json:"topics"`
	}
	return writeJSON(w, http.StatusOK, map[string]activeTopics{name: {nonNil(topics)}})
}

func (s *server) resetTopics(w http.ResponseWriter, r *http.Request) error {
	return s.noContent(w, r, http.StatusAccepted, s.h.ResetConnectorTopics)
}

// getOffsetsHistory answers connectd's GET
// /connectors/{name}/offsets/history (not Kafka's API).
func (s *server) getOffsetsHistory(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	h, err := call(r.Context(), func(ctx context.Context) (*client.OffsetsHistory, error) {
		return s.h.OffsetsHistory(ctx, name)
	})
	if err != nil {
		return err
	}
	if h.Commits == nil {
		h.Commits = []client.OffsetCommit{}
	}
	return writeJSON(w, http.StatusOK, h)
}

func (s *server) getOffsets(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	offsets, err := call(r.Context(), func(ctx context.Context) (*client.ConnectorOffsets, error) {
		return s.h.ConnectorOffsets(ctx, name)
	})
	if err != nil {
		return err
	}
	body, err := encodeOffsets(offsets)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusOK, body)
	return nil
}

type message struct {
	Message string `json:"message"`
}

func (s *server) alterOffsets(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	offsets, err := ParseOffsetsRequest(requestBody(r))
	if err != nil {
		return err
	}
	msg, err := orForward(r, func(ctx context.Context) (message, error) {
		msg, err := s.h.AlterConnectorOffsets(ctx, name, offsets)
		return message{msg}, err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, msg)
}

func (s *server) resetOffsets(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	msg, err := orForward(r, func(ctx context.Context) (message, error) {
		msg, err := s.h.ResetConnectorOffsets(ctx, name)
		return message{msg}, err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, msg)
}

// Kafka never writes null for these lists and maps.

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func fixInfo(info *client.ConnectorInfo) *client.ConnectorInfo {
	if info == nil {
		return nil
	}
	c := *info
	if c.Config == nil {
		c.Config = map[string]string{}
	}
	c.Tasks = nonNil(c.Tasks)
	return &c
}

func fixStatus(st *client.ConnectorStatus) *client.ConnectorStatus {
	if st == nil {
		return nil
	}
	c := *st
	c.Tasks = nonNil(c.Tasks)
	return &c
}
