// Package metrics is a server's Prometheus metrics, on a registry each
// server builds for itself (New; nothing here keeps package-level state,
// so several servers can run in one process, as the tests do), and the
// HTTP handler that serves them beside the liveness and readiness
// endpoints.
package metrics
