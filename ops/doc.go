// Package ops holds what running longfair in production needs beside the
// scheduler itself and what clients share with servers: TLS for every
// connection (clients, server-to-server forwarding, server-to-worker
// streams), API token secrets and their hashes, the servers' gossip
// metadata (ServerMeta, which servers write and servers and workers read),
// and logging. Package tlstest makes throwaway CAs for tests of all of
// these.
//
// It depends only on the standard library and gRPC's credentials, so that
// the CLI and the client link it without the daemons' libraries. What only
// the daemons need lives in sub-packages: membership (the memberlist gossip
// pool and its key), raftls (Raft's TLS stream layer) and metrics
// (Prometheus metrics and the health and readiness endpoints).
package ops
