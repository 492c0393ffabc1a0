package kafkasec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// leaf is a key and its certificate from ca.
func (ca *testCA) leaf(t *testing.T, cn string, usage x509.ExtKeyUsage, dns ...string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(ca.issue(t, &key.PublicKey, cn, usage, dns...))
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// jksStores writes a JKS key store (key password apart from the store's)
// and a JKS trust store.
func jksStores(t *testing.T, key *ecdsa.PrivateKey, cert, ca *x509.Certificate, storePass, keyPass string) (string, string) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry("server", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: der,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: cert.Raw}, {Type: "X509", Content: ca.Raw}}}, []byte(keyPass)); err != nil {
		t.Fatal(err)
	}
	var kb bytes.Buffer
	if err := ks.Store(&kb, []byte(storePass)); err != nil {
		t.Fatal(err)
	}
	ts := keystore.New()
	if err := ts.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Raw}}); err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := ts.Store(&tb, []byte(storePass)); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "server.jks", kb.Bytes()), writeFile(t, "trust.jks", tb.Bytes())
}

// An HTTPS server from each store format a Kafka user has (PEM, JKS,
// PKCS12), requiring a client certificate: a client with one from the
// trusted CA gets in, one without does not.
func TestServerTLSStores(t *testing.T) {
	ca := newCA(t, "rest-ca")
	key, cert := ca.leaf(t, "worker", x509.ExtKeyUsageServerAuth, "localhost")
	p12, err := pkcs12.Modern.Encode(key, cert, []*x509.Certificate{ca.cert}, "p12pass")
	if err != nil {
		t.Fatal(err)
	}
	p12Trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, "p12pass")
	if err != nil {
		t.Fatal(err)
	}
	jksKey, jksTrust := jksStores(t, key, cert, ca.cert, "storepass", "keypass")
	pemKeyFile := writeFile(t, "server.pem", append(pemCert(cert.Raw), pemKey(t, key)...))
	caFile := writeFile(t, "ca.pem", ca.pem)

	ckey, ccert := ca.leaf(t, "connectctl", x509.ExtKeyUsageClientAuth)
	clientProps := map[string]string{
		"ssl.truststore.location":        caFile,
		"ssl.keystore.certificate.chain": string(pemCert(ccert.Raw)),
		"ssl.keystore.key":               string(pemKey(t, ckey)),
	}
	for name, props := range map[string]map[string]string{
		"PEM": {"ssl.keystore.location": pemKeyFile, "ssl.truststore.location": caFile, "ssl.client.auth": "required"},
		"JKS": {"ssl.keystore.type": "JKS", "ssl.keystore.location": jksKey, "ssl.keystore.password": "storepass", "ssl.key.password": "keypass",
			"ssl.truststore.type": "JKS", "ssl.truststore.location": jksTrust, "ssl.truststore.password": "storepass", "ssl.client.auth": "required"},
		"JKS, types unset": {"ssl.keystore.location": jksKey, "ssl.keystore.password": "storepass", "ssl.key.password": "keypass",
			"ssl.truststore.location": jksTrust, "ssl.truststore.password": "storepass", "ssl.client.auth": "required"},
		"PKCS12": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": writeFile(t, "server.p12", p12), "ssl.keystore.password": "p12pass",
			"ssl.truststore.type": "PKCS12", "ssl.truststore.location": writeFile(t, "trust.p12", p12Trust), "ssl.truststore.password": "p12pass", "ssl.client.auth": "required"},
	} {
		srv, err := ServerTLS(props)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cl, err := ClientTLS(clientProps)
		if err != nil {
			t.Fatal(err)
		}
		if err := handshake(t, srv, cl, "localhost"); err != nil {
			t.Errorf("%s: a client with a certificate: %v", name, err)
		}
		bare, err := ClientTLS(map[string]string{"ssl.truststore.location": caFile})
		if err != nil {
			t.Fatal(err)
		}
		if err := handshake(t, srv, bare, "localhost"); err == nil {
			t.Errorf("%s: a client without a certificate got in", name)
		}
	}
	for props, want := range map[*map[string]string]string{
		{"ssl.truststore.location": caFile}:                                                             "an HTTPS listener needs its certificate",
		{"ssl.keystore.location": pemKeyFile, "ssl.client.auth": "required"}:                            "ssl.client.auth=required needs the CAs of the clients' certificates",
		{"ssl.keystore.location": pemKeyFile, "ssl.client.auth": "sometimes"}:                           "String must be one of: required, requested, none",
		{"ssl.keystore.type": "JKS", "ssl.keystore.location": jksKey, "ssl.keystore.password": "wrong"}: "reading the JKS key store",
	} {
		if _, err := ServerTLS(*props); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ServerTLS(%v): %v, want %q", *props, err, want)
		}
	}
}

// handshake connects a client with cl to a TLS server with srv over TCP
// and exchanges a byte, so that a refusal of the client's certificate
// (which TLS 1.3 sends after the client's handshake) reaches it.
func handshake(t *testing.T, srv, cl *tls.Config, name string) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 1)
		if _, err := c.Read(b); err == nil {
			_, _ = c.Write(b)
		}
	}()
	cl = cl.Clone()
	cl.ServerName = name
	c, err := tls.Dial("tcp", ln.Addr().String(), cl)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		return err
	}
	_, err = c.Read(make([]byte, 1))
	return err
}
