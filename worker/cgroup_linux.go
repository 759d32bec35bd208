package worker

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/containerd/cgroups/v3/cgroup2"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// cgroup2Mount is where a unified (v2-only) hierarchy is mounted.
const cgroup2Mount = "/sys/fs/cgroup"

// cfsPeriod is the CFS period the cpu quota is given in (the kernel's
// default, 100 ms).
const cfsPeriod = 100_000

// v1Controllers are the cgroup v1 controllers a confined worker needs:
// cpu for the quota, cpuacct for the CPU time used, memory for the limit
// and the peak, pids for the limit, freezer to kill every process of an
// attempt without one forking away during the kill, devices to keep it
// off the GPUs and MICs it was not given.
var v1Controllers = []cgroup1.Name{cgroup1.Cpu, cgroup1.Cpuacct, cgroup1.Memory, cgroup1.Pids, cgroup1.Freezer, cgroup1.Devices}

// v2Controllers are the cgroup v2 controllers a confined worker needs;
// v2 freezes and kills through cgroup.freeze and cgroup.kill, which every
// cgroup has.
var v2Controllers = []string{"cpu", "memory", "pids"}

// detectCgroups finds how this worker can confine its tasks: it returns
// the cgroup version (1 or 2), or an error saying what is missing. It
// creates the worker's parent cgroup, which proves it may.
func detectCgroups(parent string) (int, error) {
	if os.Geteuid() != 0 {
		return 0, fmt.Errorf("the worker runs as uid %d, not root, and only root may create cgroups for its tasks", os.Geteuid())
	}
	switch cgroups.Mode() {
	case cgroups.Unified:
		b, err := os.ReadFile(filepath.Join(cgroup2Mount, "cgroup.controllers"))
		if err != nil {
			return 0, fmt.Errorf("read the cgroup v2 controllers: %w", err)
		}
		have := strings.Fields(string(b))
		var missing []string
		for _, c := range v2Controllers {
			if !slices.Contains(have, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return 0, fmt.Errorf("the cgroup v2 hierarchy at %s lacks the controllers %s", cgroup2Mount, strings.Join(missing, ", "))
		}
		if _, err := cgroup2.NewManager(cgroup2Mount, parent, v2Resources(nil)); err != nil {
			return 0, fmt.Errorf("create the cgroup %s: %w", parent, err)
		}
		return 2, nil
	case cgroups.Legacy, cgroups.Hybrid:
		if _, err := v1Hierarchy(); err != nil {
			return 0, err
		}
		if _, err := cgroup1.New(cgroup1.StaticPath(parent), &specs.LinuxResources{}, cgroup1.WithHierarchy(v1Hierarchy)); err != nil {
			return 0, fmt.Errorf("create the cgroup %s: %w", parent, err)
		}
		return 1, nil
	}
	return 0, errors.New("no cgroup hierarchy is mounted under /sys/fs/cgroup")
}

// v1Hierarchy is the cgroup v1 controllers the worker uses
// (v1Controllers), or an error naming those not mounted.
func v1Hierarchy() ([]cgroup1.Subsystem, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, fmt.Errorf("find the cgroup v1 controllers: %w", err)
	}
	var out []cgroup1.Subsystem
	var missing []string
	for _, name := range v1Controllers {
		i := slices.IndexFunc(all, func(s cgroup1.Subsystem) bool { return s.Name() == name })
		if i < 0 {
			missing = append(missing, string(name))
			continue
		}
		out = append(out, all[i])
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the cgroup v1 controllers %s are not mounted", strings.Join(missing, ", "))
	}
	return out, nil
}

// v2Resources are an attempt's limits as cgroup v2 values; nil spec
// gives none, only the controllers enabled.
func v2Resources(spec *cgroupSpec) *cgroup2.Resources {
	r := &cgroup2.Resources{CPU: &cgroup2.CPU{}, Memory: &cgroup2.Memory{}, Pids: &cgroup2.Pids{}}
	if spec == nil {
		return r
	}
	if spec.CPU > 0 {
		quota, period := cpuQuota(spec.CPU), uint64(cfsPeriod)
		r.CPU.Max = cgroup2.NewCPUMax(&quota, &period)
	}
	if spec.Mem > 0 {
		m := spec.Mem
		r.Memory.Max = &m
	}
	if spec.Pids > 0 {
		r.Pids.Max = spec.Pids
	}
	// v2 controls devices with an eBPF program the library attaches.
	r.Devices = deviceRules(spec.Deny)
	return r
}

// deviceRules allow every device but the denied ones, in the order the
// devices controller applies them: allow all, then deny each.
func deviceRules(deny []deviceNumber) []specs.LinuxDeviceCgroup {
	if len(deny) == 0 {
		return nil // devices are not controlled
	}
	rules := []specs.LinuxDeviceCgroup{{Allow: true, Type: "a", Access: "rwm"}}
	for _, d := range deny {
		major, minor := d.Major, d.Minor
		rules = append(rules, specs.LinuxDeviceCgroup{Allow: false, Type: "c", Major: &major, Minor: &minor, Access: "rwm"})
	}
	return rules
}

