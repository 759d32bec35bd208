package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ops/tlstest"
	"github.com/longfair/longfair/server"
)

// TestCLIReachesAMutualTLSServer: the client commands take --tls-ca,
// --tls-cert and --tls-key (or LONGFAIR_TLS_*), and without them a
// mutual-TLS server is out of reach, with a message that says so.
func TestCLIReachesAMutualTLSServer(t *testing.T) {
	dir := t.TempDir()
	pki := tlstest.New(t, "cli-test")
	tokenFile := filepath.Join(dir, "bootstrap.token")
	const secret = "lf_cli-tls-test-secret-0123456789"
	if err := os.WriteFile(tokenFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.NodeID, cfg.DataDir = "s1", filepath.Join(dir, "s1")
	cfg.RaftAddr, cfg.GRPCAddr, cfg.GossipAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.Bootstrap = true
	cfg.TLS = pki.Issue("s1")
	cfg.ACL = server.ACLConfig{Enabled: true, BootstrapTokenFile: tokenFile}
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ok, _ := s.FSM().ACLBootstrapped(); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not bootstrap its ACL")
		}
	}
	for _, k := range []string{envTLSCA, envTLSCert, envTLSKey, envTLSServerName, "LONGFAIR_TOKEN", "LONGFAIR_ADDR"} {
		t.Setenv(k, "")
	}
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"nodes", "--addr", s.GRPCAddr(), "--token", secret, "--timeout", "3s"}, args...), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	cli := pki.Issue("cli")
	if code, out := run("--tls-ca", cli.CAFile, "--tls-cert", cli.CertFile, "--tls-key", cli.KeyFile); code != 0 {
		t.Fatalf("with the client certificate: exit %d: %s", code, out)
	}
	t.Setenv(envTLSCA, cli.CAFile)
	t.Setenv(envTLSCert, cli.CertFile)
	t.Setenv(envTLSKey, cli.KeyFile)
	if code, out := run(); code != 0 {
		t.Fatalf("with the certificate from LONGFAIR_TLS_*: exit %d: %s", code, out)
	}
	t.Setenv(envTLSCert, "")
	t.Setenv(envTLSKey, "")
	if code, _ := run(); code == 0 {
		t.Fatal("a client without a certificate reached a server that verifies callers")
	}
	t.Setenv(envTLSCA, "")
	if code, _ := run(); code == 0 {
		t.Fatal("a plaintext client reached a TLS server")
	}
	if code, out := run("--tls-server-name", "server.longfair"); code != 2 || !strings.Contains(out, "--tls-ca") {
		t.Fatalf("--tls-server-name without TLS: exit %d: %s", code, out)
	}
	if code, out := run("--tls-ca", filepath.Join(dir, "missing.pem")); code != 2 || !strings.Contains(out, "CA file") {
		t.Fatalf("a missing CA file: exit %d: %s", code, out)
	}
}
