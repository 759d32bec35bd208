package server

import (
	"crypto/rand"
	"encoding/hex"
	"slices"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// Parallel tasks on the worker streams. Every node of a parallel task
// gets the task's assignment, with the node list, its own place in it
// (node_index), the workers' addresses and the task's exec credential.
// The head (index 0) runs the command and reports its start and end like
// any task; the other nodes — members — hold their share of the
// allocation and run what `longfair exec` starts there, and may report
// only a loss (their fence, which loses the task on all its nodes). When
// the ledger ends the task — its head reported the end, or a node was
// lost — the sweep stops it on every node whose worker did not report
// that end itself (stopEndedParallel): the head of a task that lost a
// member, and every member. The ledger no longer holds it, so nothing
// they run is reported or charged again.

// taskNodes lists the nodes an active attempt holds, its head first.
func taskNodes(ti fsm.TaskInfo) []string {
	if len(ti.Nodes) > 0 {
		return ti.Nodes
	}
	return []string{ti.Node}
}

// newCredential is a parallel task's exec secret: 32 random bytes, hex.
// The leader makes it as it places the task (the FSM, which must not read
// a random source, only stores it).
func newCredential() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// addCredentials gives every parallel placement of an Assign its secret.
func addCredentials(cmd *fsm.Assign) {
	for i := range cmd.Placements {
		if len(cmd.Placements[i].Nodes) > 1 {
			cmd.Placements[i].Credential = newCredential()
		}
	}
}

// addAllocation fills in a parallel task's nodes, node's place among them,
// the workers' addresses and the credential. It reports false when the
// ledger no longer holds the attempt on node (it ended meanwhile): there
// is nothing to send.
func (t *leaderTerm) addAllocation(a *longfairv1.Assignment, k attemptKey, node string) bool {
	ti, err := t.s.fsm.Attempt(k.job, k.task, k.attempt)
	if err != nil {
		t.log.Error("cannot read a placed parallel attempt; its workers will be sent it on the next sweep", "job", k.job, "task", k.task, "error", err)
		return false
	}
	at := slices.Index(ti.Nodes, node)
	if at < 0 {
		return false
	}
	a.Nodes, a.NodeIndex, a.Credential = ti.Nodes, int32(at), ti.Credential
	a.NodeAddresses = t.s.fsm.NodeAddresses(ti.Nodes)
	return true
}

// isMember reports whether the worker holds a node of parallel task k
// that it does not head.
func (c *workerConn) isMember(k attemptKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parallel[k]
}

// stopEndedParallel stops, on a worker, parallel tasks the ledger ended
// without this worker reporting it: their head exited, or one of their
// nodes was lost.
func stopEndedParallel(c *workerConn, ended []*longfairv1.AttemptRef) {
	if len(ended) == 0 {
		return
	}
	c.enqueue(&longfairv1.LeaderMessage{Msg: &longfairv1.LeaderMessage_Kill{Kill: &longfairv1.Kill{
		Attempts: ended, Report: false,
		Reason: "the parallel task ended: its head node's command exited, or one of its nodes was lost",
	}}})
}
