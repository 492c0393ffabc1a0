package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/connectd/connectd/internal/herder"
)

// maxForwardedAnswer bounds how much of another worker's answer is read.
const maxForwardedAnswer = 64 << 20

// orForward is call for an endpoint that another worker may have to
// serve. When f answers that one must (*herder.RequestTargetError), r is
// sent there as Kafka Connect's HerderRequestHandler does it, and that
// worker's answer, decoded into a T, is this one's.
func orForward[T any](r *http.Request, f func(context.Context) (T, error)) (T, error) {
	v, err := call(r.Context(), f)
	if target := requestTarget(err); target != nil {
		var zero T
		if _, err := forward(r, target.URL, &v); err != nil {
			return zero, err
		}
		return v, nil
	}
	return v, err
}

// doOrForward is orForward for herder methods that answer only an error.
func doOrForward(r *http.Request, f func(context.Context) error) error {
	_, err := orForward(r, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// requestTarget is the worker err says must serve the request, or nil.
func requestTarget(err error) *herder.RequestTargetError {
	var target *herder.RequestTargetError
	if errors.As(err, &target) {
		return target
	}
	return nil
}

// forward re-sends r to the worker at target, decodes its 2xx answer
// into out and returns its status; an error status comes back as a
// *herder.Error with that worker's status and message. It follows Kafka
// Connect's hop rules: a user's request goes on with forward=true, a
// forwarded one with forward=false, and one that came with forward=false
// is not sent again, so that no request loops between workers during a
// rebalance. Its method, path, query, body, Authorization header and
// internal request signature go as they came.
func forward(r *http.Request, target string, out any) (int, error) {
	var next string
	switch r.URL.Query().Get("forward") {
	case "":
		next = "true"
	case "true":
		next = "false"
	default:
		return 0, herder.ConflictingOperation()
	}
	if target == "" {
		return 0, herder.NoLeader()
	}
	q := r.URL.Query()
	q.Set("forward", next)
	u := strings.TrimSuffix(target, "/") + r.URL.EscapedPath() + "?" + q.Encode()
	body := requestBody(r)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, u, bytes.NewReader(body))
	if err != nil {
		return 0, herder.Internal("IO Error trying to forward REST request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	// An internal request's signature goes with it too, as Kafka's
	// handler forwards a fencing request's headers to the leader.
	for _, h := range []string{"Authorization", "X-Connect-Authorization", "X-Connect-Request-Signature-Algorithm"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("User-Agent", "kafka-connect")
	resp, err := forwardClient(r).Do(req)
	if err == nil {
		defer resp.Body.Close()
		var data []byte
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxForwardedAnswer))
		if err == nil {
			return resp.StatusCode, forwardedAnswer(resp.StatusCode, data, out)
		}
	}
	if ctxErr := r.Context().Err(); ctxErr != nil {
		return 0, ctxErr
	}
	return 0, herder.Internal("IO Error trying to forward REST request: %v", err)
}

// forwardedAnswer decodes a 2xx body into out, or turns an error body
// into a *herder.Error: Kafka's {"error_code","message"}, or else the
// body's text, or else the status's.
func forwardedAnswer(status int, data []byte, out any) error {
	if status/100 == 2 {
		if status == http.StatusNoContent || len(bytes.TrimSpace(data)) == 0 {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return herder.Internal("IO Error trying to forward REST request: decoding the answer: %v", err)
		}
		return nil
	}
	text := strings.TrimSpace(string(data))
	var shaped struct {
		ErrorCode *int    `json:"error_code"`
		Message   *string `json:"message"`
	}
	if json.Unmarshal(data, &shaped) == nil && (shaped.ErrorCode != nil || shaped.Message != nil) {
		text = ""
		if shaped.Message != nil {
			text = *shaped.Message
		}
	}
	if text == "" {
		text = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	return &herder.Error{Status: status, Message: text}
}

// clientKey holds, in a request's context, the client that forwards it
// to another worker (over TLS when the workers serve HTTPS).
type clientKey struct{}

func forwardClient(r *http.Request) *http.Client {
	if hc, ok := r.Context().Value(clientKey{}).(*http.Client); ok && hc != nil {
		return hc
	}
	return http.DefaultClient
}
