//go:build !linux

package worker

import (
	"errors"
	"syscall"
	"time"
)

// Cgroups are Linux's: elsewhere a worker runs unconfined or not at all.

func detectCgroups(string) (int, error) {
	return 0, errors.New("cgroups exist on Linux only")
}

type taskCgroup struct{}

func newTaskCgroup(cgroupSpec) (*taskCgroup, error) {
	return nil, errors.New("cgroups exist on Linux only")
}

func openTaskCgroup(cgroupSpec) (*taskCgroup, error) {
	return nil, errors.New("cgroups exist on Linux only")
}
func (*taskCgroup) add(int) error                { return nil }
func (*taskCgroup) signal(syscall.Signal)        {}
func (*taskCgroup) killAll(time.Duration) error  { return nil }
func (*taskCgroup) usage() (usage, error)        { return usage{}, nil }
func (*taskCgroup) remove() error                { return nil }
func removeCgroup(int, string) error             { return nil }
func childCgroups(int, string) ([]string, error) { return nil, nil }

func removeEmptyCgroup(int, string) {}
