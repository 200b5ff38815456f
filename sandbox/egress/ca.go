package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"sync"
	"time"
)

// CA is the certificate authority the proxy terminates TLS with: its own
// certificate and key, and the leaf certificates it made, one per host.
// Only a sandboxed command trusts it (the bundle the sandbox points
// SSL_CERT_FILE and the like at); the key never leaves the server's
// memory unless the settings gave one (sandbox.network.tlsTerminate).
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     any // crypto.Signer
	mu      sync.Mutex
	leaves  map[string]*tls.Certificate
}

// caLife is how long a per-session CA is valid; leafLife a leaf's.
const (
	caLife   = 7 * 24 * time.Hour
	leafLife = 24 * time.Hour
)

// NewCA makes a fresh CA: an ECDSA P-256 key and a self-signed
// certificate valid for a week, good only for signing server
// certificates.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "agent-mcp sandbox session CA", Organization: []string{"agent-mcp"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caLife),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{cert: cert, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key, leaves: map[string]*tls.Certificate{}}, nil
}

// LoadCA reads a CA from PEM files (sandbox.network.tlsTerminate's
// caCertPath and caKeyPath).
func LoadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s and %s: %w", certPath, keyPath, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	return &CA{cert: cert, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), key: pair.PrivateKey, leaves: map[string]*tls.Certificate{}}, nil
}

// CertPEM is the CA's certificate, PEM encoded: what a command trusts.
func (c *CA) CertPEM() []byte { return c.certPEM }

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// Leaf returns the certificate the proxy shows a command for host,
// made on first use and kept while it has more than an hour to run.
func (c *CA) Leaf(host string) (*tls.Certificate, error) {
	host = normal(host)
	if host == "" {
		return nil, errors.New("no host name")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaves[host]; ok && time.Until(l.Leaf.NotAfter) > time.Hour {
		return l, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     minTime(now.Add(leafLife), c.cert.NotAfter),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	l := &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: key, Leaf: leaf}
	c.leaves[host] = l
	return l, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// systemBundles are where Linux distributions keep the system's roots
// as one PEM file (as crypto/x509 looks for them).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// Bundle is the system's roots (SSL_CERT_FILE's file when the server has
// one, else the distribution's bundle) followed by the CA's certificate:
// the file a command's TLS clients are pointed at, so that they trust
// both the hosts they reach through a tunnel and the proxy's leaves.
func (c *CA) Bundle() []byte {
	var sys []byte
	for _, p := range append([]string{os.Getenv("SSL_CERT_FILE")}, systemBundles...) {
		if p == "" {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
			sys = b
			break
		}
	}
	out := append([]byte{}, sys...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, c.certPEM...)
}
