package worker

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// maxDevices bounds the MIC devices of one node.
const maxDevices = 1024

// devices hands out MIC device indices so that attempts running at the same
// time never share one. The cluster only places attempts that fit, so a
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
		return nil, fmt.Errorf("the task needs %d MIC devices and this node has %d", n, len(d.inUse))
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

// offloadDevices formats indices for OFFLOAD_DEVICES ("0,2").
func offloadDevices(idx []int) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}
