package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// TestManualPeerManagement forms a group without gossip between the
// servers: one server bootstraps alone and the operator adds the others by
// their Raft addresses, then removes a stopped one.
func TestManualPeerManagement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	c := testcluster.Empty(t)
	first := testcluster.Config(dir, "m1")
	first.Bootstrap = true
	c.Add(first)
	// No join and no bootstrap: these wait to be added.
	c.Add(testcluster.Config(dir, "m2"))
	c.Add(testcluster.Config(dir, "m3"))
	leader := c.WaitLeaderAmong(ctx, c.Server(0))
	op := longfairv1.NewOperatorClient(c.Conn(leader))

	// Writes before the others are added reach them afterwards.
	if _, err := longfairv1.NewAccountsClient(c.Conn(leader)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "early"}); err != nil {
		t.Fatal(err)
	}
	// Through m2 the operator call is refused: m2 is in no group yet and
	// knows no leader to forward it to.
	if _, err := longfairv1.NewOperatorClient(c.Conn(c.Server(1))).AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m2", RaftAddress: c.Server(1).RaftAddr()}); status.Code(err) != codes.Unavailable {
		t.Fatalf("AddPeer on a server outside any group: %v, want Unavailable", err)
	}
	for _, s := range c.Running()[1:] {
		if _, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: s.NodeID(), RaftAddress: s.RaftAddr()}); err != nil {
			t.Fatalf("add peer %s: %v", s.NodeID(), err)
		}
	}
	peers, err := op.ListPeers(ctx, &longfairv1.ListPeersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(peers.GetPeers()) != 3 {
		t.Fatalf("after adding m2 and m3 the configuration is %v", peers.GetPeers())
	}
	// Adding a peer again changes nothing; a second id on its address is refused.
	if _, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m2", RaftAddress: c.Server(1).RaftAddr()}); err != nil {
		t.Fatalf("adding the same peer again: %v", err)
	}
	if _, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m4", RaftAddress: c.Server(1).RaftAddr()}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a second id on m2's address: %v, want AlreadyExists", err)
	}
	c.WaitConvergedRaftOnly(ctx)
	for _, s := range c.Running()[1:] {
		if _, err := s.FSM().Account("early"); err != nil {
			t.Fatalf("%s did not receive the write made before it was added: %v", s.NodeID(), err)
		}
	}

	// A running server is refused (it is in the leader's gossip pool and
	// would be added back); an unknown one is NotFound.
	if _, err := op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "m1"}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "stop it first") {
		t.Fatalf("remove a running server: %v, want FailedPrecondition", err)
	}
	if _, err := op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "nobody"}); status.Code(err) != codes.NotFound {
		t.Fatalf("remove an unknown server: %v, want NotFound", err)
	}
	// A stopped server can be removed; the other two carry on.
	c.Stop(2)
	var resp *longfairv1.ListPeersResponse
	err = testcluster.RetryUnavailable(ctx, t, func() (err error) {
		resp, err = op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "m3"})
		return err
	})
	if err != nil {
		t.Fatalf("remove m3: %v", err)
	}
	var ids []string
	for _, p := range resp.GetPeers() {
		ids = append(ids, p.GetId())
	}
	if strings.Join(ids, ",") != "m1,m2" {
		t.Fatalf("after removing m3 the configuration is %v", ids)
	}
	err = testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := longfairv1.NewAccountsClient(c.Conn(leader)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "late"})
		return ignoreExisting(err)
	})
	if err != nil {
		t.Fatalf("write after removing m3: %v", err)
	}
}
