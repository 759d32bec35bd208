//go:build linux

package dev

import (
	"os/exec"
	"syscall"
)

// childProcAttr puts a child in its own process group, so that Ctrl-C in
// the terminal reaches only dev (which stops the children in order), and
// asks the kernel to send it SIGTERM should dev die without stopping it,
// so no server or worker is left orphaned.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalChild asks the child to stop (SIGTERM), or kills it when hard.
// It signals the process, not its group: os.Process uses a pidfd, so a
// child that has already been reaped is never confused with a process that
// reused its pid. Servers and workers start nothing else in their group
// (a worker runs each task in a process group of its own and stops them
// itself).
func signalChild(cmd *exec.Cmd, hard bool) {
	if cmd.Process == nil {
		return
	}
	if hard {
		_ = cmd.Process.Kill()
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
}
