package tlstest

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
	"sync"
	"testing"
	"time"

	"github.com/longfair/longfair/ops"
)

// PKI is a certificate authority whose files live in a test's temporary
// directory.
type PKI struct {
	tb     testing.TB
	dir    string
	caFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey

	mu     sync.Mutex
	serial int64
}

// New makes a CA named name, valid for a day.
func New(tb testing.TB, name string) *PKI {
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
	p := &PKI{tb: tb, dir: tb.TempDir(), ca: ca, caKey: key, serial: 1}
	p.caFile = filepath.Join(p.dir, name+"-ca.pem")
	p.write(p.caFile, "CERTIFICATE", der)
	return p
}

// CAFile is the CA certificate's PEM file.
func (p *PKI) CAFile() string { return p.caFile }

// Issue makes a certificate for name, valid for 127.0.0.1, ::1 and
// localhost (plus any extra DNS names) as both server and client, and
// returns the TLS files of a process that uses it and trusts this CA.
func (p *PKI) Issue(name string, dnsNames ...string) ops.TLSConfig {
	p.tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.tb.Fatal(err)
	}
	p.mu.Lock()
	p.serial++
	serial := p.serial
	p.mu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:     append([]string{"localhost"}, dnsNames...),
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
	p.write(cfg.CertFile, "CERTIFICATE", der)
	p.write(cfg.KeyFile, "EC PRIVATE KEY", keyDER)
	return cfg
}

func (p *PKI) write(path, kind string, der []byte) {
	p.tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		p.tb.Fatal(err)
	}
}
