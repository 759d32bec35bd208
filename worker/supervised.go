package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervised is the agent's handle on one attempt's supervisor
// (supervise.go).
type supervised struct {
	cmd    *exec.Cmd
	pgid   int
	ctl    *os.File
	status *json.Decoder
	stFile *os.File
	// cgroup is the attempt's cgroup, if it has one: the agent removes
	// it, killing what is in it, when the supervisor dies first.
	cgroup *cgroupSpec

	// mu serialises writes to the control pipe.
	mu sync.Mutex
}

// ctlWriteTimeout bounds a write to a supervisor's control pipe: a
// supervisor that does not read is stuck, and the agent must not be.
const ctlWriteTimeout = time.Second

// startSupervised starts a supervisor that runs spec's script under
// /bin/sh -c in a new process group, its output going to the given files,
// fenced at the lease (monoNow) lease returns once the supervisor runs,
// unless it is renewed. It returns once the task has started.
func startSupervised(exe string, spec supervisorSpec, lease func() int64, stdout, stderr *os.File) (*supervised, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the supervisor's control pipe: %w", err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, fmt.Errorf("create the supervisor's status pipe: %w", err)
	}
	cmd := exec.Command(exe, supervisorArgs...)
	cmd.Args[0] = "longfair-task-supervisor"
	cmd.Env = append(os.Environ(), envSupervisor+"=1")
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{ctlR, stW}
	// Its own process group: signals to the agent's group (a terminal's
	// ^C, a service manager stopping the agent) reach the agent, which
	// stops its tasks, not the supervisors, which would orphan them. No
	// parent-death signal: a supervisor sees its agent die by its control
	// pipe closing, and then fences its task.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return nil, fmt.Errorf("start the task's supervisor %s: %w", exe, err)
	}
	s := &supervised{cmd: cmd, ctl: ctlW, status: json.NewDecoder(stR), stFile: stR, cgroup: spec.Cgroup}
	spec.Lease = lease()
	if err := s.send(spec); err != nil {
		s.abandon()
		return nil, fmt.Errorf("send the task to its supervisor: %w", err)
	}
	st, err := readStatus(s.status, errNoSupervisor)
	if err == nil && st.Error != "" {
		err = fmt.Errorf("the supervisor could not start the task: %s", st.Error)
	}
	if err == nil && st.Started <= 0 {
		err = fmt.Errorf("the supervisor answered %+v instead of starting the task", st)
	}
	if err != nil {
		s.abandon()
		return nil, err
	}
	s.pgid = st.Started
	return s, nil
}

// send writes one message on the control pipe.
func (s *supervised) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.ctl.SetWriteDeadline(time.Now().Add(ctlWriteTimeout))
	_, err = s.ctl.Write(append(b, '\n'))
	return err
}

// renew extends the lease to deadline (monoNow). A supervisor that has
// exited (its task is over: the pipe has no reader) or been reaped (the
// pipe is closed) has no lease left to renew; wait reports how its
// attempt ended, so that is not an error.
func (s *supervised) renew(deadline int64) error {
	err := s.send(supervisorControl{Lease: deadline})
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// stop asks the task to end: SIGTERM, then SIGKILL after grace (at once
// when grace is zero). It returns at once.
func (s *supervised) stop(grace time.Duration) {
	if err := s.send(supervisorControl{Stop: true, StopGrace: grace}); err != nil {
		// A supervisor that cannot be told is killed: closing its
		// control pipe makes it fence the task.
		s.closeControl()
	}
}

func (s *supervised) closeControl() {
	s.mu.Lock()
	s.ctl.Close()
	s.mu.Unlock()
}

// abandon closes the pipes (the supervisor fences anything it started)
// and reaps the supervisor.
func (s *supervised) abandon() {
	s.closeControl()
	s.stFile.Close()
	_ = s.cmd.Wait()
}

// exit is how an attempt ended, as its supervisor saw it.
type exit struct {
	code    int32
	runtime time.Duration
	// fenced is why the supervisor killed the task on its own, if it did.
	fenced string
	// usage is what it used, measured by its cgroup; nil when it had
	// none.
	usage *usage
}

// wait waits until the task has ended and its supervisor has exited.
// started is when the agent started the supervisor, for a supervisor that
// dies without saying how long its task ran.
func (s *supervised) wait(started time.Time) (exit, error) {
	st, err := readStatus(s.status, fmt.Errorf("the task's supervisor died"))
	if err == nil && !st.Exited {
		err = fmt.Errorf("the supervisor sent %+v instead of the task's end", st)
	}
	s.closeControl()
	s.stFile.Close()
	werr := s.cmd.Wait()
	if err != nil {
		// The supervisor is gone; its task's processes must not outlive
		// it. Its shell died with it (parent-death signal), so the group
		// id may be free again, but a new group reusing it this fast is
		// far less likely than left-behind processes.
		_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
		if s.cgroup != nil {
			if cerr := removeCgroup(s.cgroup.Version, s.cgroup.Path); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		return exit{code: 128 + int32(syscall.SIGKILL), runtime: time.Since(started)}, fmt.Errorf("%w (%v)", err, werr)
	}
	if st.Error != "" {
		err = fmt.Errorf("the supervisor lost track of the task: %s", st.Error)
	}
	return exit{code: st.ExitCode, runtime: st.Runtime, fenced: st.Fenced, usage: st.Usage}, err
}

// supervisorLock is the lock file of attempt k's supervisor.
func supervisorLock(workDir string, k attemptKey) string {
	return filepath.Join(workDir, supervisorsDir, fmt.Sprintf("%d.%d.%d.lock", k.job, k.task, k.attempt))
}

// supervisorsDir holds the supervisors' lock files, under the work dir.
const supervisorsDir = "supervisors"

// waitOldSupervisors waits until the supervisors a previous agent process
// on this work dir left (it crashed or was killed) are gone: they kill
// their tasks when their agent's pipe closes, but a task gets the kill
// grace to end, and until then it must not be rerun. A fresh agent tells
// the leader it holds nothing, and the leader reruns what it does not hold
// at once, so this comes before the first hello. It gives up after
// limit, saying so.
func (ag *Agent) waitOldSupervisors(ctx context.Context, limit time.Duration) {
	locks, _ := filepath.Glob(filepath.Join(ag.cfg.WorkDir, supervisorsDir, "*.lock"))
	if len(locks) == 0 {
		return
	}
	ag.log.Info("waiting for the tasks a previous worker process left to be killed", "supervisors", len(locks))
	deadline := time.Now().Add(limit)
	for _, path := range locks {
		for {
			free, err := lockFree(path)
			if err != nil || free {
				break
			}
			if time.Now().After(deadline) {
				ag.log.Error("a previous worker process's task supervisor is still running; going on, its task may still run", "lock", path)
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// lockFree reports whether no process holds the lock file at path, and
// removes it when so.
func lockFree(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	os.Remove(path)
	return true, nil
}
