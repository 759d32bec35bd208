package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// confinedAgent is a test agent that runs its tasks in cgroups, under a
// node id of its own so that tests running at once never reap each
// other's cgroups. It skips the test where the machine cannot confine.
func confinedAgent(t testing.TB, tune func(*Config)) *Agent {
	t.Helper()
	node := fmt.Sprintf("cgtest-%d-%d", os.Getpid(), time.Now().UnixNano())
	if _, err := detectCgroups(cgroupParent(node)); err != nil {
		t.Skipf("this machine cannot confine tasks (%v): the containment tests need root and cgroup controllers", err)
	}
	t.Cleanup(func() {
		if err := removeCgroup(confinedVersion(t, node), cgroupParent(node)); err != nil {
			t.Errorf("removing the test's cgroup parent: %v", err)
		}
	})
	return newTestAgent(t, func(c *Config) {
		c.NodeID = node
		c.Unconfined = false
		if tune != nil {
			tune(c)
		}
	})
}

func confinedVersion(t testing.TB, node string) int {
	v, err := detectCgroups(cgroupParent(node))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// forkScript starts n sleeps that leave the task's process group
// (setsid), writes their pids to path, and waits.
func forkScript(path string, n int) string {
	return fmt.Sprintf(`i=0; while [ $i -lt %d ]; do setsid sleep 300 & echo $! >> %s; i=$((i+1)); done; wait`, n, path)
}

// readPIDs waits until path lists n pids, and returns them.
func readPIDs(t *testing.T, path string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task wrote %d of %d pids", len(pids), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitAllGone(t *testing.T, pids []int) {
	t.Helper()
	for _, p := range pids {
		waitGone(t, p)
	}
}

// Processes a task starts outside its process group (setsid) are in its
// cgroup, and die with the attempt, however it ends.
func TestConfinedTaskLeavesNothingBehind(t *testing.T) {
	for _, end := range []string{"cancel", "walltime", "exit"} {
		t.Run(end, func(t *testing.T) {
			ag := confinedAgent(t, nil)
			pidFile := filepath.Join(t.TempDir(), "pids")
			script, walltime := forkScript(pidFile, 50), time.Hour
			switch end {
			case "walltime":
				// Long enough to fork 50 on a loaded machine.
				walltime = 4 * time.Second
			case "exit":
				// The shell exits at once, leaving its children.
				script = strings.TrimSuffix(script, "; wait")
			}
			ag.assign(asg(1, 0, 1, script, walltime, map[string]float64{"cpu": 1, "mem": 256 << 20}))
			pids := readPIDs(t, pidFile, 50)
			if end == "cancel" {
				ag.kill([]*longfairv1.AttemptRef{{JobId: 1, Task: 0, Attempt: 1}}, true, "cancelled by the test")
			}
			waitEvent(t, ag, 1, 0, 1, exited)
			waitAllGone(t, pids)
			assertCgroupGone(t, ag, attemptKey{1, 0, 1})
		})
	}
}

func assertCgroupGone(t *testing.T, ag *Agent, k attemptKey) {
	t.Helper()
	left, err := childCgroups(ag.cgroupVersion, cgroupParent(ag.cfg.NodeID))
	if err != nil {
		t.Fatal(err)
	}
	if want := attemptCgroup(cgroupParent(ag.cfg.NodeID), k); len(left) > 0 {
		t.Errorf("cgroups left under the worker's parent: %v (the attempt's was %s)", left, want)
	}
}

// A supervisor killed with SIGKILL (with its worker: an OOM kill, a
// `kill -9` of the service's whole cgroup) cannot kill its task's
// children; the worker started next on the node finds their cgroup and
// kills them before it says it is ready.
func TestRestartedWorkerKillsWhatAKilledSupervisorLeft(t *testing.T) {
	ag := confinedAgent(t, nil)
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	pidFile := filepath.Join(dir, "pids")
	k := attemptKey{7, 3, 1}
	spec := supervisorSpec{
		Script: forkScript(pidFile, 50), Dir: dir, Walltime: time.Hour, KillGrace: time.Second,
		Cgroup: &cgroupSpec{Version: ag.cgroupVersion, Path: attemptCgroup(cgroupParent(ag.cfg.NodeID), k), Pids: DefaultPidsLimit},
	}
	ag.lease.Store(monoNow() + int64(time.Hour))
	proc, err := ag.supervisors.start(spec, out, out)
	if err != nil {
		t.Fatal(err)
	}
	pids := readPIDs(t, pidFile, 50)
	if err := proc.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Reaped by the agent's reader; not waited for as an agent would,
	// which would kill the task's cgroup itself: this agent is "dead".
	for deadline := time.Now().Add(10 * time.Second); !proc.p.isDead(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed supervisor was not reaped")
		}
	}
	time.Sleep(100 * time.Millisecond)
	alive := 0
	for _, p := range pids {
		if pidAlive(p) {
			alive++
		}
	}
	if alive == 0 {
		t.Fatal("the task's children died with their supervisor: this test shows nothing")
	}
	// The next worker process on the node.
	ag.reapCgroups()
	waitAllGone(t, pids)
	assertCgroupGone(t, ag, k)
}

