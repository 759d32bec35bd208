package testcluster

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Proc is a longfair process a test started, in its own process group,
// logging JSON lines to a file.
type Proc struct {
	Name    string
	Cmd     *exec.Cmd
	LogPath string
	done    chan struct{}
}

// StartProc starts the binary bin (Build, Binary) with args, its log
// (JSON lines) in dir/name.log. The test's cleanup kills its whole process
// group, and the process dies with the test binary.
func StartProc(t testing.TB, bin, dir, name string, args ...string) *Proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = diesWithTest(true)
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	f.Close()
	p := &Proc{Name: name, Cmd: cmd, LogPath: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", name, Tail(logPath, 30))
		}
	})
	return p
}

// diesWithTest is the SysProcAttr of a process a test starts, in its own
// process group or not: the kernel kills it when the test binary dies. A
// test's cleanup stops what it started, but a binary killed outright (a
// timeout from outside, or go test -timeout, which runs no cleanup)
// would leave it running: a server left so keeps gossiping to ports
// that later runs reuse.
func diesWithTest(setpgid bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: setpgid, Pdeathsig: syscall.SIGKILL}
}

// Kill sends SIGKILL to the process group and waits for the process.
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// KillProcess sends SIGKILL to the process alone (kill -9 PID): its tasks,
// in their own process groups, are left to the kernel's parent-death
// signal.
func (p *Proc) KillProcess() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) { _ = p.Cmd.Process.Signal(sig) }

// WaitLog waits until the process logs a JSON line whose msg is msg, and
// returns that line's fields.
func (p *Proc) WaitLog(ctx context.Context, t testing.TB, msg string) map[string]any {
	t.Helper()
	for {
		if fields, ok := FindLog(p.LogPath, msg); ok {
			return fields
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not log %q: %v\n%s", p.Name, msg, ctx.Err(), Tail(p.LogPath, 30))
		case <-p.done:
			t.Fatalf("%s exited before logging %q:\n%s", p.Name, msg, Tail(p.LogPath, 30))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// FindLog returns the fields of the first JSON line in the log at path
// whose msg is msg.
func FindLog(path, msg string) (map[string]any, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var fields map[string]any
		if json.Unmarshal(s.Bytes(), &fields) == nil && fields["msg"] == msg {
			return fields, true
		}
	}
	return nil, false
}

// Tail is the last n lines of the file at path, for a failure message.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Str is a log line's string field, "" when absent.
func Str(fields map[string]any, key string) string {
	s, _ := fields[key].(string)
	return s
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// ServerProc is a 'longfair server' process and the addresses it logged.
type ServerProc struct {
	*Proc
	ID, GRPC, Gossip, Raft, HTTP string
	// Args started it; a restart reuses them on the same addresses.
	Args []string
}

// ServerArgs are the flags of a server on loopback with ephemeral ports,
// its data in dir/id, logging JSON, with no tokens asked (the ACL has its
// own tests).
func ServerArgs(dir, id string) []string {
	return []string{"server", "--node-id", id, "--data-dir", filepath.Join(dir, id),
		"--raft-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--gossip-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--log-format", "json", "--acl=false"}
}

// StartServer starts 'longfair server' with ServerArgs and extra flags,
// and waits until it logs "server started" with the addresses it bound.
func StartServer(ctx context.Context, t testing.TB, bin, dir, id string, extra ...string) *ServerProc {
	t.Helper()
	args := append(ServerArgs(dir, id), extra...)
	p := StartProc(t, bin, dir, id, args...)
	fields := p.WaitLog(ctx, t, "server started")
	return &ServerProc{Proc: p, ID: id, GRPC: Str(fields, "grpc"), Gossip: Str(fields, "gossip"), Raft: Str(fields, "raft"), HTTP: Str(fields, "http"), Args: args}
}
