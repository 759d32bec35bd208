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

// waitExit waits until process pid has exited without reaping it.
func waitExit(pid int) {
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
