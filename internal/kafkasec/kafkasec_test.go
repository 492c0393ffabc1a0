package kafkasec

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const testTopic = "security-test"

// ------------------------------------------------------------ test PKI

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial int64

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert, key, pemCert(der)}
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func pemKey(t *testing.T, k crypto.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// issue signs a leaf certificate for pub and returns it as PEM.
func (ca *testCA) issue(t *testing.T, pub crypto.PublicKey, cn string, usage x509.ExtKeyUsage, dns ...string) []byte {
	t.Helper()
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
	}
	if usage == x509.ExtKeyUsageServerAuth && len(dns) == 1 && dns[0] == "localhost" {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pemCert(der)
}

// serverTLS returns a broker TLS config with a certificate from ca for the
// given names ("localhost" also gets the IP SAN 127.0.0.1).
func (ca *testCA) serverTLS(t *testing.T, dns ...string) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(ca.issue(t, &key.PublicKey, "broker", x509.ExtKeyUsageServerAuth, dns...), pemKey(t, key))
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureKey is testdata/client-key.pem, the key the encrypted fixtures hold.
func fixtureKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	b, _ := pem.Decode(readTestdata(t, "client-key.pem"))
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*ecdsa.PrivateKey)
}

// ------------------------------------------------------------ clusters

func newCluster(t *testing.T, opts ...kfake.Opt) string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, testTopic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

func newClient(t *testing.T, seeds string, props map[string]string, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts, err := ConnOptions(props, nil)
	if err != nil {
		t.Fatalf("ConnOptions: %v", err)
	}
	cl, err := kgo.NewClient(append(append(opts, kgo.SeedBrokers(strings.Split(seeds, ",")...)), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// roundTrip produces a record with a client built from props and reads it
// back with another.
func roundTrip(t *testing.T, seeds string, props map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	value := []byte(t.Name())
	prod := newClient(t, seeds, props)
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: testTopic, Value: value}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	cons := newClient(t, seeds, props, kgo.ConsumeTopics(testTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for {
		fs := cons.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			t.Fatalf("consume: %v", errs)
		}
		for _, r := range fs.Records() {
			if bytes.Equal(r.Value, value) {
				return
			}
		}
	}
}

// connectErr builds a client from props and returns what a request to
// the cluster returns.
func connectErr(t *testing.T, seeds string, props map[string]string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return newClient(t, seeds, props).Ping(ctx)
}

// authFailed reports whether err is what a client sees when the broker
// refuses its SASL credentials: Kafka answers SASL_AUTHENTICATION_FAILED,
// kfake closes the connection in the middle of the SASL exchange.
func authFailed(err error) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, io.EOF)
}

func wantConnectErr(t *testing.T, seeds string, props map[string]string, want string) {
	t.Helper()
	err := connectErr(t, seeds, props)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("connect error = %v, want one containing %q", err, want)
	}
}

// ------------------------------------------------------------ real connections

func TestPlaintextDefault(t *testing.T) {
	for _, props := range []map[string]string{
		{},
		{"security.protocol": "PLAINTEXT"},
		{"security.protocol": " plaintext "},
		// As in Java, ssl.* and sasl.* keys are ignored when the protocol
		// does not use them.
		{"security.protocol": "PLAINTEXT", "ssl.truststore.type": "JKS", "sasl.mechanism": "GSSAPI"},
	} {
		opts, err := ConnOptions(props, nil)
		if err != nil || len(opts) != 0 {
			t.Fatalf("ConnOptions(%v) = %d options, %v; want none", props, len(opts), err)
		}
	}
	roundTrip(t, newCluster(t), map[string]string{"security.protocol": "PLAINTEXT"})
}

func TestSSLTruststore(t *testing.T) {
	ca := newCA(t, "test-ca")
	seeds := newCluster(t, kfake.TLS(ca.serverTLS(t, "localhost")))
	caFile := writeFile(t, "ca.pem", append([]byte("some text before the block\n"), ca.pem...))

	t.Run("pem file", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{
			"security.protocol":       "SSL",
			"ssl.truststore.type":     "PEM",
			"ssl.truststore.location": caFile,
		})
	})
	t.Run("pem file, type unset", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{
			"security.protocol":       "ssl",
			"ssl.truststore.location": caFile,
		})
	})
	t.Run("inline certificates", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{
			"security.protocol":           "SSL",
			"ssl.truststore.type":         "PEM",
			"ssl.truststore.certificates": string(ca.pem),
		})
	})
	t.Run("inline certificates folded onto one line", func(t *testing.T) {
		// What a properties file with line continuations produces.
		roundTrip(t, seeds, map[string]string{
			"security.protocol":           "SSL",
			"ssl.truststore.type":         "PEM",
			"ssl.truststore.certificates": strings.ReplaceAll(string(ca.pem), "\n", ""),
		})
	})
	t.Run("explicit https", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{
			"security.protocol":                     "SSL",
			"ssl.truststore.location":               caFile,
			"ssl.endpoint.identification.algorithm": "HTTPS",
		})
	})
	t.Run("no truststore uses the system roots", func(t *testing.T) {
		wantConnectErr(t, seeds, map[string]string{"security.protocol": "SSL"}, "certificate signed by unknown authority")
	})
	t.Run("wrong CA", func(t *testing.T) {
		other := writeFile(t, "other.pem", newCA(t, "other-ca").pem)
		wantConnectErr(t, seeds, map[string]string{
			"security.protocol":       "SSL",
			"ssl.truststore.location": other,
		}, "certificate signed by unknown authority")
	})
}

