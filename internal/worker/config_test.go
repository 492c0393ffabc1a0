package worker

import (
	"strings"
	"testing"
	"time"
)

// Every key that asks the REST API for a protection connectd does not
// give stops the worker with a message naming it; the settings that ask
// for nothing more than connectd does are taken.
func TestParseConfigRefusesUnprovidedProtections(t *testing.T) {
	refused := []struct{ key, value string }{
		// TLS settings for HTTPS listeners there are not.
		{"listeners.https.ssl.keystore.location", "/etc/connect/keystore.jks"},
		{"admin.listeners.https.ssl.keystore.location", "/etc/connect/keystore.jks"},
		{"admin.listeners", "ftp://localhost:8084"},
		{"rest.extension.classes", "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"},
		// Response header rules Kafka refuses.
		{"response.http.headers.config", "add X-Frame-Options"},
		{"response.http.headers.config", "remove X-Frame-Options:DENY"},
		{"response.http.headers.config", "set X Frame:DENY"},
		{"response.http.headers.config", "setDate Expires:tomorrow"},
		{"ssl.client.auth", "required"},
		{"ssl.client.auth", "requested"},
		{"rest.advertised.listener", "https"},
		{"connector.client.config.override.policy", "None"},
		{"connector.client.config.override.policy", "Principal"},
	}
	for _, c := range refused {
		_, err := ParseConfig(map[string]string{c.key: c.value})
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s=%s: got %v, want an error naming the key", c.key, c.value, err)
		}
	}
	// An HTTPS listener without its certificate names the key it needs.
	for _, l := range []string{"https://:8443", "http://:8083,HTTPS://:8443"} {
		if _, err := ParseConfig(map[string]string{"listeners": l}); err == nil || !strings.Contains(err.Error(), "ssl.keystore.location") {
			t.Errorf("listeners=%s: got %v, want an error naming ssl.keystore.location", l, err)
		}
	}
	taken := []map[string]string{
		{"listeners": "http://127.0.0.1:8083,HTTP://:8084"},
		{"admin.listeners": ""},
		{"admin.listeners": "http://localhost:8084"},
		{"rest.extension.classes": " "},
		{"access.control.allow.origin": ""},
		// Kafka reads it only along with access.control.allow.origin.
		{"access.control.allow.methods": "GET,POST,PUT"},
		{"response.http.headers.config": ""},
		{"access.control.allow.origin": "*"},
		{"response.http.headers.config": `set X-Frame-Options:DENY,"add Cache-Control: no-cache, no-store",addDate Expires:3600000`},
		{"ssl.client.auth": "none"},
		{"rest.advertised.listener": "HTTP"},
		{"connector.client.config.override.policy": "All"},
		{"connector.client.config.override.policy": "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy"},
	}
	for _, props := range taken {
		if _, err := ParseConfig(props); err != nil {
			t.Errorf("%v: %v", props, err)
		}
	}
}

func TestParseConfigRESTLimits(t *testing.T) {
	c, err := ParseConfig(map[string]string{"listeners": "http://127.0.0.1:0,http://:8084"})
	if err != nil {
		t.Fatal(err)
	}
	if c.RESTMaxRequestBytes != 0 || c.RESTBodyTimeout != 0 || c.RESTMaxConnections != 0 {
		t.Errorf("unset limits: %d %v %d, want 0 for the REST server's defaults", c.RESTMaxRequestBytes, c.RESTBodyTimeout, c.RESTMaxConnections)
	}
	if got := strings.Join(c.ListenAddrs, " "); got != "127.0.0.1:0 :8084" {
		t.Errorf("addresses %s", got)
	}
	c, err = ParseConfig(map[string]string{"rest.request.max.bytes": "1048576", "rest.request.body.timeout.ms": "2500", "rest.max.connections": "8"})
	if err != nil {
		t.Fatal(err)
	}
	if c.RESTMaxRequestBytes != 1<<20 || c.RESTBodyTimeout != 2500*time.Millisecond || c.RESTMaxConnections != 8 {
		t.Errorf("limits: %d %v %d", c.RESTMaxRequestBytes, c.RESTBodyTimeout, c.RESTMaxConnections)
	}
	for _, k := range []string{"rest.request.max.bytes", "rest.request.body.timeout.ms", "rest.max.connections"} {
		for _, v := range []string{"0", "-1", "many"} {
			if _, err := ParseConfig(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s=%s: got %v", k, v, err)
			}
		}
	}
}

// A distributed worker asked to sign or check internal requests otherwise
// than with 256-bit HmacSHA256 keys stops.
func TestParseDistributedConfigRefusesOtherSignatures(t *testing.T) {
	base := map[string]string{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}
	with := func(k, v string) map[string]string {
		p := map[string]string{k: v}
		for k, v := range base {
			p[k] = v
		}
		return p
	}
	for _, c := range []struct{ key, value string }{
		{"inter.worker.key.generation.algorithm", "HmacSHA512"},
		{"inter.worker.signature.algorithm", "HmacSHA512"},
		{"inter.worker.verification.algorithms", "HmacSHA256,HmacSHA1"},
		{"inter.worker.key.size", "512"},
	} {
		if _, err := ParseDistributedConfig(with(c.key, c.value)); err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s=%s: got %v", c.key, c.value, err)
		}
	}
	for _, c := range []struct{ key, value string }{
		{"inter.worker.signature.algorithm", "HmacSHA256"},
		{"inter.worker.verification.algorithms", "HmacSHA256"},
		{"inter.worker.key.size", "256"},
	} {
		if _, err := ParseDistributedConfig(with(c.key, c.value)); err != nil {
			t.Errorf("%s=%s: %v", c.key, c.value, err)
		}
	}
}

func TestTasksMaxPerConnector(t *testing.T) {
	c, err := ParseConfig(nil)
	if err != nil || c.TasksMaxPerConnector != defaultTasksMaxPerConnector {
		t.Fatalf("default: %v, %v", c, err)
	}
	c, err = ParseConfig(map[string]string{"tasks.max.per.connector": " 12 "})
	if err != nil || c.TasksMaxPerConnector != 12 {
		t.Fatalf("12: %v, %v", c, err)
	}
	for _, bad := range []string{"0", "-3", "many"} {
		_, err := ParseConfig(map[string]string{"tasks.max.per.connector": bad})
		if err == nil || !strings.Contains(err.Error(), "tasks.max.per.connector") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want an error naming the key and the value", bad, err)
		}
	}
}
