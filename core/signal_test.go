package core

import (
	"strings"
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{
		"USR1": syscall.SIGUSR1, "sigusr2": syscall.SIGUSR2, " SIGTERM ": syscall.SIGTERM,
		"9": syscall.SIGKILL, "10": syscall.SIGUSR1, "hup": syscall.SIGHUP, "CONT": syscall.SIGCONT,
	} {
		got, err := ParseSignal(in)
		if err != nil || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", in, got, err, want)
		}
		if err := CheckSignal(int(got)); err != nil {
			t.Errorf("CheckSignal(%d): %v", got, err)
		}
	}
	for _, in := range []string{"", "SEGV", "11", "0", "-1", "USR3", "SIG"} {
		if _, err := ParseSignal(in); err == nil || !strings.Contains(err.Error(), "USR1") {
			t.Errorf("ParseSignal(%q) = %v; want a refusal listing the signals", in, err)
		}
	}
	if CheckSignal(int(syscall.SIGSEGV)) == nil {
		t.Error("CheckSignal accepted SIGSEGV")
	}
}
