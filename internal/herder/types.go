package herder

import (
	"encoding/json"
	"fmt"
)

// TargetState is the state the user asked a connector to be in.
type TargetState string

// The target states. STARTED is called RUNNING in the REST API.
const (
	Started TargetState = "STARTED"
	Paused  TargetState = "PAUSED"
	Stopped TargetState = "STOPPED"
)

// ParseInitialState maps the REST initial_state (RUNNING, PAUSED,
// STOPPED, any case) to a target state.
func ParseInitialState(s string) (TargetState, error) {
	switch {
	case equalFold(s, "RUNNING"):
		return Started, nil
	case equalFold(s, "PAUSED"):
		return Paused, nil
	case equalFold(s, "STOPPED"):
		return Stopped, nil
	}
	return "", BadRequest("Invalid initial state %s; valid values are RUNNING, PAUSED, STOPPED", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Error is a failure meant for the client: an HTTP status and Kafka
// Connect's message for it.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// MarshalJSON writes Kafka Connect's error body.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}{e.Status, e.Message})
}

func newError(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400: the client asked for something invalid.
func BadRequest(format string, args ...any) *Error { return newError(400, format, args...) }

// NotFound is a 404.
func NotFound(format string, args ...any) *Error { return newError(404, format, args...) }

// Conflict is a 409.
func Conflict(format string, args ...any) *Error { return newError(409, format, args...) }

// Internal is a 500: the worker failed, not the client.
func Internal(format string, args ...any) *Error { return newError(500, format, args...) }

// Forbidden is a 403.
func Forbidden(format string, args ...any) *Error { return newError(403, format, args...) }
