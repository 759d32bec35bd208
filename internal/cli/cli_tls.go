package cli

import (
	"flag"
	"os"

	"github.com/longfair/longfair/client"
)

// Environment variables with the client side of TLS, for clusters whose
// servers serve TLS (and, with a CA, ask callers for a certificate).
const (
	envTLSCA         = "LONGFAIR_TLS_CA"
	envTLSCert       = "LONGFAIR_TLS_CERT"
	envTLSKey        = "LONGFAIR_TLS_KEY"
	envTLSServerName = "LONGFAIR_TLS_SERVER_NAME"
)

// registerTLS adds the client TLS flags.
func (f *clientFlags) registerTLS(fs *flag.FlagSet) {
	fs.StringVar(&f.tls.CAFile, "tls-ca", "", "CA certificate `file` that signed the servers' certificates; turns TLS on (default $"+envTLSCA+")")
	fs.StringVar(&f.tls.CertFile, "tls-cert", "", "client certificate `file`, for servers that verify callers (default $"+envTLSCert+")")
	fs.StringVar(&f.tls.KeyFile, "tls-key", "", "the client certificate's key `file` (default $"+envTLSKey+")")
	fs.StringVar(&f.tls.ServerName, "tls-server-name", "", "`name` the servers' certificates carry, if not their address (default $"+envTLSServerName+")")
}

// tlsOptions are the client options for TLS from the flags, or from the
// environment for the flags not given; none when neither sets any.
func (f *clientFlags) tlsOptions() ([]client.Option, error) {
	cfg := f.tls
	for _, v := range []struct {
		field *string
		env   string
	}{{&cfg.CAFile, envTLSCA}, {&cfg.CertFile, envTLSCert}, {&cfg.KeyFile, envTLSKey}, {&cfg.ServerName, envTLSServerName}} {
		if *v.field == "" {
			*v.field = os.Getenv(v.env)
		}
	}
	if !cfg.Enabled() {
		if cfg.ServerName != "" {
			return nil, Usagef("--tls-server-name needs TLS: give --tls-ca (or %s) too", envTLSCA)
		}
		return nil, nil
	}
	creds, err := cfg.ClientCredentials()
	if err != nil {
		return nil, Usagef("%v", err)
	}
	return []client.Option{client.WithTransportCredentials(creds)}, nil
}
