// Package sim replays workloads against a simulated cluster with a virtual
// clock, through the same policy engine (package sched) and fairness book
// (package ledger) that the live scheduler runs, so that what the simulator
// shows is what a cluster would do.
//
// A Workload is resources, nodes, accounts and jobs. It comes from one of the
// loaders (the H-MRF paper's slotted examples as JSON, Standard Workload
// Format logs of the Parallel Workloads Archive, SWIM Facebook traces) or
// from a generator (large synthetic workloads; the papers' own workloads
// are built in sim/reproduce). Run replays it under one policy and returns a Result: β over
// time and at the end per account, usage against contribution, job wait,
// slowdown and completion times, utilization and makespan. The report
// functions write results as a table, JSON, CSV or an SVG plot.
//
// The driver is event driven. At each event time it applies completions,
// then arrivals (including closed-loop submissions that wait for an earlier
// job), updates the non-sharing baseline rate of the accounts those touched,
// runs one scheduling pass when something changed, and starts the placed
// tasks. Nothing here reads the wall clock; generators take an explicit seed.
//
// Every result also carries FAWKES's discrimination: per account D_i, the
// integral of the share of the cluster it held less the share it was due,
// and its variance over the accounts. Under fawkes the replay runs FAWKES
// weighting itself (weighting_replay.go), stepping the leader's controller
// (fawkes.Controller): it ends a weighting interval every T, resizes the
// partitions when Var(D) exceeds τ, and admits or releases accounts as their
// work starts or runs out. Accounts can be arranged in a tree for hdrf and
// dff (Workload.Groups, Account.Group, LoadTree). Latency queues (bpf, sp)
// replay through RunLatency (latency_replay.go).
//
// A job's task runs on one node, or, for a parallel job (Job.Nodes > 1),
// on that many distinct nodes at once, placed whole by the engine and
// ended on all of them together. SWF logs replay on the machine's own
// nodes (swf.go says how processors become nodes, and SWFOptions.OneNode
// keeps the older one-node model). With EASY or conservative backfill
// (sched.Settings.Backfill) each node lists what its running tasks give
// back at start + walltime (Job.Walltime, an SWF log's requested time),
// which the engine's reservation plans with; tasks still end at their
// runtime. Passes run at events only, as without backfill.
//
// # Files
//
// driver*.go, events.go, finish.go: the replay; workload.go and the loaders
// slotted.go, swf.go, swim.go, google.go, synthetic.go, tree.go; result.go,
// discrimination.go, fairness_meter.go (θ and ε): what a replay measures;
// report*.go, plot.go: how it is written; parallel.go: replays run side by
// side (InParallel). The reproductions of the papers'
// experiments (the macro-benchmark, latency bursts, the CPU–MIC cluster,
// bursty partitions, the knob sweep) are package sim/reproduce: they build
// workloads and compare policies through this package's API only.
//
// # What the model is, and what it shows
//
// Tasks are not preempted and run for a fixed time once started; an
// account's queue is served in order. The non-sharing baseline of β is the
// largest prefix of the account's unfinished tasks that fits its partition
// R·w_i/Σw, summed over the whole cluster (ledger.NonSharingRate), so on a
// cluster of many nodes even static partitioning can show β slightly below 1:
// tasks that fit the partition in aggregate do not always pack onto nodes.
//
// On the paper's macro-benchmark the simulator reproduces that H-MRF leaves
// every account with β ≥ 1 and that sharing beats static partitions in job
// completion time. It does not reproduce DRF ending an account below β = 1:
// under DRF an account that arrives while others hold the cluster waits and
// drops below 1 (β around 0.7–0.9 in the first half hour) and DRF, being
// memoryless, does not pay that back, but every account of the benchmark
// later demands several times its partition while others are idle, and DRF
// hands idle resources to whoever holds least, so every account recovers
// before the end. In the paper's YARN runs the loss persisted; what kept it
// there (container reservations, executors held for whole Spark
// applications) is not part of this model.
package sim
