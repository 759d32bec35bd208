// Package reproduce rebuilds the experiments of the papers longfair
// implements, on the simulator (package sim), so that their tables can be
// checked against the papers and rerun by anyone: `longfair sim --macro`,
// `--qknobler-testbed`, `--qknobler-sweep`, `--bpf`, `--bpf-queues`,
// `--dff` and `--fawkes-bursty` print them.
//
// One file per experiment, named for what it measures; the paper and its
// section are named in each file's comments:
//
//   - macro.go, weighted_testbed.go: the H-MRF paper's §7.1 macro-benchmark
//     (59 nodes, four accounts) and the QKnobler paper's weighted mix of it;
//   - knob_sweep.go: QKnobler's ρ swept between fairness and efficiency
//     (θ, ε and Theorem 1's bound, measured by sim.QKnoblerMeter);
//   - latency_bursts.go, latency_bursts_table.go: BPF's latency queue
//     bursting beside throughput queues, compared under drf, sp and bpf;
//   - cpu_mic_cluster.go, cpu_mic_table.go: DFF's CPU–MIC cluster and its
//     Table 1 jobs in an account tree, under hdrf and dff;
//   - bursty_partitions.go, bursty_partitions_table.go: FAWKES's three
//     partitions of bursty, uneven load and its weightings;
//
// Nothing here reads the clock; every workload is drawn from a generator
// seeded by the experiment's options.
package reproduce
