package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
)

// ReadyFunc reports why a process cannot serve requests yet, or nil when
// it can. It is called on every /readyz request, so it must be cheap.
type ReadyFunc func() error

// NewHTTPHandler routes the operations endpoints:
//
//	GET /metrics  the metrics in the Prometheus text format
//	GET /healthz  200 while the process runs (a liveness probe)
//	GET /readyz   200 when ready returns nil, else 503 with its reason
//
// None of them takes a token: a supervisor or load balancer probes them
// without one. Bind the listener to an address only they can reach.
func NewHTTPHandler(m *Metrics, ready ReadyFunc, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler(logger))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			plain(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		plain(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusOK, "longfair operations endpoints: /metrics /healthz /readyz")
	})
	return mux
}

func plain(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