func TestSSLEndpointIdentification(t *testing.T) {
	ca := newCA(t, "test-ca")
	// The broker's certificate names another host than the one dialed.
	seeds := newCluster(t, kfake.TLS(ca.serverTLS(t, "broker.invalid")))
	caFile := writeFile(t, "ca.pem", ca.pem)
	props := map[string]string{"security.protocol": "SSL", "ssl.truststore.location": caFile}

	wantConnectErr(t, seeds, props, "doesn't contain any IP SANs")

	props["ssl.endpoint.identification.algorithm"] = ""
	roundTrip(t, seeds, props)

	// The chain is still verified.
	props["ssl.truststore.location"] = writeFile(t, "other.pem", newCA(t, "other-ca").pem)
	wantConnectErr(t, seeds, props, "certificate signed by unknown authority")
}

func TestSSLClientCertificate(t *testing.T) {
	ca := newCA(t, "test-ca")
	srv := ca.serverTLS(t, "localhost")
	srv.ClientAuth = tls.RequireAndVerifyClientCert
	srv.ClientCAs = x509.NewCertPool()
	srv.ClientCAs.AddCert(ca.cert)
	seeds := newCluster(t, kfake.TLS(srv))
	caFile := writeFile(t, "ca.pem", ca.pem)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	chain := ca.issue(t, &key.PublicKey, "client", x509.ExtKeyUsageClientAuth)
	keyPEM := pemKey(t, key)

	fixChain := ca.issue(t, &fixtureKey(t).PublicKey, "fixture-client", x509.ExtKeyUsageClientAuth)
	fixEncrypted := readTestdata(t, "client-key-aes256-sha256.pem")

	base := func(kv ...string) map[string]string {
		m := map[string]string{
			"security.protocol":       "SSL",
			"ssl.truststore.type":     "PEM",
			"ssl.truststore.location": caFile,
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		name  string
		props map[string]string
	}{
		{"keystore file", base(
			"ssl.keystore.type", "PEM",
			"ssl.keystore.location", writeFile(t, "ks.pem", append(bytes.Clone(keyPEM), chain...)))},
		{"inline chain and key", base(
			"ssl.keystore.type", "PEM",
			"ssl.keystore.certificate.chain", string(chain),
			"ssl.keystore.key", string(keyPEM))},
		{"inline encrypted key", base(
			"ssl.keystore.type", "PEM",
			"ssl.keystore.certificate.chain", string(fixChain),
			"ssl.keystore.key", string(fixEncrypted),
			"ssl.key.password", "key-secret")},
		{"keystore file with encrypted key, type unset", base(
			"ssl.keystore.location", writeFile(t, "ks-enc.pem", append(bytes.Clone(fixChain), fixEncrypted...)),
			"ssl.key.password", "key-secret")},
	} {
		t.Run(c.name, func(t *testing.T) { roundTrip(t, seeds, c.props) })
	}
	t.Run("no client certificate", func(t *testing.T) {
		wantConnectErr(t, seeds, base(), "certificate required")
	})
}

func TestSASLPlaintextPLAIN(t *testing.T) {
	seeds := newCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "admin-secret"))
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`
	t.Run("mechanism defaults to PLAIN", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas})
	})
	t.Run("explicit PLAIN", func(t *testing.T) {
		roundTrip(t, seeds, map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas})
	})
	t.Run("wrong password", func(t *testing.T) {
		err := connectErr(t, seeds, map[string]string{
			"security.protocol": "SASL_PLAINTEXT",
			"sasl.jaas.config":  strings.Replace(jaas, "admin-secret", "wrong", 1),
		})
		if !authFailed(err) {
			t.Fatalf("err = %v, want an authentication failure", err)
		}
	})
	t.Run("no SASL", func(t *testing.T) {
		if err := connectErr(t, seeds, map[string]string{"security.protocol": "PLAINTEXT"}); err == nil {
			t.Fatal("unauthenticated request to a SASL cluster succeeded")
		}
	})
}

func TestSASLSSLSCRAM(t *testing.T) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			ca := newCA(t, "test-ca")
			seeds := newCluster(t,
				kfake.TLS(ca.serverTLS(t, "localhost")),
				kfake.EnableSASL(),
				kfake.Superuser(mech, "scram-user", `scram "secret"\`),
			)
			props := func(mech, pass string) map[string]string {
				return map[string]string{
					"security.protocol":       "SASL_SSL",
					"ssl.truststore.type":     "PEM",
					"ssl.truststore.location": writeFile(t, "ca.pem", ca.pem),
					"sasl.mechanism":          mech,
					"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required
						username="scram-user"
						password="` + pass + `";`,
				}
			}
			roundTrip(t, seeds, props(mech, `scram \"secret\"\\`))

			err := connectErr(t, seeds, props(mech, "wrong"))
			if !authFailed(err) {
				t.Fatalf("wrong password: err = %v, want an authentication failure", err)
			}

			other := "SCRAM-SHA-512"
			if mech == other {
				other = "SCRAM-SHA-256"
			}
			if err := connectErr(t, seeds, props(other, `scram \"secret\"\\`)); err == nil {
				t.Fatalf("%s credentials accepted for %s", mech, other)
			}
		})
	}
}

