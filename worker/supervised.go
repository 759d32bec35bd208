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

// supervisors is the agent's handle on its task supervisor process
// (supervise.go): it starts one when the first attempt needs it, and
// another when that one has died.
type supervisors struct {
	exe string
	// lockDir holds each supervisor's lock file (waitOldSupervisors).
	lockDir string
	// mu orders the requests: a renewal and a new attempt's spec reach
	// the supervisor in the order the agent made them, so an attempt's
	// spec, which carries the lease current when it was sent, is never
	// overtaken by an older renewal, nor misses a newer one.
	mu  sync.Mutex
	cur *supervisorProcess
	// lease reads the agent's current lease (monoNow).
	lease func() int64
}

func newSupervisors(exe, lockDir string, lease func() int64) *supervisors {
	return &supervisors{exe: exe, lockDir: lockDir, lease: lease}
}

// supervisorProcess is one supervisor process.
type supervisorProcess struct {
	cmd *exec.Cmd
	// lock is the path of the file the supervisor holds locked for its
	// life; removed once it has ended.
	lock string
	ctl  *os.File
	wmu  sync.Mutex // one request at a time on ctl

	mu sync.Mutex
	// waiting holds the attempts whose end has not been read, by id.
	waiting map[uint64]chan supervisorStatus
	next    uint64
	// dead is set once the status pipe closed: the supervisor is gone,
	// and with it every task it ran.
	dead bool
}

// errNoSupervisor: the supervisor ended before it said it started the task.
var errNoSupervisor = errors.New("the task's supervisor ended before starting the task; the worker's program must call worker.Supervise first thing in main (and in TestMain for tests that run agents)")

// ctlWriteTimeout bounds a write to the supervisor's control pipe: a
// supervisor that does not read is stuck, and the agent must not be.
const ctlWriteTimeout = time.Second

// start has the supervisor run spec's script under /bin/sh -c in a new
// process group, its output going to stdout and stderr (files the agent
// holds open until the task has started), fenced when the agent's lease
// runs out. It returns once the task has started.
func (ss *supervisors) start(spec supervisorSpec, stdout, stderr *os.File) (*supervised, error) {
	spec.Stdout, spec.Stderr = heldFilePath(stdout), heldFilePath(stderr)
	ss.mu.Lock()
	p := ss.cur
	if p == nil || p.isDead() {
		var err error
		if p, err = startSupervisorProcess(ss.exe, ss.lockDir); err != nil {
			ss.mu.Unlock()
			return nil, err
		}
		ss.cur = p
	}
	id, ch := p.expect()
	err := p.send(supervisorRequest{ID: id, Spec: &spec, supervisorControl: supervisorControl{Lease: ss.lease()}})
	ss.mu.Unlock()
	if err != nil {
		p.forget(id)
		p.broken()
		return nil, fmt.Errorf("send the task to its supervisor: %w", err)
	}
	st, ok := <-ch
	if !ok {
		return nil, errNoSupervisor
	}
	if st.Error != "" {
		return nil, fmt.Errorf("the supervisor could not start the task: %s", st.Error)
	}
	if st.Started <= 0 {
		// Not what a supervisor says first; stop whatever it runs.
		_ = p.send(supervisorRequest{ID: id, supervisorControl: supervisorControl{Stop: true}})
		return nil, fmt.Errorf("the supervisor answered %+v instead of starting the task", st)
	}
	return &supervised{p: p, id: id, pgid: st.Started, status: ch, cgroup: spec.Cgroup}, nil
}

// renew extends the lease of every attempt to deadline (monoNow). A
// supervisor that is gone has no lease to renew: its attempts' ends
// are reported from their waits.
func (ss *supervisors) renew(deadline int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if p := ss.cur; p != nil && !p.isDead() {
		if err := p.send(supervisorRequest{supervisorControl: supervisorControl{Lease: deadline}}); err != nil {
			p.broken()
		}
	}
}

// close closes the control pipe: the supervisor fences what still runs
// and ends once its tasks have.
func (ss *supervisors) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.cur != nil {
		ss.cur.ctl.Close()
	}
}

