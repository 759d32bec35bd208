package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/longfair/longfair/core"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Environment variables every task gets.
const (
	EnvJobID     = "LONGFAIR_JOB_ID"
	EnvTaskID    = "LONGFAIR_TASK_ID" // JOB.INDEX, unique in the cluster
	EnvTaskIndex = "LONGFAIR_TASK_INDEX"
	EnvAttempt   = "LONGFAIR_ATTEMPT"
	EnvAccount   = "LONGFAIR_ACCOUNT"
	EnvUser      = "LONGFAIR_USER"
	EnvNodeID    = "LONGFAIR_NODE_ID"
	// EnvOffloadDevices lists the MIC devices the attempt may use, as
	// Intel's offload runtime reads it ("0,1"); EnvCUDAVisibleDevices its
	// GPUs, as CUDA reads it. Attempts without such devices do not get it
	// (devices.go).
	EnvOffloadDevices     = "OFFLOAD_DEVICES"
	EnvCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"
)

// run runs one attempt from start to end, reporting what happens. A
// queued attempt (ticket not nil) first waits for room on the node
// (slots.go).
func (ag *Agent) run(a *attempt, startCtx context.Context, ticket *slotTicket) {
	if ticket != nil && !ag.slots.wait(startCtx, ticket) {
		// Stopped while it waited in the queue: it ran for no time.
		defer ag.wg.Done()
		ag.finish(a, 128+15, 0, nil)
		return
	}
	// Given back once its end is reported, so that the queued attempt
	// that takes its place is reported started after it.
	defer ag.slots.give(a.asg.GetDemand())
	if ticket != nil {
		if monoNow() >= ag.lease.Load() {
			// The leader may rerun it elsewhere by now: lost, unstarted.
			defer ag.wg.Done()
			ag.lose(a, errors.New("a queued task does not start once the worker has lost contact with the leader for longer than its fence timeout"))
			return
		}
		ag.tasks.mu.Lock()
		a.waiting = false
		ag.tasks.mu.Unlock()
	}
	if ag.cfg.Simulate {
		ag.simulate(a, startCtx) // simulate.go
		return
	}
	defer ag.wg.Done()
	k := a.key
	idx, err := ag.acquireDevices(startCtx, a.asg.GetDemand())
	if err != nil {
		if startCtx.Err() != nil {
			// Killed before it could start: it ran for no time.
			ag.finish(a, 128+15, 0, nil)
			return
		}
		ag.lose(a, err)
		return
	}
	ag.tasks.mu.Lock()
	a.devices = idx
	ag.tasks.mu.Unlock()
	defer ag.releaseHeld(a)

	l, err := launchFor(a.asg, ag.asRoot, ag.baseEnv)
	if err != nil {
		ag.refuse(a, err)
		return
	}
	dir := l.dir
	if dir == "" {
		dir = taskDir(ag.cfg.WorkDir, k)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			ag.lose(a, fmt.Errorf("create working directory: %w", err))
			return
		}
		defer os.Remove(dir) // only if the task left it empty
		if err := l.giveTo(dir); err != nil {
			ag.lose(a, err)
			return
		}
	}
	stdout, stderr, err := ag.openOutput(k)
	if err != nil {
		ag.lose(a, err)
		return
	}
	defer stdout.Close()
	defer stderr.Close()
	if err := l.giveTo(filepath.Dir(stdout.Name()), stdout.Name(), stderr.Name()); err != nil {
		ag.lose(a, err)
		return
	}

	ag.tasks.mu.Lock()
	stopping := a.stopping
	ag.tasks.mu.Unlock()
	if stopping {
		ag.finish(a, 128+15, 0, nil)
		return
	}
	// Not under the table's lock: starting a task takes an exec (and
	// the supervisor's, for the first), and lease renewals (renewLease)
	// must not wait for it. A stop asked for meanwhile is passed on
	// below.
	env := ag.env(a, idx, l.env)
	parallel, err := ag.allocationEnv(a.asg, filepath.Dir(stdout.Name()), k)
	if err != nil {
		ag.lose(a, err)
		return
	}
	env = append(env, parallel...)
	// `longfair exec` starts processes of a parallel task as its user too.
	ag.tasks.mu.Lock()
	a.cred = l.cred
	ag.tasks.mu.Unlock()
	script, member := shellScript(a.asg.GetCommand()), isMember(a.asg)
	if member {
		script = memberScript // allocation.go
	}
	started := time.Now()
	proc, err := ag.supervisors.start(supervisorSpec{
		Script: script, Dir: dir, Env: env, Cred: l.cred,
		Walltime: a.asg.GetWalltime().AsDuration(), KillGrace: ag.cfg.KillGrace,
		Cgroup: ag.cgroupFor(a, idx),
	}, stdout, stderr)
	ag.tasks.mu.Lock()
	if err == nil {
		a.proc = proc
	}
	stopping, grace := a.stopping, a.stopGrace
	ag.tasks.mu.Unlock()
	if err != nil {
		ag.lose(a, err)
		return
	}
	if stopping {
		proc.stop(grace)
	}
	if !member {
		ag.tasks.event(a, &longfairv1.TaskEvent{Kind: longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED})
	}
	if o := ag.cfg.Observer; o != nil {
		o.TaskStarted(k.job, k.task, k.attempt, time.Now())
	}
	ag.log.Debug("task started", "job", k.job, "task", k.task, "attempt", k.attempt, "pid", proc.pgid, "mic", idx)

	// The supervisor enforces the walltime (SIGTERM, then SIGKILL after
	// the kill grace), even while this agent cannot act.
	ex, err := proc.wait(started)
	if err != nil {
		ag.log.Error("lost track of a task's process", "job", k.job, "task", k.task, "attempt", k.attempt, "error", err)
	}
	if ex.fenced != "" {
		ag.fenced(a, ex)
		return
	}
	if member {
		// Its end is the head's to report; the leader stops it here
		// once the task has ended.
		ag.tasks.ended(a)
		return
	}
	ag.finish(a, ex.code, ex.runtime, ex.usage)
}

