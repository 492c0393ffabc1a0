package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/connectd/connectd/internal/herder"
)

// marshal encodes v as Jackson does by default: compact, no HTML escaping,
// no trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON writes v with status. An encoding failure is returned before
// anything is written, so it can still become a 500.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := marshal(v)
	if err != nil {
		return fmt.Errorf("encoding response: %w", err)
	}
	writeRaw(w, status, body)
	return nil
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	// net/http gives only small bodies a length by itself; a large one
	// (100,000 offsets are 7 MB) would go chunked, and the client could
	// not size its buffer once.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeErrorBody writes Kafka's error entity.
func writeErrorBody(w http.ResponseWriter, status int, msg string) {
	body, _ := marshal(struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}{status, msg})
	writeRaw(w, status, body)
}

// writeError renders a failure: a *herder.Error as its status and
// message, the request deadline as Kafka's timeout, anything else as a
// logged 500.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var he *herder.Error
	var pe *panicError
	switch {
	case errors.As(err, &he):
		status := he.Status
		if status < 400 || status > 599 {
			s.log.Error("herder error with a non-error status", "status", status, "error", he.Message)
			status = http.StatusInternalServerError
		}
		writeErrorBody(w, status, he.Message)
	case errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("REST request timed out", "method", r.Method, "path", r.URL.Path)
		writeErrorBody(w, http.StatusInternalServerError, "Request timed out")
	case errors.Is(err, context.Canceled):
		writeErrorBody(w, http.StatusInternalServerError, "Request interrupted")
	case errors.As(err, &pe):
		s.log.Error("panic serving REST request", "method", r.Method, "path", r.URL.Path, "panic", pe.value, "stack", string(pe.stack))
		writeErrorBody(w, http.StatusInternalServerError, panicMessage(pe.value))
	default:
		s.log.Error("REST request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeErrorBody(w, http.StatusInternalServerError, err.Error())
	}
}

type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return panicMessage(e.value) }

func panicMessage(p any) string { return fmt.Sprint(p) }

// call runs f on its own goroutine and waits for it or for the request
// deadline, whichever comes first, so that a herder that does not watch
// its context still cannot hold a request past the timeout (Kafka answers
// 500 "Request timed out" after 90 s whatever the herder is doing). A
// panic in f comes back as an error.
func call[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: &panicError{p, debug.Stack()}}
			}
		}()
		v, err := f(ctx)
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		return res.v, res.err
	case <-ctx.Done():
		select {
		case res := <-done: // finished at the deadline: keep its answer
			return res.v, res.err
		default:
			var zero T
			return zero, ctx.Err()
		}
	}
}
