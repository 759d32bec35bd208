package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/longfair/longfair/core"
	"golang.org/x/sys/unix"
)

// Every attempt runs under its own supervisor: this program started
// again (as containerd's shim or Nomad's executor are) with
// envSupervisor set. The supervisor starts the task's /bin/sh in a new
// process group, enforces its walltime, and holds a lease the agent
// renews while it is in contact with the leader. When the lease runs out,
// or the agent is gone (its end of the control pipe closed: kill -9
// included), the supervisor kills the whole process group itself: a
// worker that is stopped (SIGSTOP), hung or cut off cannot, and the leader
// reruns the attempts elsewhere once the lease has surely run out. This
// is the fence that keeps two runs of a task from overlapping.
//
// The agent talks to its supervisor over two pipes, one JSON value per
// message: the control pipe (fd 3; agent to supervisor) carries the
// supervisorSpec and then supervisorControl messages, the status pipe
// (fd 4; supervisor to agent) carries supervisorStatus messages: one when
// the task started (or could not), one when it ended.
const envSupervisor = "LONGFAIR_TASK_SUPERVISOR"

// supervisorArgs are the arguments a supervisor is started with. The
// supervisor ignores them; they make a test binary whose TestMain does
// not call Supervise run no test and exit, which the agent reports as a
// supervisor that did not start.
var supervisorArgs = []string{"-test.run=^$"}

// Supervise runs this process as an attempt's supervisor, and exits, if
// it was started as one; otherwise it returns at once. Programs that run
// a worker Agent call it first thing in main (and test binaries that run
// agents in TestMain): the agent starts each attempt's supervisor by
// running its own executable again.
func Supervise() {
	if os.Getenv(envSupervisor) != "1" {
		return
	}
	os.Exit(supervise())
}

// supervisorSpec is the first message on the control pipe.
type supervisorSpec struct {
	Script   string        `json:"script"`
	Dir      string        `json:"dir"`
	Env      []string      `json:"env"`
	Walltime time.Duration `json:"walltime"`
	// KillGrace is the time between SIGTERM and SIGKILL, at the walltime
	// and when fencing.
	KillGrace time.Duration `json:"kill_grace"`
	// Lease is when the lease runs out, on the monotonic clock
	// (monoNow); the task is fenced then unless it is renewed.
	Lease int64 `json:"lease"`
	// LockFile is locked (flock) for the supervisor's life and removed
	// when its task is surely dead: a worker restarted after a crash
	// waits for its predecessor's supervisors by it (waitOldSupervisors).
	LockFile string `json:"lock_file,omitempty"`
	// Cred is who the task runs as; nil is the supervisor's own user
	// (identity.go).
	Cred *taskCredential `json:"cred,omitempty"`
	// Cgroup, on a confined worker, is the cgroup the task runs in; the
	// supervisor creates it, and kills everything in it and removes it
	// when the task ends.
	Cgroup *cgroupSpec `json:"cgroup,omitempty"`
}

// supervisorControl is a later message on the control pipe.
type supervisorControl struct {
	// Lease, when later than the current one, renews the lease to it.
	Lease int64 `json:"lease,omitempty"`
	// Stop asks the task to end: SIGTERM, then SIGKILL after StopGrace
	// (at once when it is zero).
	Stop      bool          `json:"stop,omitempty"`
	StopGrace time.Duration `json:"stop_grace,omitempty"`
	// Signal, when not zero, is sent to every process of the task (a
	// user's SignalJob); it does not count as the signal that ended it.
	Signal int `json:"signal,omitempty"`
}

// supervisorStatus is a message on the status pipe.
type supervisorStatus struct {
	// Started is the task's process group id, once it started.
	Started int `json:"started,omitempty"`
	// Exited is set on the last message: the task ended with ExitCode
	// (128+signal when a signal ended it) after Runtime.
	Exited   bool          `json:"exited,omitempty"`
	ExitCode int32         `json:"exit_code,omitempty"`
	Runtime  time.Duration `json:"runtime,omitempty"`
	// Fenced says the supervisor killed the task because the lease ran
	// out or the agent went away, and why.
	Fenced string `json:"fenced,omitempty"`
	// Error is why the task could not start, or lost track of.
	Error string `json:"error,omitempty"`
	// Usage is what the task used, measured by its cgroup (confined
	// workers only), on the last message.
	Usage *usage `json:"usage,omitempty"`
}

// monoNow reads the monotonic clock, which the agent and its supervisors
// share (Go's monotonic readings are private to a process).
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		// Not on any system this builds for; a lease read as expired
		// fences, the safe side.
		return 1<<62 - 1
	}
	return ts.Nano()
}

