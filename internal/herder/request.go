package herder

import (
	"context"
	"net/http"
)

// Request describes where a REST request came from, for forwarding it to
// the leader as Kafka Connect does: a user's request may be forwarded with
// forward=true, and a forwarded one once more with forward=false; one
// that arrives with forward=false and still cannot be served locally is a
// conflict.
type Request struct {
	// Forward is the request's forward parameter: "" for a user's
	// request, "true" or "false" for a forwarded one.
	Forward string
	// Authorization is the only header forwarded, as in Kafka Connect.
	Authorization string
}

type requestKey struct{}

// WithRequest returns ctx carrying r.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request ctx carries, or a user request.
func RequestFrom(ctx context.Context) Request {
	r, _ := ctx.Value(requestKey{}).(Request)
	return r
}

// RequestFromHTTP reads the forwarding facts of an incoming request.
func RequestFromHTTP(r *http.Request) Request {
	return Request{Forward: r.URL.Query().Get("forward"), Authorization: r.Header.Get("Authorization")}
}
