// Package kafkasec turns the connection settings of Kafka clients into
// franz-go options: security.protocol, the ssl.* settings of Kafka's
// default SSL engine factory (PEM stores only) and the sasl.* settings for
// the PLAIN and SCRAM mechanisms, with credentials from sasl.jaas.config.
// The worker's clients, the server's and connectctl's share it.
package kafkasec

import (
	"bytes"
	"context"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const (
	keySecurityProtocol     = "security.protocol"
	keyTruststoreType       = "ssl.truststore.type"
	keyTruststoreLocation   = "ssl.truststore.location"
	keyTruststoreCerts      = "ssl.truststore.certificates"
	keyTruststorePassword   = "ssl.truststore.password"
	keyKeystoreType         = "ssl.keystore.type"
	keyKeystoreLocation     = "ssl.keystore.location"
	keyKeystoreChain        = "ssl.keystore.certificate.chain"
	keyKeystoreKey          = "ssl.keystore.key"
	keyKeystorePassword     = "ssl.keystore.password"
	keyKeyPassword          = "ssl.key.password"
	keyEndpointIdentication = "ssl.endpoint.identification.algorithm"
	keySASLMechanism        = "sasl.mechanism"
	keySASLJAASConfig       = "sasl.jaas.config"
	keySSLProtocol          = "ssl.protocol"
	keyEnabledProtocols     = "ssl.enabled.protocols"
	keyCipherSuites         = "ssl.cipher.suites"
	keyClientAuth           = "ssl.client.auth"

	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// Keys are the keys ConnOptions reads, as Kafka's clients name them, so
// that a worker's config spec can declare them without parsing them.
func Keys() []string {
	return []string{
		keySecurityProtocol,
		keyTruststoreType, keyTruststoreLocation, keyTruststoreCerts, keyTruststorePassword,
		keyKeystoreType, keyKeystoreLocation, keyKeystoreChain, keyKeystoreKey, keyKeystorePassword, keyKeyPassword,
		keyEndpointIdentication, keySSLProtocol, keyEnabledProtocols, keyCipherSuites,
		keySASLMechanism, keySASLJAASConfig,
	}
}

// hidden stands for the value of a Password-typed key in error messages,
// as Java's Password.toString does.
const hidden = "[hidden]"

func invalidValue(k, v, why string) error {
	return fmt.Errorf("Invalid value %s for configuration %s: %s", v, k, why)
}

// secProps reads security properties. Values are trimmed, as Java's
// ConfigDef trims them; an empty value counts as unset except where the
// caller asks whether the key is present at all.
type secProps map[string]string

func (p secProps) get(k string) string { return strings.TrimSpace(p[k]) }

func (p secProps) lookup(k string) (string, bool) {
	v, ok := p[k]
	return strings.TrimSpace(v), ok
}

// DialFunc connects to a broker; it has net.Dialer.DialContext's
// signature, as kgo.Dialer wants.
type DialFunc = func(ctx context.Context, network, host string) (net.Conn, error)

// ConnOptions returns the franz-go options for the connection settings
// among Kafka client properties (security.protocol, ssl.*, sasl.*;
// prefixes such as producer. already stripped), with dial as the dialer
// (the embedded broker's in-process path; nil for the network). As in
// Java, ssl.* keys are read only for SSL and SASL_SSL, sasl.* keys only
// for SASL_PLAINTEXT and SASL_SSL.
func ConnOptions(props map[string]string, dial DialFunc) ([]kgo.Opt, error) {
	p := secProps(props)
	proto := strings.ToUpper(p.get(keySecurityProtocol))
	if proto == "" {
		proto = "PLAINTEXT"
	}
	var useTLS, useSASL bool
	switch proto {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return nil, invalidValue(keySecurityProtocol, p.get(keySecurityProtocol),
			"String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
	}
	var opts []kgo.Opt
	if useTLS {
		cfg, err := tlsConfig(p)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	} else if dial != nil {
		// A TLS client keeps franz-go's own dialer: franz-go takes one or
		// the other, and the embedded broker, the only source of dial,
		// listens in plaintext only.
		opts = append(opts, kgo.Dialer(dial))
	}
	if useSASL {
		m, err := saslMechanism(p, proto)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// ---------------------------------------------------------------- TLS

func tlsConfig(p secProps) (*tls.Config, error) {
	roots, err := trustStore(p)
	if err != nil {
		return nil, err
	}
	cert, err := keyStore(p)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: roots} // nil: the system roots
	if err := tlsVersions(p, cfg); err != nil {
		return nil, err
	}
	if cert != nil {
		// One configured certificate: send it whenever the broker asks,
		// rather than letting crypto/tls drop it when its issuer is not
		// among the broker's acceptable CAs; the broker decides.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return cert, nil
		}
	}
	alg, set := p.lookup(keyEndpointIdentication)
	if !set {
		alg = "https"
	}
	switch strings.ToLower(alg) {
	case "https":
	case "":
		// Kafka's ssl.endpoint.identification.algorithm= (empty) turns
		// off hostname verification only: the chain is still verified.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("tls: broker presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
				Roots:         roots,
				Intermediates: inter,
				KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			return err
		}
	default:
		return nil, invalidValue(keyEndpointIdentication, alg,
			`must be https (verify the broker's hostname) or empty (do not verify it)`)
	}
	return cfg, nil
}

// tlsVersions sets the TLS versions and cipher suites that
// ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites leave, as a
// Java client would negotiate them, or refuses what Go's TLS cannot
// honour: a narrower setting is a protection, never to be widened in
// silence.
func tlsVersions(p secProps, cfg *tls.Config) error {
	versions := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	enabled := "TLSv1.2,TLSv1.3" // Kafka's default
	if v, ok := p.lookup(keyEnabledProtocols); ok && v != "" {
		enabled = v
	}
	for _, name := range strings.Split(enabled, ",") {
		name = strings.TrimSpace(name)
		v, ok := versions[name]
		if !ok {
			return invalidValue(keyEnabledProtocols, enabled, fmt.Sprintf("connectd's Kafka clients speak TLSv1.2 and TLSv1.3 only, not %s", name))
		}
		if cfg.MinVersion == 0 || v < cfg.MinVersion {
			cfg.MinVersion = v
		}
		cfg.MaxVersion = max(cfg.MaxVersion, v)
	}
	// ssl.protocol names the SSLContext: TLSv1.2 keeps a client from
	// TLSv1.3 whatever ssl.enabled.protocols says; TLSv1.3 (Kafka's
	// default) and TLS add nothing to it.
	switch proto := p.get(keySSLProtocol); proto {
	case "", "TLS", "TLSv1.3":
	case "TLSv1.2":
		cfg.MaxVersion = tls.VersionTLS12
	default:
		return invalidValue(keySSLProtocol, proto, "connectd's Kafka clients take TLSv1.2, TLSv1.3 or TLS")
	}
	if err := cipherSuites(p, cfg); err != nil {
		return err
	}
	if cfg.MinVersion > cfg.MaxVersion {
		return fmt.Errorf("Invalid value for configuration %s: with %s=%s and %s=%s no TLS version is left",
			keyEnabledProtocols, keySSLProtocol, p.get(keySSLProtocol), keyEnabledProtocols, enabled)
	}
	return nil
}

// cipherSuites applies ssl.cipher.suites, IANA names as Java takes them.
// TLS 1.2 suites are Go's to choose among; TLS 1.3's are not (Go enables
// all three), so a list naming some of them but not all is refused, and
// a list naming none keeps the client from TLS 1.3, as it would in Java.
// Likewise a list of TLS 1.3 suites only keeps it from TLS 1.2.
func cipherSuites(p secProps, cfg *tls.Config) error {
	list := p.get(keyCipherSuites)
	if list == "" {
		return nil
	}
	byName := map[string]*tls.CipherSuite{}
	var tls13 []string
	for _, cs := range tls.CipherSuites() {
		byName[cs.Name] = cs
		if slices.Equal(cs.SupportedVersions, []uint16{tls.VersionTLS13}) {
			tls13 = append(tls13, cs.Name)
		}
	}
	var named13 int
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		cs, ok := byName[name]
		switch {
		case !ok:
			return invalidValue(keyCipherSuites, list, fmt.Sprintf("%s is not a cipher suite connectd's Kafka clients offer", name))
		case slices.Contains(tls13, name):
			named13++
		default:
			cfg.CipherSuites = append(cfg.CipherSuites, cs.ID)
		}
	}
	if named13 > 0 && named13 < len(tls13) && cfg.MaxVersion == tls.VersionTLS13 {
		return invalidValue(keyCipherSuites, list, "TLS 1.3 cipher suites can be taken all ("+strings.Join(tls13, ", ")+") or none, not some")
	}
	if named13 == 0 {
		cfg.MaxVersion = min(cfg.MaxVersion, tls.VersionTLS12)
	}
	if len(cfg.CipherSuites) == 0 {
		cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS13)
	}
	return nil
}

