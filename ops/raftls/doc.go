// Package raftls is Raft's transport over TLS: a stream layer for
// hashicorp/raft whose connections both ends verify against the cluster's
// CA, so that only servers of one cluster can vote or replicate. Only the
// servers import it.
package raftls
