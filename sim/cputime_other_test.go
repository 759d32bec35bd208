//go:build !unix

package sim

// processCPU is not measured on this platform.
func processCPU() (float64, bool) { return 0, false }
