// Package ops holds what running longfair in production needs beside the
// scheduler itself: TLS for every connection (clients, server-to-server
// Raft and forwarding, server-to-worker streams), API token secrets and
// their hashes, the gossip encryption key, and the other operational
// helpers (configuration, logging, metrics, health, backup).
//
// It depends only on the standard library and the libraries the cluster
// already uses (gRPC for credentials, hashicorp/raft for the TLS stream
// layer), so that server, worker, client and the CLI can all share it.
//
// Metrics are Prometheus metrics on a registry each process builds for
// itself (NewMetrics); nothing here keeps package-level state, so several
// servers can run in one process, as the tests do.
package ops
