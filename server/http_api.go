package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// mountAPI serves the JSON/HTTP API under /v1/ on mux, and its OpenAPI
// document at /v1/openapi.json.
//
// The gateway (longfairv1.NewHTTPGateway) calls this server's own gRPC
// listener over the connection the forwarder keeps to it, rather than the
// services in process: an HTTP call then passes through exactly what a
// gRPC call does (status mapping, token check, validation, forwarding to
// the leader, the user's view of the answer), with the caller's bearer
// token as its metadata, and nothing of that is written twice.
func (s *Server) mountAPI(mux *http.ServeMux) error {
	conn, err := s.fwd.conn(s.grpcAddr)
	if err != nil {
		return fmt.Errorf("connect the HTTP API to this server's gRPC listener %s: %w", s.grpcAddr, err)
	}
	// The handlers' calls take their context from each request; this one
	// only bounds registration, which does not wait.
	gw, err := longfairv1.NewHTTPGateway(context.Background(), conn)
	if err != nil {
		return fmt.Errorf("HTTP API: %w", err)
	}
	mux.Handle(longfairv1.HTTPPrefix, unboundedIO(gw))
	doc := longfairv1.OpenAPIDocument()
	mux.HandleFunc("GET "+longfairv1.OpenAPIPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	return nil
}

// unboundedIO lifts the listener's read and write time limits for an API
// call: a call that streams (a task's output followed, a snapshot) or
// takes long (a ledger check) runs as long as its gRPC form would, and
// ends when the client goes away or the server stops.
func unboundedIO(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// Errors mean the connection cannot change its deadlines (not a
		// net.Conn underneath); the call then keeps the listener's.
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}
