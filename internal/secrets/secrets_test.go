package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// Which values are secrets: PASSWORD keys by definition or by name, and
// whatever a provider gave; not short values, not the rest.
func TestSecretsOf(t *testing.T) {
	def := connect.NewConfigDef().Define(connect.ConfigKey{Name: "token", Type: connect.ConfigPassword})
	h := Of(def, map[string]string{
		"token":                              "tok-123",
		"connection.password":                "pw-456",
		"producer.override.sasl.jaas.config": `PlainLoginModule required password="x";`,
		"connection.user":                    "from-provider",
		"topic":                              "orders",
		"database.password":                  "ab", // too short to hide anywhere
	}, map[string]bool{"connection.user": true})
	got := h.Hide(`tok-123 pw-456 from-provider orders ab PlainLoginModule required password="x";`)
	if want := "[hidden] [hidden] [hidden] orders ab [hidden]"; got != want {
		t.Errorf("hide: %q, want %q", got, want)
	}
}

// A task's log lines name it and hide its secrets, in the message, in
// string and error attributes, in groups and in With attributes; its
// errors hide them and still unwrap.
func TestHiddenLogsAndErrors(t *testing.T) {
	h := Hider{"s3cret-value"}
	var buf bytes.Buffer
	log := h.Logger(slog.New(slog.NewTextHandler(&buf, nil)), "connector", "sink", "task", 2)
	cause := errors.New("role s3cret-value does not exist")
	log.With("url", "jdbc:x?u=s3cret-value").Error("failed with s3cret-value", "error", cause, "g", slog.Group("inner", "v", "s3cret-value"), "n", 3)
	out := buf.String()
	if strings.Contains(out, "s3cret-value") || strings.Count(out, "[hidden]") != 4 {
		t.Errorf("log line: %s", out)
	}
	for _, want := range []string{"connector=sink", "task=2", "n=3"} {
		if !strings.Contains(out, want) {
			t.Errorf("log line without %s: %s", want, out)
		}
	}
	err := h.Err(fmt.Errorf("start: %w", cause))
	if err.Error() != "start: role [hidden] does not exist" || !errors.Is(err, cause) {
		t.Errorf("err: %v (is cause: %v)", err, errors.Is(err, cause))
	}
	if plain := errors.New("nothing secret"); h.Err(plain) != plain || h.Err(nil) != nil {
		t.Error("an error without secrets is not returned as is")
	}
}
