package worker

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// maxDevices bounds the devices of one class on one node.
const maxDevices = 1024

// deviceClass is a kind of device a node has a number of, numbered from 0,
// and the variable that tells a task which of them are its own: GPUs in
// CUDA_VISIBLE_DEVICES (which CUDA, and through it most GPU software,
// reads), Xeon Phi in OFFLOAD_DEVICES (Intel's offload runtime). Each is a
// resource of the cluster like any other: placed, counted in fairness and
// billed by its weight (an admin adds gpu with
// `longfair policy set --add-resource gpu --billing-weight gpu=...`).
type deviceClass struct {
	resource, env string
}

// deviceClasses in the order an attempt takes its devices, always the
// same, so that two attempts never wait for each other's.
var deviceClasses = [...]deviceClass{
	{ResourceGPU, EnvCUDAVisibleDevices},
	{ResourceMIC, EnvOffloadDevices},
}

// devices hands out one class's device indices so that attempts running at
// the same time never share one. The cluster only places attempts that fit, so a
// request normally finds enough free devices at once; it waits when an
// attempt the ledger has already ended still holds its devices here (its
// process is being killed), and gets them when that process is gone.
type devices struct {
	mu    sync.Mutex
	inUse []bool
	// freed is closed and replaced whenever devices are released.
	freed chan struct{}
}

func newDevices(n int) *devices {
	return &devices{inUse: make([]bool, n), freed: make(chan struct{})}
}

// need is how many devices a demand of q mic asks for: fractions round up,
// since a device cannot be split between processes here.
func need(q float64) int {
	if q <= 0 || math.IsNaN(q) {
		return 0
	}
	return int(math.Ceil(q - 1e-9))
}

// acquire takes n free devices, lowest indices first, waiting until they
// are free or ctx ends.
func (d *devices) acquire(ctx context.Context, n int) ([]int, error) {
	if n == 0 {
		return nil, nil
	}
	if n > len(d.inUse) {
		return nil, fmt.Errorf("the task needs %d devices and this node has %d", n, len(d.inUse))
	}
	for {
		d.mu.Lock()
		var got []int
		for i, used := range d.inUse {
			if !used {
				got = append(got, i)
				if len(got) == n {
					break
				}
			}
		}
		if len(got) == n {
			for _, i := range got {
				d.inUse[i] = true
			}
			d.mu.Unlock()
			return got, nil
		}
		freed := d.freed
		d.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release returns devices taken by acquire.
func (d *devices) release(idx []int) {
	if len(idx) == 0 {
		return
	}
	d.mu.Lock()
	for _, i := range idx {
		d.inUse[i] = false
	}
	close(d.freed)
	d.freed = make(chan struct{})
	d.mu.Unlock()
}

// deviceNumber is a character device's major and minor number, by which
// the cgroup devices controller allows or denies it.
type deviceNumber struct {
	Major int64 `json:"major"`
	Minor int64 `json:"minor"`
}

// deviceFiles lists, for each device class in deviceClasses order, the
// device file of each index: the configured ones (Config.DeviceFiles),
// else /dev/nvidiaN for GPUs and /dev/micN for MICs where those exist.
// An index without a file is not confined: nothing on the node could
// name it.
func deviceFiles(cfg *Config) [len(deviceClasses)][]string {
	var out [len(deviceClasses)][]string
	for i, c := range deviceClasses {
		if files, ok := cfg.DeviceFiles[c.resource]; ok {
			out[i] = files
			continue
		}
		prefix := map[string]string{ResourceGPU: "/dev/nvidia", ResourceMIC: "/dev/mic"}[c.resource]
		for n := range int(cfg.Resources[c.resource]) {
			f := prefix + strconv.Itoa(n)
			if _, err := os.Stat(f); err == nil {
				out[i] = append(out[i], f)
			}
		}
	}
	return out
}

// otherDevices are the device numbers of the node's devices that held
// does not hold: what an attempt's cgroup denies, so that a task uses
// only the GPUs and MICs it was given even if it ignores
// CUDA_VISIBLE_DEVICES. A file that is not a character device is left
// out (and was logged when the agent started).
func (ag *Agent) otherDevices(held heldDevices) []deviceNumber {
	var out []deviceNumber
	for i, files := range ag.deviceFiles {
		for n, f := range files {
			if slices.Contains(held[i], n) {
				continue
			}
			if num, ok := charDevice(f); ok {
				out = append(out, num)
			}
		}
	}
	return out
}

// charDevice reads a character device file's number.
func charDevice(path string) (deviceNumber, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return deviceNumber{}, false
	}
	return deviceNumber{Major: int64(unix.Major(uint64(st.Rdev))), Minor: int64(unix.Minor(uint64(st.Rdev)))}, true
}

// heldDevices are the devices of each class an attempt holds, in
// deviceClasses order.
type heldDevices [len(deviceClasses)][]int

// acquireDevices takes, class by class, the devices demand asks for.
// On failure it holds nothing.
func (ag *Agent) acquireDevices(ctx context.Context, demand map[string]float64) (heldDevices, error) {
	var held heldDevices
	for i, c := range deviceClasses {
		idx, err := ag.devs[i].acquire(ctx, need(demand[c.resource]))
		if err != nil {
			ag.releaseDevices(held)
			return heldDevices{}, fmt.Errorf("%s devices: %w", c.resource, err)
		}
		held[i] = idx
	}
	return held, nil
}

// releaseHeld returns the devices attempt a holds, once.
func (ag *Agent) releaseHeld(a *attempt) {
	ag.tasks.mu.Lock()
	held := a.devices
	a.devices = heldDevices{}
	ag.tasks.mu.Unlock()
	ag.releaseDevices(held)
}

// releaseDevices returns what acquireDevices took.
func (ag *Agent) releaseDevices(held heldDevices) {
	for i := range held {
		ag.devs[i].release(held[i])
	}
}

// env lists the variables naming the devices held, one per class held.
func (h heldDevices) env() []string {
	var out []string
	for i, idx := range h {
		if len(idx) > 0 {
			out = append(out, deviceClasses[i].env+"="+deviceList(idx))
		}
	}
	return out
}

// deviceList formats indices as CUDA_VISIBLE_DEVICES and OFFLOAD_DEVICES
// take them ("0,2").
func deviceList(idx []int) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
