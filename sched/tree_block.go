package sched

import "github.com/longfair/longfair/ledger"

// Blocking. Both papers call a node schedulable when its next task's demand
// fits in what the cluster has left in total (DFF: D_i ≤ R − C) and blocked
// otherwise. Free resources only shrink within a pass, so a blocked account
// stays blocked; to find the accounts a placement blocks without testing
// every account, each resource keeps a max-heap of the unblocked accounts'
// next-task demands of it, and a placement pops the demands that no longer
// fit. A task that fits the totals but no single node (fragmentation) is
// found when the account's turn comes, and blocks it then.

// needEntry is one account's next-task demand of one resource.
type needEntry struct {
	need float64
	leaf int32
}

// needHeap is a max-heap of needEntry by need. Entries go stale when an
// account moves on to its next job or is blocked; they are dropped when they
// surface.
type needHeap []needEntry

func (h *needHeap) push(e needEntry) {
	*h = append(*h, e)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].need >= s[i].need {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *needHeap) pop() needEntry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && s[l].need > s[m].need {
			m = l
		}
		if r := l + 1; r < len(s) && s[r].need > s[m].need {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
	return top
}

// fitsFree reports whether demand fits in what the cluster has left.
func (t *tree) fitsFree(demand ledger.Vector) bool { return t.free.Fits(demand) }

// watch blocks leaf if its next task no longer fits the cluster's free
// resources, and otherwise files its demands in the per-resource heaps. It
// reports whether the leaf is blocked.
func (t *tree) watch(leaf int32) bool {
	nd := &t.nodes[leaf]
	head := t.heads(int(nd.account))
	if head == nil || !t.fitsFree(head) {
		nd.blocked = true
		return true
	}
	for j, d := range head {
		if d > 0 {
			t.needs[j].push(needEntry{need: d, leaf: leaf})
		}
	}
	return false
}

// newlyBlocked pops, for every resource the last placement took, the
// accounts whose next task no longer fits, marks them blocked and appends
// them to t.justBlocked.
func (t *tree) newlyBlocked(demand ledger.Vector) {
	for j, d := range demand {
		if d <= 0 {
			continue
		}
		h := &t.needs[j]
		for len(*h) > 0 && (*h)[0].need > t.free[j]+1e-9 {
			e := h.pop()
			nd := &t.nodes[e.leaf]
			if nd.blocked {
				continue
			}
			if head := t.heads(int(nd.account)); head == nil || head[j] != e.need {
				continue // stale: the account has moved on to another job
			}
			nd.blocked = true
			t.justBlocked = append(t.justBlocked, e.leaf)
		}
	}
}
