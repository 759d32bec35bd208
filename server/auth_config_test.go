package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longfair/longfair/ops/tlstest"
)

// TestSecurityConfigFile: the tls, gossip_key and acl fields of a config
// file reach the configuration, and a bad gossip key or token file is
// refused with the field named.
func TestSecurityConfigFile(t *testing.T) {
	dir := t.TempDir()
	tls := tlstest.New(t, "cfg").Issue("s1")
	token := filepath.Join(dir, "bootstrap.token")
	if err := os.WriteFile(token, []byte("lf_config-file-secret-012345\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "server.json")
	body := `{"node_id": "s1", "data_dir": "` + dir + `",
	  "tls": {"cert_file": "` + tls.CertFile + `", "key_file": "` + tls.KeyFile + `", "ca_file": "` + tls.CAFile + `"},
	  "gossip_key": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
	  "acl": {"enabled": true, "bootstrap_token_file": "` + token + `"}}`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfigFile(file, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS != tls || string(cfg.GossipKey) != "0123456789abcdef0123456789abcdef" || !cfg.ACL.Enabled || cfg.ACL.BootstrapTokenFile != token {
		t.Fatalf("loaded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if DefaultConfig().ACL.Enabled {
		t.Fatal("DefaultConfig turns the ACL on; embedded servers and tests expect it off (longfair server turns it on)")
	}

	if err := os.WriteFile(token, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "acl bootstrap token") || strings.Contains(err.Error(), "short\"") {
		t.Fatalf("a short bootstrap token: %v", err)
	}
	cfg.ACL.BootstrapTokenFile = ""
	cfg.GossipKey = []byte("0123456789")
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "gossip_key") {
		t.Fatalf("a 10-byte gossip key: %v", err)
	}
}