// loadStore reads a store's type (ssl.truststore.type or
// ssl.keystore.type: PEM, JKS or PKCS12) and its file
// (ssl.truststore.location or ssl.keystore.location; nil when unset), once.
// With the type unset, the type is what the file holds: PEM when it is
// PEM, else JKS, Kafka's default.
func loadStore(p secProps, typeKey, locKey string) (typ string, data []byte, err error) {
	typ = strings.ToUpper(p.get(typeKey))
	switch typ {
	case "", "PEM", "JKS", "PKCS12":
	default:
		return "", nil, invalidValue(typeKey, p.get(typeKey), "unsupported store type: PEM, JKS or PKCS12")
	}
	if loc := p.get(locKey); loc != "" {
		if data, err = os.ReadFile(loc); err != nil {
			return "", nil, invalidValue(locKey, loc, err.Error())
		}
		if typ == "" && !bytes.Contains(data, []byte("-----BEGIN ")) {
			typ = "JKS"
		}
	}
	return typ, data, nil
}

// trustStore returns the CA pool from ssl.truststore.location or
// ssl.truststore.certificates, or nil for the system roots.
func trustStore(p secProps) (*x509.CertPool, error) {
	typ, file, err := loadStore(p, keyTruststoreType, keyTruststoreLocation)
	if err != nil {
		return nil, err
	}
	loc, inline, pass := p.get(keyTruststoreLocation), p.get(keyTruststoreCerts), p.get(keyTruststorePassword)
	if typ == "JKS" || typ == "PKCS12" {
		if inline != "" {
			return nil, fmt.Errorf("Invalid configuration: %s is for PEM trust stores, and %s is %s", keyTruststoreCerts, keyTruststoreType, typ)
		}
		if loc == "" {
			return nil, fmt.Errorf("Invalid configuration: %s is %s but %s is not set", keyTruststoreType, typ, keyTruststoreLocation)
		}
		return binaryTrustStore(p, typ, file)
	}
	var data []byte
	var key, shown string
	switch {
	case loc != "" && inline != "":
		return nil, fmt.Errorf("Invalid configuration: both %s and %s are set; set only one", keyTruststoreLocation, keyTruststoreCerts)
	case loc == "" && inline == "":
		if pass != "" {
			return nil, fmt.Errorf("Invalid configuration: %s is set but no trust store is (%s or %s)", keyTruststorePassword, keyTruststoreLocation, keyTruststoreCerts)
		}
		return nil, nil
	case pass != "":
		return nil, fmt.Errorf("Invalid configuration: %s cannot be set for a PEM trust store; remove it", keyTruststorePassword)
	case inline != "":
		data, key, shown = []byte(inline), keyTruststoreCerts, hidden
	default:
		data, key, shown = file, keyTruststoreLocation, loc
	}
	blocks, err := parsePEM(data)
	if err != nil {
		return nil, invalidValue(key, shown, err.Error())
	}
	pool := x509.NewCertPool()
	n := 0
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, invalidValue(key, shown, fmt.Sprintf("PEM block %d: %v", i+1, err))
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, invalidValue(key, shown, "no CERTIFICATE found in the PEM data")
	}
	return pool, nil
}

