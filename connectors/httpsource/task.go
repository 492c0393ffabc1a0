package httpsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
)

// maxIdle is the longest Poll blocks while nothing is due, so that the
// runtime commits offsets and notices a stop between polls.
const maxIdle = time.Second

// excerptLen is how much of a response body error messages quote. A
// task's error becomes its status trace, which anyone who reaches the
// REST API reads: a body from an internal endpoint must not be shown
// beyond what identifies the error.
const excerptLen = 100

// maxRedirects is how many redirects a request follows, as Go's and
// Java's clients do by default.
const maxRedirects = 10

// cursor is a position in the endpoint: the id of the last record emitted
// (nil before the first) and its timestamp text ("" when none).
type cursor struct {
	id any // int64 or string
	ts string
}

// request is one HTTP request of a poll, kept across its retries.
type request struct {
	url  string
	body string
}

// Task polls the endpoint. Each call of Poll sends at most one request
// (one page) and returns that page's new records; see the package
// documentation for the poll cycle.
type Task struct {
	cfg       *config
	client    *http.Client
	partition map[string]any

	cur      cursor // last record emitted
	cycleCur cursor // cur when the current poll cycle started
	inCycle  bool
	page     int
	nextURL  string // the next-page link to follow, "" to build the URL
	prevPage []byte // the previous page's records, to detect an ignored page param

	pending *request // the request being tried, nil between requests
	failed  int      // failed attempts of pending
	due     time.Time

	maxIdle time.Duration
	log     *slog.Logger
}

var _ connect.SourceTask = (*Task)(nil)

// NewTask returns a task ready for Start.
func NewTask() *Task { return &Task{maxIdle: maxIdle} }

// Version implements connect.SourceTask.
func (t *Task) Version() string { return Version }

// Start parses the config and reads the stored offset of the endpoint's
// partition: polling continues after its last_id. Without an offset it
// starts after http.cursor.initial, or from nothing.
func (t *Task) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	t.log = loggerOf(ctx)
	cfg, err := parseConfig(props)
	if err != nil {
		return err
	}
	if t.maxIdle == 0 {
		t.maxIdle = maxIdle
	}
	t.cfg = cfg
	t.partition = map[string]any{EndpointField: cfg.endpoint}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.client = &http.Client{Transport: transport, CheckRedirect: t.checkRedirect}
	t.cur, t.inCycle, t.pending, t.failed, t.due = cursor{}, false, nil, 0, time.Time{}
	if ctx != nil {
		off, err := ctx.Offset(t.partition)
		if err != nil {
			return err
		}
		if off != nil {
			cur, err := offsetCursor(off)
			if err != nil {
				return fmt.Errorf("the stored offset of endpoint %s is invalid (%w); alter or reset it through the offsets API", cfg.endpoint, err)
			}
			t.cur = cur
		}
	}
	if t.cur.id == nil && cfg.initial != "" {
		t.cur.id = parseID(cfg.initial)
	}
	if t.cur.id != nil {
		t.log.Info("HTTP source resuming after the stored cursor", "endpoint", cfg.endpoint, "last_id", t.cur.id, "timestamp", t.cur.ts)
	}
	return nil
}

// parseID reads an id written as text: integer text is a numeric id.
func parseID(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	return s
}

// Stop closes idle connections.
func (t *Task) Stop() error {
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
	return nil
}