// cpuQuota is the CFS quota, per cfsPeriod, of cores: at least the
// kernel's minimum of 1 ms.
func cpuQuota(cores float64) int64 {
	return max(int64(math.Ceil(cores*cfsPeriod)), 1000)
}

// taskCgroup is one attempt's cgroup, held by its supervisor.
type taskCgroup struct {
	spec cgroupSpec
	v1   cgroup1.Cgroup
	v2   *cgroup2.Manager
}

// newTaskCgroup creates the cgroup of spec with its limits.
func newTaskCgroup(spec cgroupSpec) (*taskCgroup, error) {
	c := &taskCgroup{spec: spec}
	var err error
	switch spec.Version {
	case 1:
		r := &specs.LinuxResources{}
		if spec.CPU > 0 {
			quota, period := cpuQuota(spec.CPU), uint64(cfsPeriod)
			r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
		}
		if spec.Mem > 0 {
			m := spec.Mem
			r.Memory = &specs.LinuxMemory{Limit: &m}
		}
		if spec.Pids > 0 {
			pids := spec.Pids
			r.Pids = &specs.LinuxPids{Limit: &pids}
		}
		r.Devices = deviceRules(spec.Deny)
		c.v1, err = cgroup1.New(cgroup1.StaticPath(spec.Path), r, cgroup1.WithHierarchy(v1Hierarchy))
	case 2:
		c.v2, err = cgroup2.NewManager(cgroup2Mount, spec.Path, v2Resources(&spec))
	default:
		return nil, fmt.Errorf("cgroup version %d: the worker and its supervisor disagree on the cgroups they use", spec.Version)
	}
	if err != nil {
		// A cgroup half-created (some v1 hierarchies) is removed again.
		_ = removeCgroup(spec.Version, spec.Path)
		return nil, fmt.Errorf("create the task's cgroup %s: %w", spec.Path, err)
	}
	return c, nil
}

// openTaskCgroup opens the existing cgroup of spec, which the attempt's
// supervisor created: the agent adds to it what `longfair exec` starts
// in the attempt (exec_service.go).
func openTaskCgroup(spec cgroupSpec) (*taskCgroup, error) {
	c := &taskCgroup{spec: spec}
	var err error
	switch spec.Version {
	case 1:
		c.v1, err = cgroup1.Load(cgroup1.StaticPath(spec.Path), cgroup1.WithHierarchy(v1Hierarchy))
	case 2:
		c.v2, err = cgroup2.Load(spec.Path, cgroup2.WithMountpoint(cgroup2Mount))
	default:
		return nil, fmt.Errorf("cgroup version %d is not 1 or 2", spec.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("open the task's cgroup %s: %w", spec.Path, err)
	}
	return c, nil
}

// add moves process pid into the cgroup.
func (c *taskCgroup) add(pid int) error {
	var err error
	if c.v1 != nil {
		err = c.v1.AddProc(uint64(pid))
	} else {
		err = c.v2.AddProc(uint64(pid))
	}
	if err != nil {
		return fmt.Errorf("move the task into its cgroup %s: %w", c.spec.Path, err)
	}
	return nil
}

// procs lists the processes in the cgroup.
func (c *taskCgroup) procs() ([]int, error) {
	var out []int
	if c.v1 != nil {
		ps, err := c.v1.Processes(cgroup1.Freezer, true)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, p.Pid)
		}
		return out, nil
	}
	ps, err := c.v2.Procs(true)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		out = append(out, int(p))
	}
	return out, nil
}

// signal sends sig to every process in the cgroup, however it left the
// task's process group (setsid, a daemon's double fork). SIGKILL goes
// through killAll, which no fork can escape.
func (c *taskCgroup) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = c.killAll(0)
		return
	}
	ps, _ := c.procs()
	for _, p := range ps {
		_ = syscall.Kill(p, sig)
	}
}

// killAll kills every process in the cgroup and waits until it is empty,
// for up to wait (0: it does not wait).
func (c *taskCgroup) killAll(wait time.Duration) error {
	return killCgroup(c.v1, c.v2, wait)
}

