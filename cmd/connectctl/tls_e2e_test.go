package main

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/servertest"
)

// connectctl against a worker on HTTPS that requires client
// certificates: with the CA and its certificate (flags, then a context)
// it works; without the certificate it fails, saying so.
func TestConnectctlOverHTTPS(t *testing.T) {
	t.Parallel()
	ca := servertest.NewCA(t)
	caFile := servertest.WriteFile(t, "ca.pem", ca.PEM)
	w := standalone(t, t.TempDir(), map[string]string{
		"listeners":               "https://127.0.0.1:0",
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   servertest.WriteFile(t, "worker.pem", ca.Issue(t, "worker").PEM),
		"ssl.truststore.location": caFile,
		"ssl.truststore.type":     "PEM",
		"ssl.client.auth":         "required",
	})
	certFile := servertest.WriteFile(t, "connectctl.pem", ca.Issue(t, "connectctl").PEM)
	url := "https://" + w.RESTAddr
	c := newCLI(t, "")
	r := c.ok("--url", url, "--ca-file", caFile, "--cert-file", certFile, "--key-file", certFile, "get", "connectors")
	mustContain(t, "get connectors", r.stdout, "NAME   STATE")
	r = c.fail("--url", url, "--ca-file", caFile, "get", "connectors")
	mustContain(t, "without a certificate", r.stderr, "Error:")
	r = c.fail("--url", url, "--ca-file", caFile, "--cert-file", certFile, "get", "connectors")
	mustContain(t, "a certificate without its key", r.stderr, "--cert-file and --key-file go together")
	c.ok("config", "set-context", "tls", "--url", url, "--ca-file", caFile, "--cert-file", certFile, "--key-file", certFile)
	r = c.ok("--context", "tls", "get", "connectors")
	if !strings.Contains(r.stdout, "NAME   STATE") {
		t.Errorf("through the context: %s", r)
	}
}

// connectctl against a worker with Kafka's basic authentication: with the
// user's password it works, without it it says the worker refused.
func TestConnectctlBasicAuth(t *testing.T) {
	creds := servertest.WriteFile(t, "credentials.properties", []byte("alice=s3cret\n"))
	jaas := servertest.WriteFile(t, "jaas.conf", []byte(`KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="`+creds+`";
};`))
	t.Setenv("KAFKA_OPTS", "-Djava.security.auth.login.config="+jaas)
	w := standalone(t, t.TempDir(), map[string]string{
		"rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
	})
	c := newCLI(t, "http://"+w.RESTAddr)
	r := c.ok("--user", "alice", "--password", "s3cret", "get", "connectors")
	mustContain(t, "with the password", r.stdout, "NAME   STATE")
	r = c.fail("get", "connectors")
	mustContain(t, "without credentials", r.stderr, "User cannot access the resource.")
	c.env["CONNECT_USER"], c.env["CONNECT_PASSWORD"] = "alice", "wrong"
	r = c.fail("get", "connectors")
	mustContain(t, "a wrong password", r.stderr, "User cannot access the resource.")
}