// Poll sends the next request when it is due and returns the new records
// of its page, sorted by id. Until then it waits, at most about a second,
// and returns nothing; it returns nothing at once when ctx is done. A
// request that failed with a retriable error is tried again on a later
// Poll after its backoff; one that failed for good fails the task.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if !t.waitDue(ctx) {
		return nil, nil
	}
	if t.pending == nil {
		if !t.inCycle {
			t.inCycle, t.cycleCur, t.page, t.nextURL, t.prevPage = true, t.cur, t.cfg.pageStart, "", nil
		}
		t.pending = t.buildRequest()
	}
	body, err := t.send(ctx, t.pending)
	if err != nil && ctx.Err() != nil {
		return nil, nil // stopping: the next task sends the request again
	}
	if err != nil {
		var re *retriableError
		if !errors.As(err, &re) {
			return nil, err
		}
		if t.cfg.retries >= 0 && t.failed >= t.cfg.retries {
			return nil, fmt.Errorf("%w (gave up after %d retries)", re.err, t.failed)
		}
		delay := t.backoff(re.retryAfter)
		t.failed++
		t.due = time.Now().Add(delay)
		t.log.Warn("HTTP source request failed; retrying", "endpoint", t.cfg.endpoint, "error", re.err, "retry", t.failed, "backoff", delay)
		return nil, nil
	}
	req := t.pending
	t.pending, t.failed = nil, 0
	recs, more, err := t.process(req, body)
	if err != nil {
		return nil, err
	}
	if more {
		t.due = time.Now()
	} else {
		t.inCycle = false
		t.due = time.Now().Add(t.cfg.pollInterval)
	}
	return recs, nil
}

// waitDue waits until the next request is due, for at most maxIdle, and
// reports whether it is.
func (t *Task) waitDue(ctx context.Context) bool {
	wait := time.Until(t.due)
	if wait <= 0 {
		return ctx.Err() == nil
	}
	due := wait <= t.maxIdle
	timer := time.NewTimer(min(wait, t.maxIdle))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return due
	}
}

// backoff is the wait before the next attempt of the pending request.
func (t *Task) backoff(retryAfter time.Duration) time.Duration {
	c := t.cfg
	if retryAfter > 0 {
		return min(retryAfter, c.backoffMax)
	}
	d := c.backoff
	for i := 0; i < t.failed && d < c.backoffMax; i++ {
		d *= 2
	}
	return min(d, c.backoffMax)
}

// buildRequest makes the next request of the current poll cycle. With
// page numbers or next-page links the cursor stays the cycle's first;
// otherwise it is the last record emitted, so that the cursor pages.
func (t *Task) buildRequest() *request {
	c := t.cfg
	cur := t.cur
	if c.pageParam != "" || c.nextPointer != nil {
		cur = t.cycleCur
	}
	id := idString(cur.id)
	req := &request{body: fillBody(c.body, id, cur.ts)}
	if t.nextURL != "" {
		req.url = t.nextURL
		return req
	}
	raw := c.url.String()
	if c.urlTemplate != "" {
		raw = fillTemplate(c.urlTemplate, id, cur.ts)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Checked by the config; the escaped values cannot break it.
		req.url = raw
		return req
	}
	q := url.Values{}
	if c.cursorParam != "" && cur.id != nil {
		q.Set(c.cursorParam, id)
	}
	if c.tsParam != "" && cur.ts != "" {
		q.Set(c.tsParam, cur.ts)
	}
	if c.pageParam != "" {
		q.Set(c.pageParam, strconv.Itoa(t.page))
	}
	if len(q) > 0 {
		all := u.Query()
		for k, v := range q {
			all[k] = v
		}
		u.RawQuery = all.Encode()
	}
	req.url = u.String()
	return req
}

// retriableError is a failure worth trying again: a 5xx or 429 status, a
// timeout or a connection error.
type retriableError struct {
	err        error
	retryAfter time.Duration
}

func (e *retriableError) Error() string { return e.err.Error() }
func (e *retriableError) Unwrap() error { return e.err }

