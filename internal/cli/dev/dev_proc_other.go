//go:build !linux

package dev

import (
	"os"
	"os/exec"
	"syscall"
)

// childProcAttr: process groups and parent-death signals are Linux
// features here; elsewhere children are stopped one by one.
func childProcAttr() *syscall.SysProcAttr { return nil }

// signalChild signals the child: an interrupt, or a kill when hard.
func signalChild(cmd *exec.Cmd, hard bool) {
	if cmd.Process == nil {
		return
	}
	if hard {
		_ = cmd.Process.Kill()
		return
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		_ = cmd.Process.Kill()
	}
}
