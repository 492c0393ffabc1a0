package worker

// The REST server's keys: http:// and https:// listeners, their TLS from
// listeners.https.* or ssl.*, client certificates (ssl.client.auth). The
// keys that ask the REST API for a protection connectd does not give yet
// (a separate admin listener, REST extensions such as basic
// authentication, CORS, response headers) stop the worker with a message
// naming them: serving the API without the protection asked for would
// fail open.

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/connectd/connectd/internal/properties"
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
	https := false
	for _, l := range c.Listeners {
		addr, secure, err := listenAddr(l)
		if err != nil {
			return err
		}
		addrs = append(addrs, addr)
		c.ListenHTTPS = append(c.ListenHTTPS, secure)
		https = https || secure
	}
	c.ListenAddrs = addrs
	if err := refuseRESTProtections(p); err != nil {
		return err
	}
	if err := c.parseRESTTLS(p, https); err != nil {
		return err
	}
	if err := c.parseBasicAuth(p, os.Getenv("KAFKA_OPTS")); err != nil {
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

// listenAddr turns one of Kafka Connect's listeners (http://host:port or
// https://host:port, an empty host meaning every interface) into an
// address to listen on, and whether it is HTTPS.
func listenAddr(l string) (string, bool, error) {
	u, err := url.Parse(l)
	if err != nil || u.Scheme == "" {
		return "", false, fmt.Errorf("Invalid value %s for configuration listeners: expected http://host:port or https://host:port", l)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return u.Host, false, nil
	case "https":
		return u.Host, true, nil
	}
	return "", false, fmt.Errorf(`Invalid value %s for configuration listeners: Listener protocol must be either "http" or "https".`, l)
}

// restTLSPrefix is where Kafka reads an HTTPS listener's TLS settings
// first: if any listeners.https.* key is set, those alone (all or
// nothing), else the worker's ssl.* keys.
const restTLSPrefix = "listeners.https."

// parseRESTTLS builds the HTTPS listeners' TLS, and the TLS of this
// worker's requests to the others when it advertises an HTTPS listener.
func (c *Config) parseRESTTLS(p map[string]string, https bool) error {
	tlsProps := map[string]string{}
	for k, v := range p {
		if rest, ok := strings.CutPrefix(k, restTLSPrefix); ok {
			tlsProps[rest] = v
		}
	}
	if len(tlsProps) == 0 {
		for k, v := range p {
			if strings.HasPrefix(k, "ssl.") {
				tlsProps[k] = v
			}
		}
	}
	if k := firstWithPrefix(p, restTLSPrefix); k != "" && !https {
		return fmt.Errorf("Configuration %s cannot be applied: no listener is https://", k)
	}
	if auth := strings.TrimSpace(tlsProps["ssl.client.auth"]); !https && auth != "" && !strings.EqualFold(auth, "none") {
		return fmt.Errorf("Invalid value %s for configuration ssl.client.auth: no listener is https://, so no client could show a certificate", auth)
	}
	advertised := strings.ToLower(strings.TrimSpace(p["rest.advertised.listener"]))
	switch advertised {
	case "":
		c.AdvertiseHTTPS = len(c.ListenHTTPS) > 0 && c.ListenHTTPS[0]
	case "http", "https":
		c.AdvertiseHTTPS = advertised == "https"
		if !slices.Contains(c.ListenHTTPS, c.AdvertiseHTTPS) {
			return fmt.Errorf("Invalid value %s for configuration rest.advertised.listener: no listener is %s://", p["rest.advertised.listener"], advertised)
		}
	default:
		return fmt.Errorf(`Invalid value %s for configuration rest.advertised.listener: must be either "http" or "https"`, p["rest.advertised.listener"])
	}
	if !https {
		return nil
	}
	var err error
	if c.RESTServerTLS, err = kafkasec.ServerTLS(tlsProps); err != nil {
		return fmt.Errorf("the HTTPS listener: %w", err)
	}
	clientTLS, err := kafkasec.ClientTLS(tlsProps)
	if err != nil {
		return fmt.Errorf("the HTTPS listener: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = clientTLS
	c.RESTClient = &http.Client{Transport: tr}
	return nil
}

// refuseRESTProtections names the first key that asks the REST API for a
// protection connectd does not provide.
func refuseRESTProtections(p map[string]string) error {
	if k := firstWithPrefix(p, "admin.listeners.https."); k != "" {
		return fmt.Errorf("Configuration %s cannot be applied: connectd has no separate admin listener yet", k)
	}
	if v := strings.TrimSpace(p["admin.listeners"]); v != "" {
		// Kafka serves /admin/loggers only on these listeners; serving
		// them on the regular ones instead would expose what was meant
		// to be kept apart.
		return fmt.Errorf("Invalid value %s for configuration admin.listeners: connectd has no separate admin listener yet; leave admin.listeners unset to serve /admin/loggers on the regular listeners, or set it empty to disable them", v)
	}
	for _, class := range strings.Split(p["rest.extension.classes"], ",") {
		if class = strings.TrimSpace(class); class != "" && class != BasicAuthExtension {
			return fmt.Errorf("Invalid value %s for configuration rest.extension.classes: connectd runs no REST extension but Kafka's basic authentication (%s), and will not serve the API without it", class, BasicAuthExtension)
		}
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

// Kafka's basic authentication of the REST API.
const (
	BasicAuthExtension      = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	propertyFileLoginModule = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
	jaasSection             = "KafkaConnect"
)

// jaasFileOption is where Kafka's start scripts point the JVM at its JAAS
// file: -Djava.security.auth.login.config=PATH in KAFKA_OPTS.
var jaasFileOption = regexp.MustCompile(`-Djava\.security\.auth\.login\.config==?("[^"]*"|'[^']*'|\S+)`)

// parseBasicAuth reads, when rest.extension.classes names Kafka's
// BasicAuthSecurityRestExtension, the users and passwords of the
// PropertyFileLoginModule of the KafkaConnect section of the JAAS file
// that kafkaOpts names, as a Java worker finds them.
func (c *Config) parseBasicAuth(p map[string]string, kafkaOpts string) error {
	if !slices.ContainsFunc(strings.Split(p["rest.extension.classes"], ","), func(s string) bool { return strings.TrimSpace(s) == BasicAuthExtension }) {
		return nil
	}
	m := jaasFileOption.FindStringSubmatch(kafkaOpts)
	if m == nil {
		return fmt.Errorf("rest.extension.classes has %s, but KAFKA_OPTS names no JAAS file: set -Djava.security.auth.login.config=PATH there, as for a Java worker", BasicAuthExtension)
	}
	path := strings.Trim(m[1], `"'`)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the JAAS file of rest.extension.classes: %w", err)
	}
	entries, err := kafkasec.JAASSection(data, jaasSection)
	if err != nil {
		return fmt.Errorf("the JAAS file %s: %w", path, err)
	}
	c.RESTCredentials = map[string]string{}
	for _, e := range entries {
		if e.LoginModule != propertyFileLoginModule {
			return fmt.Errorf("the JAAS file %s: connectd's basic authentication reads %s, not %s", path, propertyFileLoginModule, e.LoginModule)
		}
		file, ok := e.Options["file"]
		if !ok {
			return fmt.Errorf("the JAAS file %s: %s needs its file option", path, propertyFileLoginModule)
		}
		users, err := properties.ParseFile(file)
		if err != nil {
			return fmt.Errorf("the credentials file of %s: %w", path, err)
		}
		maps.Copy(c.RESTCredentials, users)
	}
	c.RESTAuth = true
	return nil
}
