package server

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// membershipLoop keeps the ledger's nodes in step with the workers:
//
//   - a node is up when its worker is alive in the gossip pool and has a
//     reconciled stream to this leader; NodeUp carries the resources, class,
//     contributing account and address it advertises;
//   - a node goes down when gossip says its worker left or failed, when
//     the worker said goodbye, when its stream broke and it did not come
//     back within workerStreamGrace, or, after a change of leader, when
//     its worker did not connect within workerTakeoverGrace. Nothing new
//     is placed on a down node, but its running attempts stay active
//     (NodeDown.KeepAttempts): the worker may be stopped, hung or cut off
//     and still run them;
//   - a node's attempts are lost (charged and requeued) only when the
//     worker has surely fenced them: WorkerLossTimeout after the leader
//     last heard it, or after this term started when this leader never
//     did. A worker fences (its supervisors kill its tasks) its fence
//     timeout plus kill grace after the last heartbeat this leader
//     answered, which it sent before the leader last heard it, and the
//     hello check keeps that at least fenceMargin shorter: the rerun never
//     overlaps the first run. The lost attempts are charged up to the
//     fence (the worker's report, when it reached the ledger first, is
//     charged instead). A worker that said goodbye stopped its tasks:
//     its attempts are lost at once.
//
// Gossip and the stream are two signals: a worker killed outright closes
// its stream at once, while gossip also catches a worker that hangs or is
// cut off.
func (t *leaderTerm) membershipLoop() {
	changed := t.s.gossip.workers.subscribe()
	defer t.s.gossip.workers.unsubscribe(changed)
	tick := time.NewTicker(membersInterval)
	defer tick.Stop()
	for {
		t.reconcileNodes()
		select {
		case <-t.ctx.Done():
			return
		case <-changed:
		case <-t.members:
		case <-tick.C:
		}
	}
}

func (t *leaderTerm) reconcileNodes() {
	now := time.Now()
	nodes := make(map[string]fsm.NodeInfo)
	for _, n := range t.s.fsm.Nodes() {
		nodes[n.ID] = n
	}
	t.mu.Lock()
	conns := maps.Clone(t.conns)
	lostAt := maps.Clone(t.lostAt)
	heardAt := maps.Clone(t.heardAt)
	goodbye := maps.Clone(t.goodbye)
	t.mu.Unlock()

	var ups []*workerConn
	for _, id := range slices.Sorted(maps.Keys(conns)) {
		c := conns[id]
		if !c.isReady() {
			continue
		}
		m, ok := t.s.gossip.workers.get(id)
		if !ok || m.State != memberAlive {
			t.warnOnce(id, "not-in-gossip", "a worker is connected but not alive in the gossip pool; its node stays down until it is (check --join and the gossip key)")
			continue
		}
		if n, ok := nodes[id]; ok && n.Up && sameAdvert(n, c) {
			continue
		}
		ups = append(ups, c)
	}
	t.nodesUp(ups)

	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[id]
		if !n.Up {
			continue
		}
		reason := t.downReason(id, now, conns[id], lostAt, goodbye)
		if reason == "" {
			continue
		}
		_, left := goodbye[id]
		// A worker that said goodbye has stopped its tasks; any other may
		// still run them until it fences them.
		t.nodeDown(id, reason, t.failedAt(id, conns[id], heardAt), !left)
		if c := conns[id]; c != nil {
			c.close("node " + id + " was marked down: " + reason)
		}
	}

	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[id]
		if n.Running == 0 || conns[id] != nil {
			continue
		}
		if _, left := goodbye[id]; left && n.Up {
			continue // lost with the node going down above
		}
		anchor, ok := heardAt[id]
		if !ok || anchor.Before(t.started) {
			// This leader never heard the worker: it may have been in
			// contact with the previous leader until this term started.
			anchor = t.started
		}
		if now.Sub(anchor) < t.lossTimeout() {
			continue
		}
		fenced := anchor.Add(t.fenceBound(id))
		reason := fmt.Sprintf("its worker has not been heard for %v, so it has fenced its tasks (worker_loss_timeout %v)", now.Sub(anchor).Round(time.Millisecond), t.lossTimeout())
		t.nodeDown(id, reason, ledger.Time(fenced.UnixNano()), false)
	}
}

// lossTimeout is WorkerLossTimeout.
func (t *leaderTerm) lossTimeout() time.Duration { return time.Duration(t.s.cfg.WorkerLossTimeout) }

// fenceBound is how long after its last contact node's worker has surely
// killed its attempts: what its hello in this term said, or else the
// longest any worker is allowed.
func (t *leaderTerm) fenceBound(node string) time.Duration {
	t.mu.Lock()
	d, ok := t.fencedWithin[node]
	t.mu.Unlock()
	if !ok {
		return t.lossTimeout() - fenceMargin
	}
	return d
}

