package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/longfair/longfair/ops"
)

// httpEndpoint is the server's HTTP listener for operations: /metrics,
// /healthz and /readyz (see ops.NewHTTPHandler).
type httpEndpoint struct {
	srv *http.Server
	lis net.Listener
}

// startHTTP binds the operations listener, if one is configured, and
// serves it until stopHTTP.
func (s *Server) startHTTP() error {
	if s.cfg.HTTPAddr == "" {
		return nil
	}
	lis, err := net.Listen("tcp", s.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen for HTTP (metrics and health) on %s: %w (is the port in use? pick another with --http-addr, or disable it with --http-addr '')", s.cfg.HTTPAddr, err)
	}
	log := s.logger.With("component", "http")
	h := &httpEndpoint{lis: lis, srv: &http.Server{
		Handler: ops.NewHTTPHandler(s.metrics, s.Ready, log),
		// The endpoints answer at once; these bound what a slow or
		// stuck client can hold.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
	s.http = h
	s.goRun(func() {
		if err := h.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("HTTP listener stopped", "error", err)
		}
	})
	return nil
}

// stopHTTP stops the operations listener; scrapes in flight get until ctx
// ends.
func (s *Server) stopHTTP(ctx context.Context) {
	if s.http == nil {
		return
	}
	if err := s.http.srv.Shutdown(ctx); err != nil {
		s.http.srv.Close()
	}
}

// HTTPAddr is the address of the metrics and health listener, or "" when
// it is disabled.
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.lis.Addr().String()
}
