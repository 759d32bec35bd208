package worker

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"syscall"
	"time"
)

// Confinement is how a worker holds its tasks to what they asked for; the
// node advertises it, and `longfair nodes` shows it.
const (
	// ConfinementUnconfined: tasks run in process groups only, their
	// demand unenforced (--unconfined: laptops, `longfair dev`).
	ConfinementUnconfined = "unconfined"
	// ConfinementCgroupV1 and ConfinementCgroupV2: every attempt runs in
	// its own cgroup, limited by its demand (cgroup.go).
	ConfinementCgroupV1 = "cgroup-v1"
	ConfinementCgroupV2 = "cgroup-v2"
)

// DefaultPidsLimit is the default limit on the processes and threads one
// attempt may have: far above what a job script and its tools use, far
// below what it takes a fork bomb to make the node unusable.
const DefaultPidsLimit = 4096

// cgroupSpec is the cgroup the supervisor creates for an attempt, sent
// in its supervisorSpec.
type cgroupSpec struct {
	// Version is the cgroup version the agent found (1 or 2).
	Version int `json:"version"`
	// Path is the cgroup, from the root of each hierarchy:
	// PARENT/JOB.TASK.ATTEMPT.
	Path string `json:"path"`
	// CPU is the attempt's cpu demand in cores (a CFS quota); 0: none.
	CPU float64 `json:"cpu,omitempty"`
	// Mem is its memory demand in bytes, a hard limit; 0: none.
	Mem int64 `json:"mem,omitempty"`
	// Pids limits its processes and threads; 0: none.
	Pids int64 `json:"pids,omitempty"`
	// Deny are the node's devices (GPUs, MICs) the attempt was not given:
	// its processes cannot open them (devices.go). Every other device
	// stays as it was.
	Deny []deviceNumber `json:"deny,omitempty"`
}

// cgroupParent is the cgroup under which a worker creates its attempts'
// cgroups, from the root of each hierarchy. It is named for the node, so
// that a worker restarted on the node finds what its predecessor left
// (reapCgroups), and two workers on one machine (tests, `longfair dev`)
// never touch each other's.
func cgroupParent(nodeID string) string { return path.Join("/longfair", nodeID) }

// attemptCgroup names attempt k's cgroup under parent.
func attemptCgroup(parent string, k attemptKey) string {
	return path.Join(parent, strconv.FormatUint(k.job, 10)+"."+strconv.FormatInt(k.task, 10)+"."+strconv.FormatInt(int64(k.attempt), 10))
}

// cgroupFor is the cgroup attempt a runs in, holding devices held, or nil
// on an unconfined worker.
func (ag *Agent) cgroupFor(a *attempt, held heldDevices) *cgroupSpec {
	if ag.cgroupVersion == 0 {
		return nil
	}
	d := a.asg.GetDemand()
	return &cgroupSpec{
		Version: ag.cgroupVersion, Path: attemptCgroup(cgroupParent(ag.cfg.NodeID), a.key),
		CPU: d[ResourceCPU], Mem: int64(d[ResourceMem]), Pids: ag.cfg.PidsLimit,
		Deny: ag.otherDevices(held),
	}
}

// confinement is the name of how the agent confines its tasks.
func confinementName(version int) string {
	switch version {
	case 1:
		return ConfinementCgroupV1
	case 2:
		return ConfinementCgroupV2
	}
	return ConfinementUnconfined
}

// errUnconfined says what a worker that cannot confine its tasks lacks
// and what to do.
func errUnconfined(lack error) error {
	return fmt.Errorf("cannot confine tasks to their demand: %w; run the worker as root on a node with cgroup controllers mounted, or start it with --unconfined to run tasks without limits (for a laptop or a test, never a shared node)", lack)
}

// killWait bounds the wait for an attempt's cgroup to empty once its
// processes were killed: SIGKILL is not caught, so only a process stuck
// in the kernel (a hung file system) takes long.
const killWait = 10 * time.Second

// gatedShell runs the task's script once the supervisor has moved its
// shell into its cgroup: the shell waits for a line on fd 3 (the
// supervisor closes it without one when it could not, and the shell exits
// 126), closes it, and runs the script (its first argument) as /bin/sh -c
// would: the same shell and pid, $0 /bin/sh, no positional parameters
// (eval parses "set --; SCRIPT" after "$1" was expanded). Starting the
// shell first and moving it before it runs anything of the user's works
// on every kernel and cgroup version; eval rather than another exec of
// /bin/sh keeps what confinement costs a task start low (an exec is the
// dearest part of a start: BenchmarkTaskStarts).
const gatedShell = `read -r _ <&3 || exit 126; exec 3<&-; eval "set --; $1"`

// startGated starts script like startProcess, in cgroup cg.
func startGated(script, dir string, env []string, cred *syscall.Credential, stdout, stderr *os.File, cg *taskCgroup) (*process, error) {
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the task's start pipe: %w", err)
	}
	defer gateW.Close()
	cmd := exec.Command("/bin/sh", "-c", gatedShell, "/bin/sh", script)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{gateR}
	cmd.SysProcAttr = procAttr()
	cmd.SysProcAttr.Credential = cred
	started := time.Now()
	err = cmd.Start()
	gateR.Close()
	if err != nil {
		return nil, fmt.Errorf("start /bin/sh: %w", err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, started: started, cg: cg}
	if err := cg.add(cmd.Process.Pid); err != nil {
		// Closing the pipe unread ends the shell before the script.
		gateW.Close()
		_ = cmd.Wait()
		return nil, err
	}
	if _, err := gateW.Write([]byte("\n")); err != nil {
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, fmt.Errorf("let the task's shell run: %w", err)
	}
	return p, nil
}

// reapCgroups kills everything in the cgroups under this node's parent
// and removes them. It runs when the agent starts, before its first
// hello: the agent holds no attempt yet, so each is left by a previous
// worker process on this node (killed, crashed) whose supervisor died
// too, or has not killed its task yet; the leader reruns those attempts
// once it hears this agent holds nothing, and they must be gone by then.
func (ag *Agent) reapCgroups() {
	if ag.cgroupVersion == 0 {
		return
	}
	left, err := childCgroups(ag.cgroupVersion, cgroupParent(ag.cfg.NodeID))
	if err != nil {
		ag.log.Error("cannot list the cgroups a previous worker process left; their tasks may still run", "error", err)
		return
	}
	for _, p := range left {
		if err := removeCgroup(ag.cgroupVersion, p); err != nil {
			ag.log.Error("cannot kill the tasks a previous worker process left", "cgroup", p, "error", err)
			continue
		}
		ag.log.Info("killed the tasks a previous worker process left", "cgroup", p)
	}
}
