package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ), 100 on
// every Linux this runs on.
const clockTick = 10 * time.Millisecond

// devCPU is the CPU time a `longfair dev` cluster's processes have used,
// by role, from /proc: its servers, its workers, the workers' task
// supervisors, and the tasks the supervisors started and reaped.
type devCPU struct {
	servers, workers, supervisors, tasks time.Duration
}

// readDevCPU reads devCPU for the cluster in dir (its dev.json names the
// servers' and workers' pids; supervisors are the workers' children).
func readDevCPU(b *testing.B, dir string) devCPU {
	data, err := os.ReadFile(filepath.Join(dir, "dev.json"))
	if err != nil {
		b.Fatal(err)
	}
	var desc struct {
		Servers, Workers []struct{ PID int }
	}
	if err := json.Unmarshal(data, &desc); err != nil {
		b.Fatalf("dev.json: %v", err)
	}
	var c devCPU
	workers := map[int]bool{}
	for _, s := range desc.Servers {
		self, _, _ := procCPU(s.PID)
		c.servers += self
	}
	for _, w := range desc.Workers {
		workers[w.PID] = true
		self, _, _ := procCPU(w.PID)
		c.workers += self
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if self, children, ppid := procCPU(pid); workers[ppid] {
			c.supervisors += self
			c.tasks += children
		}
	}
	return c
}

// procCPU is process pid's own CPU time, that of its reaped children, and
// its parent's pid; zeros when it is gone.
func procCPU(pid int) (self, children time.Duration, ppid int) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0
	}
	// The fields after the command, which may hold spaces and parens.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 15 {
		return 0, 0, 0
	}
	n := func(i int) time.Duration {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(v) * clockTick
	}
	ppid, _ = strconv.Atoi(f[1])
	return n(11) + n(12), n(13) + n(14), ppid
}
