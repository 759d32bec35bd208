package server

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// registerServices registers longfair's gRPC services on g.
func (s *Server) registerServices(g *grpc.Server) {
	longfairv1.RegisterAccountsServer(g, &accountsService{s: s})
	longfairv1.RegisterUsersServer(g, &usersService{s: s})
	longfairv1.RegisterGrantsServer(g, &grantsService{s: s})
	longfairv1.RegisterJobsServer(g, &jobsService{s: s})
	longfairv1.RegisterFairnessServer(g, &fairnessService{s: s})
	longfairv1.RegisterLedgerServer(g, &ledgerService{s: s})
	longfairv1.RegisterOperatorServer(g, &operatorService{s: s})
	longfairv1.RegisterWorkersServer(g, &workersService{s: s})
	longfairv1.RegisterACLServer(g, &aclService{s: s})
	longfairv1.RegisterGroupsServer(g, &groupsService{s: s})
	longfairv1.RegisterQueuesServer(g, &queuesService{s: s})
	// gRPC health checks need no token (auth_rules.go).
	healthpb.RegisterHealthServer(g, health.NewServer())
}