// send makes one attempt of a request and returns the body of a 2xx
// response.
func (t *Task) send(ctx context.Context, r *request) ([]byte, error) {
	c := t.cfg
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if c.method == http.MethodPost {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(actx, c.method, r.url, body)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, passwords included
		}
		return nil, fmt.Errorf("building the request %s %s: %w", c.method, connect.RedactURL(r.url), err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "connectd-http-source/"+Version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	seen := map[string]bool{}
	for _, h := range c.headers {
		name := http.CanonicalHeaderKey(h[0])
		if seen[name] {
			req.Header.Add(name, h[1])
		} else {
			req.Header.Set(name, h[1])
			seen[name] = true
		}
	}
	switch c.authType {
	case AuthBasic:
		req.SetBasicAuth(c.user, c.password)
	case AuthBearer:
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	what := c.method + " " + connect.RedactURL(r.url)
	resp, err := t.client.Do(req)
	var re *redirectError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("%s: %w", what, re)
	}
	if err == nil {
		defer resp.Body.Close()
		var data []byte
		if data, err = io.ReadAll(resp.Body); err == nil {
			switch code := resp.StatusCode; {
			case code >= 200 && code < 300:
				return data, nil
			case code == http.StatusTooManyRequests || code >= 500:
				return nil, &retriableError{
					err:        fmt.Errorf("%s returned HTTP status %s: %s", what, resp.Status, excerpt(data)),
					retryAfter: retryAfter(resp.Header.Get("Retry-After")),
				}
			default:
				return nil, fmt.Errorf("%s failed with HTTP status %s: %s", what, resp.Status, excerpt(data))
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return nil, &retriableError{err: fmt.Errorf("%s timed out after %v", what, c.timeout)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the method and URL
	}
	return nil, &retriableError{err: fmt.Errorf("%s failed: %w", what, err)}
}

// redirectError is a redirect the task refuses to follow.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// checkRedirect follows redirects within the origin of the first request
// only while the request carries credentials: Go's client would send the
// configured headers, and an Authorization header to another port of the
// same host, to wherever a Location points. Without credentials it
// follows redirects as Go's client does.
func (t *Task) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &redirectError{fmt.Sprintf("stopped after %d redirects", maxRedirects)}
	}
	first := via[0]
	keys := t.cfg.credentialKeys(first.URL)
	if len(keys) == 0 || origin(req.URL) == origin(first.URL) {
		return nil
	}
	return &redirectError{fmt.Sprintf("the redirect to %s leads to another host (or scheme or port), and the request carries "+
		"credentials (%s) that must not be sent there; set %s to the URL to be polled if it is to be trusted",
		connect.RedactURL(req.URL.String()), strings.Join(keys, ", "), URLConfig)}
}

// credentialKeys names the settings that put credentials in the requests
// to u. Any configured header counts: the task cannot tell an API key
// from a harmless header.
func (c *config) credentialKeys(u *url.URL) []string {
	var keys []string
	if c.authType == AuthBasic || c.authType == AuthBearer {
		keys = append(keys, AuthTypeConfig)
	}
	if len(c.headers) > 0 {
		keys = append(keys, HeadersConfig)
	}
	if u.User != nil {
		keys = append(keys, "the user info of "+URLConfig)
	}
	return keys
}

// origin is a URL's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, 1<<30)) * time.Second
	}
	if at, err := http.ParseTime(h); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

// excerpt is the start of a response body for messages, quoted as a Go
// string so that control characters and line breaks cannot forge lines
// in a trace or a log.
func excerpt(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "(empty body)"
	}
	if len(b) <= excerptLen {
		return strconv.Quote(string(b))
	}
	cut := excerptLen
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes in all)", strconv.Quote(string(b[:cut])), len(b))
}

// entry is one record of a page.
type entry struct {
	id    any
	ts    string
	value any
}

// process turns a page into records and reports whether the poll cycle
// goes on with another request.
func (t *Task) process(req *request, body []byte) ([]*connect.SourceRecord, bool, error) {
	c := t.cfg
	what := c.method + " " + connect.RedactURL(req.url)
	var doc any
	if len(bytes.TrimSpace(body)) > 0 { // e.g. 204 No Content: an empty page
		var err error
		if doc, err = decodeJSON(body); err != nil {
			return nil, false, fmt.Errorf("the response of %s is not valid JSON (%v): %s", what, err, excerpt(body))
		}
	}
	var items []any
	if v, ok := c.records.lookup(doc); ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Errorf("the response of %s holds a %s at %s %q, not an array of records: %s",
				what, jsonKind(v), RecordsPointerConfig, c.records.String(), excerpt(body))
		}
		items = arr
	}
	entries := make([]entry, 0, len(items))
	for i, it := range items {
		e, err := t.entry(it)
		if err != nil {
			return nil, false, fmt.Errorf("record %d of the response of %s: %w", i, what, err)
		}
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return compareIDs(entries[i].id, entries[j].id) < 0 })
	var recs []*connect.SourceRecord
	for _, e := range entries {
		if t.cur.id != nil && compareIDs(e.id, t.cur.id) <= 0 {
			continue // at or before the cursor: already emitted
		}
		off := map[string]any{LastIDField: e.id}
		if e.ts != "" {
			off[TimestampField] = e.ts
		}
		recs = append(recs, &connect.SourceRecord{
			SourcePartition: t.partition,
			SourceOffset:    off,
			Topic:           c.topic,
			KeySchema:       connect.StringSchema,
			Key:             idString(e.id),
			Value:           e.value,
		})
		t.cur = cursor{id: e.id, ts: e.ts}
	}
	more, err := t.more(req, doc, items, len(recs))
	return recs, more, err
}