// keyStore returns the client certificate from ssl.keystore.location or
// ssl.keystore.certificate.chain and ssl.keystore.key, or nil if none is
// configured. The checks follow Java's DefaultSslEngineFactory, except that
// ssl.key.password is optional (needed only for an encrypted key).
func keyStore(p secProps) (*tls.Certificate, error) {
	typ, file, err := loadStore(p, keyKeystoreType, keyKeystoreLocation)
	if err != nil {
		return nil, err
	}
	loc, chain, key := p.get(keyKeystoreLocation), p.get(keyKeystoreChain), p.get(keyKeystoreKey)
	storePass, keyPass := p.get(keyKeystorePassword), p.get(keyKeyPassword)
	if typ == "JKS" || typ == "PKCS12" {
		if chain != "" || key != "" {
			return nil, fmt.Errorf("Invalid configuration: %s and %s are for PEM key stores, and %s is %s", keyKeystoreChain, keyKeystoreKey, keyKeystoreType, typ)
		}
		if loc == "" {
			return nil, fmt.Errorf("Invalid configuration: %s is %s but %s is not set", keyKeystoreType, typ, keyKeystoreLocation)
		}
		return binaryKeyStore(p, typ, file)
	}
	var certPEM, keyPEM []byte
	var certKey, certShown, keyKey, keyShown string
	switch {
	case key != "":
		switch {
		case chain == "":
			return nil, fmt.Errorf("Invalid configuration: %s is set but %s is not", keyKeystoreKey, keyKeystoreChain)
		case loc != "":
			return nil, fmt.Errorf("Invalid configuration: both %s and %s are set; set only one", keyKeystoreLocation, keyKeystoreKey)
		case storePass != "":
			return nil, fmt.Errorf("Invalid configuration: %s cannot be set for a PEM key store, only %s may be", keyKeystorePassword, keyKeyPassword)
		}
		certPEM, certKey, certShown = []byte(chain), keyKeystoreChain, hidden
		keyPEM, keyKey, keyShown = []byte(key), keyKeystoreKey, hidden
	case chain != "":
		return nil, fmt.Errorf("Invalid configuration: %s is set but %s is not", keyKeystoreChain, keyKeystoreKey)
	case loc != "":
		if storePass != "" {
			return nil, fmt.Errorf("Invalid configuration: %s cannot be set for a PEM key store, only %s may be", keyKeystorePassword, keyKeyPassword)
		}
		certPEM, certKey, certShown = file, keyKeystoreLocation, loc
		keyPEM, keyKey, keyShown = file, keyKeystoreLocation, loc
	default:
		if storePass != "" {
			return nil, fmt.Errorf("Invalid configuration: %s is set but no key store is (%s, or %s and %s)", keyKeystorePassword, keyKeystoreLocation, keyKeystoreChain, keyKeystoreKey)
		}
		return nil, nil
	}

	certBlocks, err := parsePEM(certPEM)
	if err != nil {
		return nil, invalidValue(certKey, certShown, err.Error())
	}
	var chainDER [][]byte
	for _, b := range certBlocks {
		if b.Type == "CERTIFICATE" {
			chainDER = append(chainDER, b.Bytes)
		}
	}
	if len(chainDER) == 0 {
		return nil, invalidValue(certKey, certShown, "no CERTIFICATE found in the PEM data")
	}
	keyBlocks, err := parsePEM(keyPEM)
	if err != nil {
		return nil, invalidValue(keyKey, keyShown, err.Error())
	}
	var keyBlock *pemBlock
	for i, b := range keyBlocks {
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			if keyBlock != nil {
				return nil, invalidValue(keyKey, keyShown, "more than one PRIVATE KEY in the PEM data")
			}
			keyBlock = &keyBlocks[i]
		}
	}
	if keyBlock == nil {
		return nil, invalidValue(keyKey, keyShown, "no PRIVATE KEY found in the PEM data")
	}
	priv, err := parsePrivateKey(*keyBlock, keyPass)
	if err != nil {
		return nil, invalidValue(keyKey, keyShown, err.Error())
	}
	// tls.X509KeyPair checks that the key belongs to the first certificate.
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, invalidValue(keyKey, keyShown, err.Error())
	}
	var chainPEM []byte
	for _, c := range chainDER {
		chainPEM = append(chainPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c})...)
	}
	cert, err := tls.X509KeyPair(chainPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		return nil, invalidValue(certKey, certShown, "the private key does not match the first certificate of the chain or the certificate is invalid: "+err.Error())
	}
	return &cert, nil
}