// supervise is the supervisor's main; it returns the exit status.
func supervise() int {
	ctl := os.NewFile(3, "control")
	st := os.NewFile(4, "status")
	if ctl == nil || st == nil {
		fmt.Fprintln(os.Stderr, "longfair task supervisor: started without its pipes; it is started by the worker only")
		return 2
	}
	enc := json.NewEncoder(st)
	// The agent may be gone (that is one reason to fence): a failed write
	// to the status pipe is not an error here.
	report := func(s supervisorStatus) { _ = enc.Encode(s) }
	// Signals to the worker's terminal or service are the agent's to act
	// on; the supervisor ends with its task. SIGTERM sent to the
	// supervisor itself fences the task rather than orphan it.
	// Caught, not ignored: an ignored signal would stay ignored in the
	// task, which the exec resets only for caught ones.
	ignored := make(chan os.Signal, 1)
	signal.Notify(ignored, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range ignored {
		}
	}()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)

	dec := json.NewDecoder(ctl)
	var spec supervisorSpec
	if err := dec.Decode(&spec); err != nil {
		report(supervisorStatus{Error: fmt.Sprintf("read the task's spec: %v", err)})
		return 1
	}
	if spec.LockFile != "" {
		lock, err := os.OpenFile(spec.LockFile, os.O_CREATE|os.O_RDWR, 0o600)
		if err == nil {
			err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		}
		if err != nil {
			report(supervisorStatus{Error: fmt.Sprintf("lock %s: %v", spec.LockFile, err)})
			return 1
		}
		// Removed once the task's group is dead (returning from here);
		// the lock goes with the process.
		defer os.Remove(spec.LockFile)
	}
	var cg *taskCgroup
	if spec.Cgroup != nil {
		var err error
		if cg, err = newTaskCgroup(*spec.Cgroup); err != nil {
			report(supervisorStatus{Error: err.Error()})
			return 1
		}
	}
	proc, err := startProcess(spec.Script, spec.Dir, spec.Env, spec.Cred.sys(), os.Stdout, os.Stderr, cg)
	if err != nil {
		if cg != nil {
			_ = cg.killAll(killWait)
			_ = cg.remove()
		}
		report(supervisorStatus{Error: err.Error()})
		return 1
	}
	report(supervisorStatus{Started: proc.pgid})

	msgs := make(chan supervisorControl)
	go func() {
		defer close(msgs)
		for {
			var m supervisorControl
			if err := dec.Decode(&m); err != nil {
				return
			}
			msgs <- m
		}
	}()
	type result struct {
		code    int32
		runtime time.Duration
		err     error
	}
	exited := make(chan result, 1)
	go func() {
		code, runtime, err := proc.wait()
		exited <- result{code, runtime, err}
	}()

	lease := spec.Lease
	leaseTimer := time.NewTimer(time.Duration(lease - monoNow()))
	defer leaseTimer.Stop()
	walltime := time.NewTimer(spec.Walltime)
	defer walltime.Stop()
	fenced := ""
	fence := func(why string) {
		if fenced != "" {
			return
		}
		fenced = why
		proc.stop(spec.KillGrace)
	}
	for {
		select {
		case r := <-exited:
			if r.code == 0 {
				// It finished on its own as the fence came: it did run
				// to its end, and a rerun would run it twice.
				fenced = ""
			}
			s := supervisorStatus{Exited: true, ExitCode: r.code, Runtime: r.runtime, Fenced: fenced}
			if cg != nil {
				// Everything in it was killed when the shell exited
				// (process.wait): its counters are final.
				u, uerr := cg.usage()
				if rerr := cg.remove(); r.err == nil {
					r.err = errors.Join(uerr, rerr)
				}
				s.Usage = &u
			}
			if r.err != nil {
				s.Error = r.err.Error()
			}
			report(s)
			return 0
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				fence("the worker is gone")
				continue
			}
			if m.Lease > lease {
				lease = m.Lease
				leaseTimer.Reset(time.Duration(lease - monoNow()))
			}
			if m.Stop {
				proc.stop(m.StopGrace)
			}
			if m.Signal != 0 && core.CheckSignal(m.Signal) == nil {
				proc.deliver(syscall.Signal(m.Signal))
			}
		case <-leaseTimer.C:
			if now := monoNow(); now < lease {
				leaseTimer.Reset(time.Duration(lease - now))
				continue
			}
			fence("the worker lost contact with the leader for longer than its fence timeout")
		case <-walltime.C:
			proc.stop(spec.KillGrace)
		case <-term:
			fence("the supervisor was sent SIGTERM")
		}
	}
}

// errNoSupervisor: the supervisor ended before it said it started the task.
var errNoSupervisor = errors.New("the task's supervisor ended before starting the task; the worker's program must call worker.Supervise first thing in main (and in TestMain for tests that run agents)")

// readStatus reads one status message, turning a closed pipe into err.
func readStatus(dec *json.Decoder, onEOF error) (supervisorStatus, error) {
	var s supervisorStatus
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return s, onEOF
		}
		return s, fmt.Errorf("read the supervisor's status: %w", err)
	}
	return s, nil
}
