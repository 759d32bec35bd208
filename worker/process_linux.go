package worker

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr puts the task in its own process group, and has the kernel kill
// it if the agent dies (kill -9 included), so that a task never outlives
// the agent that would report it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitKeepsZombie: waitExit can wait for the shell without reaping it.
const waitKeepsZombie = true

// waitExit waits until process pid, a child not yet reaped, has exited,
// without reaping it.
//
// It waits in the runtime's network poller, on a pidfd (readable once the
// process has exited), rather than in a blocking waitid: a supervisor
// running a dozen short tasks would otherwise hold a dozen threads in
// waitid, and the runtime hands each one's P to another thread whenever
// the wait outlasts 20 µs, waking threads and keeping its monitor polling
// at its fastest pace. Where a pidfd cannot be waited on (Linux before
// 5.4) it falls back to the blocking wait.
func waitExit(pid int) {
	if err := pollExit(pid); err != nil {
		blockExit(pid)
	}
}

// pollExit waits for pid's exit on a pidfd through the poller. An error
// means it could not, and nothing was waited for.
func pollExit(pid int) error {
	// The child is not reaped, so pid cannot name another process yet.
	// Made non-blocking here rather than with PIDFD_NONBLOCK, which
	// Linux only takes from 5.10.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("open pidfd of %d: %w", pid, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		for {
			werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			if !errors.Is(werr, unix.EINTR) {
				break
			}
		}
		// With WNOHANG and no exit yet, the kernel sets no signal
		// (si_signo 0): then wait until the pidfd is readable. An exit
		// before this check is seen by it; one after it makes the pidfd
		// readable, which the poller reports.
		return werr != nil || info.Signo != 0
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("wait for %d through its pidfd: %w", pid, err)
	}
	return nil
}

// blockExit waits for pid's exit in a blocking waitid, without reaping it.
func blockExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// selfExe is what the agent runs as its task supervisor: this very
// program, even when its file was replaced or removed (an upgrade) while
// the agent runs.
func selfExe() (string, error) { return "/proc/self/exe", nil }

// heldFilePath names a file this process holds open so that another
// process of the same user (the task supervisor) opens that very file:
// its descriptor under /proc, which no rename, symlink or hard link at
// the file's name can redirect.
func heldFilePath(f *os.File) string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()) }
