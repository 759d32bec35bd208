package testcluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcOfAKilledTestParent is not a test of its own: run by
// TestAProcDiesWithItsTestBinary as a child, it starts a process with
// StartProc, prints its pid and waits to be killed. It works in the
// directory LONGFAIR_TESTCLUSTER_PARENT names, not a temp dir of its own,
// which its killing would leave behind.
func TestProcOfAKilledTestParent(t *testing.T) {
	dir := os.Getenv("LONGFAIR_TESTCLUSTER_PARENT")
	if dir == "" {
		t.Skip("run by TestAProcDiesWithItsTestBinary")
	}
	p := StartProc(t, "/bin/sleep", dir, "sleeper", "600")
	fmt.Printf("pid %d\n", p.Cmd.Process.Pid)
	time.Sleep(time.Minute)
}

func TestAProcDiesWithItsTestBinary(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run", "^TestProcOfAKilledTestParent$", "-test.v")
	// The parent, killed, cleans up nothing: it works in a directory of
	// this test's, which this test removes.
	dir := t.TempDir()
	parent.Env = append(os.Environ(), "LONGFAIR_TESTCLUSTER_PARENT="+dir)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill()
	pid := 0
	for sc := bufio.NewScanner(out); pid == 0 && sc.Scan(); {
		if s, ok := strings.CutPrefix(sc.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(s)
		}
	}
	if pid == 0 {
		t.Fatal("the parent test never said which process it started")
	}
	if _, err := os.Stat(filepath.Join(dir, "sleeper.log")); err != nil {
		t.Errorf("the parent test left its files outside this test's directory, where nothing removes them: %v", err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	// Killed outright, the parent runs no cleanup.
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		// A killed child that nobody reaped yet is a zombie: dead too.
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(st)[strings.LastIndexByte(string(st), ')')+1:]); len(f) > 0 && f[0] == "Z" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d outlived the test binary that started it by 10s", pid)
		}
	}
}
