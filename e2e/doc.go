// Package e2e holds longfair's end-to-end tests and benchmarks: real
// servers and workers on loopback, as separate processes of the built
// binary (or, for the benchmarks, in this process), driven through the
// public gRPC API.
//
// The tests build the binary once (TestMain), start each cluster in its
// own temp dir with ports chosen by the kernel, kill every process group
// they started when they end, and bound every wait with a deadline.
package e2e
