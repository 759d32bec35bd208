// Package testcluster is the one cluster the tests start: real servers
// (package server) on 127.0.0.1 with ephemeral ports and a data dir each,
// in the test's own process, and real worker agents beside them. The
// server, client and e2e tests use it; each test gets a fresh cluster
// (New, NewWith, Empty, NewACL for one that enforces tokens) that its
// cleanup shuts down.
//
// The servers log warnings and errors into the test log
// (LONGFAIR_TEST_LOG=info or debug shows everything on stderr). Their
// configuration (Config) calls without tokens, and reruns a lost worker's
// tasks after 4 s; the workers (Worker) fence their tasks 2.5 s after
// losing the leader, so that a failover on two loaded cores under -race
// does not fence every task, and a lost worker's tasks still rerun within
// a test's patience. Benchmarks that measure production behaviour set the
// production timings back (e2e's inproc).
//
// Package server's own tests that drive a cluster are black-box tests
// (package server_test) for this reason: a test in package server cannot
// import this package, which imports server. The few internals they check
// or steer are exported to them by server/export_test.go; tests of a
// single function stay inside package server.
//
// Tests that need real processes (kill -9, SIGSTOP, a restart from the
// data dir) build the binary once (Build, Binary) and start it with
// StartProc, or StartServer for a server on loopback that has logged the
// addresses it bound; the test's cleanup kills each process group. e2e
// builds its clusters of processes on these, and so do the CLI's tests.
//
// Every wait here is bounded by the caller's context.
package testcluster