// ------------------------------------------------------------ configuration errors

func TestSecurityOptionErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca := newCA(t, "test-ca")
	caFile := file("ca.pem", ca.pem)
	jks := file("truststore.jks", []byte("\xfe\xed\xfe\xed\x00\x00\x00\x02binary"))
	missing := filepath.Join(dir, "missing.pem")

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	chain := string(ca.issue(t, &key.PublicKey, "client", x509.ExtKeyUsageClientAuth))
	keyPEM := string(pemKey(t, key))
	otherPEM := string(pemKey(t, other))
	keyOnly := file("key-only.pem", []byte(keyPEM))
	twoKeys := file("two-keys.pem", []byte(chain+keyPEM+otherPEM))
	enc := string(readTestdata(t, "client-key-aes256-sha256.pem"))
	fixChain := string(ca.issue(t, &fixtureKey(t).PublicKey, "client", x509.ExtKeyUsageClientAuth))

	const secret = "s3cr3t-value"
	ssl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SSL"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	sasl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SASL_PLAINTEXT"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `";`
	const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="` + secret + `";`

	for _, c := range []struct {
		name  string
		props map[string]string
		want  string
		// prefix: the message ends with text from the standard library.
		prefix bool
	}{
		{"unknown protocol", map[string]string{"security.protocol": "TLS"},
			"Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", false},

		// Trust store.
		{"damaged JKS truststore", ssl("ssl.truststore.type", "JKS", "ssl.truststore.location", jks),
			"Invalid value " + jks + " for configuration ssl.truststore.location: reading the JKS trust store: ", true},
		{"PKCS12 truststore without a file", ssl("ssl.truststore.type", "pkcs12"),
			"Invalid configuration: ssl.truststore.type is PKCS12 but ssl.truststore.location is not set", false},
		{"other truststore type", ssl("ssl.truststore.type", "BKS"),
			"Invalid value BKS for configuration ssl.truststore.type: unsupported store type: PEM, JKS or PKCS12", false},
		{"truststore location and certificates", ssl("ssl.truststore.location", caFile, "ssl.truststore.certificates", string(ca.pem)),
			"Invalid configuration: both ssl.truststore.location and ssl.truststore.certificates are set; set only one", false},
		{"truststore password without truststore", ssl("ssl.truststore.password", secret),
			"Invalid configuration: ssl.truststore.password is set but no trust store is (ssl.truststore.location or ssl.truststore.certificates)", false},
		{"truststore password with PEM", ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", caFile, "ssl.truststore.password", secret),
			"Invalid configuration: ssl.truststore.password cannot be set for a PEM trust store; remove it", false},
		{"missing truststore file", ssl("ssl.truststore.location", missing),
			"Invalid value " + missing + " for configuration ssl.truststore.location: open " + missing + ": no such file or directory", false},
		{"damaged JKS file with the type unset (Kafka's default, JKS)", ssl("ssl.truststore.location", jks),
			"Invalid value " + jks + " for configuration ssl.truststore.location: reading the JKS trust store: ", true},
		{"JKS file with type PEM", ssl("ssl.truststore.type", "PEM", "ssl.truststore.location", jks),
			"Invalid value " + jks + " for configuration ssl.truststore.location: no PEM data found", false},
		{"truststore without certificates", ssl("ssl.truststore.location", keyOnly),
			"Invalid value " + keyOnly + " for configuration ssl.truststore.location: no CERTIFICATE found in the PEM data", false},
		{"inline truststore bad base64", ssl("ssl.truststore.certificates", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----"),
			"Invalid value [hidden] for configuration ssl.truststore.certificates: PEM block 1 (CERTIFICATE): invalid base64 content", false},
		{"inline truststore bad certificate", ssl("ssl.truststore.certificates", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"),
			"Invalid value [hidden] for configuration ssl.truststore.certificates: PEM block 1: x509: ", true},
		{"inline truststore mismatched END", ssl("ssl.truststore.certificates", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END PRIVATE KEY-----"),
			"Invalid value [hidden] for configuration ssl.truststore.certificates: PEM block 1: BEGIN CERTIFICATE ends with END PRIVATE KEY", false},

		// Key store.
		{"JKS keystore without a file", ssl("ssl.keystore.type", "JKS"),
			"Invalid configuration: ssl.keystore.type is JKS but ssl.keystore.location is not set", false},
		{"other keystore type", ssl("ssl.keystore.type", "Windows-MY"),
			"Invalid value Windows-MY for configuration ssl.keystore.type: unsupported store type: PEM, JKS or PKCS12", false},
		{"key without chain", ssl("ssl.keystore.key", keyPEM),
			"Invalid configuration: ssl.keystore.key is set but ssl.keystore.certificate.chain is not", false},
		{"chain without key", ssl("ssl.keystore.certificate.chain", chain),
			"Invalid configuration: ssl.keystore.certificate.chain is set but ssl.keystore.key is not", false},
		{"keystore location and key", ssl("ssl.keystore.location", twoKeys, "ssl.keystore.certificate.chain", chain, "ssl.keystore.key", keyPEM),
			"Invalid configuration: both ssl.keystore.location and ssl.keystore.key are set; set only one", false},
		{"keystore password with inline key", ssl("ssl.keystore.certificate.chain", chain, "ssl.keystore.key", keyPEM, "ssl.keystore.password", secret),
			"Invalid configuration: ssl.keystore.password cannot be set for a PEM key store, only ssl.key.password may be", false},
		{"keystore password with keystore file", ssl("ssl.keystore.location", twoKeys, "ssl.keystore.password", secret),
			"Invalid configuration: ssl.keystore.password cannot be set for a PEM key store, only ssl.key.password may be", false},
		{"keystore password without keystore", ssl("ssl.keystore.password", secret),
			"Invalid configuration: ssl.keystore.password is set but no key store is (ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key)", false},
		{"damaged keystore file with the type unset (Kafka's default, JKS)", ssl("ssl.keystore.location", jks),
			"Invalid value " + jks + " for configuration ssl.keystore.location: reading the JKS key store: ", true},
		{"missing keystore file", ssl("ssl.keystore.location", missing),
			"Invalid value " + missing + " for configuration ssl.keystore.location: open " + missing + ": no such file or directory", false},
		{"keystore file without certificate", ssl("ssl.keystore.location", keyOnly),
			"Invalid value " + keyOnly + " for configuration ssl.keystore.location: no CERTIFICATE found in the PEM data", false},
		{"keystore file without key", ssl("ssl.keystore.location", caFile),
			"Invalid value " + caFile + " for configuration ssl.keystore.location: no PRIVATE KEY found in the PEM data", false},
		{"keystore file with two keys", ssl("ssl.keystore.location", twoKeys),
			"Invalid value " + twoKeys + " for configuration ssl.keystore.location: more than one PRIVATE KEY in the PEM data", false},
		{"inline key not matching the chain", ssl("ssl.keystore.certificate.chain", chain, "ssl.keystore.key", otherPEM),
			"Invalid value [hidden] for configuration ssl.keystore.certificate.chain: the private key does not match the first certificate of the chain or the certificate is invalid: tls: private key does not match public key", false},
		{"inline chain without certificate", ssl("ssl.keystore.certificate.chain", keyPEM, "ssl.keystore.key", keyPEM),
			"Invalid value [hidden] for configuration ssl.keystore.certificate.chain: no CERTIFICATE found in the PEM data", false},
		{"inline key not PEM", ssl("ssl.keystore.certificate.chain", chain, "ssl.keystore.key", secret),
			"Invalid value [hidden] for configuration ssl.keystore.key: no PEM data found", false},
		{"encrypted key without password", ssl("ssl.keystore.certificate.chain", fixChain, "ssl.keystore.key", enc),
			"Invalid value [hidden] for configuration ssl.keystore.key: the private key is encrypted and ssl.key.password is not set", false},
		{"encrypted key with wrong password", ssl("ssl.keystore.certificate.chain", fixChain, "ssl.keystore.key", enc, "ssl.key.password", secret),
			"Invalid value [hidden] for configuration ssl.keystore.key: cannot decrypt the private key: wrong ssl.key.password or corrupt key", false},
		{"scrypt-encrypted key", ssl("ssl.keystore.certificate.chain", fixChain, "ssl.keystore.key", string(readTestdata(t, "client-key-scrypt.pem")), "ssl.key.password", "key-secret"),
			"Invalid value [hidden] for configuration ssl.keystore.key: unsupported private key encryption (scrypt key derivation): only PBES2 with PBKDF2 and AES-CBC or DES-EDE3-CBC is supported; re-encrypt the key with openssl pkcs8 -topk8 -v2 aes-256-cbc", false},
		{"PKCS#12 PBE-encrypted key", ssl("ssl.keystore.certificate.chain", fixChain, "ssl.keystore.key", string(readTestdata(t, "client-key-pbe-sha1-3des.pem")), "ssl.key.password", "key-secret"),
			"Invalid value [hidden] for configuration ssl.keystore.key: unsupported private key encryption (algorithm 1.2.840.113549.1.12.1.3): only PBES2 with PBKDF2 and AES-CBC or DES-EDE3-CBC is supported; re-encrypt the key with openssl pkcs8 -topk8 -v2 aes-256-cbc", false},
		{"legacy OpenSSL-encrypted key", ssl("ssl.keystore.certificate.chain", fixChain, "ssl.keystore.key", string(readTestdata(t, "client-key-legacy.pem")), "ssl.key.password", "key-secret"),
			"Invalid value [hidden] for configuration ssl.keystore.key: PEM block 1: legacy OpenSSL-encrypted key (Proc-Type: 4,ENCRYPTED) is not supported; convert it to encrypted PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)", false},
		{"unknown endpoint identification algorithm", ssl("ssl.endpoint.identification.algorithm", "ldaps"),
			"Invalid value ldaps for configuration ssl.endpoint.identification.algorithm: must be https (verify the broker's hostname) or empty (do not verify it)", false},
		{"SASL_SSL checks TLS settings too", map[string]string{"security.protocol": "SASL_SSL", "ssl.truststore.type": "JKS", "sasl.jaas.config": plainJAAS},
			"Invalid configuration: ssl.truststore.type is JKS but ssl.truststore.location is not set", false},

		// SASL.
		{"GSSAPI", sasl("sasl.mechanism", "GSSAPI", "sasl.jaas.config", plainJAAS),
			"Invalid value GSSAPI for configuration sasl.mechanism: GSSAPI (Kerberos) is not supported; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", false},
		{"OAUTHBEARER", sasl("sasl.mechanism", "OAUTHBEARER"),
			"Invalid value OAUTHBEARER for configuration sasl.mechanism: OAUTHBEARER is not supported; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", false},
		{"unknown mechanism", sasl("sasl.mechanism", "DIGEST-MD5"),
			"Invalid value DIGEST-MD5 for configuration sasl.mechanism: unsupported SASL mechanism; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", false},
		{"no JAAS config", sasl(),
			"Missing required configuration sasl.jaas.config: security.protocol SASL_PLAINTEXT needs the credentials in sasl.jaas.config (a static JAAS file is not read)", false},
		{"blank JAAS config", map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": "  "},
			"Missing required configuration sasl.jaas.config: security.protocol SASL_SSL needs the credentials in sasl.jaas.config (a static JAAS file is not read)", false},
		{"JAAS syntax error", sasl("sasl.jaas.config", strings.TrimSuffix(plainJAAS, ";")),
			"Invalid value [hidden] for configuration sasl.jaas.config: JAAS config entry not terminated by semi-colon", false},
		{"JAAS without login module", sasl("sasl.jaas.config", "/* nothing */"),
			"Invalid value [hidden] for configuration sasl.jaas.config: JAAS config property does not contain any login modules", false},
		{"JAAS with two login modules", sasl("sasl.jaas.config", plainJAAS+" "+plainJAAS),
			"Invalid value [hidden] for configuration sasl.jaas.config: JAAS config property contains 2 login modules, should be 1 module", false},
		{"Kerberos login module", sasl("sasl.jaas.config", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`),
			"Invalid value [hidden] for configuration sasl.jaas.config: login module com.sun.security.auth.module.Krb5LoginModule is not supported; use org.apache.kafka.common.security.plain.PlainLoginModule or org.apache.kafka.common.security.scram.ScramLoginModule", false},
		{"PlainLoginModule with SCRAM", sasl("sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", plainJAAS),
			"Invalid configuration: sasl.jaas.config uses PlainLoginModule but sasl.mechanism is SCRAM-SHA-256; set sasl.mechanism=PLAIN or use ScramLoginModule", false},
		{"ScramLoginModule with the default mechanism", sasl("sasl.jaas.config", scramJAAS),
			"Invalid configuration: sasl.jaas.config uses ScramLoginModule but sasl.mechanism is PLAIN; set sasl.mechanism=SCRAM-SHA-256 or SCRAM-SHA-512", false},
		{"no username", sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required password="`+secret+`";`),
			"Invalid value [hidden] for configuration sasl.jaas.config: the login module needs a non-empty username option", false},
		{"empty password", sasl("sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="";`),
			"Invalid value [hidden] for configuration sasl.jaas.config: the login module needs a non-empty password option", false},
		{"bad tokenauth", sasl("sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", strings.TrimSuffix(scramJAAS, ";")+` tokenauth="yes";`),
			"Invalid value [hidden] for configuration sasl.jaas.config: the tokenauth option must be true or false", false},
		{"unquoted secret with odd characters", sasl("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=1`+secret+`;`),
			"Invalid value [hidden] for configuration sasl.jaas.config: Value not specified for key 'password' in JAAS config (quote the value)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ConnOptions(c.props, nil)
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			got := err.Error()
			if c.prefix && !strings.HasPrefix(got, c.want) || !c.prefix && got != c.want {
				t.Fatalf("error\n got: %s\nwant: %s", got, c.want)
			}
			if strings.Contains(got, secret) || strings.Contains(got, "-----BEGIN") {
				t.Fatalf("error reveals a secret: %s", got)
			}
		})
	}
}