// killCgroup kills every process in a v1 or v2 cgroup: v1 freezes the
// cgroup, so that nothing forks while its processes are being killed,
// kills them all and thaws it, until none is left; v2 has the kernel do
// it (cgroup.kill). It waits up to wait for the cgroup to empty.
func killCgroup(v1 cgroup1.Cgroup, v2 *cgroup2.Manager, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		var n int
		if v1 != nil {
			ps, err := v1.Processes(cgroup1.Freezer, true)
			if err != nil {
				return fmt.Errorf("list the processes of a task's cgroup: %w", err)
			}
			if n = len(ps); n > 0 {
				ferr := v1.Freeze()
				// Listed again frozen: a process forked meanwhile is in it.
				if ps2, err := v1.Processes(cgroup1.Freezer, true); err == nil {
					ps = ps2
				}
				for _, p := range ps {
					_ = syscall.Kill(p.Pid, syscall.SIGKILL)
				}
				if err := v1.Thaw(); err != nil {
					return fmt.Errorf("thaw a task's cgroup to let its killed processes die: %w", err)
				}
				if ferr != nil {
					return fmt.Errorf("freeze a task's cgroup: %w", ferr)
				}
			}
		} else {
			ps, err := v2.Procs(true)
			if err != nil {
				return fmt.Errorf("list the processes of a task's cgroup: %w", err)
			}
			if n = len(ps); n > 0 {
				if err := v2.Kill(); err != nil {
					return fmt.Errorf("kill a task's cgroup: %w", err)
				}
			}
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if wait == 0 {
				return nil
			}
			return fmt.Errorf("%d processes of a task's cgroup were still there %v after they were killed", n, wait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// usage reads what the attempt used. Read after killAll, it is final:
// the counters outlive the processes.
func (c *taskCgroup) usage() (usage, error) {
	var u usage
	if c.v1 != nil {
		m, err := c.v1.Stat(cgroup1.IgnoreNotExist)
		if err != nil {
			return u, fmt.Errorf("read the task's cgroup's counters: %w", err)
		}
		if m.CPU != nil && m.CPU.Usage != nil {
			u.CPUSeconds = float64(m.CPU.Usage.Total) / 1e9
		}
		if m.Memory != nil {
			if m.Memory.Usage != nil {
				u.PeakMemBytes = int64(m.Memory.Usage.Max)
			}
		}
		u.OOMKilled = m.GetMemoryOomControl().GetOomKill() > 0
		return u, nil
	}
	m, err := c.v2.Stat()
	if err != nil {
		return u, fmt.Errorf("read the task's cgroup's counters: %w", err)
	}
	if m.CPU != nil {
		u.CPUSeconds = float64(m.CPU.UsageUsec) / 1e6
	}
	if m.Memory != nil {
		u.PeakMemBytes = int64(m.Memory.MaxUsage)
	}
	if m.MemoryEvents != nil {
		u.OOMKilled = m.MemoryEvents.OomKill > 0
	}
	return u, nil
}

// remove deletes the cgroup, which must be empty (killAll).
func (c *taskCgroup) remove() error {
	var err error
	if c.v1 != nil {
		err = c.v1.Delete()
	} else {
		err = c.v2.Delete()
	}
	if err != nil {
		return fmt.Errorf("remove the task's cgroup %s: %w", c.spec.Path, err)
	}
	return nil
}

// removeCgroup kills whatever runs in the cgroup at p and removes it; a
// cgroup that is not there is not an error.
func removeCgroup(version int, p string) error {
	switch version {
	case 1:
		cg, err := cgroup1.Load(cgroup1.StaticPath(p), cgroup1.WithHierarchy(v1Hierarchy))
		if errors.Is(err, cgroup1.ErrCgroupDeleted) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("load the cgroup %s: %w", p, err)
		}
		if err := killCgroup(cg, nil, 10*time.Second); err != nil {
			return fmt.Errorf("cgroup %s: %w", p, err)
		}
		if err := cg.Delete(); err != nil {
			return fmt.Errorf("remove the cgroup %s: %w", p, err)
		}
	case 2:
		if _, err := os.Stat(filepath.Join(cgroup2Mount, p)); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		cg, err := cgroup2.Load(p)
		if err != nil {
			return fmt.Errorf("load the cgroup %s: %w", p, err)
		}
		if err := killCgroup(nil, cg, 10*time.Second); err != nil {
			return fmt.Errorf("cgroup %s: %w", p, err)
		}
		if err := cg.Delete(); err != nil {
			return fmt.Errorf("remove the cgroup %s: %w", p, err)
		}
	}
	return nil
}

// childCgroups lists the cgroups under parent, in any hierarchy the
// worker uses (a v1 cgroup may have been created in some only).
func childCgroups(version int, parent string) ([]string, error) {
	var dirs []string
	switch version {
	case 1:
		subs, err := v1Hierarchy()
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			if p, ok := s.(interface{ Path(string) string }); ok {
				dirs = append(dirs, p.Path(parent))
			}
		}
	case 2:
		dirs = append(dirs, filepath.Join(cgroup2Mount, parent))
	}
	var names []string
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list the cgroups under %s: %w", d, err)
		}
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(names, e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = path.Join(parent, n)
	}
	return out, nil
}

// removeEmptyCgroup removes the cgroup at p from every hierarchy where it
// is empty, and leaves it where it is not (a task still ending).
func removeEmptyCgroup(version int, p string) {
	dirs := []string{filepath.Join(cgroup2Mount, p)}
	if version == 1 {
		dirs = dirs[:0]
		subs, _ := v1Hierarchy()
		for _, s := range subs {
			if ps, ok := s.(interface{ Path(string) string }); ok {
				dirs = append(dirs, ps.Path(p))
			}
		}
	}
	for _, d := range dirs {
		_ = syscall.Rmdir(d)
	}
}
