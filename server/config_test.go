package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func validConfig() Config {
	c := DefaultConfig()
	c.NodeID = "s1"
	c.DataDir = "/tmp/x"
	return c
}

func TestDefaultConfigIsValidOnceNamed(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("default config with node id and data dir: %v", err)
	}
	if err := DefaultConfig().Validate(); err == nil {
		t.Fatal("default config without node id and data dir validated")
	}
}

func TestValidateSaysWhatIsWrong(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no node id", func(c *Config) { c.NodeID = "" }, "--node-id"},
		{"bad node id", func(c *Config) { c.NodeID = "a b" }, "node id \"a b\" has ' '"},
		{"no data dir", func(c *Config) { c.DataDir = "" }, "--data-dir"},
		{"raft addr not host:port", func(c *Config) { c.RaftAddr = "7411" }, "raft address \"7411\" is not host:port"},
		{"port out of range", func(c *Config) { c.GRPCAddr = "127.0.0.1:70000" }, "not a number from 0 to 65535"},
		{"unadvertisable bind", func(c *Config) { c.RaftAddr = "0.0.0.0:7411" }, "set --raft-advertise"},
		{"advertise with port 0", func(c *Config) { c.GRPCAddr = "0.0.0.0:0"; c.GRPCAdvertise = "10.0.0.1:0" }, "needs a fixed port"},
		{"bad join", func(c *Config) { c.Join = []string{"nohost"} }, "join address \"nohost\""},
		{"both bootstraps", func(c *Config) { c.Bootstrap = true; c.BootstrapExpect = 3 }, "not both"},
		{"negative expect", func(c *Config) { c.BootstrapExpect = -1 }, "bootstrap-expect is -1"},
		{"lease above heartbeat", func(c *Config) { c.Raft.LeaderLeaseTimeout = Duration(time.Second) }, "leader_lease_timeout"},
		{"zero timeout", func(c *Config) { c.Raft.ElectionTimeout = 0 }, "election_timeout is 0s"},
		{"append entries", func(c *Config) { c.Raft.MaxAppendEntries = 0 }, "max_append_entries"},
		{"unknown log store", func(c *Config) { c.Raft.LogStore = "rocksdb" }, `raft log_store is "rocksdb": use "boltdb" (the default) or "wal"`},
		{"no log store", func(c *Config) { c.Raft.LogStore = "" }, `raft log_store is ""`},
		{"worker loss too short", func(c *Config) { c.WorkerLossTimeout = Duration(time.Second) }, "worker_loss_timeout is 1s: give at least 2s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("invalid config validated")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}

func TestAdvertiseMakesWildcardBindValid(t *testing.T) {
	c := validConfig()
	c.RaftAddr, c.RaftAdvertise = "0.0.0.0:7411", "10.0.0.1:7411"
	if err := c.Validate(); err != nil {
		t.Fatalf("wildcard bind with advertise address: %v", err)
	}
}

func TestLoadConfigFileOverridesOnlyWhatItSets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.json")
	const file = `{"node_id": "s2", "join": ["127.0.0.1:7000"], "raft": {"heartbeat_timeout": "1s", "leader_lease_timeout": "400ms"}}`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	base := validConfig()
	c, err := LoadConfigFile(path, base)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != "s2" || len(c.Join) != 1 || c.Join[0] != "127.0.0.1:7000" {
		t.Fatalf("file values not applied: %+v", c)
	}
	if time.Duration(c.Raft.HeartbeatTimeout) != time.Second || time.Duration(c.Raft.LeaderLeaseTimeout) != 400*time.Millisecond {
		t.Fatalf("raft durations not applied: %+v", c.Raft)
	}
	// Fields the file leaves out keep the base's values.
	if c.DataDir != base.DataDir || c.Raft.ElectionTimeout != base.Raft.ElectionTimeout || c.GRPCAddr != base.GRPCAddr {
		t.Fatalf("unset fields changed: %+v", c)
	}
}

func TestLoadConfigFileRefusesUnknownFieldsAndBadDurations(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field":      `{"node_idd": "s1"}`,
		"bad duration":       `{"raft": {"heartbeat_timeout": "fast"}}`,
		"number as duration": `{"raft": {"heartbeat_timeout": 500}}`,
		"two values":         `{} {}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfigFile(path, validConfig()); err == nil {
			t.Errorf("%s: config file %s accepted", name, body)
		}
	}
	if _, err := LoadConfigFile(filepath.Join(dir, "missing.json"), validConfig()); err == nil {
		t.Error("missing config file accepted")
	}
}

func TestValidateHTTPAndLogSettings(t *testing.T) {
	for _, tc := range []struct {
		tune func(*Config)
		want string // "" means valid
	}{
		{func(c *Config) { c.HTTPAddr = "" }, ""},
		{func(c *Config) { c.HTTPAddr = "0.0.0.0:7413" }, ""},
		{func(c *Config) { c.HTTPAddr = "7413" }, "http address"},
		{func(c *Config) { c.HTTPAddr = "127.0.0.1:99999" }, "http address"},
		{func(c *Config) { c.LogLevel = "loud" }, "log_level"},
		{func(c *Config) { c.LogFormat = "xml" }, "log_format"},
		{func(c *Config) { c.LogLevel, c.LogFormat = "debug", "json" }, ""},
	} {
		cfg := validConfig()
		tc.tune(&cfg)
		err := cfg.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("http %q log %q/%q refused: %v", cfg.HTTPAddr, cfg.LogLevel, cfg.LogFormat, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("http %q log %q/%q: error %v, want one naming %q", cfg.HTTPAddr, cfg.LogLevel, cfg.LogFormat, err, tc.want)
		}
	}
}
