package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
)

// RoleWorker is the role a worker advertises in the gossip pool.
const RoleWorker = "worker"

// advertVersion is the version of the WorkerAdvert record.
const advertVersion = 1

// serverMeta is the part of a server's gossip metadata a worker reads:
// JSON written by package server (MemberMeta), whose role is "server" and
// whose grpc field is the address clients dial.
type serverMeta struct {
	Version int    `json:"v"`
	Role    string `json:"role"`
	ID      string `json:"id"`
	GRPC    string `json:"grpc"`
}

// gossip is the agent's memberlist member and its table of live servers.
type gossip struct {
	logger *slog.Logger
	ml     *memberlist.Memberlist
	meta   []byte
	addr   string

	mu      sync.Mutex
	servers map[string]string // node id → gRPC address
}

// TuneGossip sets memberlist's failure detection for a cluster on one
// LAN: probes every 500ms and a suspicion timeout of 1.5s (scaled by
// memberlist with log10 of the pool size), so a dead member is declared
// in about two to four seconds instead of memberlist's LAN default of ten
// or more. Servers use the same timings.
func TuneGossip(mc *memberlist.Config) {
	mc.ProbeInterval = 500 * time.Millisecond
	mc.ProbeTimeout = 300 * time.Millisecond
	mc.SuspicionMult = 3
	mc.GossipInterval = 100 * time.Millisecond
	mc.TCPTimeout = 2 * time.Second
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
	host, port, _ := net.SplitHostPort(cfg.GossipAddr) // checked by Validate
	p, _ := strconv.Atoi(port)
	mc := memberlist.DefaultLANConfig()
	TuneGossip(mc)
	mc.Name = cfg.NodeID
	mc.BindAddr = host
	mc.BindPort = p
	mc.AdvertisePort = p
	if cfg.GossipAdvertise != "" {
		ah, ap, _ := net.SplitHostPort(cfg.GossipAdvertise)
		mc.AdvertiseAddr = ah
		mc.AdvertisePort, _ = strconv.Atoi(ap)
	}
	if len(cfg.GossipKey) > 0 {
		mc.SecretKey = slices.Clone(cfg.GossipKey)
	}
	mc.Delegate = g
	mc.Events = g
	mc.Logger = log.New(ops.NewBracketLogWriter(logger, "memberlist"), "", 0)
	ml, err := memberlist.Create(mc)
	if err != nil {
		return nil, fmt.Errorf("start gossip on %s: %w (is another process using the port? pick another with --gossip-addr)", cfg.GossipAddr, err)
	}
	g.ml = ml
	// Read once, before any gossip runs: memberlist hands out its own
	// node record, which it rewrites as the pool's view of it changes.
	n := ml.LocalNode()
	g.addr = net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
	return g, nil
}

// Addr is the gossip address others join.
func (g *gossip) Addr() string { return g.addr }

// joinLoop keeps trying the join addresses until one answers or ctx ends.
func (g *gossip) joinLoop(ctx context.Context, addrs []string) {
	wait := 100 * time.Millisecond
	for {
		n, err := g.ml.Join(addrs)
		if n > 0 {
			g.logger.Info("joined gossip pool", "contacted", n)
			return
		}
		g.logger.Warn("cannot join gossip pool yet; retrying", "addresses", addrs, "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
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

// leave tells the pool this worker is going, then stops gossiping.
func (g *gossip) leave(timeout time.Duration) error {
	err := g.ml.Leave(timeout)
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
	var m serverMeta
	if err := json.Unmarshal(n.Meta, &m); err != nil || m.Role != "server" || m.GRPC == "" {
		return
	}
	g.mu.Lock()
	g.servers[n.Name] = m.GRPC
	g.mu.Unlock()
}