// startSupervisorProcess starts a supervisor: exe run again with
// envSupervisor set, holding a new lock file in lockDir for its life.
//
// The lock is taken here, before the supervisor starts, on a file
// description the supervisor inherits (fd 5) and this process then
// closes: flock belongs to the open file description, so the lock is held
// for exactly as long as the supervisor lives, from before its first task
// to after its last task's group is dead (it ends only then), or until it
// is killed, which kills its tasks' shells. A restarted agent waits for
// it (waitOldSupervisors). One lock per supervisor, not one per attempt:
// a file created and removed per task is two inode changes per task, and
// on a file system without a journal each new inode costs a scan past
// every inode freed in the last minutes, about 0.5 ms a task here.
func startSupervisorProcess(exe, lockDir string) (*supervisorProcess, error) {
	lock, err := os.CreateTemp(lockDir, "*.lock")
	if err != nil {
		return nil, fmt.Errorf("create the supervisor's lock file: %w", err)
	}
	defer lock.Close()
	started := false
	defer func() {
		if !started {
			os.Remove(lock.Name())
		}
	}()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
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
	// What it says itself (not its tasks) goes where the agent's own
	// output goes.
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{ctlR, stW, lock}
	// Its own process group: signals to the agent's group (a terminal's
	// ^C, a service manager stopping the agent) reach the agent, which
	// stops its tasks, not the supervisor, which would orphan them. No
	// parent-death signal: a supervisor sees its agent die by its control
	// pipe closing, and then fences its tasks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return nil, fmt.Errorf("start the task supervisor %s: %w", exe, err)
	}
	started = true
	p := &supervisorProcess{cmd: cmd, ctl: ctlW, lock: lock.Name(), waiting: make(map[uint64]chan supervisorStatus)}
	go p.readReports(stR)
	return p, nil
}

// readReports passes each report to the attempt's waiter until the
// supervisor is gone; then every waiter learns it (a closed channel).
func (p *supervisorProcess) readReports(st *os.File) {
	dec := json.NewDecoder(st)
	for {
		var r supervisorReport
		if err := dec.Decode(&r); err != nil {
			break
		}
		p.mu.Lock()
		ch, ok := p.waiting[r.ID]
		if r.Exited || r.Error != "" {
			// Its last report.
			delete(p.waiting, r.ID)
		}
		p.mu.Unlock()
		if ok {
			ch <- r.supervisorStatus // room for both of an attempt's reports
		}
	}
	st.Close()
	p.ctl.Close()
	_ = p.cmd.Wait()
	// Gone, and its lock with it.
	os.Remove(p.lock)
	p.mu.Lock()
	p.dead = true
	for id, ch := range p.waiting {
		close(ch)
		delete(p.waiting, id)
	}
	p.mu.Unlock()
}

// expect makes a new attempt id and the channel its reports come on.
func (p *supervisorProcess) expect() (uint64, chan supervisorStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	ch := make(chan supervisorStatus, 2)
	if p.dead {
		close(ch)
	} else {
		p.waiting[p.next] = ch
	}
	return p.next, ch
}

func (p *supervisorProcess) forget(id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.waiting, id)
}

func (p *supervisorProcess) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead
}

// send writes one request on the control pipe.
func (p *supervisorProcess) send(r supervisorRequest) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = p.ctl.SetWriteDeadline(time.Now().Add(ctlWriteTimeout))
	_, err = p.ctl.Write(append(b, '\n'))
	return err
}

// broken gives up on a supervisor that cannot be told: closing its
// control pipe makes it fence its tasks and end, and the next attempt
// starts another.
func (p *supervisorProcess) broken() {
	p.ctl.Close()
	p.mu.Lock()
	p.dead = true
	p.mu.Unlock()
}

// supervised is the agent's handle on one attempt run by a supervisor.
type supervised struct {
	p      *supervisorProcess
	id     uint64
	pgid   int
	status <-chan supervisorStatus
	// cgroup is the attempt's cgroup, if it has one: the agent removes
	// it, killing what is in it, when the supervisor dies first.
	cgroup *cgroupSpec
}

// send passes an order about the attempt to its supervisor. One about an
// attempt that has ended is ignored there.
func (s *supervised) send(c supervisorControl) error {
	return s.p.send(supervisorRequest{ID: s.id, supervisorControl: c})
}

// stop asks the task to end: SIGTERM, then SIGKILL after grace (at once
// when grace is zero). It returns at once.
func (s *supervised) stop(grace time.Duration) {
	if err := s.send(supervisorControl{Stop: true, StopGrace: grace}); err != nil {
		// A supervisor that cannot be told is given up on: it fences
		// its tasks.
		s.p.broken()
	}
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

// wait waits until the task has ended. started is when the agent asked
// for it, for a supervisor that dies without saying how long its task
// ran.
func (s *supervised) wait(started time.Time) (exit, error) {
	st, ok := <-s.status
	var err error
	switch {
	case !ok:
		err = fmt.Errorf("the task's supervisor died")
	case !st.Exited:
		err = fmt.Errorf("the supervisor sent %+v instead of the task's end", st)
	}
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
		return exit{code: 128 + int32(syscall.SIGKILL), runtime: time.Since(started)}, err
	}
	if st.Error != "" {
		err = fmt.Errorf("the supervisor lost track of the task: %s", st.Error)
	}
	return exit{code: st.ExitCode, runtime: st.Runtime, fenced: st.Fenced, usage: st.Usage}, err
}

// supervisorsDir holds the supervisors' lock files, under the work dir:
// each supervisor's, held for its life (startSupervisorProcess), and, from
// releases before that, each attempt's.
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
