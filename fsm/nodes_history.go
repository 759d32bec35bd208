package fsm

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// A node's up/down history: the dashboard's nodes page shows when each
// node came up, went down and came back, and how many running tasks it
// lost each time. Like the fairness history (history.go) it is recorded
// by the applied NodeUp and NodeDown commands at their times, kept in the
// history bucket (so in snapshots, and out of the state digest: a report
// of the state, not state), and bounded: the last maxNodeTransitions of
// each node.

// maxNodeTransitions bounds each node's history.
const maxNodeTransitions = 32

// NodeTransition is a node coming up or going down.
type NodeTransition struct {
	At ledger.Time `json:"at"`
	Up bool        `json:"up,omitempty"`
	// Lost is how many running tasks the node lost as it went down.
	Lost int `json:"lost,omitempty"`
}

// nodeHistoryKey is a node's key in the history bucket; the prefix keeps
// it apart from the fairness history's three-byte slot keys.
func nodeHistoryKey(id string) []byte { return append([]byte("node:"), id...) }

// recordTransition appends tr to node nd's history, in memory and in the
// history bucket.
func (b *batch) recordTransition(nd *nodeState, tr NodeTransition) error {
	h := append(nd.history, tr)
	if len(h) > maxNodeTransitions {
		h = slices.Clone(h[len(h)-maxNodeTransitions:])
	}
	nd.history = h
	v, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode node %s's history: %w", nd.rec.ID, err)
	}
	if err := b.bucket(bucketHistory).Put(nodeHistoryKey(nd.rec.ID), v); err != nil {
		return fmt.Errorf("store node %s's history: %w", nd.rec.ID, err)
	}
	return nil
}

// loadNodeHistory reads every known node's history.
func (s *state) loadNodeHistory(tx *bolt.Tx) {
	b := tx.Bucket(bucketHistory)
	if b == nil {
		return
	}
	for id, nd := range s.nodes {
		if v := b.Get(nodeHistoryKey(id)); v != nil {
			// A history that does not decode is a report lost, not state:
			// the node starts a new one.
			_ = json.Unmarshal(v, &nd.history)
		}
	}
}
