// Package fawkes is FAWKES weighting (Ghiţ et al., "Balanced Resource
// Allocations Across Multiple Dynamic MapReduce Clusters", SIGMETRICS 2014)
// for longfair: every account is a partition of the cluster whose size
// follows a weight that is recomputed every interval T from what the account
// asks for (demand), what it does with its partition (usage) or how well its
// jobs fare (performance), and the partitions are resized only when the
// allocation has drifted far enough from the new weights.
//
// The pieces are pure (time is an argument, nothing is random): a Meter
// time-averages each account's Samples over the interval and counts its
// completions; Weights turns the averages into weights by one of the nine
// policies (JD, DD, TD, PU, DU, RU, JS, JT, TT) or the two baselines (none,
// eq); Shares turns weights into partition sizes that respect every active
// account's minimum share; and the discrimination D_i = ∫(c_i − w_i)dt with
// its variance, the paper's global discrimination factor, decides whether to
// resize (Var(D) > τ). The Controller puts these together into one step —
// samples, completions and time in, partitions out — and is the one
// implementation the leader (server) and the simulator (sim) both
// run; each only gathers its accounts' state (Account.Wait, Completions)
// and commits or applies the partitions. SlowdownFloor and Completions
// define, once, how JS measures slowdown and how JT and TT count
// completions. The engine's fawkes policy (package sched) confines each
// account to the share it was given.
//
// longfair jobs carry no input or output data, so the data-based policies
// use the closest thing a job declares: DD weighs the declared work of the
// waiting tasks (tasks × walltime × the share of the cluster one task
// takes), and DU the use of a second resource (disk when the cluster has
// one, else memory) within the account's partition.
package fawkes
