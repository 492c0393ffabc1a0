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

	"github.com/connectd/connectd/client"
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

// forwardClient returns a REST client for the worker at target, for a
// request that must be served there. It follows Kafka Connect's hops: a
// user's request is forwarded with forward=true, a forwarded one with
// forward=false, and one that came with forward=false is not forwarded
// again (409), so that requests cannot loop during a rebalance.
func forwardClient(ctx context.Context, target string) (*client.Client, error) {
	req := RequestFrom(ctx)
	var next string
	switch req.Forward {
	case "":
		next = "true"
	case "true":
		next = "false"
	default:
		return nil, Conflict(msgConflictingOp)
	}
	if target == "" {
		return nil, Conflict(msgNoLeader)
	}
	hc := &http.Client{Transport: forwardTransport{next: next, auth: req.Authorization}}
	cl, err := client.New(target, client.WithHTTPClient(hc))
	if err != nil {
		return nil, Internal("IO Error trying to forward REST request: %v", err)
	}
	return cl, nil
}

// forwardTransport adds the forward parameter and the only header Kafka
// Connect forwards.
type forwardTransport struct{ next, auth string }

func (t forwardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	q := r.URL.Query()
	q.Set("forward", t.next)
	r.URL.RawQuery = q.Encode()
	if t.auth != "" {
		r.Header.Set("Authorization", t.auth)
	}
	r.Header.Set("User-Agent", "kafka-connect")
	return http.DefaultTransport.RoundTrip(r)
}

// forwarded turns what the target answered into this worker's answer: its
// error status and message as they are, anything else as Kafka's IO error.
func forwarded(err error) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return &Error{Status: ce.StatusCode, Message: ce.Message}
	}
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	return Internal("IO Error trying to forward REST request: %v", err)
}

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
func postTaskConfigs(ctx context.Context, leaderURL, name string, configs []map[string]string, key []byte) error {
	if leaderURL == "" {
		return errors.New(msgNoLeader)
	}
	body, err := json.Marshal(configs)
	if err != nil {
		return err
	}
	u := strings.TrimSuffix(leaderURL, "/") + "/connectors/" + url.PathEscape(name) + "/tasks?forward=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signatureHeader, sign(key, body))
	req.Header.Set(signatureAlgHeader, signatureAlgorithm)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("the leader refused the task configs of %s: %d %s", name, resp.StatusCode, msg)}
	}
	return nil
}
