package ops

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
)

// TLSConfig names the PEM files that secure a process's connections: its
// own certificate and key, and the CA that signed its peers'. Servers,
// workers and clients all use the same shape; what each does with it is
// said on ServerTLS and ClientTLS.
type TLSConfig struct {
	// CertFile and KeyFile are this process's certificate (chain) and
	// private key. A server or worker needs both to serve TLS; a client
	// gives them to prove who it is when servers verify incoming
	// connections.
	CertFile string `json:"cert_file,omitempty"`
	KeyFile  string `json:"key_file,omitempty"`
	// CAFile holds the CA certificates that sign the cluster's
	// certificates. With it, a server accepts only connections that show
	// a certificate the CA signed (mutual TLS), and a client trusts only
	// servers the CA signed; without it a server accepts any client (the
	// bearer token still authenticates the caller) and a client trusts the
	// system's CAs.
	CAFile string `json:"ca_file,omitempty"`
	// ServerName, when set, is the name every server and worker
	// certificate carries (for example "server.longfair") and what peers
	// verify instead of the host they dial. Use it when certificates do
	// not list the machines' addresses.
	ServerName string `json:"server_name,omitempty"`
}

// Enabled reports whether any TLS file is configured: then every
// connection this process makes or accepts uses TLS.
func (c TLSConfig) Enabled() bool {
	return c.CertFile != "" || c.KeyFile != "" || c.CAFile != ""
}

// VerifiesIncoming reports whether a server with this configuration asks
// every caller for a certificate signed by the CA.
func (c TLSConfig) VerifiesIncoming() bool { return c.CAFile != "" }

// Validate checks that the files that belong together are given together
// and that every file can be loaded.
func (c TLSConfig) Validate() error {
	if !c.Enabled() {
		if c.ServerName != "" {
			return errors.New("tls server_name is set but no TLS file is: give --tls-cert and --tls-key (and --tls-ca), or drop the server name")
		}
		return nil
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("tls: a certificate needs its key and a key its certificate: give both --tls-cert and --tls-key")
	}
	if c.CertFile != "" {
		if _, err := c.certificate(); err != nil {
			return err
		}
	}
	if c.CAFile != "" {
		if _, err := LoadCertPool(c.CAFile); err != nil {
			return err
		}
	}
	return nil
}

// ServerTLS is the configuration of a listener: this process's
// certificate, and with a CA, mutual TLS (RequireAndVerifyClientCert), so
// that a connection without a certificate the CA signed never reaches a
// handler. It needs CertFile and KeyFile.
func (c TLSConfig) ServerTLS() (*tls.Config, error) {
	if c.CertFile == "" || c.KeyFile == "" {
		return nil, errors.New("tls: serving TLS needs this process's certificate and key: give --tls-cert and --tls-key")
	}
	cert, err := c.certificate()
	if err != nil {
		return nil, err
	}
	conf := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		ClientAuth:   tls.NoClientCert,
	}
	if c.CAFile != "" {
		pool, err := LoadCertPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		conf.ClientCAs = pool
		conf.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return conf, nil
}

// ClientTLS is the configuration of outgoing connections: trust the CA
// (or the system's CAs without one), verify ServerName when set, and show
// this process's certificate when it has one.
func (c TLSConfig) ClientTLS() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pool, err := LoadCertPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("tls: a certificate needs its key and a key its certificate: give both --tls-cert and --tls-key")
	}
	if c.CertFile != "" {
		cert, err := c.certificate()
		if err != nil {
			return nil, err
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// ServerCredentials are gRPC server credentials from ServerTLS.
func (c TLSConfig) ServerCredentials() (credentials.TransportCredentials, error) {
	conf, err := c.ServerTLS()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(conf), nil
}

// ClientCredentials are gRPC client credentials from ClientTLS.
func (c TLSConfig) ClientCredentials() (credentials.TransportCredentials, error) {
	conf, err := c.ClientTLS()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(conf), nil
}

func (c TLSConfig) certificate() (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tls: load certificate %s and key %s: %w (both must be PEM files, the key matching the certificate)", c.CertFile, c.KeyFile, err)
	}
	return cert, nil
}

// LoadCertPool reads the PEM CA certificates in path.
func LoadCertPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls: read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls: CA file %s holds no PEM certificate: give the CA certificate that signed the cluster's certificates", path)
	}
	return pool, nil
}