func TestSASLOptionsAccepted(t *testing.T) {
	for _, props := range []map[string]string{
		{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "plain",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`},
		{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p" tokenauth="true";`},
		// As in Java, sasl.* keys are ignored for SSL.
		{"security.protocol": "SSL", "sasl.mechanism": "GSSAPI"},
	} {
		if _, err := ConnOptions(props, nil); err != nil {
			t.Errorf("ConnOptions(%v): %v", props, err)
		}
	}
}

// ------------------------------------------------------------ encrypted keys

func TestEncryptedPKCS8(t *testing.T) {
	want := fixtureKey(t)
	for _, name := range []string{
		"client-key-aes256-sha256.pem",
		"client-key-aes256-sha224.pem",
		"client-key-aes192-sha384.pem",
		"client-key-aes128-sha512.pem",
		"client-key-des3-sha1.pem",
	} {
		t.Run(name, func(t *testing.T) {
			blocks, err := parsePEM(readTestdata(t, name))
			if err != nil || len(blocks) != 1 {
				t.Fatalf("parsePEM: %d blocks, %v", len(blocks), err)
			}
			k, err := parsePrivateKey(blocks[0], "key-secret")
			if err != nil {
				t.Fatal(err)
			}
			if !want.Equal(k) {
				t.Fatal("decrypted key differs from testdata/client-key.pem")
			}
			if _, err := parsePrivateKey(blocks[0], "wrong"); err == nil || !strings.Contains(err.Error(), "wrong ssl.key.password") {
				t.Fatalf("wrong password: err = %v", err)
			}
		})
	}
}

