package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TLS is a private certificate authority made for one test, and a server
// certificate it signed for 127.0.0.1 and localhost, written as PEM files in
// t.TempDir. Debian's redis-server is built with TLS (BUILD_TLS=yes), so a
// [Server] started with [WithTLS] also accepts rediss:// connections.
type TLS struct {
	// CAFile is the PEM certificate of the CA: what clients trust.
	CAFile string
	// CertFile and KeyFile are the server's certificate and key.
	CertFile, KeyFile string
	// Pool holds the CA, for a client's tls.Config.RootCAs.
	Pool *x509.CertPool
	// Port is the loopback TLS port of the server started WithTLS.
	Port int
}

// NewTLS makes a CA and a server certificate (ECDSA P-256, valid for an
// hour, SANs 127.0.0.1, ::1 and localhost) and picks a free loopback port for
// the TLS listener. It fails the test on error.
func NewTLS(t testing.TB) *TLS {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("redistest: CA key: %v", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("redistest: CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("redistest: CA certificate: %v", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("redistest: server key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("redistest: server certificate: %v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("redistest: server key: %v", err)
	}
	x := &TLS{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "server.pem"),
		KeyFile:  filepath.Join(dir, "server-key.pem"),
		Pool:     x509.NewCertPool(),
	}
	x.Pool.AddCert(ca)
	for path, block := range map[string]*pem.Block{
		x.CAFile:   {Type: "CERTIFICATE", Bytes: caDER},
		x.CertFile: {Type: "CERTIFICATE", Bytes: der},
		x.KeyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatalf("redistest: %v", err)
		}
	}
	if x.Port, err = freePort(); err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return x
}

// WithTLS makes the server also listen for TLS on 127.0.0.1:x.Port with x's
// certificate. Clients need no certificate of their own
// (tls-auth-clients no). The plain port stays open for the helper's own
// readiness probe.
func WithTLS(x *TLS) Option {
	return WithArgs("--tls-port", strconv.Itoa(x.Port),
		"--tls-cert-file", x.CertFile, "--tls-key-file", x.KeyFile,
		"--tls-ca-cert-file", x.CAFile, "--tls-auth-clients", "no")
}

// Addr returns "127.0.0.1:PORT" of the TLS listener.
func (x *TLS) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(x.Port)) }

// URL returns the rediss:// URL of the TLS listener of s (a server started
// WithTLS(x)), with s's credentials. A Go client trusts it when the CA is
// in its tls.Config (see [TLS.Config]) or, for a program that only reads
// REDIS_URL, when SSL_CERT_FILE names [TLS.CAFile].
func (x *TLS) URL(s *Server) string {
	u := url.URL{Scheme: "rediss", Host: x.Addr()}
	if user, pw := s.credentials(); user != "" || pw != "" {
		u.User = url.UserPassword(user, pw)
	}
	return u.String()
}

// Config returns a client TLS configuration that trusts only the test CA.
func (x *TLS) Config() *tls.Config {
	return &tls.Config{RootCAs: x.Pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}
