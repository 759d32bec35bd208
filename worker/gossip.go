package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/membership"
)

// RoleWorker is the role a worker advertises in the gossip pool.
const RoleWorker = "worker"

// advertVersion is the version of the WorkerAdvert record.
const advertVersion = 1

// gossip is the agent's memberlist member and its table of live servers.
type gossip struct {
	logger *slog.Logger
	ml     *memberlist.Memberlist
	meta   []byte
	addr   string

	mu      sync.Mutex
	servers map[string]string // node id → gRPC address
}

func startGossip(cfg Config, advert *longfairv1.WorkerAdvert, logger *slog.Logger) (*gossip, error) {
	meta, err := proto.Marshal(advert)
	if err != nil {
		return nil, fmt.Errorf("encode gossip metadata: %w", err)
	}
	if len(meta) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("the node's advertisement is %d bytes, more than the %d gossip allows: use fewer or shorter resource names, or a shorter node class", len(meta), memberlist.MetaMaxSize)
	}
	g := &gossip{logger: logger.With("component", "gossip"), meta: meta, servers: make(map[string]string)}
	ml, addr, err := membership.Start(membership.Config{
		Name: cfg.NodeID, Addr: cfg.GossipAddr, Advertise: cfg.GossipAdvertise, Key: cfg.GossipKey,
		Delegate: g, Events: g,
	}, logger)
	if err != nil {
		return nil, err
	}
	g.ml, g.addr = ml, addr
	return g, nil
}

// Addr is the gossip address others join.
func (g *gossip) Addr() string { return g.addr }

// joinLoop joins the servers' pool (see membership.Join).
func (g *gossip) joinLoop(ctx context.Context, addrs []string) {
	membership.Join(ctx, g.ml, addrs, g.logger)
}

// serverAddrs returns the gRPC addresses of the live servers.
func (g *gossip) serverAddrs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.servers))
	for _, a := range g.servers {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// leave tells the pool this worker is going (when announce is set), then
// stops gossiping.
func (g *gossip) leave(timeout time.Duration, announce bool) error {
	var err error
	if announce {
		err = g.ml.Leave(timeout)
	}
	if serr := g.ml.Shutdown(); err == nil {
		err = serr
	}
	return err
}

// NodeMeta implements memberlist.Delegate.
func (g *gossip) NodeMeta(int) []byte { return g.meta }

// NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState implement
// memberlist.Delegate; the metadata is all a worker exchanges.
func (g *gossip) NotifyMsg([]byte)                {}
func (g *gossip) GetBroadcasts(int, int) [][]byte { return nil }
func (g *gossip) LocalState(bool) []byte          { return nil }
func (g *gossip) MergeRemoteState([]byte, bool)   {}

// NotifyJoin implements memberlist.EventDelegate.
func (g *gossip) NotifyJoin(n *memberlist.Node) { g.upsert(n) }

// NotifyUpdate implements memberlist.EventDelegate.
func (g *gossip) NotifyUpdate(n *memberlist.Node) { g.upsert(n) }

// NotifyLeave implements memberlist.EventDelegate.
func (g *gossip) NotifyLeave(n *memberlist.Node) {
	g.mu.Lock()
	delete(g.servers, n.Name)
	g.mu.Unlock()
}

func (g *gossip) upsert(n *memberlist.Node) {
	// A server's metadata (ops.ServerMeta): the worker needs only its
	// role and the address to dial, whatever the version.
	m, ok := ops.DecodeServerMeta(n.Meta)
	if !ok || m.GRPC == "" {
		return
	}
	g.mu.Lock()
	g.servers[n.Name] = m.GRPC
	g.mu.Unlock()
}
