package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/longfair/longfair/core"
	"golang.org/x/sys/unix"
)

// Every attempt runs under the agent's supervisor: this program started
// again (as containerd's shim or Nomad's executor are) with envSupervisor
// set, once per agent rather than once per attempt. The supervisor starts
// each task's /bin/sh in a new process group, enforces its walltime, and
// holds a lease the agent renews while it is in contact with the leader.
// When the lease runs out, or the agent is gone (its end of the control
// pipe closed: kill -9 included), the supervisor kills the process groups
// of all its tasks itself: a worker that is stopped (SIGSTOP), hung or cut
// off cannot, and the leader reruns the attempts elsewhere once the lease
// has surely run out. This is the fence that keeps two runs of a task from
// overlapping.
//
// One supervisor for all of an agent's attempts, not one each: starting
// this program costs about ten times what starting a task's /bin/sh does
// (a 38 MB binary and its package inits, against a shell), so a
// supervisor per attempt held a worker to about a tenth of the rate at
// which the node can start short tasks. The lease is the agent's, one for
// all its attempts, so one renewal serves them all. A supervisor that dies
// takes its tasks with it (their shells have a parent-death signal), and
// the agent reports them ended and starts another for the attempts that
// follow (supervised.go).
//
// The agent talks to its supervisor over two pipes, one JSON value per
// message: the control pipe (fd 3; agent to supervisor) carries
// supervisorRequests, the status pipe (fd 4; supervisor to agent)
// supervisorReports: for each attempt, one when the task started (or
// could not), one when it ended. The supervisor also holds, as fd 5, a
// file the agent locked for it: locked for as long as it lives, which a
// restarted agent waits for (supervised.go).
const envSupervisor = "LONGFAIR_TASK_SUPERVISOR"

// supervisorArgs are the arguments a supervisor is started with. The
// supervisor ignores them; they make a test binary whose TestMain does
// not call Supervise run no test and exit, which the agent reports as a
// supervisor that did not start.
var supervisorArgs = []string{"-test.run=^$"}

// Supervise runs this process as an agent's task supervisor, and exits, if
// it was started as one; otherwise it returns at once. Programs that run
// a worker Agent call it first thing in main (and test binaries that run
// agents in TestMain): the agent starts its supervisor by running its own
// executable again.
func Supervise() {
	if os.Getenv(envSupervisor) != "1" {
		return
	}
	os.Exit(supervise())
}

// supervisorRequest is one message on the control pipe: a new attempt to
// run (Spec), an order about a running one (ID and the control fields),
// or, with neither, a renewal of the lease alone.
type supervisorRequest struct {
	// ID names the attempt, unique for the supervisor's life.
	ID   uint64          `json:"id,omitempty"`
	Spec *supervisorSpec `json:"spec,omitempty"`
	supervisorControl
}

// supervisorReport is one message on the status pipe, about attempt ID.
type supervisorReport struct {
	ID uint64 `json:"id"`
	supervisorStatus
}

// supervisorSpec is an attempt to run.
type supervisorSpec struct {
	Script string `json:"script"`
	// Stdout and Stderr are where the task writes: files the agent
	// created and holds open, named so that the supervisor opens those
	// very files (heldFilePath: through /proc on Linux), not whatever a
	// task's user may have put at their names since.
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	Dir      string        `json:"dir"`
	Env      []string      `json:"env"`
	Walltime time.Duration `json:"walltime"`
	// KillGrace is the time between SIGTERM and SIGKILL, at the walltime
	// and when fencing.
	KillGrace time.Duration `json:"kill_grace"`
	// Cred is who the task runs as; nil is the supervisor's own user
	// (identity.go).
	Cred *taskCredential `json:"cred,omitempty"`
	// Cgroup, on a confined worker, is the cgroup the task runs in; the
	// supervisor creates it, and kills everything in it and removes it
	// when the task ends.
	Cgroup *cgroupSpec `json:"cgroup,omitempty"`
}

