// Package cli is longfair's command line for users and admins: the command
// table, flag parsing, output as tables, JSON or CSV with server strings
// escaped, and every command that calls the cluster through package
// client (submit, jobs, job, logs, explain, fairness, balance, account,
// user, grant, ledger, usage, policy, group, queue, acl, operator, status,
// nodes). It links no server, worker, Raft or gossip code
// (internal/layering checks it), so that a client binary can be built
// from it alone.
//
// The daemons (sub-package daemon), the dev cluster (dev) and the
// simulator's front-end (simulate) are commands of their own, added to
// this table by cmd/longfair. A new command is a file here with a
// function returning it, and a row in Commands (its group in
// commandGroups decides where help lists it).
package cli
