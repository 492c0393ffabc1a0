package kafkasec

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Java's binary key and trust stores, JKS and PKCS12 (the formats Kafka
// users already have), read with ssl.keystore.password and
// ssl.truststore.password; a JKS key entry's own password is
// ssl.key.password, or the store's when unset, as Java's key manager
// takes it.

// binaryTrustStore reads the trusted certificates of a JKS or PKCS12
// store.
func binaryTrustStore(p secProps, typ string, data []byte) (*x509.CertPool, error) {
	loc, pass := p.get(keyTruststoreLocation), p.get(keyTruststorePassword)
	var certs []*x509.Certificate
	switch typ {
	case "PKCS12":
		cs, err := pkcs12.DecodeTrustStore(data, pass)
		if err != nil {
			return nil, invalidValue(keyTruststoreLocation, loc, "reading the PKCS12 trust store: "+err.Error())
		}
		certs = cs
	case "JKS":
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(pass)); err != nil {
			return nil, invalidValue(keyTruststoreLocation, loc, "reading the JKS trust store: "+err.Error())
		}
		for _, alias := range ks.Aliases() {
			if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
				c, err := x509.ParseCertificate(e.Certificate.Content)
				if err != nil {
					return nil, invalidValue(keyTruststoreLocation, loc, fmt.Sprintf("entry %s: %v", alias, err))
				}
				certs = append(certs, c)
			}
		}
	}
	if len(certs) == 0 {
		return nil, invalidValue(keyTruststoreLocation, loc, "no trusted certificate in the "+typ+" trust store")
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// binaryKeyStore reads the one private key entry of a JKS or PKCS12
// store, with its chain.
func binaryKeyStore(p secProps, typ string, data []byte) (*tls.Certificate, error) {
	loc, storePass, keyPass := p.get(keyKeystoreLocation), p.get(keyKeystorePassword), p.get(keyKeyPassword)
	if keyPass == "" {
		keyPass = storePass
	}
	cert := &tls.Certificate{}
	switch typ {
	case "PKCS12":
		key, leaf, chain, err := pkcs12.DecodeChain(data, storePass)
		if err != nil {
			return nil, invalidValue(keyKeystoreLocation, loc, "reading the PKCS12 key store: "+err.Error())
		}
		cert.PrivateKey, cert.Leaf = key, leaf
		cert.Certificate = append([][]byte{leaf.Raw}, rawOf(chain)...)
	case "JKS":
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(storePass)); err != nil {
			return nil, invalidValue(keyKeystoreLocation, loc, "reading the JKS key store: "+err.Error())
		}
		var aliases []string
		for _, a := range ks.Aliases() {
			if ks.IsPrivateKeyEntry(a) {
				aliases = append(aliases, a)
			}
		}
		if len(aliases) != 1 {
			return nil, invalidValue(keyKeystoreLocation, loc, fmt.Sprintf("the JKS key store holds %d private keys, want one", len(aliases)))
		}
		e, err := ks.GetPrivateKeyEntry(aliases[0], []byte(keyPass))
		if err != nil {
			return nil, invalidValue(keyKeystoreLocation, loc, fmt.Sprintf("the private key %s (with %s, else %s): %v", aliases[0], keyKeyPassword, keyKeystorePassword, err))
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, invalidValue(keyKeystoreLocation, loc, fmt.Sprintf("the private key %s: %v", aliases[0], err))
		}
		cert.PrivateKey = key
		for _, c := range e.CertificateChain {
			cert.Certificate = append(cert.Certificate, slices.Clone(c.Content))
		}
		if len(cert.Certificate) == 0 {
			return nil, invalidValue(keyKeystoreLocation, loc, "the private key "+aliases[0]+" has no certificate")
		}
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, invalidValue(keyKeystoreLocation, loc, err.Error())
		}
	}
	return cert, nil
}

func rawOf(certs []*x509.Certificate) [][]byte {
	out := make([][]byte, 0, len(certs))
	for _, c := range certs {
		out = append(out, c.Raw)
	}
	return out
}

// ServerTLS is the TLS of an HTTPS server from Kafka's ssl.* keys, as a
// Kafka Connect worker's REST listeners take them: the key store is the
// server's certificate (required), the trust store the CAs its clients'
// certificates are checked against, ssl.client.auth (none, requested,
// required) whether clients must show one; the protocols and cipher
// suites as for a client.
func ServerTLS(props map[string]string) (*tls.Config, error) {
	p := secProps(props)
	cert, err := keyStore(p)
	if err != nil {
		return nil, err
	}
	if cert == nil {
		return nil, fmt.Errorf("Invalid configuration: an HTTPS listener needs its certificate: %s (or %s and %s)", keyKeystoreLocation, keyKeystoreChain, keyKeystoreKey)
	}
	cas, err := trustStore(p)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{*cert}, ClientCAs: cas}
	if err := tlsVersions(p, cfg); err != nil {
		return nil, err
	}
	switch auth := strings.ToLower(p.get(keyClientAuth)); auth {
	case "", "none":
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, invalidValue(keyClientAuth, p.get(keyClientAuth), "String must be one of: required, requested, none")
	}
	if cfg.ClientAuth != tls.NoClientCert && cas == nil {
		return nil, fmt.Errorf("Invalid configuration: %s=%s needs the CAs of the clients' certificates: %s (or %s)", keyClientAuth, p.get(keyClientAuth), keyTruststoreLocation, keyTruststoreCerts)
	}
	return cfg, nil
}

// ClientTLS is the TLS of a client from Kafka's ssl.* keys (a worker's
// requests to another worker's HTTPS listener).
func ClientTLS(props map[string]string) (*tls.Config, error) {
	return tlsConfig(secProps(props))
}
