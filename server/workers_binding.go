package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// checkNodeBinding refuses a worker stream whose hello names another node
// than the one its token is bound to. A worker's stream is how a node
// receives its assignments and reports its attempts' exits (and so their
// charges), and how it says goodbye; a token leaked from one node must
// not let its holder do that for any other. An unbound worker token, an
// admin token and a call without a checked token (ACL disabled) pass.
func (t *leaderTerm) checkNodeBinding(ctx context.Context, node string) error {
	id, ok := IdentityFrom(ctx)
	if !ok || id.Role != fsm.RoleWorker || id.Node == "" || id.Node == node {
		return nil
	}
	t.log.Warn("refused a worker stream: its token is bound to another node",
		"token_id", id.TokenID, "token_node", id.Node, "hello_node", node)
	return status.Errorf(codes.PermissionDenied,
		"token %s is bound to node %s, but this worker says it is node %s: a bound worker token connects only as its own node; "+
			"run this worker with --node-id %s, or give node %s its own token ('longfair acl token create --role worker --node %s')",
		id.TokenID, id.Node, node, id.Node, node, node)
}
