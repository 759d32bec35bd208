// Package fsm is longfair's replicated state machine: the raft.FSM (and
// raft.BatchingFSM) every server applies the Raft log to. It is the ledger.
//
// State lives in a bbolt file in the data directory. Each batch of committed
// entries is applied in one bbolt transaction that also records the last
// applied index, so a server restarted with raft's NoSnapshotRestoreOnStart
// skips what it already applied instead of replaying it. The servers open
// it with Options.RebuiltFromLog: those transactions skip the disk sync
// (the Raft log already holds every entry on disk), a clean Close syncs
// the file and leaves a record saying so, and a file without one (a crash,
// a power loss) is discarded at Open, for raft to restore the latest
// snapshot and replay the log into the empty FSM. A snapshot is a
// consistent bbolt read; a restore writes the snapshot to a temporary file,
// syncs it, swaps it in atomically and rebuilds the in-memory caches.
//
// Commands are versioned envelopes (Encode/Decode): a version, the leader's
// time, a type and a JSON body. Apply never reads the clock: time is the
// leader's stamp made non-decreasing (t = max(t, last)). A command that is
// malformed, of an unknown version or type, or invalid for the current state
// is refused with an *Error carrying a Kind (errors.go), the same way on
// every server, and changes nothing. Kinds name what was wrong in the
// ledger's terms; the FSM imports no transport package, and package server
// alone maps kinds to gRPC codes (server/errors.go). Two servers that
// apply the same log hold byte-identical bbolt contents (Digest). An
// entry's shape is checked by the rules of the version it was written
// with (rules, CommandVersion): a rule a later release adds (version 3:
// core's text rule and the walltime minimum) refuses new entries while an
// old log replays exactly as it applied.
//
// A leader proposes Encode(now, cmd) through raft.Apply; the future's
// Response() is a *Result, which Response[T] unpacks into the command's
// result or its refusal. A leader that groups concurrent proposals joins
// their encoded entries with EncodeMulti into one multi-command entry; its
// Response() is Results, one *Result per command, and the commands apply
// exactly as consecutive entries would:
//
//	CreateAccount, UpdateAccount               AccountInfo
//	CreateUser, AddMembership, RemoveMembership UserInfo
//	Grant                                      GrantInfo
//	UpdateSettings                             SettingsInfo
//	SubmitJob, CancelJob                       JobInfo
//	Assign                                     *AssignResult
//	TaskEvents                                 *EventsResult
//	NodeUp, NodeDown                           *NodeResult
//	SetGroupWeight, RemoveGroup                GroupInfo
//	SetAccountGroup                            AccountInfo
//	CreateLatencyQueue, RemoveLatencyQueue     QueueInfo
//	SetShares                                  SharesInfo
//	Checkpoint                                 CheckpointInfo
//	SetUserUnix                                UserInfo
//
// A Checkpoint entry (integrity.go) has every replica digest its state as
// of the entry before it, from a read transaction off the apply path; a
// second one carries the leader's digest, and a replica whose own differs
// marks itself diverged (Diverged) — locally, never in replicated state.
// Open checks the bbolt file page by page first and refuses a damaged one
// with a *boltcheck.CorruptError naming it, never a panic. Close records
// the state's digest beside the file; the next Open recomputes it and marks
// the replica diverged when the file changed while it was stopped.
//
// SubmitJob with CheckFit (servers set it) refuses a task that no known
// node, up or down, could hold even idle (jobs_fit.go), so that no SU is
// held for a job that can never start; with no node known yet it accepts.
// SubmitJob and UpdateJob with a DependencyViewer (servers set it to a
// user token's user) refuse a dependency on a job of another account as
// a job that does not exist, in the same words (jobs_deps.go).
//
// The leader's scheduler takes View(now), runs the policy engine on it and
// proposes AssignFor(view, placements).
//
// Derived state the scheduler and the read API need quickly (queues, running
// tasks per node, the fairness book, the SU book) is kept in memory, rebuilt
// from bbolt when the FSM opens or restores, and every change to it is
// persisted in the same transaction as the apply that made it.
//
// Resources are counted in whole units (ledger.ResourceUnit): SubmitJob
// refuses a demand below one unit when it is encoded and decoded, apply
// rounds the rest up, NodeUp floors capacities, and node free vectors
// change in whole units (state.take, state.give), so placement
// decisions never depend on float residue or on whether a replica
// restarted. A job's hold and each task's charge are priced by ledger.Cost
// under the cluster's billing weights and rule (default: max).
//
// # Files
//
// One feature, one file (or two: the feature's commands, their shape
// checks, their apply and the records they store; then its reads and the
// *Info copies they return):
//
//	accounts.go, accounts_read.go   accounts, users, membership
//	grants.go, grants_read.go       grants, the SU journal, balances, verify
//	settings.go                     UpdateSettings, the cluster's resources and billing
//	settings_policies.go            the policies' own settings (ρ, FAWKES weighting)
//	jobs.go, jobs_read.go           SubmitJob, CancelJob, holds
//	jobs_fit.go                     the shapes known nodes could hold (CheckFit)
//	jobs_nodes.go, jobs_exclusive.go  parallel jobs' shapes, whole nodes
//	jobs_deps.go                    dependencies (afterok, singleton, ...)
//	jobs_terms.go                   begin, throttle, nice, an admin's priority
//	jobs_hold.go, jobs_update.go    HoldJob, UpdateJob
//	jobs_requeue.go                 RequeueJob and the holds of reruns
//	limits.go                       SetLimits: what accounts and users may run
//	tasks.go, tasks_read.go         Assign, TaskEvents, attempts and charges
//	nodes.go, nodes_read.go         NodeUp, NodeDown
//	nodes_history.go                each node's last ups and downs
//	tokens.go, tokens_read.go       the API tokens (CreateToken, RevokeToken)
//	groups.go                       the account tree of hdrf and dff
//	queues.go                       bpf's latency queues
//	shares.go, shares_read.go       FAWKES partitions and the weighting's input
//	integrity.go                    Checkpoint and the replica digests
//	identity.go                     users' Unix accounts (SetUserUnix, UserByUnix);
//	                                what a job captures to run as and in
//	history.go                      the fairness history the dashboard charts
//	                                (recorded at applied commands, bounded rings)
//
// The machinery: fsm.go (the raft.FSM), command.go (the envelope, command
// numbers, versions), rules.go (shape rules by entry version), multi.go
// (multi-command entries), batch.go (one bbolt transaction per batch),
// state.go and store.go (the in-memory state and its bbolt encoding),
// snapshot.go, view.go (the scheduler's view), weights.go, usage.go
// (usage reports) and usage_index.go (the ended attempts by end time, which
// they read instead of the whole history), watch.go, errors.go (domain
// kinds).
//
// Stored records are JSON with a deterministic encoding (struct fields in
// order, no maps), which keeps the bbolt contents of two replicas
// byte-identical. Vectors are indexed by the cluster's resource list at the
// time they were written; since resources are only ever appended, a shorter
// vector is padded with zeros when read. The *Info types are copies that
// share nothing with the FSM, with resource vectors as maps from resource
// name to quantity. A command's validate method checks its shape, what can
// be checked without the cluster state, by the rules of the entry's version:
// Encode runs it so a leader never proposes an entry every server would
// refuse; Decode runs it so every server refuses a malformed entry the same
// way. Checks against the state happen at apply.
//
// # Frozen fixtures
//
// testdata/frozen holds raft logs and snapshots written by past releases,
// one directory per set (log.txt: each entry's bytes in hex with the
// command types and outcomes it had; snapshot.db.gz: Persist's output
// part-way; state.txt: every record, for review). TestFrozenFixtures
// applies every set to a fresh FSM and restores its snapshot, and fails
// when an entry decodes as another command, applies or is refused
// differently, or leaves a state whose Digest differs: renumbering a
// command, or changing how an old entry applies, breaks it. Such a failure
// is a bug in the change, never a reason to touch the set. A new bucket
// fails it too (Digest hashes bucket names, even of empty buckets): old
// and new servers would then disagree at every checkpoint of a rolling
// upgrade, which the change must settle first.
//
// Sets are never edited or regenerated. When a release adds a command type,
// an envelope version or a field whose old absence must keep applying,
// extend buildFrozenLog (frozen_test.go) to use it, rename frozenSet, and
// add the new set beside the old ones:
//
//	go test ./fsm -run TestFrozenFixtures -update-frozen
//
// The generator refuses to write over an existing set.
package fsm