type pemBlock struct {
	Type  string
	Bytes []byte
}

var pemRE = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----`)

// parsePEM reads PEM blocks as Kafka's PemStore does: newlines are not
// required (a PEM value folded onto one line by a properties file still
// reads) and text outside the blocks is ignored. Headers (legacy OpenSSL
// encryption) are refused.
func parsePEM(data []byte) ([]pemBlock, error) {
	ms := pemRE.FindAllSubmatch(data, -1)
	if len(ms) == 0 {
		return nil, errors.New("no PEM data found")
	}
	var out []pemBlock
	for i, m := range ms {
		typ, body := string(m[1]), m[2]
		if end := string(m[3]); end != typ {
			return nil, fmt.Errorf("PEM block %d: BEGIN %s ends with END %s", i+1, typ, end)
		}
		if bytes.Contains(body, []byte(":")) {
			if bytes.Contains(body, []byte("ENCRYPTED")) {
				return nil, fmt.Errorf("PEM block %d: legacy OpenSSL-encrypted key (Proc-Type: 4,ENCRYPTED) is not supported; convert it to encrypted PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)", i+1)
			}
			return nil, fmt.Errorf("PEM block %d: PEM headers are not supported", i+1)
		}
		b64 := bytes.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
				return -1
			}
			return r
		}, body)
		der := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		n, err := base64.StdEncoding.Decode(der, b64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("PEM block %d (%s): invalid base64 content", i+1, typ)
		}
		out = append(out, pemBlock{typ, der[:n]})
	}
	return out, nil
}

func parsePrivateKey(b pemBlock, password string) (crypto.PrivateKey, error) {
	der := b.Bytes
	switch b.Type {
	case "ENCRYPTED PRIVATE KEY":
		if password == "" {
			return nil, fmt.Errorf("the private key is encrypted and %s is not set", keyKeyPassword)
		}
		var err error
		if der, err = decryptPKCS8(der, password); err != nil {
			return nil, err
		}
		fallthrough
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			if b.Type == "ENCRYPTED PRIVATE KEY" {
				return nil, fmt.Errorf("cannot decrypt the private key: wrong %s or corrupt key", keyKeyPassword)
			}
			return nil, fmt.Errorf("invalid PKCS#8 private key: %v", err)
		}
		return k, nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("invalid PKCS#1 private key: %v", err)
		}
		return k, nil
	case "EC PRIVATE KEY":
		k, err := x509.ParseECPrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("invalid EC private key: %v", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %s", b.Type)
}

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidScrypt     = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

const maxPBKDF2Iterations = 10_000_000

// decryptPKCS8 decrypts an EncryptedPrivateKeyInfo (RFC 5958) protected
// with PBES2 (RFC 8018): PBKDF2 with HMAC-SHA-1/224/256/384/512 and
// AES-128/192/256-CBC or DES-EDE3-CBC, which covers what openssl pkcs8
// -topk8 and Java's keytool write. It returns the PrivateKeyInfo DER.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	unsupported := func(what string) error {
		return fmt.Errorf("unsupported private key encryption (%s): only PBES2 with PBKDF2 and AES-CBC or DES-EDE3-CBC is supported; re-encrypt the key with openssl pkcs8 -topk8 -v2 aes-256-cbc", what)
	}
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("invalid encrypted PKCS#8 private key")
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, unsupported("algorithm " + info.Algorithm.Algorithm.String())
	}
	var params pbes2Params
	if rest, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil || len(rest) > 0 {
		return nil, errors.New("invalid PBES2 parameters in the encrypted private key")
	}
	if params.KeyDerivationFunc.Algorithm.Equal(oidScrypt) {
		return nil, unsupported("scrypt key derivation")
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, unsupported("key derivation " + params.KeyDerivationFunc.Algorithm.String())
	}
	var kdf pbkdf2Params
	if rest, err := asn1.Unmarshal(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil || len(rest) > 0 {
		return nil, errors.New("invalid PBKDF2 parameters in the encrypted private key")
	}
	if kdf.IterationCount < 1 || kdf.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("invalid PBKDF2 iteration count %d in the encrypted private key", kdf.IterationCount)
	}

	var newCipher func([]byte) (cipher.Block, error)
	var keyLen int
	switch alg := params.EncryptionScheme.Algorithm; {
	case alg.Equal(oidAES128CBC):
		newCipher, keyLen = aes.NewCipher, 16
	case alg.Equal(oidAES192CBC):
		newCipher, keyLen = aes.NewCipher, 24
	case alg.Equal(oidAES256CBC):
		newCipher, keyLen = aes.NewCipher, 32
	case alg.Equal(oidDESEDE3CBC):
		newCipher, keyLen = des.NewTripleDESCipher, 24
	default:
		return nil, unsupported("cipher " + alg.String())
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, errors.New("invalid PBKDF2 key length in the encrypted private key")
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil || len(rest) > 0 {
		return nil, errors.New("invalid cipher parameters in the encrypted private key")
	}

	var key []byte
	var err error
	switch prf := kdf.PRF.Algorithm; {
	case len(prf) == 0 || prf.Equal(oidHMACSHA1):
		key, err = pbkdf2.Key(sha1.New, password, kdf.Salt, kdf.IterationCount, keyLen)
	case prf.Equal(oidHMACSHA224):
		key, err = pbkdf2.Key(sha256.New224, password, kdf.Salt, kdf.IterationCount, keyLen)
	case prf.Equal(oidHMACSHA256):
		key, err = pbkdf2.Key(sha256.New, password, kdf.Salt, kdf.IterationCount, keyLen)
	case prf.Equal(oidHMACSHA384):
		key, err = pbkdf2.Key(sha512.New384, password, kdf.Salt, kdf.IterationCount, keyLen)
	case prf.Equal(oidHMACSHA512):
		key, err = pbkdf2.Key(sha512.New, password, kdf.Salt, kdf.IterationCount, keyLen)
	default:
		return nil, unsupported("PBKDF2 PRF " + prf.String())
	}
	if err != nil {
		return nil, fmt.Errorf("cannot derive the key decrypting the private key: %v", err)
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	ct := info.EncryptedData
	if len(iv) != bs || len(ct) == 0 || len(ct)%bs != 0 {
		return nil, errors.New("invalid encrypted PKCS#8 private key")
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
	pad := int(pt[len(pt)-1])
	if pad < 1 || pad > bs || !bytes.Equal(pt[len(pt)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, fmt.Errorf("cannot decrypt the private key: wrong %s or corrupt key", keyKeyPassword)
	}
	return pt[:len(pt)-pad], nil
}

// ---------------------------------------------------------------- SASL

func saslMechanism(p secProps, proto string) (sasl.Mechanism, error) {
	mech := strings.ToUpper(p.get(keySASLMechanism))
	if mech == "" {
		mech = "PLAIN"
	}
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	case "GSSAPI":
		return nil, invalidValue(keySASLMechanism, p.get(keySASLMechanism),
			"GSSAPI (Kerberos) is not supported; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512")
	case "OAUTHBEARER":
		return nil, invalidValue(keySASLMechanism, p.get(keySASLMechanism),
			"OAUTHBEARER is not supported; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512")
	default:
		return nil, invalidValue(keySASLMechanism, p.get(keySASLMechanism),
			"unsupported SASL mechanism; supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512")
	}
	cfg := p.get(keySASLJAASConfig)
	if cfg == "" {
		return nil, fmt.Errorf("Missing required configuration %s: security.protocol %s needs the credentials in %s (a static JAAS file is not read)",
			keySASLJAASConfig, proto, keySASLJAASConfig)
	}
	bad := func(why string) error { return invalidValue(keySASLJAASConfig, hidden, why) }
	entries, err := parseJAAS(cfg)
	if err != nil {
		return nil, bad(err.Error())
	}
	switch len(entries) {
	case 0:
		return nil, bad("JAAS config property does not contain any login modules")
	case 1:
	default:
		return nil, bad(fmt.Sprintf("JAAS config property contains %d login modules, should be 1 module", len(entries)))
	}
	e := entries[0]
	var want string
	switch e.LoginModule {
	case plainLoginModule:
		want = "PLAIN"
	case scramLoginModule:
		want = "SCRAM"
	default:
		return nil, bad(fmt.Sprintf("login module %s is not supported; use %s or %s", e.LoginModule, plainLoginModule, scramLoginModule))
	}
	if !strings.HasPrefix(mech, want) {
		if want == "PLAIN" {
			return nil, fmt.Errorf("Invalid configuration: %s uses PlainLoginModule but %s is %s; set %s=PLAIN or use ScramLoginModule", keySASLJAASConfig, keySASLMechanism, mech, keySASLMechanism)
		}
		return nil, fmt.Errorf("Invalid configuration: %s uses ScramLoginModule but %s is %s; set %s=SCRAM-SHA-256 or SCRAM-SHA-512", keySASLJAASConfig, keySASLMechanism, mech, keySASLMechanism)
	}
	user, pass := e.Options["username"], e.Options["password"]
	if user == "" {
		return nil, bad("the login module needs a non-empty username option")
	}
	if pass == "" {
		return nil, bad("the login module needs a non-empty password option")
	}
	if mech == "PLAIN" {
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	}
	var token bool
	if v, ok := e.Options["tokenauth"]; ok {
		switch strings.ToLower(v) {
		case "true":
			token = true
		case "false":
		default:
			return nil, bad("the tokenauth option must be true or false")
		}
	}
	a := scram.Auth{User: user, Pass: pass, IsToken: token}
	if mech == "SCRAM-SHA-512" {
		return a.AsSha512Mechanism(), nil
	}
	return a.AsSha256Mechanism(), nil
}

// ---------------------------------------------------------------- JAAS

// jaasEntry is one login module entry of a JAAS configuration.
type jaasEntry struct {
	LoginModule string
	Flag        string // required, requisite, sufficient or optional
	Options     map[string]string
}

// parseJAAS parses the value of sasl.jaas.config, which has the syntax
// Kafka's JaasConfig reads with a java.io.StreamTokenizer:
//
//	<LoginModuleClass> <Flag> (<key>=<value>)* ; ...
//
// Flag is required, requisite, sufficient or optional (any case). A value
// is a word or a string in double or single quotes, with Java's escapes
// (\n \t \b \f \r \a \v, octal \ooo, and \x for any other x). Comments
// are /* ... */ and // to the end of the line. It is stricter than Java:
// a string must close on its line, an option may not repeat, and a key or
// value that is not a word or a string is an error rather than a
// different token. Errors give an offset and never quote the input, which
// holds passwords.
func parseJAAS(s string) ([]jaasEntry, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("JAAS config is not valid UTF-8")
	}
	l := jaasLexer{s: s}
	var entries []jaasEntry
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokEOF {
			return entries, nil
		}
		if t.kind != tokWord {
			return nil, fmt.Errorf("login module class expected at offset %d in JAAS config", t.pos)
		}
		e := jaasEntry{LoginModule: t.text, Options: map[string]string{}}

		if t, err = l.next(); err != nil {
			return nil, err
		}
		if t.kind != tokWord {
			return nil, fmt.Errorf("Login module control flag not specified in JAAS config at offset %d", t.pos)
		}
		switch f := strings.ToLower(t.text); f {
		case "required", "requisite", "sufficient", "optional":
			e.Flag = f
		default:
			return nil, fmt.Errorf("Invalid login module control flag '%s' in JAAS config at offset %d", t.text, t.pos)
		}

		for {
			t, err := l.next()
			if err != nil {
				return nil, err
			}
			if t.kind == tokSemi {
				break
			}
			if t.kind == tokEOF {
				return nil, errors.New("JAAS config entry not terminated by semi-colon")
			}
			if t.kind == tokOther {
				return nil, fmt.Errorf("unexpected character at offset %d in JAAS config", t.pos)
			}
			if t.kind != tokWord {
				return nil, fmt.Errorf("option name expected at offset %d in JAAS config", t.pos)
			}
			key := t.text
			if t, err = l.next(); err != nil {
				return nil, err
			}
			if t.kind != tokEquals {
				return nil, fmt.Errorf("Value not specified for key '%s' in JAAS config", key)
			}
			if t, err = l.next(); err != nil {
				return nil, err
			}
			if t.kind != tokWord && t.kind != tokString {
				return nil, fmt.Errorf("Value not specified for key '%s' in JAAS config (quote the value)", key)
			}
			if _, dup := e.Options[key]; dup {
				return nil, fmt.Errorf("option '%s' repeated in JAAS config", key)
			}
			e.Options[key] = t.text
		}
		entries = append(entries, e)
	}
}

type jaasTokKind int

const (
	tokEOF jaasTokKind = iota
	tokWord
	tokString
	tokEquals
	tokSemi
	tokOther // a character that starts no token
)

type jaasTok struct {
	kind jaasTokKind
	text string
	pos  int
}

type jaasLexer struct {
	s   string
	pos int
}

// Word characters as Kafka's StreamTokenizer has them: letters, '_', '$',
// '-' and non-ASCII characters start a word; digits and '.' may follow.
func jaasWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '-' || c >= 0x80
}

func jaasWordPart(c byte) bool {
	return jaasWordStart(c) || c >= '0' && c <= '9' || c == '.'
}

func (l *jaasLexer) next() (jaasTok, error) {
	if err := l.skip(); err != nil {
		return jaasTok{}, err
	}
	start := l.pos
	if l.pos >= len(l.s) {
		return jaasTok{kind: tokEOF, pos: start}, nil
	}
	c := l.s[l.pos]
	switch {
	case c == '=':
		l.pos++
		return jaasTok{kind: tokEquals, pos: start}, nil
	case c == ';':
		l.pos++
		return jaasTok{kind: tokSemi, pos: start}, nil
	case c == '"' || c == '\'':
		text, err := l.quoted(c)
		return jaasTok{kind: tokString, text: text, pos: start}, err
	case jaasWordStart(c):
		for l.pos < len(l.s) && jaasWordPart(l.s[l.pos]) {
			l.pos++
		}
		return jaasTok{kind: tokWord, text: l.s[start:l.pos], pos: start}, nil
	}
	return jaasTok{kind: tokOther, pos: start}, nil
}

// skip skips white space (all characters up to ' ', as Java has it) and
// comments.
func (l *jaasLexer) skip() error {
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		switch {
		case c <= ' ':
			l.pos++
		case strings.HasPrefix(l.s[l.pos:], "//"):
			if i := strings.IndexAny(l.s[l.pos:], "\r\n"); i >= 0 {
				l.pos += i
			} else {
				l.pos = len(l.s)
			}
		case strings.HasPrefix(l.s[l.pos:], "/*"):
			i := strings.Index(l.s[l.pos+2:], "*/")
			if i < 0 {
				return fmt.Errorf("unterminated comment at offset %d in JAAS config", l.pos)
			}
			l.pos += 2 + i + 2
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a string quoted with q, starting at the opening quote.
func (l *jaasLexer) quoted(q byte) (string, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for {
		if l.pos >= len(l.s) {
			return "", fmt.Errorf("unterminated quoted string at offset %d in JAAS config", start)
		}
		c := l.s[l.pos]
		l.pos++
		switch c {
		case q:
			return b.String(), nil
		case '\n', '\r':
			return "", fmt.Errorf("unterminated quoted string at offset %d in JAAS config (line break in string; write \\n)", start)
		case '\\':
			if l.pos >= len(l.s) {
				return "", fmt.Errorf("unterminated quoted string at offset %d in JAAS config", start)
			}
			e := l.s[l.pos]
			l.pos++
			switch {
			case e >= '0' && e <= '7':
				v := int(e - '0')
				if l.pos < len(l.s) && l.s[l.pos] >= '0' && l.s[l.pos] <= '7' {
					v = v*8 + int(l.s[l.pos]-'0')
					l.pos++
					if e <= '3' && l.pos < len(l.s) && l.s[l.pos] >= '0' && l.s[l.pos] <= '7' {
						v = v*8 + int(l.s[l.pos]-'0')
						l.pos++
					}
				}
				b.WriteRune(rune(v))
			case e == 'a':
				b.WriteByte(7)
			case e == 'b':
				b.WriteByte('\b')
			case e == 'f':
				b.WriteByte('\f')
			case e == 'n':
				b.WriteByte('\n')
			case e == 'r':
				b.WriteByte('\r')
			case e == 't':
				b.WriteByte('\t')
			case e == 'v':
				b.WriteByte('\v')
			case e == '\n' || e == '\r':
				return "", fmt.Errorf("unterminated quoted string at offset %d in JAAS config (line break in string; write \\n)", start)
			default:
				// \x is x; for a multi-byte character, copy the rest of it.
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
}

// JAASEntry is one login module entry of a JAAS configuration.
type JAASEntry = jaasEntry

// JAASSection reads the entries of section name of a JAAS login
// configuration file (as -Djava.security.auth.login.config names it):
//
//	KafkaConnect {
//	  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
//	    file="/etc/connect/credentials.properties";
//	};
//
// Comments (// and /* */) are skipped. A file without the section is an
// error naming it.
func JAASSection(file []byte, name string) ([]JAASEntry, error) {
	s := stripJAASComments(string(file))
	for i := 0; i < len(s); {
		// A section: a name, then a body in braces, then a semicolon.
		j := i
		for j < len(s) && (isSpace(s[j]) || s[j] == ';') {
			j++
		}
		k := j
		for k < len(s) && !isSpace(s[k]) && s[k] != '{' {
			k++
		}
		header := s[j:k]
		open := strings.IndexByte(s[k:], '{')
		if header == "" || open < 0 {
			break
		}
		bodyStart := k + open + 1
		end, err := closingBrace(s, bodyStart)
		if err != nil {
			return nil, fmt.Errorf("JAAS section %s: %w", header, err)
		}
		if header == name {
			return parseJAAS(s[bodyStart:end])
		}
		i = end + 1
	}
	return nil, fmt.Errorf("No JAAS configuration section named '%s' was found", name)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// closingBrace is the index of the '}' that ends a section whose body
// starts at from, quoted strings skipped.
func closingBrace(s string, from int) (int, error) {
	var quote byte
	for i := from; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '}':
			return i, nil
		}
	}
	return 0, errors.New("no closing brace")
}

// stripJAASComments blanks // and /* */ comments outside quoted strings.
func stripJAASComments(s string) string {
	b := []byte(s)
	var quote byte
	for i := 0; i < len(b); i++ {
		switch {
		case quote != 0:
			if b[i] == '\\' {
				i++
			} else if b[i] == quote {
				quote = 0
			}
		case b[i] == '"' || b[i] == '\'':
			quote = b[i]
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			for i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/') {
				if b[i] != '\n' {
					b[i] = ' '
				}
				i++
			}
			if i < len(b) {
				b[i] = ' '
				if i+1 < len(b) {
					b[i+1] = ' '
					i++
				}
			}
		}
	}
	return string(b)
}
