package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/ops/membership"
)

// RoleServer is the gossip role of a longfair server.
const RoleServer = ops.RoleServer

// memberMetaVersion is the version of the gossip metadata format this
// server writes and reads.
const memberMetaVersion = ops.ServerMetaVersion

// MemberMeta is what a server advertises about itself in the gossip pool
// (one definition, in package ops, which workers read too).
type MemberMeta = ops.ServerMeta

// ServerMember is a server seen in the gossip pool.
type ServerMember struct {
	MemberMeta
	// Gossip is the member's gossip address.
	Gossip string
}

// gossip is this server's memberlist member and its table of live servers.
type gossip struct {
	logger *slog.Logger
	ml     *memberlist.Memberlist
	addr   string // the gossip address, fixed at start

	mu      sync.Mutex
	self    MemberMeta
	servers map[string]ServerMember // by node id; only live members
	// subscribers each get a token whenever the server table changes
	// (the bootstrap and reconcile loops); sending never blocks memberlist.
	subscribers map[chan struct{}]struct{}

	// workers is the table of worker members (workers_gossip.go).
	workers workerTable
}

// startGossip creates the memberlist member. It binds the gossip address at
// once; joining other members is separate (see joinLoop).
func startGossip(cfg Config, self MemberMeta, logger *slog.Logger) (*gossip, error) {
	g := &gossip{
		logger:      logger.With("component", "gossip"),
		self:        self,
		servers:     make(map[string]ServerMember),
		subscribers: make(map[chan struct{}]struct{}),
	}
	ml, addr, err := membership.Start(membership.Config{
		Name: self.ID, Addr: cfg.GossipAddr, Advertise: cfg.GossipAdvertise, Key: cfg.GossipKey,
		// A server that comes back on a new address (port 0, a new host)
		// must be able to take its name back from its dead former self.
		// Names are node ids, which a data dir pins, so two live servers
		// never share one.
		ReclaimDeadNames: time.Second,
		Delegate:         g, Events: g,
	}, logger)
	if err != nil {
		return nil, err
	}
	g.ml, g.addr = ml, addr
	return g, nil
}

// Addr is the gossip address other servers and workers join.
func (g *gossip) Addr() string { return g.addr }

// joinLoop joins the given addresses (see membership.Join).
func (g *gossip) joinLoop(ctx context.Context, addrs []string) {
	membership.Join(ctx, g.ml, addrs, g.logger)
}

// join contacts the given addresses once; see joinLoop.
func (g *gossip) join(addrs []string) (int, error) { return g.ml.Join(addrs) }

// setHasState advertises that this server now holds Raft state.
func (g *gossip) setHasState() {
	g.mu.Lock()
	if g.self.HasState {
		g.mu.Unlock()
		return
	}
	g.self.HasState = true
	g.mu.Unlock()
	if err := g.ml.UpdateNode(2 * time.Second); err != nil {
		g.logger.Warn("cannot gossip updated metadata", "error", err)
	}
}

// Servers returns the live servers in the pool, this one included, by id.
func (g *gossip) Servers() []ServerMember {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]ServerMember, 0, len(g.servers))
	for _, s := range g.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ServerMember) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// Server returns the live server with the given node id.
func (g *gossip) Server(id string) (ServerMember, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.servers[id]
	return s, ok
}

// leave tells the pool this server is going, then stops gossiping.
func (g *gossip) leave(timeout time.Duration) error {
	err := g.ml.Leave(timeout)
	if serr := g.ml.Shutdown(); err == nil {
		err = serr
	}
	return err
}

// subscribe returns a channel that receives a token after the server
// table changes. Tokens do not queue up: one pending token stands for any
// number of changes.
func (g *gossip) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	g.mu.Lock()
	g.subscribers[ch] = struct{}{}
	g.mu.Unlock()
	return ch
}

func (g *gossip) unsubscribe(ch chan struct{}) {
	g.mu.Lock()
	delete(g.subscribers, ch)
	g.mu.Unlock()
}

func (g *gossip) notifyChanged() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for ch := range g.subscribers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// NodeMeta implements memberlist.Delegate.
func (g *gossip) NodeMeta(limit int) []byte {
	g.mu.Lock()
	b, err := g.self.Encode()
	g.mu.Unlock()
	if err != nil || len(b) > limit {
		// Cannot happen with validated ids and addresses; advertising
		// nothing is safer than advertising a truncated record.
		g.logger.Error("gossip metadata does not fit", "bytes", len(b), "limit", limit, "error", err)
		return nil
	}
	return b
}

// NotifyMsg, GetBroadcasts, LocalState and MergeRemoteState implement
// memberlist.Delegate; servers exchange nothing beyond node metadata.
func (g *gossip) NotifyMsg([]byte)                    {}
func (g *gossip) GetBroadcasts(int, int) [][]byte     { return nil }
func (g *gossip) LocalState(bool) []byte              { return nil }
func (g *gossip) MergeRemoteState(buf []byte, _ bool) {}

// NotifyJoin implements memberlist.EventDelegate.
func (g *gossip) NotifyJoin(n *memberlist.Node) {
	g.workers.observe(n)
	g.upsert(n)
}

// NotifyUpdate implements memberlist.EventDelegate.
func (g *gossip) NotifyUpdate(n *memberlist.Node) {
	g.workers.observe(n)
	g.upsert(n)
}

// NotifyLeave implements memberlist.EventDelegate; it covers both a
// graceful leave and a member declared dead.
func (g *gossip) NotifyLeave(n *memberlist.Node) {
	g.workers.leave(n)
	g.mu.Lock()
	_, had := g.servers[n.Name]
	delete(g.servers, n.Name)
	g.mu.Unlock()
	if had {
		g.logger.Info("server left gossip pool", "node_id", n.Name)
		g.notifyChanged()
	}
}

func (g *gossip) upsert(n *memberlist.Node) {
	meta, ok := ops.DecodeServerMeta(n.Meta)
	if !ok || meta.Version != memberMetaVersion {
		// Workers and future member kinds are not servers' business here.
		return
	}
	if meta.ID != n.Name {
		g.logger.Warn("ignoring server whose gossip name and node id differ", "name", n.Name, "node_id", meta.ID)
		return
	}
	m := ServerMember{MemberMeta: meta, Gossip: n.Address()}
	g.mu.Lock()
	old, had := g.servers[n.Name]
	g.servers[n.Name] = m
	g.mu.Unlock()
	if !had || old != m {
		if !had {
			g.logger.Info("server joined gossip pool", "node_id", meta.ID, "raft", meta.Raft, "grpc", meta.GRPC)
		}
		g.notifyChanged()
	}
}
