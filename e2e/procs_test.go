package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is a longfair process this test started, in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProc starts the built binary with args, its log (JSON lines) in
// dir/name.log. The test's cleanup kills its whole process group.
func startProc(t testing.TB, dir, name string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	f.Close()
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", name, tail(logPath, 30))
		}
	})
	return p
}

// kill sends SIGKILL to the process group and waits for the process.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// killProcess sends SIGKILL to the process alone (kill -9 PID): its tasks,
// in their own process groups, are left to the kernel's parent-death
// signal.
func (p *proc) killProcess() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// waitLog waits until the process logs a JSON line whose msg is msg, and
// returns that line's fields.
func (p *proc) waitLog(ctx context.Context, t testing.TB, msg string) map[string]any {
	t.Helper()
	for {
		if fields, ok := findLog(p.log, msg); ok {
			return fields
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not log %q: %v\n%s", p.name, msg, ctx.Err(), tail(p.log, 30))
		case <-p.done:
			t.Fatalf("%s exited before logging %q:\n%s", p.name, msg, tail(p.log, 30))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func findLog(path, msg string) (map[string]any, bool) {
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

func tail(path string, n int) string {
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

func str(fields map[string]any, key string) string {
	s, _ := fields[key].(string)
	return s
}

func must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}
