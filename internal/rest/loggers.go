package rest

import (
	"net/http"
	"strings"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

func (s *server) listLoggers(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, s.loggers.Levels())
}

func (s *server) getLogger(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("logger")
	level, ok := s.loggers.Level(name)
	if !ok {
		return herder.NotFound("Logger %s not found.", name)
	}
	return writeJSON(w, http.StatusOK, level)
}

func (s *server) setLogger(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("logger")
	raw, err := parseJSON(requestBody(r))
	if err != nil {
		return err
	}
	var level *string
	if !isNull(raw) {
		c, err := bindConfig(raw, "request body")
		if err != nil {
			return err
		}
		level = c.vals["level"]
	}
	if level == nil {
		return herder.BadRequest("Desired 'level' parameter was not specified in request.")
	}
	if _, _, err := logging.ParseLevel(*level); err != nil {
		// Kafka really answers 404 here.
		return herder.NotFound("invalid log level '%s'.", *level)
	}
	affected, err := s.loggers.SetLevel(name, *level)
	if err != nil {
		return herder.BadRequest("%s", err.Error())
	}
	// Any scope but "cluster" is "worker". In standalone mode a cluster
	// scope is applied locally, and answered with 204.
	if strings.ToLower(r.URL.Query().Get("scope")) == "cluster" {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return writeJSON(w, http.StatusOK, affected)
}
