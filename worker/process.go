package worker

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is one attempt's running /bin/sh and its process group.
type process struct {
	cmd     *exec.Cmd
	pgid    int
	started time.Time

	// mu orders signals against reaping: the group is signalled only
	// while its leader is not yet reaped, so its id cannot have been
	// reused by an unrelated process group.
	mu     sync.Mutex
	reaped bool
	// signalled is the first signal this agent sent the group (0: none).
	signalled syscall.Signal

	// cg is the attempt's cgroup on a confined worker (cgroup.go): every
	// signal to the group goes to the cgroup too, which holds whatever
	// left the group.
	cg *taskCgroup
}

// startProcess starts script under /bin/sh -c in a new process group, in
// dir, with env, as cred (nil: as this process), its output going to the
// given files, and in cgroup cg unless it is nil.
func startProcess(script, dir string, env []string, cred *syscall.Credential, stdout, stderr *os.File, cg *taskCgroup) (*process, error) {
	if cg != nil {
		return startGated(script, dir, env, cred, stdout, stderr, cg)
	}
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr()
	// As the task's user (nil: as this process): the kernel switches
	// before the exec, and the chdir to dir happens as that user.
	cmd.SysProcAttr.Credential = cred
	// The clock starts before the process does: read after Start, it
	// would miss whatever the process ran before this goroutine was
	// scheduled again, which on a busy node is not nothing.
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start /bin/sh: %w", err)
	}
	return &process{cmd: cmd, pgid: cmd.Process.Pid, started: started}, nil
}

// signal sends sig to the whole process group, unless it has been reaped.
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	if p.signalled == 0 {
		p.signalled = sig
	}
	// ESRCH: everyone in the group is gone already.
	_ = syscall.Kill(-p.pgid, sig)
	if p.cg != nil {
		p.cg.signal(sig)
	}
}

// deliver sends a user's signal to the whole process group and cgroup,
// unless it has been reaped. Unlike signal, it is not recorded as what
// stopped the task: the task may catch it and go on.
func (p *process) deliver(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	_ = syscall.Kill(-p.pgid, sig)
	if p.cg != nil {
		p.cg.signal(sig)
	}
}

// stop asks the group to end (SIGTERM) and kills it (SIGKILL) if it is
// still there after grace. It returns at once.
func (p *process) stop(grace time.Duration) {
	p.signal(syscall.SIGTERM)
	if grace <= 0 {
		p.signal(syscall.SIGKILL)
		return
	}
	time.AfterFunc(grace, func() { p.signal(syscall.SIGKILL) })
}

// wait waits for the shell to exit, kills whatever it left behind in its
// process group, reaps it and returns its exit code (128+signal when a
// signal ended it) and its runtime.
func (p *process) wait() (int32, time.Duration, error) {
	var err error
	if waitKeepsZombie {
		waitExit(p.pgid) // the shell stays a zombie, which keeps the group id taken
	} else {
		err = p.cmd.Wait()
	}
	runtime := time.Since(p.started)
	p.mu.Lock()
	// Background processes the task left behind would hold the node's
	// resources after the ledger freed them.
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.reaped = true
	p.mu.Unlock()
	var kerr error
	if p.cg != nil {
		// And those that left the group: nothing of the attempt
		// outlives it. The supervisor then reads the cgroup's counters
		// and removes it.
		kerr = p.cg.killAll(killWait)
	}
	if waitKeepsZombie {
		err = p.cmd.Wait()
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return 0, runtime, fmt.Errorf("wait for /bin/sh: %w", err)
	}
	return exitCode(p.cmd.ProcessState), runtime, kerr
}

// exitCode is the shell's exit status, or 128+signal as shells report it.
func exitCode(ps *os.ProcessState) int32 {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(ps.ExitCode())
}