// entry reads one record of a page.
func (t *Task) entry(it any) (entry, error) {
	c := t.cfg
	if _, ok := it.(map[string]any); !ok {
		return entry{}, fmt.Errorf("is a %s, not a JSON object", jsonKind(it))
	}
	v, ok := c.idField.lookup(it)
	if !ok {
		return entry{}, fmt.Errorf("has no id field %s (%s)", describeField(c.idField), CursorIDFieldConfig)
	}
	id, err := cursorID(v)
	if err != nil {
		return entry{}, fmt.Errorf("its id field %s %v", describeField(c.idField), err)
	}
	e := entry{id: id, value: connectValue(it)}
	if c.tsField != nil {
		v, _ := c.tsField.lookup(it)
		if e.ts, err = timestampText(v); err != nil {
			return entry{}, fmt.Errorf("its timestamp field %s %v", describeField(c.tsField), err)
		}
	}
	return e, nil
}

func describeField(p pointer) string {
	if len(p) == 1 && !strings.HasPrefix(p[0], "/") {
		return strconv.Quote(p[0])
	}
	return strconv.Quote(p.String())
}

// more decides whether the poll cycle requests another page now.
func (t *Task) more(req *request, doc any, items []any, emitted int) (bool, error) {
	c := t.cfg
	switch {
	case c.nextPointer != nil:
		v, _ := c.nextPointer.lookup(doc)
		link, _ := v.(string)
		if link == "" {
			return false, nil
		}
		base, err := url.Parse(req.url)
		if err != nil {
			return false, err
		}
		ref, err := url.Parse(link)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // its text repeats the whole link
			}
			return false, fmt.Errorf("the next-page link %s of the response of %s is not a URL: %v", excerpt([]byte(link)), connect.RedactURL(req.url), err)
		}
		nextURL := base.ResolveReference(ref)
		next := nextURL.String()
		if next == req.url {
			return false, nil
		}
		// A response that could send the credentials anywhere is a
		// redirect by other means.
		if keys := c.credentialKeys(base); len(keys) > 0 && origin(nextURL) != origin(base) {
			return false, fmt.Errorf("the next-page link %s of the response of %s leads to another host (or scheme or port), "+
				"and the requests carry credentials (%s) that must not be sent there", excerpt([]byte(connect.RedactURL(next))), connect.RedactURL(req.url), strings.Join(keys, ", "))
		}
		t.nextURL = next
		return true, nil
	case c.pageParam != "":
		if len(items) == 0 {
			return false, nil
		}
		page, err := json.Marshal(items)
		if err != nil {
			return false, err
		}
		if bytes.Equal(page, t.prevPage) {
			t.log.Warn("HTTP source got the same page twice; does the endpoint ignore the page parameter?",
				"endpoint", c.endpoint, PageParamConfig, c.pageParam, "page", t.page)
			return false, nil
		}
		t.prevPage = page
		t.page++
		return true, nil
	case c.cursorInRequest():
		// Cursor paging: ask again with the new cursor while pages bring
		// new records.
		return emitted > 0, nil
	}
	return false, nil
}

// cursorInRequest reports whether requests carry the cursor.
func (c *config) cursorInRequest() bool {
	has := func(s string) bool {
		return strings.Contains(s, lastIDPlaceholder) || strings.Contains(s, timestampPlaceholder)
	}
	return c.cursorParam != "" || c.tsParam != "" || has(c.urlTemplate) || has(c.body)
}