// fenced reports an attempt its supervisor killed on its own, because
// this agent was out of contact with the leader for longer than the fence
// timeout (or was gone): the leader reruns it elsewhere, if it has not
// already, and charges the runtime reported here.
func (ag *Agent) fenced(a *attempt, ex exit) {
	k := a.key
	ag.log.Warn("task fenced: killed because the worker lost contact with the leader", "job", k.job, "task", k.task, "attempt", k.attempt,
		"why", ex.fenced, "exit_code", ex.code, "runtime", ex.runtime)
	ag.report(a, withUsage(&longfairv1.TaskEvent{
		Kind: longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST, ExitCode: ex.code, Runtime: durationpb.New(max(ex.runtime, time.Nanosecond)),
	}, ex.usage), ex.code, ex.runtime)
}

// finish reports an attempt's exit, with what it used when its cgroup
// measured it, and marks it ended.
func (ag *Agent) finish(a *attempt, code int32, runtime time.Duration, u *usage) {
	k := a.key
	ag.report(a, withUsage(&longfairv1.TaskEvent{
		Kind: longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, ExitCode: code, Runtime: durationpb.New(runtime),
	}, u), code, runtime)
	ag.log.Debug("task ended", "job", k.job, "task", k.task, "attempt", k.attempt, "exit_code", code, "runtime", runtime)
}

// lose reports an attempt this node could not run; the cluster may retry
// it elsewhere.
func (ag *Agent) lose(a *attempt, err error) {
	k := a.key
	ag.log.Error("cannot run task; reporting it lost", "job", k.job, "task", k.task, "attempt", k.attempt, "error", err)
	ag.report(a, &longfairv1.TaskEvent{Kind: longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST}, -1, 0)
}

// report queues an attempt's last event for the leader, marks it ended
// and tells the observer how it ended.
func (ag *Agent) report(a *attempt, ev *longfairv1.TaskEvent, code int32, runtime time.Duration) {
	// Its devices are free before the leader hears it ended: a task the
	// leader places next on them must not wait for them, nor get others.
	ag.releaseHeld(a)
	ag.tasks.event(a, ev)
	ag.tasks.ended(a)
	if o := ag.cfg.Observer; o != nil {
		o.TaskEnded(a.key.job, a.key.task, a.key.attempt, code, runtime)
	}
}

