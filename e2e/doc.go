// Package e2e holds longfair's end-to-end tests and benchmarks: real
// servers and workers on loopback, as separate processes of the built
// binary (or, for the benchmarks, in this process), driven through the
// public gRPC API.
//
// The tests build the binary once (TestMain), start each cluster in its
// own temp dir with ports chosen by the kernel, kill every process group
// they started when they end, and bound every wait with a deadline.
//
// TestLinearizableUnderFaults records a history of concurrent API calls
// while it kills, pauses and restarts servers (faults_test.go) and checks
// it with porcupine against the specification in
// linearizability_model_test.go; -lin.duration runs it longer.
package e2e
