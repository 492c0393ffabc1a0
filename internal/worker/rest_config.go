package worker

// The REST server's keys: http:// and https:// listeners, their TLS from
// listeners.https.* or ssl.*, client certificates (ssl.client.auth), the
// admin listeners, basic authentication, CORS and response headers. The
// keys that ask the REST API for a protection connectd does not give (a
// REST extension other than basic authentication, an override policy)
// stop the worker with a message naming them: serving the API without
// the protection asked for would fail open.

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
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
	keyMetricsListeners    = "metrics.listeners"
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
	if err := c.parseAdminListeners(p, pc); err != nil {
		return err
	}
	if err := c.parseBasicAuth(p, os.Getenv("KAFKA_OPTS")); err != nil {
		return err
	}
	if err := c.parseCORS(p); err != nil {
		return err
	}
	for _, l := range nonEmpty(pc.List(keyMetricsListeners)) {
		addr, secure, err := listenAddr(l)
		if err != nil {
			return fmt.Errorf("%s: %w", keyMetricsListeners, err)
		}
		if secure {
			return fmt.Errorf("Invalid value %s for configuration %s: its listeners serve plain http://; scrape the REST listeners' /metrics for HTTPS", l, keyMetricsListeners)
		}
		c.MetricsAddrs = append(c.MetricsAddrs, addr)
	}
	rules, err := ParseHeaderRules(p["response.http.headers.config"])
	if err != nil {
		return err
	}
	c.RESTHeaders = rules
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

// tlsPropsOf are the ssl.* settings of a listener whose own are under
// prefix: those, if any is set (Kafka's valuesWithPrefixAllOrNothing),
// else the worker's.
func tlsPropsOf(p map[string]string, prefix string) map[string]string {
	props := map[string]string{}
	for k, v := range p {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			props[rest] = v
		}
	}
	if len(props) == 0 {
		for k, v := range p {
			if strings.HasPrefix(k, "ssl.") {
				props[k] = v
			}
		}
	}
	return props
}

// adminTLSPrefix is restTLSPrefix for admin.listeners.
const adminTLSPrefix = "admin.listeners.https."

// parseAdminListeners reads admin.listeners as Kafka does: unset, the
// admin endpoints are on the regular listeners; empty, nowhere; a list,
// on those listeners alone, with TLS from admin.listeners.https.* or
// else ssl.*.
func (c *Config) parseAdminListeners(p map[string]string, pc *connect.ParsedConfig) error {
	_, set := p["admin.listeners"]
	c.AdminOnMain = !set
	if !set {
		if k := firstWithPrefix(p, adminTLSPrefix); k != "" {
			return fmt.Errorf("Configuration %s cannot be applied: admin.listeners is not set, so the admin endpoints are on the regular listeners", k)
		}
		return nil
	}
	https := false
	for _, l := range nonEmpty(pc.List("admin.listeners")) {
		addr, secure, err := listenAddr(l)
		if err != nil {
			return fmt.Errorf("admin.listeners: %w", err)
		}
		c.AdminAddrs = append(c.AdminAddrs, addr)
		c.AdminHTTPS = append(c.AdminHTTPS, secure)
		https = https || secure
	}
	if !https {
		if k := firstWithPrefix(p, adminTLSPrefix); k != "" {
			return fmt.Errorf("Configuration %s cannot be applied: no admin listener is https://", k)
		}
		return nil
	}
	var err error
	if c.AdminServerTLS, err = kafkasec.ServerTLS(tlsPropsOf(p, adminTLSPrefix)); err != nil {
		return fmt.Errorf("the HTTPS admin listener: %w", err)
	}
	return nil
}

// parseRESTTLS builds the HTTPS listeners' TLS, and the TLS of this
// worker's requests to the others when it advertises an HTTPS listener.
func (c *Config) parseRESTTLS(p map[string]string, https bool) error {
	tlsProps := tlsPropsOf(p, restTLSPrefix)
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
	for _, class := range strings.Split(p["rest.extension.classes"], ",") {
		if class = strings.TrimSpace(class); class != "" && class != BasicAuthExtension {
			return fmt.Errorf("Invalid value %s for configuration rest.extension.classes: connectd runs no REST extension but Kafka's basic authentication (%s), and will not serve the API without it", class, BasicAuthExtension)
		}
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

// parseCORS reads access.control.allow.origin (origins, with * as a
// wildcard, or * alone for any) and access.control.allow.methods (Jetty
// CrossOriginFilter's default: GET, POST, HEAD), as Kafka hands them to
// the filter.
func (c *Config) parseCORS(p map[string]string) error {
	origins := strings.TrimSpace(p["access.control.allow.origin"])
	if origins == "" {
		return nil
	}
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
	}
	c.CORSMethods = []string{"GET", "POST", "HEAD"}
	if m := strings.TrimSpace(p["access.control.allow.methods"]); m != "" {
		c.CORSMethods = nil
		for _, v := range strings.Split(m, ",") {
			if v = strings.ToUpper(strings.TrimSpace(v)); v != "" {
				c.CORSMethods = append(c.CORSMethods, v)
			}
		}
	}
	return nil
}

// HeaderRule is one rule of response.http.headers.config: Jetty
// HeaderFilter's set, add, setDate or addDate of a header on every
// response (for the Date actions, Value is milliseconds from now).
type HeaderRule struct {
	Action, Name, Value string
}

// ParseHeaderRules reads response.http.headers.config as Kafka validates
// it: comma-separated rules, each in double quotes if it holds a comma,
// of the form "[action] [header name]:[header value]".
func ParseHeaderRules(v string) ([]HeaderRule, error) {
	const key = "response.http.headers.config"
	var out []HeaderRule
	for _, rule := range csvSplit(v) {
		fields := strings.SplitN(strings.TrimSpace(rule), " ", 2)
		if len(fields) != 2 || strings.TrimSpace(fields[1]) == "" {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Invalid format of header config '%s'. Expected: '[action] [header name]:[header value]'", v, key, rule)
		}
		action := ""
		for _, a := range []string{"set", "add", "setDate", "addDate"} {
			if strings.EqualFold(fields[0], a) {
				action = a
			}
		}
		if action == "" {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Invalid header config action: '%s'. Expected one of [set, add, setDate, addDate]", v, key, fields[0])
		}
		nv := strings.Split(strings.TrimSpace(fields[1]), ":")
		if len(nv) != 2 {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Invalid format of header name and header value pair '%s'. Expected: '[header name]:[header value]'", v, key, fields[1])
		}
		name, value := strings.TrimSpace(nv[0]), strings.TrimSpace(nv[1])
		if name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("Invalid value %s for configuration %s: Invalid header name '%s'. The '[header name]' cannot contain whitespace", v, key, name)
		}
		if strings.HasSuffix(action, "Date") {
			if _, err := strconv.ParseInt(value, 10, 64); err != nil {
				return nil, fmt.Errorf("Invalid value %s for configuration %s: %s %s takes milliseconds from now, not '%s'", v, key, action, name, value)
			}
		}
		out = append(out, HeaderRule{Action: action, Name: name, Value: value})
	}
	return out, nil
}

// csvSplit splits s at commas outside double quotes, dropping the quotes
// around a value and blanks around each, as Jetty's StringUtil.csvSplit.
func csvSplit(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	flush := func() {
		if v := strings.TrimSpace(cur.String()); v != "" {
			out = append(out, strings.Trim(v, `"`))
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == ',' && !quoted:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}