func TestParsePEMFolded(t *testing.T) {
	data := readTestdata(t, "client-key.pem")
	folded := "junk " + strings.ReplaceAll(string(data), "\n", "") + " junk"
	blocks, err := parsePEM([]byte(folded))
	if err != nil || len(blocks) != 1 || blocks[0].Type != "PRIVATE KEY" {
		t.Fatalf("parsePEM = %v, %v", blocks, err)
	}
	std, _ := pem.Decode(data)
	if !bytes.Equal(blocks[0].Bytes, std.Bytes) {
		t.Fatal("folded PEM decodes differently")
	}
}

// ------------------------------------------------------------ JAAS parser

func TestParseJAAS(t *testing.T) {
	const plainMod = "org.apache.kafka.common.security.plain.PlainLoginModule"
	opts := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		in   string
		want []jaasEntry
	}{
		{``, nil},
		{" \t\n// only a comment\n/* and\nanother */ ", nil},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
			[]jaasEntry{{plainMod, "required", opts("username", "alice", "password", "alice-secret")}}},
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`,
			[]jaasEntry{{scramLoginModule, "required", opts("username", "u", "password", "p")}}},
		{"M REQUIRED;", []jaasEntry{{"M", "required", opts()}}},
		{"M Requisite a=b;", []jaasEntry{{"M", "requisite", opts("a", "b")}}},
		{"M sufficient user_name=alice-1.x$ ;", []jaasEntry{{"M", "sufficient", opts("user_name", "alice-1.x$")}}},
		{"M optional k='single \"quoted\"';", []jaasEntry{{"M", "optional", opts("k", `single "quoted"`)}}},
		{`M required k="a\"b\\c\'d";`, []jaasEntry{{"M", "required", opts("k", `a"b\c'd`)}}},
		{`M required k="\n\t\r\b\f\a\v\q";`, []jaasEntry{{"M", "required", opts("k", "\n\t\r\b\f\a\vq")}}},
		{`M required k="\101\7\0\377\400\18";`, []jaasEntry{{"M", "required", opts("k", "A\a\x00\u00ff 0\x018")}}},
		{`M required k="=;/* not a comment */ // nor this";`, []jaasEntry{{"M", "required", opts("k", "=;/* not a comment */ // nor this")}}},
		{`M required k="héllo ☃" ü="\é";`, []jaasEntry{{"M", "required", opts("k", "héllo ☃", "ü", "é")}}},
		{`M required k="";`, []jaasEntry{{"M", "required", opts("k", "")}}},
		{"M\nrequired\n\tusername = \"u\" /* c */\n\tpassword=\"p\" // c\n;",
			[]jaasEntry{{"M", "required", opts("username", "u", "password", "p")}}},
		{"A required a=\"1\"; B optional;", []jaasEntry{{"A", "required", opts("a", "1")}, {"B", "optional", opts()}}},
	} {
		got, err := parseJAAS(c.in)
		if err != nil {
			t.Errorf("parseJAAS(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseJAAS(%q)\n got %#v\nwant %#v", c.in, got, c.want)
		}
	}
}

func TestParseJAASErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`M required k="v"`, "JAAS config entry not terminated by semi-colon"},
		{`M required`, "JAAS config entry not terminated by semi-colon"},
		{`M;`, "Login module control flag not specified in JAAS config at offset 1"},
		{`M`, "Login module control flag not specified in JAAS config at offset 1"},
		{`M mandatory;`, "Invalid login module control flag 'mandatory' in JAAS config at offset 2"},
		{`M required "M2";`, "option name expected at offset 11 in JAAS config"},
		{`M required k;`, "Value not specified for key 'k' in JAAS config"},
		{`M required k "v";`, "Value not specified for key 'k' in JAAS config"},
		{`M required k=;`, "Value not specified for key 'k' in JAAS config (quote the value)"},
		{`M required k=123;`, "Value not specified for key 'k' in JAAS config (quote the value)"},
		{`M required k=.5;`, "Value not specified for key 'k' in JAAS config (quote the value)"},
		{`M required k=#;`, "Value not specified for key 'k' in JAAS config (quote the value)"},
		{`M required k==;`, "Value not specified for key 'k' in JAAS config (quote the value)"},
		{`M required k="v" k="w";`, "option 'k' repeated in JAAS config"},
		{`M required k="v;`, "unterminated quoted string at offset 13 in JAAS config"},
		{`M required k='v";`, "unterminated quoted string at offset 13 in JAAS config"},
		{`M required k="v\`, "unterminated quoted string at offset 13 in JAAS config"},
		{"M required k=\"v\nw\";", "unterminated quoted string at offset 13 in JAAS config (line break in string; write \\n)"},
		{"M required k=\"v\\\nw\";", "unterminated quoted string at offset 13 in JAAS config (line break in string; write \\n)"},
		{`M required /* k="v";`, "unterminated comment at offset 11 in JAAS config"},
		{`M required / k="v";`, "unexpected character at offset 11 in JAAS config"},
		{`M required k=v#w;`, "unexpected character at offset 14 in JAAS config"},
		{`;`, "login module class expected at offset 0 in JAAS config"},
		{`"M" required;`, "login module class expected at offset 0 in JAAS config"},
		{`1M required;`, "login module class expected at offset 0 in JAAS config"},
		{`M 1;`, "Login module control flag not specified in JAAS config at offset 2"},
		{"M required k=\"\xff\";", "JAAS config is not valid UTF-8"},
	} {
		_, err := parseJAAS(c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("parseJAAS(%q) error = %v, want %q", c.in, err, c.want)
		}
	}
}

// formatJAAS writes entries back in the syntax parseJAAS reads.
func formatJAAS(entries []jaasEntry) string {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.LoginModule + " " + e.Flag)
		keys := make([]string, 0, len(e.Options))
		for k := range e.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace(e.Options[k])
			fmt.Fprintf(&b, " %s=\"%s\"", k, v)
		}
		b.WriteString(";\n")
	}
	return b.String()
}

func FuzzParseJAAS(f *testing.F) {
	for _, s := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
		`org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p" tokenauth=true;`,
		`M required k='a\'b\\c\n\101' /* c */ // d` + "\n;",
		`A optional; B sufficient x="y";`,
		`M required k="v`,
		`M required k="\377\400é";`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := parseJAAS(s)
		if err != nil {
			return
		}
		out := formatJAAS(entries)
		again, err := parseJAAS(out)
		if err != nil {
			t.Fatalf("reparse of %q: %v", out, err)
		}
		if len(entries) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(entries, again) {
			t.Fatalf("round trip of %q via %q:\n got %#v\nwant %#v", s, out, again, entries)
		}
	})
}

