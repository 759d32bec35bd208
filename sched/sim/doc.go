// Package sim replays workloads against a simulated cluster with a virtual
// clock, through the same policy engine (package sched) and fairness book
// (package ledger) that the live scheduler runs, so that what the simulator
// shows is what a cluster would do.
//
// A Workload is resources, nodes, accounts and jobs. It comes from one of the
// loaders (the H-MRF paper's slotted examples as JSON, Standard Workload
// Format logs of the Parallel Workloads Archive, SWIM Facebook traces) or
// from a generator (the paper's §7.1 macro-benchmark, large synthetic
// workloads). Run replays it under one policy and returns a Result: β over
// time and at the end per account, usage against contribution, job wait,
// slowdown and completion times, utilization and makespan. The report
// functions write results as a table, JSON, CSV or an SVG plot.
//
// The driver is event driven. At each event time it applies completions,
// then arrivals (including closed-loop submissions that wait for an earlier
// job), updates the non-sharing baseline rate of the accounts those touched,
// runs one scheduling pass when something changed, and starts the placed
// tasks. Nothing here reads the wall clock; generators take an explicit seed.
package sim