// startConfined runs script in a cgroup under a supervisor, as the agent
// does, and returns how it ended.
func runConfined(t *testing.T, ag *Agent, k attemptKey, script string, spec cgroupSpec) exit {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	spec.Version, spec.Path = ag.cgroupVersion, attemptCgroup(cgroupParent(ag.cfg.NodeID), k)
	ag.lease.Store(monoNow() + int64(time.Hour))
	started := time.Now()
	proc, err := ag.supervisors.start(supervisorSpec{Script: script, Dir: dir, Env: taskEnv(os.Environ()), Walltime: time.Minute, KillGrace: time.Second, Cgroup: &spec}, out, out)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := proc.wait(started)
	if err != nil {
		t.Fatal(err)
	}
	if ex.usage == nil {
		t.Fatalf("a confined task ended without its usage: %+v", ex)
	}
	return ex
}

// The memory limit is the task's mem demand: past it the kernel kills
// the task, and its usage says so.
func TestConfinedTaskIsKilledPastItsMemory(t *testing.T) {
	ag := confinedAgent(t, nil)
	ex := runConfined(t, ag, attemptKey{1, 0, 1}, "head -c 200M /dev/zero | tail", cgroupSpec{Mem: 32 << 20})
	if ex.code == 0 || !ex.usage.OOMKilled {
		t.Fatalf("a task that allocates 200 MiB with 32 MiB ended with %d, usage %+v; want killed for memory", ex.code, *ex.usage)
	}
	if ex.usage.PeakMemBytes > 33<<20 || ex.usage.PeakMemBytes < 16<<20 {
		t.Errorf("peak memory %d bytes; want about the 32 MiB limit", ex.usage.PeakMemBytes)
	}
}

// The cgroup measures CPU time and peak memory: a 2 s busy loop and a
// 100 MiB buffer, each within 10%.
func TestConfinedTaskUsageIsMeasured(t *testing.T) {
	ag := confinedAgent(t, nil)
	busy := runConfined(t, ag, attemptKey{1, 0, 1}, workload(t, "busy2s"), cgroupSpec{CPU: 1})
	if c := busy.usage.CPUSeconds; c < 1.8 || c > 2.2 {
		t.Errorf("a 2 s busy loop used %.3f CPU seconds", c)
	}
	mem := runConfined(t, ag, attemptKey{1, 1, 1}, alloc100MiB, cgroupSpec{Mem: 1 << 30})
	if p := float64(mem.usage.PeakMemBytes) / (100 << 20); p < 0.9 || p > 1.1 {
		t.Errorf("a 100 MiB allocation peaked at %d bytes (%.2f of 100 MiB)", mem.usage.PeakMemBytes, p)
	}
	if busy.usage.OOMKilled || mem.usage.OOMKilled {
		t.Errorf("tasks within their memory were reported killed for it: %+v, %+v", *busy.usage, *mem.usage)
	}
}

// alloc100MiB holds a 100 MiB buffer it has written: dd reads one 100 MiB
// block into it. (Not the test binary: under -race its memory is
// shadowed several times over.)
const alloc100MiB = `dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null`

// The cpu quota holds a task that asks for half a core to about half a
// core, however many it would use.
func TestConfinedTaskCPUQuota(t *testing.T) {
	ag := confinedAgent(t, nil)
	start := time.Now()
	ex := runConfined(t, ag, attemptKey{1, 0, 1}, `sh -c 'while :; do :; done' & sh -c 'while :; do :; done' & sleep 2; kill %1 %2`, cgroupSpec{CPU: 0.5})
	wall := time.Since(start).Seconds()
	if c := ex.usage.CPUSeconds; c > 0.5*wall*1.15 {
		t.Errorf("a task limited to half a core used %.2f CPU seconds in %.2f s", c, wall)
	}
}

// processTime is the CPU time this process has used.
func processTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// workload is the script that runs the test binary as workload w.
func workload(t *testing.T, w string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s=%s exec %s", envTestWorkload, w, exe)
}

// A confined task's script runs as /bin/sh -c would run it: $0 is
// /bin/sh, there are no positional parameters, exit and syntax errors end
// it with their status, and it is the process group's leader.
func TestConfinedTaskRunsAsShC(t *testing.T) {
	for _, ag := range []*Agent{newTestAgent(t, nil), confinedAgent(t, nil)} {
		ag.assign(asg(1, 0, 1, `echo "$0 $# $(($$ == $(ps -o pgid= $$)))"; exit 3`, time.Minute, nil))
		ag.assign(asg(1, 1, 1, `echo before; if then`, time.Minute, nil))
		if code := waitEvent(t, ag, 1, 0, 1, exited).GetExitCode(); code != 3 {
			t.Errorf("%s: `exit 3` ended with %d", confinementName(ag.cgroupVersion), code)
		}
		if code := waitEvent(t, ag, 1, 1, 1, exited).GetExitCode(); code != 2 {
			t.Errorf("%s: a syntax error ended with %d, want 2", confinementName(ag.cgroupVersion), code)
		}
		out, err := os.ReadFile(outputPath(ag.cfg.WorkDir, attemptKey{1, 0, 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != "/bin/sh 0 1" {
			t.Errorf("%s: the script saw $0 $# and leadership %q, want %q", confinementName(ag.cgroupVersion), got, "/bin/sh 0 1")
		}
	}
}
