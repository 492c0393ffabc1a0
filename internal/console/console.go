// Package console is connectd's web console: a page, served at /ui by the
// worker itself (on the REST listeners, behind their screening) or by
// `connectctl console` for any Kafka Connect worker, that shows connectors
// with their status, tasks, config and offsets, creates them from a
// plugin's config definition validated as it is typed, changes their
// offsets with each step of the safe flow visible (stop, diff, apply,
// verify, resume, undo), and shows and resets consumer groups.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: no
// build step and no network beyond the worker. It calls the Kafka Connect
// REST API of its origin for connectors; consumer groups need Kafka, which
// the page reaches through this package's /ui/api/groups endpoints.
package console

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/groupoffsets"
)

//go:embed assets
var assets embed.FS

// Options configure the console.
type Options struct {
	// Admin opens a client of the Kafka cluster whose consumer groups the
	// console shows, and the function that closes it; nil when Kafka is
	// not known (the groups page says so).
	Admin func() (*kadm.Client, func(), error)
	// Target names the worker the page manages, for its title; "" is the
	// page's own origin.
	Target string
}

// New returns the console's handler, for the paths under /ui.
func New(opts Options) http.Handler {
	c := &console{opts: opts}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is part of the build
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(static))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusMovedPermanently)
	})
	mux.Handle("GET /ui/", secured(files))
	mux.HandleFunc("GET /ui/api/info", c.info)
	mux.HandleFunc("GET /ui/api/groups", c.groups)
	mux.HandleFunc("GET /ui/api/groups/{group}", c.group)
	mux.HandleFunc("POST /ui/api/groups/{group}/reset", c.reset)
	unknown := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no console endpoint %s %s", r.Method, r.URL.Path)
	}
	mux.HandleFunc("GET /ui/api/", unknown)
	mux.HandleFunc("POST /ui/api/", unknown)
	return mux
}

// secured keeps the page to its origin: nothing loads from elsewhere, and
// no other site frames it.
func secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

type console struct {
	opts Options
}

// requestTimeout bounds each console request's calls to Kafka.
const requestTimeout = 30 * time.Second

func (c *console) info(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"target": c.opts.Target, "groups": c.opts.Admin != nil})
}

