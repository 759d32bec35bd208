package fsm

import (
	"slices"

	"github.com/longfair/longfair/ledger"
)

// NodeUp declares a node up with its capacity, or updates an up node.
// Account, when set, is the account that contributed the node.
type NodeUp struct {
	// legacy marks an entry of the version before whole units: its
	// capacity is kept as logged, not rounded down (see SubmitJob.legacy).
	legacy bool

	ID       string             `json:"id"`
	Capacity map[string]float64 `json:"capacity"`
	Class    string             `json:"class,omitempty"`
	Account  string             `json:"account,omitempty"`
	Address  string             `json:"address,omitempty"`
	// Confinement is how the node's worker holds tasks to their demand
	// ("cgroup-v1", "cgroup-v2", "unconfined"; empty: not said).
	Confinement string `json:"confinement,omitempty"`
}

func (*NodeUp) Type() CommandType { return TypeNodeUp }

func (c *NodeUp) validate(r rules) *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	if len(c.Capacity) > MaxResources {
		return invalid("node capacity names %d resources: a cluster has at most %d", len(c.Capacity), MaxResources)
	}
	if err := checkQuantities("capacity", c.Capacity); err != nil {
		return err
	}
	if err := r.text("node class", c.Class, maxNameLength); err != nil {
		return err
	}
	if c.Account != "" {
		if err := checkName("contributing account", c.Account); err != nil {
			return err
		}
	}
	if err := r.text("node address", c.Address, maxNodeIDLength); err != nil {
		return err
	}
	return r.text("node confinement", c.Confinement, maxNameLength)
}

// NodeDown declares a node down: its running tasks are lost, charged up to
// now, and requeued while they have attempts left. FailedAt, when set and
// earlier, is when the node's attempts surely stopped running (the leader
// knows when its worker fenced them): the lost attempts are charged up to
// then, not for the time it took to notice the failure.
//
// With KeepAttempts the node only goes down: nothing new is placed there,
// and its running attempts stay active, since an unreachable worker may
// still run them until it fences them. A later NodeDown without
// KeepAttempts, on the node already down, loses them.
type NodeDown struct {
	ID           string      `json:"id"`
	Reason       string      `json:"reason,omitempty"`
	FailedAt     ledger.Time `json:"failed_at,omitempty"`
	KeepAttempts bool        `json:"keep_attempts,omitempty"`
}

func (*NodeDown) Type() CommandType { return TypeNodeDown }

func (c *NodeDown) validate(r rules) *Error {
	if err := checkNodeID("node id", c.ID); err != nil {
		return err
	}
	if c.FailedAt < 0 {
		return invalid("node-down failed_at is %d: give a time after 1970, or none", c.FailedAt)
	}
	return r.text("reason", c.Reason, MaxNoteBytes)
}

type nodeRecord struct {
	ID       string        `json:"id"`
	Up       bool          `json:"up"`
	Capacity ledger.Vector `json:"capacity"`
	Class    string        `json:"class,omitempty"`
	Account  string        `json:"account,omitempty"`
	Address  string        `json:"address,omitempty"`
	Since    ledger.Time   `json:"since"`
	// Confinement as the node's worker last advertised it.
	Confinement string `json:"confinement,omitempty"`
}

// NodeResult is the result of NodeUp and NodeDown.
type NodeResult struct {
	Node NodeInfo
	// Ignored lists advertised resources the cluster does not know; an
	// admin can add them with UpdateSettings.AddResources.
	Ignored []string
	// Lost is how many running tasks NodeDown marked lost.
	Lost int
}

// nodeUp applies NodeUp; the result is a *NodeResult. Re-announcing a node
// exactly as it is changes nothing.
func (b *batch) nodeUp(c *NodeUp, t ledger.Time) (any, error) {
	st := b.st
	n := len(st.settings.Resources)
	capacity := ledger.NewVector(n)
	var ignored []string
	for _, name := range sortedKeys(c.Capacity) {
		k := slices.Index(st.settings.Resources, name)
		if k < 0 {
			ignored = append(ignored, name)
			continue
		}
		// A node offers whole units (15.7 GiB is 16076 MiB): demands are
		// whole units too, so its free vector stays exact (state.take).
		capacity[k] = st.resourceUnits()[k].Floor(c.Capacity[name])
		if c.legacy {
			capacity[k] = c.Capacity[name]
		}
	}
	rec := nodeRecord{ID: c.ID, Up: true, Capacity: capacity, Class: c.Class, Account: c.Account, Address: c.Address, Since: t, Confinement: c.Confinement}
	nd, exists := st.nodes[c.ID]
	if exists && nd.rec.Up {
		rec.Since = nd.rec.Since
		if sameNode(nd.rec, rec) {
			return &NodeResult{Node: st.nodeInfo(nd), Ignored: ignored}, nil
		}
	}
	if err := putJSON(b.bucket(bucketNodes), []byte(rec.ID), &rec); err != nil {
		return nil, err
	}
	if !exists {
		nd = &nodeState{tasks: make(map[taskID]struct{})}
		st.nodes[rec.ID] = nd
	}
	wasUp := exists && nd.rec.Up
	nd.rec = rec
	if !wasUp {
		if err := b.recordTransition(nd, NodeTransition{At: t, Up: true}); err != nil {
			return nil, err
		}
	}
	st.shapes = nil // the node's capacity may have changed
	nd.free, nd.queued = capacity.Clone(), nil
	for _, id := range sortedTaskIDs(nd.tasks) {
		st.hold(nd, st.running[id])
	}
	b.all = true
	return &NodeResult{Node: st.nodeInfo(nd), Ignored: ignored}, nil
}

func sameNode(a, b nodeRecord) bool {
	return a.ID == b.ID && a.Up == b.Up && sameBits(a.Capacity, b.Capacity) && a.Class == b.Class &&
		a.Account == b.Account && a.Address == b.Address && a.Since == b.Since && a.Confinement == b.Confinement
}

// nodeDown applies NodeDown; the result is a *NodeResult. Unless
// KeepAttempts, its running tasks are lost: charged up to now (or
// FailedAt) and requeued while they have attempts left. A node that is
// already down stays down; only its attempts can still be lost. (Before
// KeepAttempts a down node never had attempts, so old log entries apply
// as they always did.)
func (b *batch) nodeDown(c *NodeDown, t ledger.Time) (any, error) {
	st := b.st
	nd, ok := st.nodes[c.ID]
	if !ok {
		return nil, notFound("node %q is unknown: it never came up", c.ID)
	}
	if !nd.rec.Up && (c.KeepAttempts || len(nd.tasks) == 0) {
		return &NodeResult{Node: st.nodeInfo(nd)}, nil
	}
	lost := 0
	if !c.KeepAttempts {
		for _, id := range sortedTaskIDs(nd.tasks) {
			a := st.running[id]
			until := t
			if c.FailedAt > 0 {
				until = c.FailedAt
			}
			if err := b.loseAttemptUntil(st.jobs[id.job], a, until, t); err != nil {
				return nil, err
			}
			lost++
		}
	}
	if !nd.rec.Up {
		return &NodeResult{Node: st.nodeInfo(nd), Lost: lost}, nil
	}
	rec := nd.rec
	rec.Up, rec.Since = false, t
	if err := putJSON(b.bucket(bucketNodes), []byte(rec.ID), &rec); err != nil {
		return nil, err
	}
	nd.rec = rec
	if err := b.recordTransition(nd, NodeTransition{At: t, Lost: lost}); err != nil {
		return nil, err
	}
	b.all = true
	return &NodeResult{Node: st.nodeInfo(nd), Lost: lost}, nil
}
