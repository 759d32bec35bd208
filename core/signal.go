package core

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// Signals a user may send to a job's processes (SignalJob), by the names
// Slurm's scancel --signal takes. Linux numbers: the worker sends the
// number it is given, so the set is fixed here rather than taken from the
// platform the CLI happens to run on.
type namedSignal struct {
	name string
	num  int
}

func signalNumbers() []namedSignal {
	return []namedSignal{
		{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"KILL", 9}, {"USR1", 10}, {"USR2", 12},
		{"ALRM", 14}, {"TERM", 15}, {"CONT", 18}, {"STOP", 19}, {"TSTP", 20},
	}
}

// ParseSignal reads a signal a user may send to a job: a name with or
// without "SIG" (USR1, SIGUSR1, usr1) or its number.
func ParseSignal(s string) (syscall.Signal, error) {
	name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	n, numErr := strconv.Atoi(name)
	for _, sig := range signalNumbers() {
		if sig.name == name || numErr == nil && sig.num == n {
			return syscall.Signal(sig.num), nil
		}
	}
	return 0, fmt.Errorf("signal %q is not one a job may be sent: use one of %s (by name or number)", s, SignalNames())
}

// CheckSignal reports whether n is a signal ParseSignal accepts, for the
// worker, which gets numbers.
func CheckSignal(n int) error {
	for _, sig := range signalNumbers() {
		if sig.num == n {
			return nil
		}
	}
	return fmt.Errorf("signal %d is not one a job may be sent: use one of %s", n, SignalNames())
}

// SignalName is n's name without "SIG" ("USR1"), or its number.
func SignalName(n int) string {
	for _, sig := range signalNumbers() {
		if sig.num == n {
			return sig.name
		}
	}
	return strconv.Itoa(n)
}

// SignalNames lists the names ParseSignal accepts.
func SignalNames() string {
	names := make([]string, 0, 11)
	for _, sig := range signalNumbers() {
		names = append(names, sig.name)
	}
	return strings.Join(names, " ")
}
