package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/connectd/connectd/internal/herder"
)

// What ServeHTTP checks before an endpoint runs, so that no client can
// take the worker down (bodies are bounded in size and in time) and no
// web page can drive it from its visitor's browser (cross-origin requests
// and non-JSON POSTs are refused).

// refuseCrossOrigin refuses a request whose Origin is not this worker's
// own scheme://host. A browser names the page's origin on every
// cross-origin request but a plain GET, including the "simple" POSTs it
// sends without asking first; Kafka Connect, with no
// access.control.allow.origin, would run them and only hide the answer.
func refuseCrossOrigin(r *http.Request) error {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	self := scheme + "://" + r.Host
	for _, origin := range r.Header.Values("Origin") {
		if !strings.EqualFold(origin, self) {
			return &herder.Error{Status: http.StatusForbidden, Message: fmt.Sprintf(
				"Cross-origin request refused: origin %s is not this worker's (%s), and access.control.allow.origin allows no other", origin, self)}
		}
	}
	return nil
}

// refuseMediaType answers a POST whose body is not JSON as Jersey does
// for Kafka Connect's resources, which consume only application/json. A
// POST without a body and without a type (a restart) is fine, as in
// Kafka. PUT and PATCH are not checked: a browser asks before sending
// either cross-origin, which connectd never grants, and curl -d sends
// them form-encoded.
func refuseMediaType(r *http.Request) error {
	if r.Method != http.MethodPost {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return &herder.Error{Status: http.StatusUnsupportedMediaType, Message: "HTTP 415 Unsupported Media Type"}
}

type bodyKey struct{}

// readBody reads the whole body, at most maxBody bytes of it, and returns
// the request carrying it for requestBody. A declared length over the
// limit is refused before a byte is read.
func (s *server) readBody(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	if r.ContentLength > s.maxBody {
		return r, s.tooLarge()
	}
	var body []byte
	var err error
	switch {
	case r.ContentLength == 0:
	case r.ContentLength > 0:
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	default:
		// MaxBytesReader also tells the server to close the connection
		// rather than read what is left.
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		return r, s.tooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return r, &herder.Error{Status: http.StatusRequestTimeout, Message: fmt.Sprintf(
			"Request body not received within %d ms (rest.request.body.timeout.ms)", s.bodyTime.Milliseconds())}
	default:
		return r, herder.BadRequest("Failed to read request body: %v", err)
	}
	return r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)), nil
}

func (s *server) tooLarge() error {
	return &herder.Error{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
		"Request body is larger than %d bytes (rest.request.max.bytes)", s.maxBody)}
}

// requestBody is the body readBody read; nil when there was none.
func requestBody(r *http.Request) []byte {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	return body
}

// refuse answers a request refused before its endpoint ran, and closes
// the connection rather than read whatever is left of its body.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Connection", "close")
	s.writeError(w, r, err)
}
