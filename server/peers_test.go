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
	"github.com/longfair/longfair/server"
)

// TestManualPeerManagement forms a group without gossip between the
// servers: one server bootstraps alone and the operator adds the others by
// their Raft addresses, then removes a stopped one.
func TestManualPeerManagement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.Empty(t)
	dir := c.Dir()
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

// ListPeers with_status asks every server for its own Raft state: through
// a follower, one leader and two followers on one term; once the group
// has converged every server has applied what the leader committed, and
// the followers say when they last heard it. A stopped server is listed
// with why its state could not be had.
func TestListPeersWithEveryServersRaftStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	leader := c.WaitLeader(ctx)
	setupAccount(ctx, t, c, "phys")
	c.WaitConverged(ctx)
	var follower *server.Server
	for _, s := range c.Running() {
		if s != leader {
			follower = s
		}
	}
	resp, err := longfairv1.NewOperatorClient(c.Conn(follower)).ListPeers(ctx, &longfairv1.ListPeersRequest{WithStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	var lead *longfairv1.RaftStatus
	roles := map[string]int{}
	for _, p := range resp.GetPeers() {
		st := p.GetStatus()
		if st.GetId() != p.GetId() || st.GetError() != "" {
			t.Fatalf("peer %s: status %+v", p.GetId(), st)
		}
		roles[st.GetState()]++
		if st.GetState() == "leader" {
			lead = st
		} else if st.GetSinceLastContact() == nil {
			t.Errorf("follower %s does not say when it last heard the leader", p.GetId())
		}
	}
	if roles["leader"] != 1 || roles["follower"] != 2 || lead.GetId() != leader.NodeID() {
		t.Fatalf("roles %v, leader %v; want %s leading two followers", roles, lead, leader.NodeID())
	}
	for _, p := range resp.GetPeers() {
		st := p.GetStatus()
		if st.GetTerm() != lead.GetTerm() || st.GetAppliedIndex() > st.GetCommitIndex() {
			t.Errorf("%s: term %d applied %d commit %d; want the leader's term %d and no more applied than committed",
				p.GetId(), st.GetTerm(), st.GetAppliedIndex(), st.GetCommitIndex(), lead.GetTerm())
		}
	}
	// The servers answer one after another, so the leader may commit
	// between answers: in a quiet group they soon all show the leader's
	// commit index applied.
	testcluster.WaitFor(ctx, t, "every server to show the leader's commit index applied", func() bool {
		resp, err := longfairv1.NewOperatorClient(c.Conn(follower)).ListPeers(ctx, &longfairv1.ListPeersRequest{WithStatus: true})
		if err != nil {
			return false
		}
		var commit uint64
		for _, p := range resp.GetPeers() {
			if p.GetStatus().GetState() == "leader" {
				commit = p.GetStatus().GetCommitIndex()
			}
		}
		for _, p := range resp.GetPeers() {
			if commit == 0 || p.GetStatus().GetAppliedIndex() != commit {
				return false
			}
		}
		return true
	})

	c.Stop(c.Index(follower))
	resp, err = longfairv1.NewOperatorClient(c.Conn(leader)).ListPeers(ctx, &longfairv1.ListPeersRequest{WithStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.GetPeers() {
		if p.GetId() == follower.NodeID() && p.GetStatus().GetError() == "" {
			t.Errorf("the stopped %s has status %+v, want why it could not be had", p.GetId(), p.GetStatus())
		}
	}
}