// downReason says why an up node must go down now, or "" when it stays up.
func (t *leaderTerm) downReason(id string, now time.Time, c *workerConn, lostAt map[string]time.Time, goodbye map[string]string) string {
	if r, ok := goodbye[id]; ok {
		return "its worker shut down (" + r + ")"
	}
	if m, ok := t.s.gossip.workers.get(id); ok {
		switch m.State {
		case memberLeft:
			return "its worker left the gossip pool"
		case memberFailed:
			return "the gossip pool declared its worker dead"
		}
	}
	if c != nil {
		return ""
	}
	if at, ok := lostAt[id]; ok {
		if now.Sub(at) > workerStreamGrace {
			return fmt.Sprintf("its worker's stream to the leader ended %v ago and it has not reconnected", now.Sub(at).Round(time.Millisecond))
		}
		return ""
	}
	if now.Sub(t.started) > workerTakeoverGrace {
		return fmt.Sprintf("its worker has not connected to the new leader within %v", workerTakeoverGrace)
	}
	return ""
}

// failedAt is when a node going down was last known alive: its worker's
// last message, or when gossip declared it dead; zero when its worker is
// evidently alive (its stream is up) or nothing is known.
func (t *leaderTerm) failedAt(id string, c *workerConn, heardAt map[string]time.Time) ledger.Time {
	if c != nil {
		return 0
	}
	if at, ok := heardAt[id]; ok {
		return ledger.Time(at.UnixNano())
	}
	if m, ok := t.s.gossip.workers.get(id); ok && m.State != memberAlive {
		return ledger.Time(m.Since.UnixNano())
	}
	return 0
}

// sameAdvert reports whether the ledger's node is what the worker
// advertises (resources the cluster does not know are not compared).
func sameAdvert(n fsm.NodeInfo, c *workerConn) bool {
	ad := c.advert
	if n.Class != ad.GetNodeClass() || n.Account != ad.GetAccount() || n.Address != ad.GetAddress() || n.Confinement != ad.GetConfinement() {
		return false
	}
	for name, q := range n.Capacity {
		if ad.GetResources()[name] != q {
			return false
		}
	}
	return true
}

// nodesUp marks the nodes of conns up, up to maxNodesUpInFlight at once:
// concurrent proposals share Raft entries (group commit), so that a
// thousand workers joining together are up in a few dozen commits, not a
// thousand in series. It returns when all are done.
func (t *leaderTerm) nodesUp(conns []*workerConn) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxNodesUpInFlight)
	for _, c := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t.nodeUp(c)
		})
	}
	wg.Wait()
}

// maxNodesUpInFlight bounds nodesUp's concurrent proposals.
const maxNodesUpInFlight = 64

func (t *leaderTerm) nodeUp(c *workerConn) {
	ad := c.advert
	res, err := proposeFor[*fsm.NodeResult](t.ctx, t.s, &fsm.NodeUp{
		ID: c.node, Capacity: ad.GetResources(), Class: ad.GetNodeClass(), Account: ad.GetAccount(), Address: ad.GetAddress(),
		Confinement: ad.GetConfinement(),
	})
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("cannot mark a node up yet", "node", c.node, "error", err)
		}
		return
	}
	t.log.Info("node up", "node", c.node, "capacity", res.Node.Capacity, "class", res.Node.Class, "account", res.Node.Account)
	if len(res.Ignored) > 0 {
		t.warnOnce(c.node, "ignored-resources", fmt.Sprintf("the node advertises resources the cluster does not know: %v; an admin can add them with the cluster settings (add_resources)", res.Ignored))
	}
	kick(t.schedule)
}

// nodeDown marks a node down, and unless keep loses its running attempts,
// charged up to failedAt.
func (t *leaderTerm) nodeDown(id, reason string, failedAt ledger.Time, keep bool) {
	res, err := proposeFor[*fsm.NodeResult](t.ctx, t.s, &fsm.NodeDown{ID: id, Reason: reason, FailedAt: failedAt, KeepAttempts: keep})
	if err != nil {
		if t.ctx.Err() == nil {
			t.log.Warn("cannot mark a node down yet", "node", id, "reason", reason, "error", err)
		}
		return
	}
	t.mu.Lock()
	delete(t.lostAt, id)
	delete(t.goodbye, id)
	if !keep {
		// Kept while the attempts wait to be lost: it is when the loss
		// timeout counts from.
		delete(t.heardAt, id)
	}
	t.mu.Unlock()
	if keep {
		t.log.Info("node down; its running attempts are lost if its worker stays unreachable", "node", id, "reason", reason,
			"running", res.Node.Running, "loss_timeout", t.lossTimeout())
	} else {
		t.log.Info("node down", "node", id, "reason", reason, "attempts_lost", res.Lost)
	}
	kick(t.schedule)
}

// warnOnce logs a problem with a node the first time it is seen, and again
// only after the node's problem changed.
func (t *leaderTerm) warnOnce(node, kind, msg string) {
	t.mu.Lock()
	seen := t.warned[node] == kind
	t.warned[node] = kind
	t.mu.Unlock()
	if !seen {
		t.log.Warn(msg, "node", node)
	}
}
