package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Resource names the agent fills in itself.
const (
	ResourceCPU = "cpu"
	ResourceMem = "mem"
	ResourceMIC = "mic"
	ResourceGPU = "gpu"
)

// DetectResources returns what this machine has: cpu (runtime.NumCPU),
// mem (MemTotal of /proc/meminfo, in bytes; left out when it cannot be
// read, for example on a system without /proc) and gpu (the NVIDIA GPUs
// `nvidia-smi -L` lists; left out without nvidia-smi or GPUs).
func DetectResources() map[string]float64 {
	r := map[string]float64{ResourceCPU: float64(runtime.NumCPU())}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		if mem, err := memTotal(f); err == nil {
			r[ResourceMem] = mem
		}
	}
	if n := detectGPUs(); n > 0 {
		r[ResourceGPU] = float64(n)
	}
	return r
}

// detectGPUs counts the GPUs nvidia-smi lists ("GPU 0: NVIDIA A100 ...
// (UUID: ...)", one line each), 0 when it is not installed or fails: a
// node without the driver has no GPU a task could use. CUDA numbers them
// as nvidia-smi does, which is what CUDA_VISIBLE_DEVICES indexes.
func detectGPUs() int {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-L").Output()
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "GPU ") {
			n++
		}
	}
	return min(n, maxDevices)
}

// memTotal reads the MemTotal line of /proc/meminfo ("MemTotal: 16303756 kB").
func memTotal(r io.Reader) (float64, error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 || fields[0] != "MemTotal:" {
			continue
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("meminfo: MemTotal %q is not a number", fields[1])
		}
		unit := 1.0
		if len(fields) > 2 {
			switch strings.ToLower(fields[2]) {
			case "kb":
				unit = 1 << 10
			case "mb":
				unit = 1 << 20
			case "gb":
				unit = 1 << 30
			default:
				return 0, fmt.Errorf("meminfo: MemTotal unit %q is unknown", fields[2])
			}
		}
		return v * unit, nil
	}
	if err := s.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	return 0, errors.New("meminfo: no MemTotal line")
}

// ParseQuantity reads a resource quantity: a non-negative number with an
// optional binary suffix K, M, G, T or P (powers of 1024, with or without
// a trailing "i" or "B": 64G, 64Gi and 64GB are the same), as memory is
// given on command lines.
func ParseQuantity(s string) (float64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "i")
	mult := 1.0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGTP", upper(t[n-1])); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("quantity %q is not a non-negative number (examples: 16, 0.5, 64G, 512M)", s)
	}
	return v * mult, nil
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// ParseResource reads "name=quantity" (for example "gpu=4" or "mem=64G").
func ParseResource(s string) (string, float64, error) {
	name, qty, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", 0, fmt.Errorf("resource %q is not name=quantity (for example gpu=4 or mem=64G)", s)
	}
	v, err := ParseQuantity(qty)
	if err != nil {
		return "", 0, fmt.Errorf("resource %s: %w", name, err)
	}
	return name, v, nil
}
