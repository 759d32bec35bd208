package daemon

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestServerSecurityFlags: the binary checks tokens unless told not to,
// and the TLS, gossip and bootstrap flags land in the configuration.
func TestServerSecurityFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LONGFAIR_GOSSIP_KEY", "")
	base := []string{"--node-id", "s1", "--data-dir", dir}
	cfg, _, err := serverConfig(base, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ACL.Enabled {
		t.Fatal("longfair server does not check tokens by default")
	}
	if cfg, _, err = serverConfig(append(base, "--acl=false"), io.Discard); err != nil || cfg.ACL.Enabled {
		t.Fatalf("--acl=false: enabled=%v, %v", cfg.ACL.Enabled, err)
	}
	file := filepath.Join(dir, "off.json")
	if err := os.WriteFile(file, []byte(`{"acl": {"enabled": false}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, _, err = serverConfig(append(base, "--config", file), io.Discard); err != nil || cfg.ACL.Enabled {
		t.Fatalf("a config file turning the ACL off: enabled=%v, %v", cfg.ACL.Enabled, err)
	}

	t.Setenv("LONGFAIR_GOSSIP_KEY", "MDEyMzQ1Njc4OWFiY2RlZg==")
	if cfg, _, err = serverConfig(base, io.Discard); err != nil || string(cfg.GossipKey) != "0123456789abcdef" {
		t.Fatalf("gossip key from the environment: %q, %v", cfg.GossipKey, err)
	}
	if _, _, err = serverConfig(append(base, "--gossip-key", "c2hvcnQ="), io.Discard); err == nil {
		t.Fatal("a 5-byte --gossip-key was accepted")
	}
	if _, _, err = serverConfig(append(base, "--tls-cert", filepath.Join(dir, "missing.pem"), "--tls-key", filepath.Join(dir, "missing-key.pem")), io.Discard); err == nil {
		t.Fatal("missing TLS files were accepted")
	}
	if _, _, err = serverConfig(append(base, "--acl-bootstrap-token", filepath.Join(dir, "missing.token")), io.Discard); err == nil {
		t.Fatal("a missing bootstrap token file was accepted")
	}
}
