package worker

import (
	"context"
	"os/exec"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// threads is how many OS threads this process has created.
func threads() int { return pprof.Lookup("threadcreate").Count() }

// A supervisor waits for each of its tasks at once. Waiting must not hold
// an OS thread per task, and it must leave the task unreaped (a zombie
// keeps its process group id taken until the group has been killed).
func TestWaitingForManyTasksHoldsNoThreadEach(t *testing.T) {
	skipWithoutPidfdWait(t)
	const n = 32
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command("/bin/sh", "-c", "sleep 2")
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	base := threads()
	var wg sync.WaitGroup
	for _, c := range cmds {
		wg.Go(func() { waitExit(c.Process.Pid) })
	}
	// Every waiter has started its wait well before the tasks end.
	time.Sleep(500 * time.Millisecond)
	waiting := threads()
	if !waitWithin(10*time.Second, &wg) {
		t.Fatal("waitExit did not return within 10s of its tasks' end")
	}
	if grew := waiting - base; grew >= n/2 {
		t.Errorf("waiting for %d tasks created %d more OS threads (%d, from %d): a thread per task", n, grew, waiting, base)
	}
	for i, c := range cmds {
		// waitExit did not reap it: its status is still there to collect.
		if err := c.Wait(); err != nil {
			t.Errorf("task %d: collecting its exit after waitExit: %v", i, err)
		}
	}
}

// A task that has already exited when the wait starts is waited for at
// once, and its exit status is still there to collect.
func TestWaitForATaskThatHasAlreadyExited(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// The fallback's blocking wait returns once it has exited, unreaped.
	blockExit(pid)
	var wg sync.WaitGroup
	wg.Go(func() { waitExit(pid) })
	if !waitWithin(10*time.Second, &wg) {
		t.Fatal("waitExit did not return for a process that had exited")
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("collecting the exit after waitExit: got %v, want exit status 3", err)
	}
}

// The supervisor's own CPU for each short task it waits for, benchWindow
// at a time, waiting in the poller (what waitExit does) against one
// blocking waitid per task (its fallback). Each task is /bin/sh -c true;
// the figure is this process's CPU (not the tasks') per task.
func BenchmarkWaitForTasks(b *testing.B) {
	skipWithoutPidfdWait(b)
	for _, m := range []struct {
		name string
		wait func(pid int)
	}{
		{"wait=poll", waitExit},
		{"wait=block", blockExit},
	} {
		b.Run(m.name, func(b *testing.B) {
			sem := make(chan struct{}, benchWindow)
			var wg sync.WaitGroup
			cpu := processTime()
			for b.Loop() {
				sem <- struct{}{}
				cmd := exec.Command("/bin/sh", "-c", "true")
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					m.wait(cmd.Process.Pid)
					_ = cmd.Wait()
					<-sem
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(processTime()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/task")
		})
	}
}

// waitWithin waits up to d for wg (waitGroup); it reports whether wg
// finished.
func waitWithin(d time.Duration, wg *sync.WaitGroup) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return waitGroup(ctx, wg)
}

// skipWithoutPidfdWait skips where a pidfd cannot be waited on (Linux
// before 5.4): there waitExit falls back to a blocking wait.
func skipWithoutPidfdWait(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	err := pollExit(cmd.Process.Pid)
	_ = cmd.Wait()
	if err != nil {
		tb.Skipf("this kernel cannot wait on a pidfd (%v): waitExit blocks a thread here", err)
	}
}
