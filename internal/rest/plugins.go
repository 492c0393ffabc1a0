package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
)

func (s *server) listPlugins(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, nonNil(s.h.Plugins(queryBool(r, "connectorsOnly", true))))
}

func (s *server) pluginConfig(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.h.PluginConfig(r.PathValue("plugin"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(keys))
}

// normalizedPluginName strips a trailing "Connector", as Kafka's
// ConnectorPluginsResource does before comparing class and path.
func normalizedPluginName(name string) string {
	return strings.TrimSuffix(name, "Connector")
}

func (s *server) validate(w http.ResponseWriter, r *http.Request) error {
	plugin := r.PathValue("plugin")
	c, err := configBody(r)
	if err != nil {
		return err
	}
	if class := c.vals["connector.class"]; class != nil && !strings.HasSuffix(normalizedPluginName(*class), normalizedPluginName(plugin)) {
		return herder.BadRequest("Included connector type %s does not match request type %s", *class, plugin)
	}
	if err := c.requireClass(); err != nil {
		return err
	}
	// Kafka answers 200 with a null value reported as a config error;
	// the herder takes strings only, so we answer 400.
	config, err := c.strings()
	if err != nil {
		return err
	}
	infos, err := call(r.Context(), func(ctx context.Context) (*client.ConfigInfos, error) {
		return s.h.ValidateConfig(ctx, plugin, config)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, infos)
}
