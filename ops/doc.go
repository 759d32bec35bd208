// Package ops holds what running longfair in production needs beyond
// scheduling: structured logging set-up, Prometheus metrics on a
// per-process registry, the /healthz and /readyz endpoints, and (from the
// security work) TLS and API tokens.
//
// Nothing here keeps package-level state: each server or worker builds its
// own Metrics and its own handlers, so several of them can run in one
// process (as the tests do) without sharing a registry.
package ops