// admin opens a Kafka admin client, with the context of the request's
// calls to Kafka and the function that ends both, or answers why there is
// none.
func (c *console) admin(w http.ResponseWriter, r *http.Request) (*kadm.Client, context.Context, func(), bool) {
	if c.opts.Admin == nil {
		writeError(w, http.StatusNotFound, "this console does not know the Kafka cluster: consumer groups cannot be shown")
		return nil, nil, nil, false
	}
	adm, closeAdm, err := c.opts.Admin()
	if err != nil {
		writeError(w, http.StatusBadGateway, "connecting to Kafka: %v", err)
		return nil, nil, nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	return adm, ctx, func() { cancel(); closeAdm() }, true
}

// groupRow is a consumer group in the list.
type groupRow struct {
	Group   string `json:"group"`
	State   string `json:"state"`
	Members int    `json:"members"`
	Lag     *int64 `json:"lag"`
}

func (c *console) groups(w http.ResponseWriter, r *http.Request) {
	adm, ctx, done, ok := c.admin(w, r)
	if !ok {
		return
	}
	defer done()
	names, listed, err := groupoffsets.ConsumerGroups(ctx, adm)
	if err != nil {
		writeError(w, http.StatusBadGateway, "%v", err)
		return
	}
	out := []groupRow{}
	if len(names) > 0 {
		lags, err := adm.Lag(ctx, names...)
		if err != nil && len(lags) == 0 {
			writeError(w, http.StatusBadGateway, "reading the groups' lag: %v", err)
			return
		}
		for _, name := range names {
			row := groupRow{Group: name, State: listed[name].State}
			if l, ok := lags[name]; ok && l.Error() == nil {
				total := l.Lag.Total()
				row.State, row.Members, row.Lag = l.State, len(l.Members), &total
			}
			out = append(out, row)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// partitionRow is one partition of a group.
type partitionRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   *int64 `json:"current_offset"`
	LogEnd    *int64 `json:"log_end_offset"`
	Lag       *int64 `json:"lag"`
	Consumer  string `json:"consumer_id"`
	Client    string `json:"client_id"`
}

func (c *console) group(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("group")
	adm, ctx, done, ok := c.admin(w, r)
	if !ok {
		return
	}
	defer done()
	lags, err := adm.Lag(ctx, name)
	l, found := lags[name]
	switch {
	case !found && err != nil:
		writeError(w, http.StatusBadGateway, "describing group %s: %v", name, err)
		return
	case !found || groupoffsets.Missing(l):
		writeError(w, http.StatusNotFound, "Consumer group '%s' does not exist.", name)
		return
	case l.Error() != nil:
		writeError(w, http.StatusBadGateway, "describing group %s: %v", name, l.Error())
		return
	}
	parts := []partitionRow{}
	for _, m := range l.Lag.Sorted() {
		p := partitionRow{Topic: m.Topic, Partition: m.Partition}
		if m.Commit.At >= 0 {
			p.Current = &m.Commit.At
			if m.Err == nil && m.Lag >= 0 {
				p.Lag = &m.Lag
			}
		}
		if m.End.Err == nil {
			p.LogEnd = &m.End.Offset
		}
		if m.Member != nil {
			p.Consumer, p.Client = m.Member.MemberID, m.Member.ClientID
		}
		parts = append(parts, p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"group": name, "state": l.State, "members": len(l.Members), "partitions": parts})
}

// resetRequest is the body of POST /ui/api/groups/{group}/reset: which
// partitions (a topic, or every partition with an offset), where to, and
// whether only to show the change.
type resetRequest struct {
	Topic    string `json:"topic"`
	To       string `json:"to"` // earliest, latest, offset, shift, datetime, current
	Offset   *int64 `json:"offset"`
	Shift    *int64 `json:"shift"`
	Datetime string `json:"datetime"`
	DryRun   bool   `json:"dry_run"`
}

// change is one partition of a reset's answer.
type change struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    *int64 `json:"before"`
	After     int64  `json:"after"`
}

func (c *console) reset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("group")
	var req resetRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "the reset request: %v", err)
		return
	}
	var at time.Time
	switch req.To {
	case "earliest", "latest", "current":
	case "offset":
		if req.Offset == nil {
			writeError(w, http.StatusBadRequest, `"to":"offset" needs "offset"`)
			return
		}
	case "shift":
		if req.Shift == nil {
			writeError(w, http.StatusBadRequest, `"to":"shift" needs "shift"`)
			return
		}
	case "datetime":
		t, err := groupoffsets.ParseDatetime(req.Datetime)
		if err != nil {
			writeError(w, http.StatusBadRequest, "%s", strings.Replace(err.Error(), "--to-datetime", "datetime", 1))
			return
		}
		at = t
	default:
		writeError(w, http.StatusBadRequest, `"to" is %q: want earliest, latest, offset, shift, datetime or current`, req.To)
		return
	}
	adm, ctx, done, ok := c.admin(w, r)
	if !ok {
		return
	}
	defer done()
	state, members, err := groupoffsets.Describe(ctx, adm, name)
	if err != nil {
		writeError(w, http.StatusBadGateway, "%v", err)
		return
	}
	before, err := groupoffsets.Fetch(ctx, adm, name)
	if err != nil {
		writeError(w, http.StatusBadGateway, "%v", err)
		return
	}
	var parts []groupoffsets.TP
	if req.Topic != "" {
		if parts, err = groupoffsets.PartitionsOf(ctx, adm, []groupoffsets.TopicSpec{{Topic: req.Topic}}); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	} else {
		if len(before) == 0 {
			writeError(w, http.StatusBadRequest, "group %s has no committed offsets: name a topic", name)
			return
		}
		parts = slices.SortedFunc(maps.Keys(before), groupoffsets.CompareTP)
	}
	var warnings []string
	res := groupoffsets.Resolver{Adm: adm, Warn: func(s string) { warnings = append(warnings, s) }}
	var moved groupoffsets.State
	switch req.To {
	case "earliest":
		moved, err = res.Start(ctx, parts)
	case "latest":
		moved, err = res.End(ctx, parts)
	case "current":
		moved, err = res.Current(ctx, parts, before)
	case "offset":
		want := groupoffsets.State{}
		for _, tp := range parts {
			want[tp] = *req.Offset
		}
		moved, err = res.Clamp(ctx, want)
	case "shift":
		moved, err = res.Shift(ctx, parts, before, *req.Shift)
	case "datetime":
		moved, err = res.AtTime(ctx, parts, at)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	after := maps.Clone(before)
	maps.Copy(after, moved)
	diff, commits, _ := groupoffsets.Diff(before, after)
	changes := []change{}
	for _, d := range diff {
		ch := change{Topic: d.TP.Topic, Partition: d.TP.Partition, After: d.After}
		if d.HadBefore {
			ch.Before = &d.Before
		}
		changes = append(changes, ch)
	}
	out := map[string]any{"group": name, "state": state, "members": len(members), "changes": changes,
		"warnings": append([]string{}, warnings...), "applied": false, "verified": false,
		"before": before.List(), "after": after.List()}
	if req.DryRun || len(commits) == 0 {
		writeJSON(w, http.StatusOK, out)
		return
	}
	if groupoffsets.Active(state) {
		writeError(w, http.StatusConflict, "%v: stop the group's consumers first", groupoffsets.InactiveError(name, state, len(members)))
		return
	}
	if err := groupoffsets.Apply(ctx, adm, name, commits, nil); err != nil {
		writeError(w, http.StatusConflict, "%v", err)
		return
	}
	out["applied"] = true
	differ, err := groupoffsets.Verify(ctx, adm, name, after, 10*time.Second)
	if err != nil {
		writeError(w, http.StatusBadGateway, "the offsets were changed, but reading them back failed: %v", err)
		return
	}
	out["verified"] = len(differ) == 0
	writeJSON(w, http.StatusOK, out)
}

// writeJSON answers v.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the answer: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// writeError answers Kafka Connect's error body.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	b, _ := json.Marshal(map[string]any{"error_code": status, "message": fmt.Sprintf(format, args...)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
