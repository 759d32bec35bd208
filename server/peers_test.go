package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// TestManualPeerManagement forms a group without gossip between the
// servers: one server bootstraps alone and the operator adds and removes
// the second by its Raft address.
func TestManualPeerManagement(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	c := newEmptyCluster(t)
	first := testConfig(dir, "m1")
	first.Bootstrap = true
	c.add(first)
	c.add(testConfig(dir, "m2")) // no join, no bootstrap: it waits to be added
	leader := c.waitLeaderAmong(ctx, c.servers[0])
	op := longfairv1.NewOperatorClient(c.conn(leader))

	// Writes before the second server is added reach it afterwards.
	if _, err := longfairv1.NewAccountsClient(c.conn(leader)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "early"}); err != nil {
		t.Fatal(err)
	}
	// Through the second server, the operator call is refused: it is in
	// no group yet and knows no leader.
	if _, err := longfairv1.NewOperatorClient(c.conn(c.servers[1])).AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m2", RaftAddress: c.servers[1].RaftAddr()}); status.Code(err) != codes.Unavailable {
		t.Fatalf("AddPeer on a server outside any group: %v, want Unavailable", err)
	}
	peers, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m2", RaftAddress: c.servers[1].RaftAddr()})
	if err != nil {
		t.Fatalf("add peer: %v", err)
	}
	if len(peers.GetPeers()) != 2 {
		t.Fatalf("after adding m2 the configuration is %v", peers.GetPeers())
	}
	// Adding it again changes nothing; taking another's address is refused.
	if _, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m2", RaftAddress: c.servers[1].RaftAddr()}); err != nil {
		t.Fatalf("adding the same peer again: %v", err)
	}
	if _, err := op.AddPeer(ctx, &longfairv1.AddPeerRequest{Id: "m3", RaftAddress: c.servers[1].RaftAddr()}); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a second id on m2's address: %v, want AlreadyExists", err)
	}
	c.waitConvergedRaftOnly(ctx)
	if _, err := c.servers[1].FSM().Account("early"); err != nil {
		t.Fatalf("the added server did not receive earlier writes: %v", err)
	}

	// Removing the leader itself is refused while it runs (it is in its own
	// gossip pool); removing a server that is not there is NotFound.
	if _, err := op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "m1"}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(status.Convert(err).Message(), "stop it first") {
		t.Fatalf("remove a running server: %v, want FailedPrecondition", err)
	}
	if _, err := op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "nobody"}); status.Code(err) != codes.NotFound {
		t.Fatalf("remove an unknown server: %v, want NotFound", err)
	}
	// m2 is not in m1's gossip pool, so the operator may remove it.
	c.stop(1)
	peers, err = op.RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: "m2"})
	if err != nil {
		t.Fatalf("remove m2: %v", err)
	}
	if len(peers.GetPeers()) != 1 || peers.GetPeers()[0].GetId() != "m1" {
		t.Fatalf("after removing m2 the configuration is %v", peers.GetPeers())
	}
	// A one-server group commits on its own again.
	if _, err := longfairv1.NewAccountsClient(c.conn(leader)).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "late"}); err != nil {
		t.Fatalf("write after removing the second server: %v", err)
	}
}

func TestEveryAPIMethodIsRouted(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("longfair.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				full := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				n++
				if _, ok := methodKindOf(full); !ok {
					t.Errorf("%s is not classified as read, leader-only or local in methodKindOf", full)
				}
				if _, _, err := messageTypes(full); err != nil {
					t.Errorf("%s: %v", full, err)
				}
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no longfair.v1 methods registered")
	}
	// Writes must never be served by a follower.
	for _, m := range []string{"/longfair.v1.Jobs/SubmitJob", "/longfair.v1.Grants/CreateGrant", "/longfair.v1.Operator/RestoreSnapshot"} {
		if k, _ := methodKindOf(m); k != kindLeader {
			t.Errorf("%s is not leader-only", m)
		}
	}
}
