package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A confined task can open only the GPUs it was given. There is no GPU
// here: the test makes two character device files with NVIDIA's major
// number (195) and no driver behind them. Opening a device whose driver is
// missing fails with ENXIO ("No such device or address") — the cgroup let
// the open through — while the cgroup's devices controller refuses the
// other one with EPERM ("Operation not permitted").
func TestConfinedTaskOpensOnlyItsGPUs(t *testing.T) {
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "nvidia0"), filepath.Join(dir, "nvidia1")}
	for i, f := range files {
		if err := unix.Mknod(f, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))); err != nil {
			t.Skipf("cannot make a device file (%v): the device tests need root", err)
		}
	}
	ag := confinedAgent(t, func(c *Config) {
		c.Resources["gpu"] = 2
		c.DeviceFiles = map[string][]string{"gpu": files}
	})
	out := filepath.Join(dir, "out")
	// Each line: the device, then what opening it said.
	script := fmt.Sprintf(`for d in %s %s; do if (: < $d) 2>%s.err; then echo "$d opened"; else echo "$d $(cat %s.err)"; fi; done > %s; echo "gpus=$CUDA_VISIBLE_DEVICES" >> %s`,
		files[0], files[1], out, out, out, out)
	ag.assign(asg(1, 0, 1, script, time.Minute, map[string]float64{"gpu": 1, "cpu": 0.1}))
	waitEvent(t, ag, 1, 0, 1, exited)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("the task wrote %q", b)
	}
	own := strings.TrimPrefix(lines[2], "gpus=")
	if own != "0" && own != "1" {
		t.Fatalf("the task was given GPUs %q, want one of 0 and 1", own)
	}
	for i, l := range lines[:2] {
		mine := fmt.Sprint(i) == own
		switch {
		case mine && !strings.Contains(l, "No such device"):
			t.Errorf("its own GPU %d: %q, want the open let through to the (missing) driver: ENXIO", i, l)
		case !mine && !strings.Contains(l, "not permitted"):
			t.Errorf("the other GPU %d: %q, want the cgroup to refuse it: EPERM", i, l)
		}
	}
}
