package worker

import (
	"crypto/subtle"
	"errors"

	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// allocationService implements longfairv1.AllocationServer: `longfair
// exec` on one node of a parallel task starts a process on another
// (allocation.go). The caller is authorised by the task's credential,
// not a bearer token: it is a process of the task, run by the researcher
// inside the allocation, and the credential is in its environment.
type allocationService struct {
	longfairv1.UnimplementedAllocationServer
	ag *Agent
}

// execChunk is the most output one ExecResponse carries.
const execChunk = 32 << 10

func (s *allocationService) Exec(stream grpc.BidiStreamingServer[longfairv1.ExecRequest, longfairv1.ExecResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil || start.GetAttempt() == nil || len(start.GetArgv()) == 0 {
		return status.Error(codes.InvalidArgument, "the first message must start a process: the task's attempt, its credential and a command")
	}
	k := keyOf(start.GetAttempt())
	part, err := s.ag.allocationPart(k, start.GetCredential())
	if err != nil {
		return err
	}
	pgid, index, dir, cred, cg := part.pgid, part.index, part.dir, part.cred, part.cg
	if d := start.GetDir(); d != "" {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dir = d
		}
	}
	// In the task's cgroup, when the worker confines: the process waits
	// at a gate until it is in (gatedShell), so nothing of the user's
	// runs outside, and whatever it starts — MPI ranks call setsid, and
	// leave the process group — is killed with the attempt.
	script := strings.Join(start.GetArgv(), " ")
	cmd := exec.Command("/bin/sh", "-c", script)
	var gate *os.File
	if cg != nil {
		gateR, gateW, err := os.Pipe()
		if err != nil {
			return status.Errorf(codes.Internal, "create the start pipe: %v", err)
		}
		defer gateW.Close()
		defer gateR.Close()
		cmd = exec.Command("/bin/sh", "-c", gatedShell, "/bin/sh", script)
		cmd.ExtraFiles, gate = []*os.File{gateR}, gateW
	}
	// The caller's environment, as rsh passes it on, but naming this node
	// (the last of duplicate names wins). MPI launchers pass the head's
	// environment on to every rank, LONGFAIR_NODE_ID included; the one
	// they do not have, LONGFAIR_EXEC_NODE, names the node for certain.
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(start.GetEnv()), EnvNodeID+"="+s.ag.cfg.NodeID, EnvNodeIndex+"="+strconv.Itoa(index), EnvExecNode+"="+s.ag.cfg.NodeID)
	// In the group of the task's process on this node: whatever ends the
	// task here (the leader's kill, the walltime, the fence) signals the
	// group and ends this process too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if cred != nil { // as the task's user, as its own processes run
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: cred.UID, Gid: cred.GID, Groups: cred.Groups}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "create stdin: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "create stdout: %v", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "create stderr: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.FailedPrecondition, "start %q on node %s: %v", start.GetArgv()[0], s.ag.cfg.NodeID, err)
	}
	if gate != nil {
		if err := cg.add(cmd.Process.Pid); err != nil {
			gate.Close() // unread: the shell exits before the command
			_ = cmd.Wait()
			return status.Errorf(codes.Unavailable, "put the process in the task's cgroup on node %s: %v", s.ag.cfg.NodeID, err)
		}
		if _, err := gate.Write([]byte("\n")); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return status.Errorf(codes.Internal, "let the process run: %v", err)
		}
		gate.Close()
	}
	s.ag.log.Debug("exec started in a parallel task", "job", k.job, "task", k.task, "attempt", k.attempt, "pid", cmd.Process.Pid)

	// stdin from the stream; the caller going away kills the process.
	go func() {
		defer stdin.Close()
		for {
			m, err := stream.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					_ = cmd.Process.Kill()
				}
				return
			}
			switch {
			case m.GetStdinClosed():
				return
			case m.GetStdin() != nil:
				if _, err := stdin.Write(m.GetStdin()); err != nil {
					return
				}
			}
		}
	}()
	var sendMu sync.Mutex
	send := func(r *longfairv1.ExecResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(r)
	}
	var wg sync.WaitGroup
	pump := func(r io.Reader, wrap func([]byte) *longfairv1.ExecResponse) {
		defer wg.Done()
		buf := make([]byte, execChunk)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if send(wrap(append([]byte(nil), buf[:n]...))) != nil {
					_ = cmd.Process.Kill()
				}
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(stdout, func(b []byte) *longfairv1.ExecResponse {
		return &longfairv1.ExecResponse{Msg: &longfairv1.ExecResponse_Stdout{Stdout: b}}
	})
	go pump(stderr, func(b []byte) *longfairv1.ExecResponse {
		return &longfairv1.ExecResponse{Msg: &longfairv1.ExecResponse_Stderr{Stderr: b}}
	})
	wg.Wait() // the pipes must be drained before Wait closes them
	code := exitStatus(cmd.Wait())
	return send(&longfairv1.ExecResponse{Msg: &longfairv1.ExecResponse_ExitCode{ExitCode: code}})
}

// allocationPart is what `longfair exec` needs of a parallel task's part
// on this node: the process group of its process here, its place in the
// task, the attempt's directory, its user and its cgroup (nil when
// unconfined).
type allocationPart struct {
	pgid, index int
	dir         string
	cred        *taskCredential
	cg          *taskCgroup
}

// allocationPart checks that this node holds a running part of parallel
// attempt k and that credential is its secret, and returns that part.
func (ag *Agent) allocationPart(k attemptKey, credential string) (allocationPart, error) {
	ag.tasks.mu.Lock()
	a, ok := ag.tasks.attempts[k]
	if !ok || a.ended || a.stopping {
		ag.tasks.mu.Unlock()
		return allocationPart{}, status.Errorf(codes.FailedPrecondition,
			"node %s holds no running part of attempt %d of task %d of job %d: a process can start only on the nodes of its own parallel task, while it runs", ag.cfg.NodeID, k.attempt, k.task, k.job)
	}
	want := a.asg.GetCredential()
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(credential)) != 1 {
		ag.tasks.mu.Unlock()
		return allocationPart{}, status.Error(codes.PermissionDenied, "the credential is not this task's: run `longfair exec` from inside the task, which has its credential in "+EnvCredential)
	}
	if a.proc == nil {
		ag.tasks.mu.Unlock()
		return allocationPart{}, status.Errorf(codes.Unavailable, "the task's part on node %s is still starting: try again", ag.cfg.NodeID)
	}
	part := allocationPart{pgid: a.proc.pgid, index: int(a.asg.GetNodeIndex()), dir: taskDir(ag.cfg.WorkDir, k), cred: a.cred}
	spec := ag.cgroupFor(a, a.devices)
	ag.tasks.mu.Unlock()
	// Opened outside the table's lock: lease renewals must not wait on
	// the cgroup file system.
	if spec != nil {
		cg, err := openTaskCgroup(*spec)
		if err != nil {
			return allocationPart{}, status.Errorf(codes.Unavailable, "node %s: %v", ag.cfg.NodeID, err)
		}
		part.cg = cg
	}
	return part, nil
}

// exitStatus is a finished command's status as a shell reports it:
// its exit code, or 128+signal.
func exitStatus(err error) int32 {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return int32(128 + ws.Signal())
		}
		return int32(ee.ExitCode())
	}
	return 127
}