// supervisorControl is what a request may also carry.
type supervisorControl struct {
	// Lease, when later than the current one, renews the lease of every
	// attempt to it: when it runs out, on the monotonic clock (monoNow),
	// every task is fenced unless it was renewed.
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
	// The lock file the agent locked for this process's life (fd 5):
	// held until it exits, for a restarted agent to wait on.
	if _, err := unix.FcntlInt(5, unix.F_GETFD, 0); err != nil {
		fmt.Fprintln(os.Stderr, "longfair task supervisor: started without its lock file; it is started by the worker only")
		return 2
	}
	// The tasks must not hold the agent's pipes, nor the lock: a task's
	// process would keep the status pipe open, and the lock held, after
	// this process died.
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	unix.CloseOnExec(5)
	// Signals to the worker's terminal or service are the agent's to act
	// on; the supervisor ends with its tasks. SIGTERM sent to the
	// supervisor itself fences the tasks rather than orphan them.
	// Caught, not ignored: an ignored signal would stay ignored in the
	// tasks, which the exec resets only for caught ones.
	ignored := make(chan os.Signal, 1)
	signal.Notify(ignored, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range ignored {
		}
	}()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)

	requests := make(chan supervisorRequest)
	go func() {
		defer close(requests)
		dec := json.NewDecoder(ctl)
		for {
			var r supervisorRequest
			if err := dec.Decode(&r); err != nil {
				return
			}
			requests <- r
		}
	}()
	sv := &supervisor{enc: json.NewEncoder(st), tasks: make(map[uint64]*orderBox), done: make(chan uint64)}
	var lease int64 // none yet: a task started without one is fenced at once
	leaseTimer := time.NewTimer(time.Hour)
	leaseTimer.Stop()
	defer leaseTimer.Stop()
	// stopping is why no task may start any more: the agent is gone, or
	// this process was told to end. It ends once its tasks have.
	stopping := ""
	for {
		select {
		case r, ok := <-requests:
			if !ok {
				requests = nil
				stopping = "the worker is gone"
				sv.fenceAll(stopping)
				break
			}
			if r.Lease > lease {
				lease = r.Lease
				leaseTimer.Reset(time.Duration(lease - monoNow()))
			}
			switch {
			case r.Spec != nil && stopping != "":
				sv.report(supervisorReport{ID: r.ID, supervisorStatus: supervisorStatus{Error: "the task supervisor is stopping: " + stopping}})
			case r.Spec != nil:
				orders := &orderBox{ready: make(chan struct{}, 1)}
				sv.tasks[r.ID] = orders
				if monoNow() >= lease {
					orders.put(taskOrder{fence: "the worker lost contact with the leader for longer than its fence timeout"})
				}
				go sv.run(r.ID, *r.Spec, orders)
			case r.ID != 0:
				if orders, ok := sv.tasks[r.ID]; ok {
					orders.put(taskOrder{control: r.supervisorControl})
				}
			}
		case <-leaseTimer.C:
			if now := monoNow(); now < lease {
				leaseTimer.Reset(time.Duration(lease - now))
				break
			}
			sv.fenceAll("the worker lost contact with the leader for longer than its fence timeout")
		case <-term:
			stopping = "it was sent SIGTERM"
			sv.fenceAll("the supervisor was sent SIGTERM")
		case id := <-sv.done:
			delete(sv.tasks, id)
		}
		if stopping != "" && len(sv.tasks) == 0 {
			return 0
		}
	}
}

// supervisor is the supervisor process's state. Its tasks map is the main
// loop's alone; each task's goroutine reports on the status pipe itself.
type supervisor struct {
	mu  sync.Mutex // orders writes to the status pipe
	enc *json.Encoder

	tasks map[uint64]*orderBox
	done  chan uint64
}

// orderBox holds a task's orders until its goroutine takes them: the main
// loop never waits for a task (one that is still starting, or has just
// ended and waits to tell the main loop so).
type orderBox struct {
	mu     sync.Mutex
	orders []taskOrder
	ready  chan struct{} // capacity 1: orders are waiting
}

func (b *orderBox) put(o taskOrder) {
	b.mu.Lock()
	b.orders = append(b.orders, o)
	b.mu.Unlock()
	select {
	case b.ready <- struct{}{}:
	default:
	}
}

func (b *orderBox) take() []taskOrder {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.orders
	b.orders = nil
	return out
}

// taskOrder is what the main loop passes to a task's goroutine: an order
// from the agent, or a fence.
type taskOrder struct {
	control supervisorControl
	fence   string
}

// report writes one status message. The agent may be gone (that is one
// reason to fence): a failed write is not an error here.
func (sv *supervisor) report(r supervisorReport) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	_ = sv.enc.Encode(r)
}

func (sv *supervisor) fenceAll(why string) {
	for _, orders := range sv.tasks {
		orders.put(taskOrder{fence: why})
	}
}

// run runs attempt id from its start to its end, following its orders,
// and reports both.
func (sv *supervisor) run(id uint64, spec supervisorSpec, orders *orderBox) {
	defer func() { sv.done <- id }()
	report := func(s supervisorStatus) { sv.report(supervisorReport{ID: id, supervisorStatus: s}) }
	stdout, stderr, err := openTaskOutput(spec.Stdout, spec.Stderr)
	if err != nil {
		report(supervisorStatus{Error: err.Error()})
		return
	}
	var cg *taskCgroup
	if spec.Cgroup != nil {
		if cg, err = newTaskCgroup(*spec.Cgroup); err != nil {
			stdout.Close()
			stderr.Close()
			report(supervisorStatus{Error: err.Error()})
			return
		}
	}
	proc, err := startProcess(spec.Script, spec.Dir, spec.Env, spec.Cred.sys(), stdout, stderr, cg)
	stdout.Close()
	stderr.Close()
	if err != nil {
		if cg != nil {
			_ = cg.killAll(killWait)
			_ = cg.remove()
		}
		report(supervisorStatus{Error: err.Error()})
		return
	}
	report(supervisorStatus{Started: proc.pgid})

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
	walltime := time.NewTimer(spec.Walltime)
	defer walltime.Stop()
	fenced := ""
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
			return
		case <-orders.ready:
			for _, o := range orders.take() {
				if o.fence != "" && fenced == "" {
					fenced = o.fence
					proc.stop(spec.KillGrace)
				}
				if o.control.Stop {
					proc.stop(o.control.StopGrace)
				}
				if sig := o.control.Signal; sig != 0 && core.CheckSignal(sig) == nil {
					proc.deliver(syscall.Signal(sig))
				}
			}
		case <-walltime.C:
			proc.stop(spec.KillGrace)
		}
	}
}

// openTaskOutput opens the files a task writes its output to, for
// appending: both may be one file.
func openTaskOutput(stdout, stderr string) (*os.File, *os.File, error) {
	open := func(path string) (*os.File, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, fmt.Errorf("open the task's output: %w", err)
		}
		return f, nil
	}
	out, err := open(stdout)
	if err != nil {
		return nil, nil, err
	}
	errf, err := open(stderr)
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, errf, nil
}
