package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// GPUs, given as a device count (no GPU here: the indices are what the
// worker hands out): four one-GPU tasks running at once get four distinct
// indices in CUDA_VISIBLE_DEVICES, and none of them OFFLOAD_DEVICES; a task
// asking for two GPUs and a MIC gets two GPUs and the MIC, each in its own
// variable.
func TestGPUsAreDistinctPerTask(t *testing.T) {
	ag := newTestAgent(t, func(c *Config) { c.Resources["gpu"] = 4; c.Resources["mic"] = 1 })
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	script := fmt.Sprintf(`echo "${CUDA_VISIBLE_DEVICES-unset} ${OFFLOAD_DEVICES-unset}" > %s/$LONGFAIR_TASK_INDEX; while [ ! -e %s ]; do sleep 0.01; done`, dir, gate)
	for i := range 4 {
		ag.assign(asg(1, int64(i), 1, script, time.Minute, map[string]float64{"gpu": 1, "cpu": 0.5}))
	}
	for i := range int64(4) {
		waitEvent(t, ag, 1, i, 1, started)
	}
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for i := range 4 {
		var b []byte
		for len(b) == 0 && time.Now().Before(deadline) {
			b, _ = os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
			time.Sleep(5 * time.Millisecond)
		}
		f := strings.Fields(string(b))
		if len(f) != 2 || f[1] != "unset" {
			t.Fatalf("task %d saw %q, want one GPU and no MIC", i, b)
		}
		got = append(got, f[0])
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"0", "1", "2", "3"}) {
		t.Fatalf("four running one-GPU tasks got GPUs %v, want 0, 1, 2 and 3 once each", got)
	}
	os.WriteFile(gate, nil, 0o600)
	for i := range int64(4) {
		waitEvent(t, ag, 1, i, 1, exited)
	}
	ag.assign(asg(2, 0, 1, fmt.Sprintf(`echo "$CUDA_VISIBLE_DEVICES $OFFLOAD_DEVICES" > %s/both`, dir), time.Minute, map[string]float64{"gpu": 2, "mic": 1}))
	waitEvent(t, ag, 2, 0, 1, exited)
	if b, _ := os.ReadFile(filepath.Join(dir, "both")); strings.TrimSpace(string(b)) != "0,1 0" {
		t.Fatalf("a task of two GPUs and a MIC saw %q, want \"0,1 0\"", b)
	}
}

// Without --gpu the worker counts the GPUs nvidia-smi -L lists; without
// nvidia-smi it has none.
func TestGPUsAreDetectedWithNvidiaSMI(t *testing.T) {
	bin := t.TempDir()
	fake := `#!/bin/sh
[ "$1" = "-L" ] || exit 2
echo "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-11111111-2222-3333-4444-555555555555)"
echo "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-66666666-7777-8888-9999-000000000000)"
echo "  MIG 1g.5gb Device 0: (UUID: MIG-aaaa)"
`
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if got := DetectResources()["gpu"]; got != 2 {
		t.Fatalf("detected %v GPUs from nvidia-smi -L listing two, want 2", got)
	}
	t.Setenv("PATH", t.TempDir())
	if got, ok := DetectResources()["gpu"]; ok {
		t.Fatalf("detected %v GPUs without nvidia-smi, want none", got)
	}
}
