// Package history fills an FSM with a long history — a centre's year of
// jobs, millions of task attempts in the journal — through the same
// commands the servers commit, so that what grows with history (ledger
// verification, snapshots, restores, the leader's memory, usage reports,
// job listings) can be measured as it grows (bench_test.go, issue 15).
//
// The history is synthetic but shaped like a centre's: accounts with
// users and SU grants, a fleet of nodes, and arrays of short tasks
// submitted evenly over the span, each placed, started and ended; a few
// per cent of attempts fail. It is deterministic: the same Spec gives the
// same state, bit for bit, and no clock is read.
package history
