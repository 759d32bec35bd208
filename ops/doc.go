// Package ops holds what running longfair in production needs beside the
// scheduler itself: TLS for every connection (clients, server-to-server
// Raft and forwarding, server-to-worker streams), API token secrets and
// their hashes, the gossip encryption key and the servers' gossip metadata
// (ServerMeta, which servers write and servers and workers read), logging,
// metrics, and the health and readiness endpoints. Package tlstest makes throwaway CAs for
// tests of all of these.
//
// It depends only on the standard library and libraries the cluster
// already uses (gRPC for credentials, hashicorp/raft for the TLS stream
// layer, the Prometheus client for metrics), so that server, worker,
// client and the CLI can all share it.
//
// Metrics are Prometheus metrics on a registry each process builds for
// itself (NewMetrics); nothing here keeps package-level state, so several
// servers can run in one process, as the tests do.
package ops
