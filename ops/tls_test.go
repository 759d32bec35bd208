package ops_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/tlstest"
)

func TestTLSConfigs(t *testing.T) {
	pki := tlstest.New(t, "ops")
	full := pki.Issue("s1")
	server, err := full.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	if server.ClientAuth != tls.RequireAndVerifyClientCert || server.ClientCAs == nil || len(server.Certificates) != 1 {
		t.Fatalf("with a CA the server must verify callers: %+v", server.ClientAuth)
	}
	noCA := full
	noCA.CAFile = ""
	if server, err = noCA.ServerTLS(); err != nil || server.ClientAuth != tls.NoClientCert {
		t.Fatalf("without a CA: %v, %v", server.ClientAuth, err)
	}
	if _, err := (ops.TLSConfig{CAFile: full.CAFile}).ServerTLS(); err == nil {
		t.Fatal("a server without a certificate was configured")
	}
	client, err := ops.TLSConfig{CAFile: full.CAFile, ServerName: "server.longfair"}.ClientTLS()
	if err != nil || client.RootCAs == nil || len(client.Certificates) != 0 || client.ServerName != "server.longfair" {
		t.Fatalf("a CA-only client: %+v, %v", client, err)
	}
	for _, c := range []struct {
		cfg   ops.TLSConfig
		words string
	}{
		{ops.TLSConfig{CertFile: full.CertFile}, "--tls-key"},
		{ops.TLSConfig{ServerName: "x"}, "server name"},
		{ops.TLSConfig{CertFile: full.KeyFile, KeyFile: full.KeyFile}, full.KeyFile},
		{ops.TLSConfig{CAFile: full.CertFile + ".missing"}, "CA file"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("Validate(%+v) = %v, want it to say %q", c.cfg, err, c.words)
		}
	}
	if err := (ops.TLSConfig{}).Validate(); err != nil {
		t.Fatalf("no TLS at all is valid: %v", err)
	}
}
