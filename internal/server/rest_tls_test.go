package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/builtin"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/servertest"
	"software.sslmate.com/src/go-pkcs12"
)

// A standalone worker on an HTTPS listener that requires client
// certificates: a client of the test's CA with its certificate gets in,
// over TLS only; one without a certificate, or over plain HTTP, does not.
func TestRESTOverHTTPS(t *testing.T) {
	ca := servertest.NewCA(t)
	srv, cli := ca.Issue(t, "worker"), ca.Issue(t, "connectctl")
	dir := t.TempDir()
	s, err := StartStandalone(context.Background(), map[string]string{
		"listeners":                    "https://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"ssl.keystore.type":            "PEM",
		"ssl.keystore.location":        servertest.WriteFile(t, "worker.pem", srv.PEM),
		"ssl.truststore.type":          "PEM",
		"ssl.truststore.location":      servertest.WriteFile(t, "ca.pem", ca.PEM),
		"ssl.client.auth":              "required",
	}, nil, builtin.Plugins(), logging.NewRegistry(servertest.LogOnFailure(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	good, err := client.New("https://"+s.RESTAddr, client.WithTLSConfig(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cli.TLS()}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := good.CreateConnector(ctx, "src", map[string]string{"connector.class": "FileStreamSource", "file": filepath.Join(dir, "in.txt"), "topic": "t"}, "", nil); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	if names, err := good.Connectors(ctx); err != nil || len(names) != 1 {
		t.Errorf("GET /connectors over HTTPS: %v %v", names, err)
	}
	bare, _ := client.New("https://"+s.RESTAddr, client.WithTLSConfig(&tls.Config{RootCAs: ca.Pool()}))
	if _, err := bare.Connectors(ctx); err == nil {
		t.Error("a client without a certificate got in")
	}
	if resp, err := http.Get("http://" + s.RESTAddr + "/connectors"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on the HTTPS listener")
		}
	}
}

// A two-worker cluster whose listeners are HTTPS with PKCS12 stores
// (listeners.https.*) and client certificates required: a request to a
// follower is forwarded to the leader over TLS, and a connector's tasks
// run on whichever worker, their configs sent to the leader over TLS.
func TestClusterOverHTTPS(t *testing.T) {
	ca := servertest.NewCA(t)
	worker := ca.Issue(t, "worker")
	p12, err := pkcs12.Modern.Encode(worker.Key, worker.Cert, []*x509.Certificate{ca.Cert}, "storepass")
	if err != nil {
		t.Fatal(err)
	}
	trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.Cert}, "storepass")
	if err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, 0, map[string]string{
		"listeners":                               "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.type":       "PKCS12",
		"listeners.https.ssl.keystore.location":   servertest.WriteFile(t, "worker.p12", p12),
		"listeners.https.ssl.keystore.password":   "storepass",
		"listeners.https.ssl.truststore.type":     "PKCS12",
		"listeners.https.ssl.truststore.location": servertest.WriteFile(t, "trust.p12", trust),
		"listeners.https.ssl.truststore.password": "storepass",
		"listeners.https.ssl.client.auth":         "required",
		"rest.advertised.host.name":               "127.0.0.1",
	})
	c.add()
	c.add()
	ctx := context.Background()
	clients := make([]*client.Client, 2)
	for i := range clients {
		clients[i], _ = client.New("https://"+c.workers[i].RESTAddr, client.WithTLSConfig(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{worker.TLS()}}))
		eventually(t, fmt.Sprintf("worker %d healthy", i), func() bool { w, err := clients[i].Health(ctx); return err == nil && w.Status == "healthy" })
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lines(1, 3)...)
	// Each worker gets a connector: one of them is not the leader and
	// forwards its POST.
	for i, cl := range clients {
		name := fmt.Sprintf("src-%d", i)
		if _, err := cl.CreateConnector(ctx, name, map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "tls", "tasks.max": "1"}, "", nil); err != nil {
			t.Fatalf("POST /connectors to worker %d: %v", i, err)
		}
	}
	for i := range clients {
		name := fmt.Sprintf("src-%d", i)
		eventually(t, name+" running with its task", func() bool {
			st, err := clients[1-i].Status(ctx, name)
			return err == nil && st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING" &&
				strings.HasPrefix(st.Connector.WorkerID, "127.0.0.1:")
		})
	}
}
