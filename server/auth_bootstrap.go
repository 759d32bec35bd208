package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ops"
)

// bootstrapACL runs on a new leader once it is current. With a bootstrap
// token file it creates the bootstrap token from it, unless the cluster
// has one already; without one it says how to get the first token while
// the cluster has none. Only the hash of the file's secret is kept.
func (s *Server) bootstrapACL(ctx context.Context) {
	done, _ := s.fsm.ACLBootstrapped()
	if s.cfg.ACL.BootstrapTokenFile == "" {
		if !done && s.cfg.ACL.Enabled {
			s.logger.Warn("the ACL is enabled and the cluster has no token yet: every call is refused until it has one; " +
				"run 'longfair acl bootstrap' once, or start the servers with --acl-bootstrap-token FILE")
		}
		return
	}
	secret, err := ops.ReadTokenFile(s.cfg.ACL.BootstrapTokenFile)
	if err != nil {
		s.logger.Error("cannot bootstrap the ACL from the token file", "error", err)
		return
	}
	hash := ops.HashTokenSecret(secret)
	if done {
		if _, ok := s.fsm.TokenBySecretHash(hash); !ok {
			s.logger.Warn("the ACL bootstrap token file is ignored: the cluster was bootstrapped with another token",
				"file", s.cfg.ACL.BootstrapTokenFile)
		}
		return
	}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		id, err := ops.NewTokenID()
		if err != nil {
			s.logger.Error("cannot bootstrap the ACL", "error", err)
			return
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := proposeFor[fsm.TokenInfo](pctx, s, &fsm.CreateToken{
			ID: id, SecretHash: hash, Role: fsm.RoleAdmin, Bootstrap: true, Description: "bootstrap token (--acl-bootstrap-token)",
		})
		cancel()
		switch code := status.Code(err); {
		case err == nil:
			s.logger.Info("ACL bootstrapped from the token file", "token_id", info.ID, "file", s.cfg.ACL.BootstrapTokenFile)
			return
		case code == codes.FailedPrecondition:
			// Bootstrapped meanwhile (ACL.Bootstrap, or a former leader).
			return
		case code == codes.AlreadyExists && attempt < 3:
			continue
		case code == codes.Unavailable || code == codes.DeadlineExceeded:
			if ctx.Err() == nil {
				s.logger.Warn("cannot bootstrap the ACL yet; retrying", "error", err)
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		default:
			s.logger.Error("cannot bootstrap the ACL from the token file", "error", err, "file", s.cfg.ACL.BootstrapTokenFile)
			return
		}
	}
}
