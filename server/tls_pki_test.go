package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/longfair/longfair/ops"
)

// testPKI is a throwaway certificate authority whose files live in the
// test's temporary directory. Keys are generated per test run and never
// committed.
type testPKI struct {
	tb     testing.TB
	dir    string
	caFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newTestPKI(tb testing.TB, name string) *testPKI {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	p := &testPKI{tb: tb, dir: tb.TempDir(), ca: ca, caKey: key, serial: 1}
	p.caFile = filepath.Join(p.dir, name+"-ca.pem")
	writePEM(tb, p.caFile, "CERTIFICATE", der)
	return p
}

// issue makes a certificate for name, valid for 127.0.0.1 and localhost as
// both server and client, and returns a TLS configuration that uses it and
// trusts this CA.
func (p *testPKI) issue(name string) ops.TLSConfig {
	p.tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.tb.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.tb.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		p.tb.Fatal(err)
	}
	cfg := ops.TLSConfig{
		CertFile: filepath.Join(p.dir, name+".pem"),
		KeyFile:  filepath.Join(p.dir, name+"-key.pem"),
		CAFile:   p.caFile,
	}
	writePEM(p.tb, cfg.CertFile, "CERTIFICATE", der)
	writePEM(p.tb, cfg.KeyFile, "EC PRIVATE KEY", keyDER)
	return cfg
}

func writePEM(tb testing.TB, path, kind string, der []byte) {
	tb.Helper()
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
}
