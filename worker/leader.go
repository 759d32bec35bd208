package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// leaderFinder finds the leader's gRPC address by asking the servers the
// gossip pool knows, and keeps one client connection per server address.
type leaderFinder struct {
	gossip *gossip
	log    *slog.Logger

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
	last  string // the last leader address found
	// dial are the options of every connection (auth.go: TLS, token).
	dial []grpc.DialOption
	// checkDial and checkConns are for the questions the worker asks
	// as its callers (caller_auth.go): TLS but not the worker's token,
	// since the caller's goes with them.
	checkDial  []grpc.DialOption
	checkConns map[string]*grpc.ClientConn
}

func newLeaderFinder(g *gossip, logger *slog.Logger) *leaderFinder {
	return &leaderFinder{gossip: g, log: logger, conns: make(map[string]*grpc.ClientConn), checkConns: make(map[string]*grpc.ClientConn)}
}

// conn returns the client connection to addr.
func (f *leaderFinder) conn(addr string) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return dialOnce(f.conns, addr, f.dial)
}

// checkConn returns the connection to addr that carries no token of the
// worker's own.
func (f *leaderFinder) checkConn(addr string) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return dialOnce(f.checkConns, addr, f.checkDial)
}

// dialOnce returns conns[addr], creating it with dial first.
func dialOnce(conns map[string]*grpc.ClientConn, addr string, dial []grpc.DialOption) (*grpc.ClientConn, error) {
	if c, ok := conns[addr]; ok {
		return c, nil
	}
	if dial == nil {
		dial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	c, err := grpc.NewClient(addr, slices.Concat(dial, longfairv1.DialOptions())...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	conns[addr] = c
	return c, nil
}

func (f *leaderFinder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, conns := range []map[string]*grpc.ClientConn{f.conns, f.checkConns} {
		for addr, c := range conns {
			c.Close()
			delete(conns, addr)
		}
	}
}

// errNoServers: the gossip pool has shown no server yet.
var errNoServers = errors.New("no server is known yet: the worker has not joined the gossip pool, or no server is in it")

// find asks the known servers, the last leader first, who leads; it
// returns the leader's node id and gRPC address.
func (f *leaderFinder) find(ctx context.Context) (id, addr string, err error) {
	candidates := f.candidates()
	if len(candidates) == 0 {
		return "", "", errNoServers
	}
	var errs []error
	for _, a := range candidates {
		c, err := f.conn(a)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		p, err := longfairv1.NewOperatorClient(c).GetLeader(cctx, &longfairv1.GetLeaderRequest{})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("ask %s: %w", a, err))
			continue
		}
		if p.GetGrpcAddress() == "" {
			errs = append(errs, fmt.Errorf("%s knows leader %s but not its address yet", a, p.GetId()))
			continue
		}
		f.mu.Lock()
		f.last = p.GetGrpcAddress()
		f.mu.Unlock()
		return p.GetId(), p.GetGrpcAddress(), nil
	}
	return "", "", fmt.Errorf("no server could name the leader: %w", errors.Join(errs...))
}

// candidates are the known servers' gRPC addresses, the last leader
// first.
func (f *leaderFinder) candidates() []string {
	f.mu.Lock()
	last := f.last
	f.mu.Unlock()
	addrs := f.gossip.serverAddrs()
	if last != "" {
		addrs = append([]string{last}, slices.DeleteFunc(addrs, func(a string) bool { return a == last })...)
	}
	return addrs
}

// forget drops the remembered leader after its stream failed.
func (f *leaderFinder) forget(addr string) {
	f.mu.Lock()
	if f.last == addr {
		f.last = ""
	}
	f.mu.Unlock()
}

// heldRetry is how long a worker refused because another worker process
// holds its node id waits before asking again: long enough not to press
// the leader, short enough to take over soon after the other one stops
// (the leader closes a silent stream after four heartbeats: 2s at the
// shortest, 8s at the default fence timeout).
const heldRetry = 3 * time.Second

// heldLogEvery is how often a worker that stays refused says so again at
// error level.
const heldLogEvery = 30 * time.Second

// connectLoop keeps a stream to the leader until ctx ends.
func (ag *Agent) connectLoop(ctx context.Context) {
	backoff := 20 * time.Millisecond
	var lastWarn, lastHeld time.Time
	for ctx.Err() == nil {
		id, addr, err := ag.leaders.find(ctx)
		if err == nil {
			var welcomed bool
			welcomed, err = ag.runSession(ctx, id, addr)
			if welcomed {
				backoff = 20 * time.Millisecond
				ag.refusedAsDuplicate.Store(false)
			}
			if status.Code(err) == codes.AlreadyExists && ctx.Err() == nil {
				// Another process holds this node id: the leader keeps
				// it and changes nothing; this one waits and says why.
				ag.refusedAsDuplicate.Store(true)
				if time.Since(lastHeld) > heldLogEvery {
					ag.log.Error("the leader refused this worker: another worker already runs as this node; not taking tasks until it stops (check --node-id)",
						"leader", id, "error", status.Convert(err).Message(), "retry_in", heldRetry)
					lastHeld = time.Now()
				} else {
					ag.log.Debug("still refused: another worker holds this node", "error", status.Convert(err).Message(), "retry_in", heldRetry)
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(heldRetry):
				}
				continue
			}
			if err != nil && ctx.Err() == nil {
				ag.leaders.forget(addr)
				err = fmt.Errorf("stream to leader %s at %s: %w", id, addr, err)
			}
		}
		if ctx.Err() != nil {
			return
		}
		// A leader change takes a second or two: say so once in a while,
		// not on every retry.
		if err != nil && time.Since(lastWarn) > 5*time.Second {
			ag.log.Warn("no stream to the leader; retrying", "error", err)
			lastWarn = time.Now()
		} else if err != nil {
			ag.log.Debug("no stream to the leader; retrying", "error", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Second)
	}
}