// ConnOptions' dialer (the embedded broker's in-process path) carries
// plaintext clients; a TLS client keeps franz-go's dialer, which franz-go
// would otherwise refuse to combine with its TLS config.
func TestConnOptionsDial(t *testing.T) {
	seeds := newCluster(t)
	var dials atomic.Int32
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, host)
	}
	for _, c := range []struct {
		props map[string]string
		want  bool
	}{
		{map[string]string{}, true},
		{map[string]string{"security.protocol": "plaintext"}, true},
		{map[string]string{"security.protocol": "SSL"}, false},
	} {
		dials.Store(0)
		opts, err := ConnOptions(c.props, dial)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(seeds), kgo.RequestRetries(0))...)
		if err != nil {
			t.Fatalf("%v: %v", c.props, err)
		}
		// The TLS client's handshake with this plaintext broker fails
		// only when the wait ends.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = cl.Ping(ctx)
		cancel()
		cl.Close()
		if used := dials.Load() > 0; used != c.want {
			t.Errorf("%v: dialer used %t (ping: %v), want %t", c.props, used, err, c.want)
		}
	}
}

// enable.metrics.push=false keeps a client from asking the broker for a

// ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites narrow what
// a client negotiates, as in Java, against a real TLS broker; what Go's
// TLS cannot honour is refused, naming the key.
func TestSSLProtocolsAndCipherSuites(t *testing.T) {
	ca := newCA(t, "test-ca")
	caFile := writeFile(t, "ca.pem", ca.pem)
	ssl := func(kv ...string) map[string]string {
		m := map[string]string{"security.protocol": "SSL", "ssl.truststore.location": caFile}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// A broker of TLS 1.2 with one cipher suite.
	tls12 := ca.serverTLS(t, "localhost")
	tls12.MaxVersion = tls.VersionTLS12
	tls12.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	seeds12 := newCluster(t, kfake.TLS(tls12))
	// A broker of TLS 1.3 alone.
	tls13 := ca.serverTLS(t, "localhost")
	tls13.MinVersion = tls.VersionTLS13
	seeds13 := newCluster(t, kfake.TLS(tls13))

	roundTrip(t, seeds12, ssl())
	roundTrip(t, seeds13, ssl())
	roundTrip(t, seeds12, ssl("ssl.enabled.protocols", "TLSv1.2", "ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))
	roundTrip(t, seeds13, ssl("ssl.cipher.suites", "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"))
	wantConnectErr(t, seeds12, ssl("ssl.enabled.protocols", "TLSv1.3"), "protocol version")
	wantConnectErr(t, seeds13, ssl("ssl.protocol", "TLSv1.2"), "protocol version")
	wantConnectErr(t, seeds12, ssl("ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"), "handshake failure")
	// Only TLS 1.2 suites listed: no TLS 1.3, as in Java.
	wantConnectErr(t, seeds13, ssl("ssl.cipher.suites", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"), "protocol version")

	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{ssl("ssl.enabled.protocols", "TLSv1.1,TLSv1.2"),
			"Invalid value TLSv1.1,TLSv1.2 for configuration ssl.enabled.protocols: connectd's Kafka clients speak TLSv1.2 and TLSv1.3 only, not TLSv1.1"},
		{ssl("ssl.protocol", "SSLv3"),
			"Invalid value SSLv3 for configuration ssl.protocol: connectd's Kafka clients take TLSv1.2, TLSv1.3 or TLS"},
		{ssl("ssl.protocol", "TLSv1.2", "ssl.enabled.protocols", "TLSv1.3"),
			"Invalid value for configuration ssl.enabled.protocols: with ssl.protocol=TLSv1.2 and ssl.enabled.protocols=TLSv1.3 no TLS version is left"},
		{ssl("ssl.cipher.suites", "TLS_RSA_WITH_RC4_128_SHA"),
			"Invalid value TLS_RSA_WITH_RC4_128_SHA for configuration ssl.cipher.suites: TLS_RSA_WITH_RC4_128_SHA is not a cipher suite connectd's Kafka clients offer"},
		{ssl("ssl.cipher.suites", "TLS_AES_128_GCM_SHA256"),
			"Invalid value TLS_AES_128_GCM_SHA256 for configuration ssl.cipher.suites: TLS 1.3 cipher suites can be taken all (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256) or none, not some"},
	} {
		if _, err := ConnOptions(c.props, nil); err == nil || err.Error() != c.want {
			t.Errorf("ConnOptions(%v): %v\nwant %s", c.props, err, c.want)
		}
	}
}
