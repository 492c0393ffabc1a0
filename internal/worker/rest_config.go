package worker

// The REST server's keys. Kafka Connect's keys that ask the REST API for a
// protection connectd does not give yet (TLS, client certificates, a
// separate admin listener, REST extensions such as basic authentication,
// CORS, response headers) stop the worker with a message naming them:
// serving the API without the protection asked for would fail open.

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
)

// REST server limits, connectd's own keys (Kafka Connect has none: Jetty
// reads bodies of any size at any pace).
const (
	keyRESTMaxRequestBytes = "rest.request.max.bytes"
	keyRESTBodyTimeout     = "rest.request.body.timeout.ms"
	keyRESTMaxConnections  = "rest.max.connections"
	keyConsoleEnable       = "console.enable"
)

// parseREST reads the REST keys into c, from the props as given (p) and
// as parsed (pc). It runs after c.Listeners is set.
func (c *Config) parseREST(p map[string]string, pc *connect.ParsedConfig) error {
	addrs := make([]string, 0, len(c.Listeners))
	for _, l := range c.Listeners {
		addr, err := listenAddr(l)
		if err != nil {
			return err
		}
		addrs = append(addrs, addr)
	}
	c.ListenAddrs = addrs
	if err := refuseRESTProtections(p); err != nil {
		return err
	}
	c.RESTMaxRequestBytes = pc.Long(keyRESTMaxRequestBytes)
	c.RESTBodyTimeout = millis(pc, keyRESTBodyTimeout)
	c.RESTMaxConnections = int(min(pc.Long(keyRESTMaxConnections), 1<<20))
	// The web console is on by default only on the embedded default: a
	// worker of a real cluster shows it when asked.
	if _, set := p[keyConsoleEnable]; set {
		c.Console = pc.Bool(keyConsoleEnable)
	} else {
		c.Console = len(nonEmpty(pc.List(keyBootstrapServers))) == 0
	}
	return nil
}

// listenAddr turns one of Kafka Connect's listeners (http://host:port, an
// empty host meaning every interface) into an address to listen on.
func listenAddr(l string) (string, error) {
	u, err := url.Parse(l)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("Invalid value %s for configuration listeners: expected http://host:port", l)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return u.Host, nil
	case "https":
		return "", fmt.Errorf("Invalid value %s for configuration listeners: connectd serves no HTTPS listener yet (it would serve this API unencrypted); use an http:// listener behind a TLS proxy", l)
	}
	return "", fmt.Errorf(`Invalid value %s for configuration listeners: Listener protocol must be either "http" or "https".`, l)
}

// refuseRESTProtections names the first key that asks the REST API for a
// protection connectd does not provide.
func refuseRESTProtections(p map[string]string) error {
	for _, prefix := range []string{"listeners.https.", "admin.listeners.https."} {
		if k := firstWithPrefix(p, prefix); k != "" {
			return fmt.Errorf("Configuration %s cannot be applied: connectd serves no HTTPS listener yet", k)
		}
	}
	if v := strings.TrimSpace(p["admin.listeners"]); v != "" {
		// Kafka serves /admin/loggers only on these listeners; serving
		// them on the regular ones instead would expose what was meant
		// to be kept apart.
		return fmt.Errorf("Invalid value %s for configuration admin.listeners: connectd has no separate admin listener yet; leave admin.listeners unset to serve /admin/loggers on the regular listeners, or set it empty to disable them", v)
	}
	if v := strings.TrimSpace(p["rest.extension.classes"]); v != "" {
		return fmt.Errorf("Invalid value %s for configuration rest.extension.classes: connectd runs no REST extensions (basic authentication included) yet, and will not serve the API without them", v)
	}
	// A non-empty allow-origin asks to let more in, so ignoring it would
	// fail closed; it is refused all the same, so that a UI relying on it
	// is not left to find out from its browser's console.
	if v := strings.TrimSpace(p["access.control.allow.origin"]); v != "" {
		return fmt.Errorf("Invalid value %s for configuration access.control.allow.origin: connectd does not do CORS yet and refuses every cross-origin request", v)
	}
	if v := strings.TrimSpace(p["response.http.headers.config"]); v != "" {
		return fmt.Errorf("Invalid value %s for configuration response.http.headers.config: connectd does not add response headers yet", v)
	}
	if v := strings.TrimSpace(p["ssl.client.auth"]); v != "" && !strings.EqualFold(v, "none") {
		return fmt.Errorf("Invalid value %s for configuration ssl.client.auth: connectd serves no HTTPS listener yet, so it cannot authenticate REST clients by certificate", v)
	}
	switch v := strings.TrimSpace(p["rest.advertised.listener"]); strings.ToLower(v) {
	case "", "http":
	case "https":
		return fmt.Errorf("Invalid value %s for configuration rest.advertised.listener: connectd serves no HTTPS listener yet", v)
	default:
		return fmt.Errorf(`Invalid value %s for configuration rest.advertised.listener: must be either "http" or "https"`, v)
	}
	// Every connector may override its clients' settings in connectd,
	// which is the All policy; None and Principal would forbid some.
	switch v := strings.TrimSpace(p["connector.client.config.override.policy"]); v {
	case "", "All", "AllConnectorClientConfigOverridePolicy", "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy":
	default:
		return fmt.Errorf("Invalid value %s for configuration connector.client.config.override.policy: connectd enforces no override policy yet (every connector may override its clients' settings, the All policy)", v)
	}
	return nil
}

func firstWithPrefix(p map[string]string, prefix string) string {
	var keys []string
	for k := range p {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return slices.Min(keys)
}
