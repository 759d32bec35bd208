package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/longfair/longfair/ops/metrics"
	"github.com/longfair/longfair/server/dashboard"
)

// httpEndpoint is the server's HTTP listener: the operations endpoints
// /metrics, /healthz and /readyz (see metrics.NewHTTPHandler), and the
// JSON/HTTP API under /v1/ (http_api.go), the web dashboard under /ui/
// (package dashboard), and Go's profiles for admins under /debug/pprof/
// (http_pprof.go). With TLS configured it serves
// HTTPS with the gRPC listener's certificate and, with a CA, demands a
// client certificate the CA signed, as the gRPC listener does.
type httpEndpoint struct {
	srv *http.Server
	lis net.Listener
	tls bool
}

// startHTTP binds the HTTP listener, if one is configured, and serves it
// until stopHTTP.
func (s *Server) startHTTP() error {
	if s.cfg.HTTPAddr == "" {
		return nil
	}
	log := s.logger.With("component", "http")
	mux := http.NewServeMux()
	mux.Handle("/", metrics.NewHTTPHandler(s.metrics, s.Ready, log))
	if err := s.mountAPI(mux); err != nil {
		return err
	}
	ui, err := dashboard.Handler()
	if err != nil {
		return err
	}
	mux.Handle(dashboard.Path, ui)
	s.mountPprof(mux)
	lis, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen for HTTP (API, metrics and health) on %s: %w (is the port in use? pick another with --http-addr, or disable it with --http-addr '')", s.cfg.HTTPAddr, err)
	}
	h := &httpEndpoint{lis: lis, tls: s.sec.tls, srv: &http.Server{
		Handler: mux,
		// The operations endpoints answer at once; these bound what a
		// slow or stuck client can hold. API calls lift the read and
		// write bounds (http_api.go), as gRPC calls have none.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
	if h.tls {
		// ServeTLS offers HTTP/2 and HTTP/1.1 on a clone of this.
		h.srv.TLSConfig = s.sec.raftServer.Clone()
	}
	s.http = h
	s.goRun(func() {
		serve := func() error { return h.srv.Serve(lis) }
		if h.tls {
			serve = func() error { return h.srv.ServeTLS(lis, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP listener stopped", "error", err)
		}
	})
	return nil
}

// stopHTTP stops the HTTP listener; scrapes and API calls in flight get
// until ctx ends.
func (s *Server) stopHTTP(ctx context.Context) {
	if s.http == nil {
		return
	}
	if err := s.http.srv.Shutdown(ctx); err != nil {
		s.http.srv.Close()
	}
}

// HTTPAddr is the address of the HTTP listener (API, metrics and health),
// or "" when it is disabled.
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.lis.Addr().String()
}

// HTTPURL is the base URL of the HTTP listener ("http://host:port" or,
// with TLS, "https://host:port"), or "" when it is disabled.
func (s *Server) HTTPURL() string {
	if s.http == nil {
		return ""
	}
	if s.http.tls {
		return "https://" + s.HTTPAddr()
	}
	return "http://" + s.HTTPAddr()
}
