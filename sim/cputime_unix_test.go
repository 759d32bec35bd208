//go:build unix

package sim

import "syscall"

// processCPU is the CPU time (user + system) the process has used, in
// seconds. Benchmarks report it beside wall time because the build box is
// shared: wall time says how long a replay took, CPU time how much work it
// was.
func processCPU() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime), true
}
