package worker

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestMemTotalReadsMeminfo(t *testing.T) {
	in := "MemFree:        1000 kB\nMemTotal:       16303756 kB\nBuffers: 1 kB\n"
	got, err := memTotal(strings.NewReader(in))
	if err != nil || got != 16303756*1024 {
		t.Fatalf("memTotal = %v, %v; want %v bytes", got, err, 16303756*1024)
	}
	for _, bad := range []string{"MemFree: 1 kB\n", "MemTotal: lots kB\n", "MemTotal: 5 parsecs\n"} {
		if _, err := memTotal(strings.NewReader(bad)); err == nil {
			t.Errorf("memTotal(%q) accepted it", bad)
		}
	}
}

func TestDetectResourcesFindsCPUs(t *testing.T) {
	r := DetectResources()
	if r[ResourceCPU] != float64(runtime.NumCPU()) {
		t.Fatalf("cpu = %v, want %d", r[ResourceCPU], runtime.NumCPU())
	}
	if runtime.GOOS == "linux" && r[ResourceMem] <= 0 {
		t.Fatalf("mem = %v on linux, want the machine's memory", r[ResourceMem])
	}
}

func TestParseQuantity(t *testing.T) {
	for in, want := range map[string]float64{
		"16": 16, "0.5": 0.5, "512M": 512 << 20, "64G": 64 << 30, "64Gi": 64 << 30, "64GB": 64 << 30,
		"2t": 2 << 40, " 1K ": 1024, "0": 0,
	} {
		got, err := ParseQuantity(in)
		if err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "-1", "NaN", "Inf", "12X", "1e999"} {
		if _, err := ParseQuantity(bad); err == nil || !strings.Contains(err.Error(), "64G") {
			t.Errorf("ParseQuantity(%q) = %v; want an error with an example", bad, err)
		}
	}
}

func TestParseResource(t *testing.T) {
	name, q, err := ParseResource("gpu=4")
	if err != nil || name != "gpu" || q != 4 {
		t.Fatalf("ParseResource(gpu=4) = %q, %v, %v", name, q, err)
	}
	for _, bad := range []string{"gpu", "=4", "gpu=lots"} {
		if _, _, err := ParseResource(bad); err == nil {
			t.Errorf("ParseResource(%q) accepted it", bad)
		}
	}
}

func TestConfigValidateNamesEachProblem(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NodeID = "bad id"
	cfg.Join = []string{"nohost"}
	cfg.GossipAddr = "0.0.0.0:7414"
	cfg.GossipKey = []byte("short")
	cfg.Resources = map[string]float64{"mic": 1.5, "cpu": -1}
	cfg.Account = "a/b"
	cfg.Class = "cpu\x1b[2J"
	cfg.FenceTimeout = 100 * time.Millisecond
	err := cfg.Validate()
	if err == nil {
		t.Fatal("a bad configuration was accepted")
	}
	for _, want := range []string{"node id", "join address", "gossip address", "gossip key", "mic", "resource cpu", "account", "node class", "work dir", "fence timeout is 100ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	good := DefaultConfig()
	good.NodeID, good.Join, good.WorkDir = "c01.example.org", []string{"10.0.0.1:7412"}, "/tmp/w"
	good.Resources = map[string]float64{"mic": 2, "gpu": 4}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good configuration was refused: %v", err)
	}
}
