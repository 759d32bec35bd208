package server

import (
	"net/http"
	"net/http/pprof"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// pprofPrefix is where the servers' HTTP listener serves Go's profiles
// (net/http/pprof): CPU, heap, goroutines, mutex and block contention and
// execution traces of the running server, for operators. With the ACL
// enabled only an admin token may read them — a profile shows what the
// server is doing, and a CPU profile or trace costs it while it runs;
// without the ACL every call is open, and so are they.
const pprofPrefix = "/debug/pprof/"

// mountPprof serves the profiles under pprofPrefix.
func (s *Server) mountPprof(mux *http.ServeMux) {
	h := http.NewServeMux()
	h.HandleFunc(pprofPrefix, pprof.Index) // and the named profiles: heap, goroutine, allocs, block, mutex, …
	h.HandleFunc(pprofPrefix+"cmdline", pprof.Cmdline)
	h.HandleFunc(pprofPrefix+"profile", pprof.Profile)
	h.HandleFunc(pprofPrefix+"symbol", pprof.Symbol)
	h.HandleFunc(pprofPrefix+"trace", pprof.Trace)
	// A CPU profile or a trace runs for ?seconds=N: past the listener's
	// write time limit.
	mux.Handle(pprofPrefix, s.adminOnly(unboundedIO(h)))
}

// adminOnly lets through, with the ACL enabled, only requests whose
// Authorization header holds an admin's token (checked as a gRPC call's
// is), answering 401 with the reason for a missing or bad token and 403
// for another role's.
func (s *Server) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.ACL.Enabled {
			h.ServeHTTP(w, r)
			return
		}
		md := metadata.MD{}
		for _, v := range r.Header.Values("Authorization") {
			md.Append(longfairv1.AuthorizationMetadataKey, v)
		}
		id, err := s.auth.authenticate(metadata.NewIncomingContext(r.Context(), md), time.Now())
		if err != nil {
			http.Error(w, status.Convert(err).Message(), http.StatusUnauthorized)
			return
		}
		if id.Role != fsm.RoleAdmin {
			http.Error(w, "profiles are for admins: token "+id.TokenID+" is a "+string(id.Role)+" token; use an admin token", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