// openOutput creates the attempt's stdout and stderr files.
func (ag *Agent) openOutput(k attemptKey) (stdout, stderr *os.File, err error) {
	open := func(s longfairv1.OutputStream) (*os.File, error) {
		path := outputPath(ag.cfg.WorkDir, k, s)
		// Twice: the janitor may remove the job's empty output directory
		// after it looked for attempts of the job and before this one was
		// held (janitor.go); it cannot again, as it is held now.
		for try := 0; ; try++ {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("create output directory: %w", err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if errors.Is(err, fs.ErrNotExist) && try == 0 {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("create output file: %w", err)
			}
			return f, nil
		}
	}
	if stdout, err = open(longfairv1.OutputStream_OUTPUT_STREAM_STDOUT); err != nil {
		return nil, nil, err
	}
	if stderr, err = open(longfairv1.OutputStream_OUTPUT_STREAM_STDERR); err != nil {
		stdout.Close()
		return nil, nil, err
	}
	return stdout, stderr, nil
}

// env is base (the job's environment, or the agent's own: launchFor)
// plus the task's variables.
func (ag *Agent) env(a *attempt, devices heldDevices, base []string) []string {
	k := a.key
	env := make([]string, 0, len(base)+8)
	env = append(env, taskEnv(base)...)
	env = append(env,
		EnvJobID+"="+strconv.FormatUint(k.job, 10),
		EnvTaskID+"="+strconv.FormatUint(k.job, 10)+"."+strconv.FormatInt(k.task, 10),
		EnvTaskIndex+"="+strconv.FormatInt(k.task, 10),
		EnvAttempt+"="+strconv.FormatInt(int64(k.attempt), 10),
		EnvAccount+"="+a.asg.GetAccount(),
		EnvUser+"="+a.asg.GetUser(),
		EnvNodeID+"="+ag.cfg.NodeID,
	)
	env = append(env, ag.slurmEnv(a)...)
	env = append(env, devices.env()...)
	return env
}

// taskEnv is the agent's environment without the variables it sets for
// each task, so that a value inherited by the agent never leaks into one.
func taskEnv(environ []string) []string {
	own := append([]string{EnvJobID, EnvTaskID, EnvTaskIndex, EnvAttempt, EnvAccount, EnvUser, EnvNodeID, EnvOffloadDevices, EnvCUDAVisibleDevices, envSupervisor}, parallelEnv...)
	own = append(own, slurmEnvNames...)
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, o := range own {
			if name == o {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// kill stops attempts at the leader's request. With report false the
// ledger does not know them: they are killed at once and their end is not
// reported. Otherwise (a cancelled job) they get SIGTERM and the grace
// period, and their exit is reported.
func (ag *Agent) kill(refs []*longfairv1.AttemptRef, report bool, reason string) {
	grace := ag.cfg.KillGrace
	if !report {
		grace = 0
	}
	ag.stop(refs, report, grace, reason)
}

// signal sends sig to every process of running attempts (a user's
// SignalJob): the supervisor signals the task's process group and cgroup.
// A member node's placeholder ignores the signals a job may catch
// (memberScript), so only what `longfair exec` started there gets them.
func (ag *Agent) signal(refs []*longfairv1.AttemptRef, sig int) {
	if err := core.CheckSignal(sig); err != nil {
		ag.log.Warn("ignoring a signal order", "error", err)
		return
	}
	for _, r := range refs {
		k := keyOf(r)
		ag.tasks.mu.Lock()
		a, ok := ag.tasks.attempts[k]
		var proc *supervised
		if ok && !a.ended {
			proc = a.proc
		}
		ag.tasks.mu.Unlock()
		if proc == nil {
			continue
		}
		ag.log.Info("signalling task", "job", k.job, "task", k.task, "attempt", k.attempt, "signal", core.SignalName(sig))
		if err := proc.send(supervisorControl{Signal: sig}); err != nil {
			ag.log.Warn("cannot pass a signal to a task's supervisor", "job", k.job, "task", k.task, "error", err)
		}
	}
}

// stop ends attempts: SIGTERM, then SIGKILL after grace (at once when
// grace is zero); an attempt still waiting to start never starts. Their
// ends are reported only with report.
func (ag *Agent) stop(refs []*longfairv1.AttemptRef, report bool, grace time.Duration, reason string) {
	for _, r := range refs {
		k := keyOf(r)
		ag.tasks.mu.Lock()
		a, ok := ag.tasks.attempts[k]
		if !ok || a.ended {
			ag.tasks.mu.Unlock()
			continue
		}
		if !report {
			a.report = false
		}
		a.stopping, a.stopGrace = true, grace
		proc, cancel := a.proc, a.cancelStart
		ag.tasks.mu.Unlock()
		ag.log.Info("killing task", "job", k.job, "task", k.task, "attempt", k.attempt, "reason", reason, "reported", report)
		switch {
		case proc != nil:
			proc.stop(grace)
		case cancel != nil:
			cancel()
		}
	}
}
