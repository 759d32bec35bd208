package sched

import (
	"fmt"
	"math"
)

// fawkesPartitions confines every account to its FAWKES partition for the
// pass (the fill then keeps each account's running tasks inside it, as
// under static): R × Account.Share. Until the weighting has given anyone a
// share — a cluster that has just switched to fawkes — the accounts with
// work (tasks pending or running) split the cluster by Weight, as FAWKES's
// equal-shares baseline would by weight. An account whose partition shrank
// below what it runs keeps its tasks (longfair does not preempt) and starts
// no more until it is back inside; an account that holds nothing may start
// one task whatever its partition.
func (e *Engine) fawkesPartitions(v *View) {
	given := false
	for a := range v.Accounts {
		given = given || v.Accounts[a].Share > 0
	}
	total, active := 0.0, 0
	if !given {
		for a := range v.Accounts {
			if e.hasWork(v, a) {
				total += v.Accounts[a].Weight
				active++
			}
		}
	}
	e.partition = resize(e.partition, len(v.Accounts))
	for a := range v.Accounts {
		acct := &v.Accounts[a]
		s := acct.Share
		if !given && e.hasWork(v, a) {
			s = acct.Weight / total
			if total <= 0 {
				s = 1 / float64(active)
			}
		}
		p := resize(e.partition[a], len(e.capacity))
		for j, c := range e.capacity {
			p[j] = c * s
		}
		// An account that holds nothing may always start one task, even
		// one larger than its partition: otherwise a partition smaller
		// than a task would hold the account back for ever (FAWKES's
		// tasks are one slot and never have this problem).
		if k := e.cursor[a].job; k < len(acct.Queue) && acct.Running.IsZero() {
			for j, d := range acct.Queue[k].Demand {
				p[j] = max(p[j], d)
			}
		}
		e.partition[a] = p
	}
	e.share = e.partition
}

// hasWork reports whether account a has tasks running, or pending that
// some up node can hold (prepare put its cursor on the first of them): a
// job no node can hold gets its account no partition.
func (e *Engine) hasWork(v *View, a int) bool {
	return !v.Accounts[a].Running.IsZero() || e.cursor[a].job < len(v.Accounts[a].Queue)
}

// validateShares checks the fawkes shares: fractions of the cluster that
// together fit in it.
func validateShares(v *View) error {
	total := 0.0
	for i := range v.Accounts {
		a := &v.Accounts[i]
		if math.IsNaN(a.Share) || a.Share < 0 || a.Share > 1 {
			return fmt.Errorf("account %q has fawkes share %v: a share is a fraction of the cluster in [0, 1]", a.Name, a.Share)
		}
		total += a.Share
	}
	if total > 1+1e-9 {
		return fmt.Errorf("fawkes shares add up to %v: the partitions cannot hold more than the whole cluster (at most 1)", total)
	}
	return nil
}

// fawkesPolicy is fawkes's row: drf's fill inside the partitions FAWKES
// weighting gives the accounts (fawkesPartitions), with the weighting's
// settings.
func fawkesPolicy() policyRow {
	return policyRow{
		name:    Fawkes,
		key:     drfKey,
		prepare: (*Engine).fawkesPartitions,
		rule:    "each account runs only inside the partition FAWKES weighting gave it; the account whose current dominant share for its weight is smallest goes first",
		settings: func(s *Settings, resources []string, _ bool) error {
			return s.Fawkes.Validate(resources)
		},
	}
}
