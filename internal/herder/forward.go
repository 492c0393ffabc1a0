package herder

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Messages Kafka Connect answers while the cluster cannot route a request.
const (
	msgNoLeader         = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgConflictingOp    = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
	msgStaleConfig      = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
	signatureHeader     = "X-Connect-Authorization"
	signatureAlgHeader  = "X-Connect-Request-Signature-Algorithm"
	signatureAlgorithm  = "HmacSHA256"
	msgMissingSignature = "Internal request missing required signature"
	msgBadSignature     = "Internal request contained invalid signature."
)

// RequestTargetError says that another worker must serve a request: the
// leader, for what only it may do, or the worker running a connector or
// task, for its restart. As with Kafka Connect's RequestTargetException,
// the REST layer sends the request there and answers what that worker
// answered.
type RequestTargetError struct {
	// URL is the REST URL of the worker to ask; "" while no leader is
	// known (a rebalance is under way).
	URL string
}

func (e *RequestTargetError) Error() string {
	if e.URL == "" {
		return msgNoLeader
	}
	return "this request must be served by the worker at " + e.URL
}

// NoLeader is Kafka Connect's answer to a request for the leader while no
// leader is known.
func NoLeader() *Error { return Conflict(msgNoLeader) }

// ConflictingOperation is Kafka Connect's answer to a request that did
// not reach the worker that must serve it within two hops, or reached a
// worker that no longer leads the cluster.
func ConflictingOperation() *Error { return Conflict(msgConflictingOp) }

// sign computes the KIP-507 signature of an internal request's body.
func sign(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// verifySignature checks an internal request as Kafka Connect does.
func verifySignature(key []byte, body []byte, header http.Header) error {
	got, alg := header.Get(signatureHeader), header.Get(signatureAlgHeader)
	if got == "" || alg == "" {
		return BadRequest(msgMissingSignature)
	}
	if alg != signatureAlgorithm {
		return BadRequest("Signature algorithm %s is not permitted; valid algorithms are [%s]", alg, signatureAlgorithm)
	}
	if key == nil {
		return &Error{Status: 503, Message: "This worker is still starting up and has not been able to read a session key from the config topic yet"}
	}
	if !hmac.Equal([]byte(got), []byte(sign(key, body))) {
		return Forbidden(msgBadSignature)
	}
	return nil
}

// postTaskConfigs sends a connector's new task configs to the leader on
// the internal, signed endpoint.
func postTaskConfigs(ctx context.Context, hc *http.Client, leaderURL, name string, configs []map[string]string, key []byte) error {
	if leaderURL == "" {
		return errors.New(msgNoLeader)
	}
	body, err := json.Marshal(configs)
	if err != nil {
		return err
	}
	return toLeaderSigned(ctx, hc, http.MethodPost, leaderURL, "/connectors/"+url.PathEscape(name)+"/tasks?forward=true", body, key, "the leader refused the task configs of "+name)
}

// toLeaderSigned sends body (nil for none) to path on the leader, signed
// with the session key, and returns responseError's verdict on the answer.
func toLeaderSigned(ctx context.Context, hc *http.Client, method, leaderURL, path string, body, key []byte, what string) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(leaderURL, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(signatureHeader, sign(key, body))
	req.Header.Set(signatureAlgHeader, signatureAlgorithm)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return responseError(resp, what)
}

// responseError is nil for a 2xx answer of another worker, else an Error
// with its status, saying what was refused.
func responseError(resp *http.Response, what string) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("%s: %d %s", what, resp.StatusCode, msg)}
}
