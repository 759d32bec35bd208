//go:build unix && !linux

package worker

import (
	"os"
	"syscall"
)

// procAttr puts the task in its own process group.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// waitKeepsZombie: there is no portable wait without reaping, so the group
// is signalled right after its leader is reaped, a window in which its id
// could in principle be reused.
const waitKeepsZombie = false

func waitExit(int) {}

// selfExe is what the agent runs as its task supervisor: this
// program.
func selfExe() (string, error) { return os.Executable() }

// heldFilePath names a file this process holds open for another process
// of the same user to open: its name, as there is no /proc here.
func heldFilePath(f *os.File) string { return f.Name() }
