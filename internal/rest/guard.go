package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/connectd/connectd/internal/herder"
)

// What ServeHTTP checks before an endpoint runs, so that no client can
// take the worker down (bodies are bounded in size and in time) and no
// web page can drive it from its visitor's browser (cross-origin requests
// and non-JSON POSTs are refused).

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

// bodiesAtOnce is how many bodies of the largest size endpoints may hold
// at once. An endpoint holds about five times its body while it parses
// and validates it (64 validations of 4 MiB bodies at once peaked at
// 1.4 GB of heap): more requests with large bodies wait for their turn
// rather than take the worker's memory.
const bodiesAtOnce = 4

// readBody reads the whole body, at most maxBody bytes of it, once the
// bodies that endpoints hold leave room for it, and returns the request
// carrying it for requestBody, and the release of that room, for once
// the endpoint is done. A declared length over the limit is refused
// before a byte is read.
func (s *server) readBody(w http.ResponseWriter, r *http.Request, deadline time.Time) (*http.Request, func(), error) {
	if r.ContentLength > s.maxBody {
		return r, nil, s.tooLarge()
	}
	if r.ContentLength == 0 {
		return r, func() {}, nil
	}
	room := r.ContentLength
	if room < 0 {
		room = s.maxBody
	}
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	err := s.bodies.Acquire(ctx, room)
	cancel()
	if err != nil {
		return r, nil, &herder.Error{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(
			"The worker is busy reading other request bodies (%d bytes at most at once); try again", bodiesAtOnce*s.maxBody)}
	}
	release := func() { s.bodies.Release(room) }
	var body []byte
	if r.ContentLength > 0 {
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		// MaxBytesReader also tells the server to close the connection
		// rather than read what is left.
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	}
	if err != nil {
		release()
	}
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
	case errors.As(err, &tooLarge):
		return r, nil, s.tooLarge()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return r, nil, &herder.Error{Status: http.StatusRequestTimeout, Message: fmt.Sprintf(
			"Request body not received within %d ms (rest.request.body.timeout.ms)", s.bodyTime.Milliseconds())}
	default:
		return r, nil, herder.BadRequest("Failed to read request body: %v", err)
	}
	return r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)), release, nil
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
