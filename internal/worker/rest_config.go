package worker

// The REST server's keys.

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// REST server limits, connectd's own keys (Kafka Connect has none: Jetty
// reads bodies of any size at any pace).
const (
	keyRESTMaxRequestBytes = "rest.request.max.bytes"
	keyRESTBodyTimeout     = "rest.request.body.timeout.ms"
	keyRESTMaxConnections  = "rest.max.connections"
)

// parseREST reads the REST keys into c. It runs after c.Listeners is set.
func (c *Config) parseREST(p map[string]string) error {
	addrs := make([]string, 0, len(c.Listeners))
	for _, l := range c.Listeners {
		addr, err := listenAddr(l)
		if err != nil {
			return err
		}
		addrs = append(addrs, addr)
	}
	c.ListenAddrs = addrs
	var err error
	if c.RESTMaxRequestBytes, err = positiveProp(p, keyRESTMaxRequestBytes); err != nil {
		return err
	}
	ms, err := positiveProp(p, keyRESTBodyTimeout)
	if err != nil {
		return err
	}
	c.RESTBodyTimeout = time.Duration(ms) * time.Millisecond
	n, err := positiveProp(p, keyRESTMaxConnections)
	if err != nil {
		return err
	}
	c.RESTMaxConnections = int(min(n, 1<<20))
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

// positiveProp reads an optional LONG key that must be at least 1; unset
// gives 0, for the REST server's default.
func positiveProp(p map[string]string, k string) (int64, error) {
	v, ok := p[k]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type LONG", v, k)
	}
	if n < 1 {
		return 0, fmt.Errorf("Invalid value %s for configuration %s: Value must be at least 1", v, k)
	}
	return n, nil
}
