package rest

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/internal/herder"
)

// Cross-origin requests. A browser names the page's origin on every
// cross-origin request but a plain GET, including the "simple" POSTs it
// sends without asking first. With no access.control.allow.origin, Kafka
// Connect would run them and only hide the answer; connectd refuses them.
// With it, the origins it allows get Jetty CrossOriginFilter's answers
// (preflights, Access-Control-Allow-* headers) for the methods
// access.control.allow.methods lists; other origins and methods are
// refused, where Jetty would run the request without the headers.

// cors is the configured cross-origin policy; nil allows no other origin.
type cors struct {
	origins []*regexp.Regexp
	any     bool
	methods []string
}

// CrossOriginFilter's defaults, which Kafka keeps.
const (
	corsAllowedHeaders = "X-Requested-With,Content-Type,Accept,Origin"
	corsMaxAge         = 1800
)

func newCORS(origins, methods []string) *cors {
	c := &cors{methods: methods}
	for _, o := range origins {
		if o == "*" {
			c.any = true
			continue
		}
		// CrossOriginFilter's wildcards: * stands for any run of
		// characters.
		parts := strings.Split(o, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		c.origins = append(c.origins, regexp.MustCompile("^(?i:"+strings.Join(parts, ".*")+")$"))
	}
	return c
}

// self is the origin of a page served by this worker.
func self(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (c *cors) allows(origin string) bool {
	if c == nil {
		return false
	}
	if c.any {
		return true
	}
	return slices.ContainsFunc(c.origins, func(re *regexp.Regexp) bool { return re.MatchString(origin) })
}

func (c *cors) allowsMethod(m string) bool {
	return c != nil && slices.Contains(c.methods, strings.ToUpper(m))
}

// preflight answers a browser's OPTIONS preflight from an allowed origin,
// and reports whether it did.
func (c *cors) preflight(w http.ResponseWriter, r *http.Request) bool {
	origin, method := r.Header.Get("Origin"), r.Header.Get("Access-Control-Request-Method")
	if r.Method != http.MethodOptions || origin == "" || method == "" || !c.allows(origin) {
		return false
	}
	if !c.allowsMethod(method) {
		w.WriteHeader(http.StatusForbidden)
		return true
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", strings.Join(c.methods, ","))
	h.Set("Access-Control-Allow-Headers", corsAllowedHeaders)
	h.Set("Access-Control-Max-Age", strconv.Itoa(corsMaxAge))
	h.Add("Vary", "Origin")
	w.WriteHeader(http.StatusOK)
	return true
}

// refuse refuses a request from another origin than this worker's that
// the policy does not allow; an allowed one gets CORS's headers.
func (c *cors) refuse(w http.ResponseWriter, r *http.Request) error {
	own := self(r)
	for _, origin := range r.Header.Values("Origin") {
		if strings.EqualFold(origin, own) {
			continue
		}
		if !c.allows(origin) {
			return &herder.Error{Status: http.StatusForbidden, Message: fmt.Sprintf(
				"Cross-origin request refused: origin %s is not this worker's (%s), and access.control.allow.origin does not allow it", origin, own)}
		}
		if !c.allowsMethod(r.Method) {
			return &herder.Error{Status: http.StatusForbidden, Message: fmt.Sprintf(
				"Cross-origin request refused: method %s is not in access.control.allow.methods (%s)", r.Method, strings.Join(c.methods, ","))}
		}
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
		w.Header().Add("Vary", "Origin")
	}
	return nil
}

// HeaderRule is a response header rule (response.http.headers.config):
// Jetty HeaderFilter's set, add, setDate or addDate (Value milliseconds
// from now for the Date actions).
type HeaderRule struct {
	Action, Name, Value string
}

func setHeaders(h http.Header, rules []HeaderRule) {
	for _, r := range rules {
		v := r.Value
		if strings.HasSuffix(r.Action, "Date") {
			ms, _ := strconv.ParseInt(v, 10, 64) // checked when the config was read
			v = time.Now().Add(time.Duration(ms) * time.Millisecond).UTC().Format(http.TimeFormat)
		}
		if strings.HasPrefix(r.Action, "add") {
			h.Add(r.Name, v)
		} else {
			h.Set(r.Name, v)
		}
	}
}
