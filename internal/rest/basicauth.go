package rest

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// basicAuth is Kafka's BasicAuthSecurityRestExtension: every request but
// the workers' own signed ones (a connector's task configs sent to the
// leader, a fencing request) needs HTTP basic credentials of a user in
// the credentials file; an empty file lets everyone in, as Kafka's
// PropertyFileLoginModule does.
type basicAuth struct {
	users map[string]string
}

func (a *basicAuth) allows(r *http.Request) bool {
	if internalRequest(r) || len(a.users) == 0 {
		return true
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	want, known := a.users[user]
	// Compared whole, in constant time, so that the answer's timing says
	// nothing of the password.
	return known && subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1
}

// refuse answers Kafka's 401: its text, and a challenge so that a browser
// (the console) asks for the credentials.
func (a *basicAuth) refuse(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="Kafka Connect"`)
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("User cannot access the resource."))
}

// internalRequest is what Kafka's JaasBasicAuthFilter lets through
// without credentials: POST /connectors/{name}/tasks and PUT
// /connectors/{name}/fence, which workers sign with the cluster's
// session key instead.
func internalRequest(r *http.Request) bool {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 3 || parts[0] != "connectors" || parts[1] == "" {
		return false
	}
	return r.Method == http.MethodPost && parts[2] == "tasks" || r.Method == http.MethodPut && parts[2] == "fence"
}
