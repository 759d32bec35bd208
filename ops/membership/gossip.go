package membership

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/longfair/longfair/ops"
)

// Tune sets memberlist's failure detection for a cluster on one LAN:
// probes every second with memberlist's LAN timeout of 500ms, gossip every
// 200ms, and a suspicion timeout of three probe intervals (memberlist
// scales it with log10 of the pool size): a dead member is declared in
// about four seconds in a small pool and nine in a pool of 500, instead of
// memberlist's LAN default of five to twelve; and it sends packets
// uncompressed.
// Servers and workers use the same timings. Gossip is the slower of two
// signals for a worker: the stream each worker keeps to the leader ends
// at once when its process dies, and is closed when it misses four of its
// heartbeats (2s at the fastest pace). The probes were twice as frequent, with a 300ms timeout:
// under load (a join storm of 150 workers; e2e/bench_scale_test.go)
// probes timed out, suspicions spread, and each refutation and
// false death added load, so that 150 workers took 27s to be up and 200
// took eleven minutes; with these timings they take two and three.
func Tune(mc *memberlist.Config) {
	mc.ProbeInterval = time.Second
	mc.ProbeTimeout = 500 * time.Millisecond
	mc.SuspicionMult = 3
	mc.GossipInterval = 200 * time.Millisecond
	mc.TCPTimeout = 2 * time.Second
	// memberlist compresses every gossip packet with LZW by default,
	// allocating its tables each time: on a LAN that costs more CPU than
	// the bytes save. 150 members in one process (the load generator,
	// e2e/bench_scale_test.go) spent over half their CPU in it and fell
	// behind on their heartbeats. A member without compression still
	// reads compressed packets, so mixed versions interoperate.
	mc.EnableCompression = false
}

// Config is what a server or worker needs to be a gossip member.
type Config struct {
	// Name is the member's node id.
	Name string
	// Addr is the host:port to bind; Advertise, when set, is the host:port
	// others should use instead (behind NAT, or when binding 0.0.0.0).
	Addr, Advertise string
	// Key, when set, encrypts and authenticates every message: a member
	// without it can neither join nor read the pool.
	Key []byte
	// ReclaimDeadNames is how soon a member that died may come back under
	// its name from another address; zero means memberlist's default
	// (never, until the dead entry is reaped).
	ReclaimDeadNames time.Duration
	Delegate         memberlist.Delegate
	Events           memberlist.EventDelegate
}

// Start creates the memberlist member and binds its address at once;
// joining others is separate (Join). It returns the member and the
// host:port others join it at.
func Start(c Config, logger *slog.Logger) (*memberlist.Memberlist, string, error) {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("gossip address %q: %w", c.Addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, "", fmt.Errorf("gossip address %q: port %q is not a number", c.Addr, port)
	}
	mc := memberlist.DefaultLANConfig()
	Tune(mc)
	mc.Name = c.Name
	mc.BindAddr, mc.BindPort, mc.AdvertisePort = host, p, p
	if c.Advertise != "" {
		ah, ap, err := net.SplitHostPort(c.Advertise)
		if err != nil {
			return nil, "", fmt.Errorf("gossip advertise address %q: %w", c.Advertise, err)
		}
		mc.AdvertiseAddr = ah
		if mc.AdvertisePort, err = strconv.Atoi(ap); err != nil {
			return nil, "", fmt.Errorf("gossip advertise address %q: port %q is not a number", c.Advertise, ap)
		}
	}
	if c.ReclaimDeadNames > 0 {
		mc.DeadNodeReclaimTime = c.ReclaimDeadNames
	}
	if len(c.Key) > 0 {
		mc.SecretKey = slices.Clone(c.Key)
	}
	mc.Delegate, mc.Events = c.Delegate, c.Events
	mc.Logger = log.New(ops.NewBracketLogWriter(logger, "memberlist"), "", 0)
	t, err := listen(host, p, logger.With("component", "gossip"))
	if err != nil {
		return nil, "", fmt.Errorf("start gossip on %s: %w (is another process using the port? pick another with --gossip-addr)", c.Addr, err)
	}
	mc.Transport = t
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Shutdown()
		return nil, "", fmt.Errorf("start gossip on %s: %w", c.Addr, err)
	}
	// Read once, before any gossip runs: memberlist hands out its own node
	// record, which it rewrites when the metadata changes.
	n := ml.LocalNode()
	return ml, net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port))), nil
}

// Join keeps trying to join the given addresses until one answers or
// ctx ends. Members start in any order, so a failed join is expected for a
// while: it is logged as a warning and retried with a growing interval.
func Join(ctx context.Context, ml *memberlist.Memberlist, addrs []string, logger *slog.Logger) {
	wait := 100 * time.Millisecond
	for {
		n, err := ml.Join(addrs)
		if n > 0 {
			logger.Info("joined gossip pool", "contacted", n, "addresses", addrs)
			return
		}
		logger.Warn("cannot join gossip pool yet; retrying", "addresses", addrs, "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}
