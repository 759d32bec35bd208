// Package sched is longfair's policy engine: given a View (accounts with their
// pending jobs in queue order and fairness state, nodes with free resources,
// the time and the policy settings) it returns the placements of one
// scheduling pass.
//
// The engine is pure: no I/O, no clock, no goroutines, no randomness. The
// leader and the simulator run the same code, so what the simulator shows is
// what the cluster does.
//
// A pass is progressive filling, one task at a time: the policy ranks the
// accounts whose next task still fits somewhere, the first one gets its next
// task placed, its fairness state is updated, and this repeats until nothing
// fits (work conservation). An account's jobs go in queue order; a job too
// big for every node of the view, even idle, is passed over (it could not
// start however long the others waited) and the rest keep their order.
// Fairness is judged at the end of the current scheduling quantum: the
// usage and the non-sharing baseline are projected Settings.Quantum ahead,
// assuming this pass's allocation persists, which is what reproduces the
// paper's Table 1 and Example 4.
//
// hdrf and dff rank over an account tree instead (View.Groups,
// Account.Group; tree*.go): each step walks from the root to the child that
// is least served among those that can still be scheduled — by H-DRF's
// rescaled dominant share, or by DFF's fairness against its Fair Resource —
// and a blocked node's share goes to its siblings first. fawkes confines
// every account to the partition FAWKES weighting (package sched/fawkes)
// gave it (Account.Share).
//
// Explain (explain.go) is the engine's own account of a pending job: where
// its account ranks as a pass over the view would begin, by the same start
// key, and what the job waits for on the view's nodes. The server serves
// it as Jobs.ExplainJob over the view the leader schedules from, and
// 'longfair explain' only prints it.
//
// # Policies as a table
//
// Every policy is one row of policyTable (policy.go): its rank key for
// progressive filling, a prepare step for the caps it puts on accounts
// (static's and fawkes's partitions), a pass of its own when it ranks by
// more than one key (qknobler below ρ = 1, bpf and sp, hdrf and dff),
// whether it caps anyone (the simulator skips passes that cannot place
// for the others), the rule explain states, and the check of its own
// settings fields. A family's file returns its rows and owns its scratch
// memory in the Engine (rank.go: hmrf, ltdrf, ltaf, drf, af, ltrf,
// static; qknobler.go; bpf.go: bpf, sp; tree_pass.go: hdrf, dff;
// fawkes_policy.go). To add a policy: write its file with its row
// function, its key or pass and its settings check (a new settings field
// goes in Settings with its default in DefaultSettings), add the row to
// policyTable, and give it a golden scenario (below).
//
// Every policy has a small scenario under testdata/golden (a view in JSON,
// what the engine decides in the .golden beside it), which
// TestGoldenScenarios replays; a new policy adds one and writes its
// .golden with -update-golden.
//
// LookAheadView (lookahead.go) turns what a pass left behind into the view
// of a second pass that fills the nodes' look-ahead queues (package fsm:
// lookahead.go), for the long-term policies only.
package sched
