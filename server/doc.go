// Package server runs one member of longfair's Raft server group.
//
// A Server ties together the pieces every server runs:
//
//   - a hashicorp/raft node whose log and stable store is raft-boltdb/v2
//     or, if the operator chooses it, hashicorp/raft-wal (raftstore.go: one
//     disk sync per append instead of two), with a file snapshot store and
//     a TCP transport, applying the log to the bbolt-backed ledger FSM of
//     package fsm;
//   - a memberlist gossip member advertising the server's role, node id and
//     Raft and gRPC addresses, through which servers find each other and,
//     with bootstrap-expect, form the group once enough of them are present;
//   - a gRPC listener serving the longfair API with server reflection on;
//   - an HTTP listener (http.go) for metrics and health probes and the same
//     API as JSON under /v1/ (http_api.go): grpc-gateway's handlers, which
//     call this server's own gRPC listener with the HTTP caller's token,
//     so that both forms are checked, routed and answered by one path;
//     and the web dashboard under /ui/ (package dashboard), static pages
//     that call that API with the logged-in user's token.
//
// Writes that reach a follower are forwarded to the leader's gRPC address
// with the caller's deadline; reads are answered from the local FSM unless
// the caller asks for a consistent read, which the leader serves after
// confirming it still leads. A follower gives up on a leader that stops
// answering as soon as it sees another leader or an election (and, for
// calls that may be repeated, after a per-attempt deadline), and forwards
// the call to the new leader; a write that may not be repeated is answered
// with what is known of it instead (forward.go). Connections to the
// leader, and from clients, carry gRPC keepalive pings.
//
// The FSM refuses in its own terms: an *fsm.Error carries a kind
// (fsm.Kind), not a transport code. This package alone maps kinds to gRPC
// codes (errors.go: codeOf, statusError), where a refusal comes back from
// raft's ApplyFuture.Response in the proposing process (propose.go) and,
// for reads answered from the FSM, in the outermost unary and stream
// interceptors; only the resulting status ever crosses the network.
//
// Under the fawkes policy the leader also runs FAWKES weighting
// (fawkes.go): it samples the accounts every second, steps the controller
// the simulator runs too (fawkes.Controller), which recomputes their
// weights every interval, and commits the partitions with a SetShares
// command, so that every server's scheduling view carries the same ones.
//
// The leader runs the workers (leader_term.go): it holds each worker's
// stream, places tasks and commits their events, and follows the nodes
// (leader_nodes.go). A node whose worker goes away is marked down within
// seconds, which only stops placements there; its running attempts are
// lost and requeued only WorkerLossTimeout after the leader last heard the
// worker (or after the leader's own term began, when it never did). By
// then the worker has fenced them — the worker's task supervisor kills it
// when the worker's lease, renewed only by heartbeats this leader answers,
// has run out — since the hello check (workers_conn.go) refuses a worker
// whose fence timeout plus kill grace is not at least fenceMargin shorter.
// The timeline for a worker last heard at H:
//
//	H                 the worker's last heartbeat the leader answered was sent before H
//	H + grace (2 s)   node down: nothing new is placed there
//	H + fence + kill  the worker's supervisors have killed its tasks
//	H + loss          attempts lost, charged up to H + fence + kill, requeued
//
// The leader checks the replicas' state (integrity.go): every
// state_check.interval it commits a checkpoint, every server digests its
// state at that index (package fsm), and the leader commits its digest for
// each to compare. A server that differs answers reads Unavailable with
// the index and the remedy and fails /readyz; Operator.VerifyState judges
// every server's digest against the majority, which also finds a damaged
// leader. At start-up, a damaged raft.db, fsm.db or raft-wal metadata file
// is refused with the
// file named (internal/boltcheck), never a panic, and an fsm.db changed
// since the last clean shutdown marks the server diverged at once.
//
// The server reads the wall clock only to stamp the commands it proposes as
// leader; the FSM itself never does (see package fsm).
package server
