package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// rankKey mirrors the engine's ordering (sched/rank.go): lexicographic over
// class, then a, b, c; smaller goes first.
type rankKey struct {
	account string
	class   int
	a, b, c float64
}

const (
	classStarving = iota
	classSharingLoss
	classNormal
)

// policyRule says in words how a policy orders accounts.
func policyRule(policy string) (string, bool) {
	switch policy {
	case "hmrf":
		return "accounts under sharing loss (β < 1) go first, lowest β first; then the lowest accumulated usage for their weight", true
	case "drf":
		return "the account whose current dominant share for its weight is smallest goes first", true
	case "af":
		return "the account whose current aggregate share for its weight is smallest goes first", true
	case "ltdrf":
		return "the account whose accumulated dominant share for its weight is smallest goes first", true
	case "ltaf":
		return "the account whose accumulated aggregate share for its weight is smallest goes first", true
	case "ltrf":
		return "the account with the least accumulated usage of the fairness resource for its weight goes first", true
	case "static":
		return "each account runs only in its own partition of the cluster", true
	}
	return "", false
}

// accountKey computes an account's rank key from its report row. w is its
// weight over the sum of weights; capacity is the cluster's.
func accountKey(policy, ltrf string, a *longfairv1.AccountFairness, w float64, capacity map[string]float64, starving bool) (rankKey, bool) {
	k := rankKey{account: a.GetAccount(), class: classNormal}
	if starving {
		k.class = classStarving
	}
	known := true
	switch policy {
	case "drf", "static", "fawkes", "qknobler":
		k.a = dominant(a.GetAllocation(), capacity, w)
	case "af":
		k.a = aggregate(a.GetAllocation(), capacity, w)
	case "ltdrf":
		k.a = dominant(a.GetUsage(), capacity, w)
	case "ltaf":
		k.a = aggregate(a.GetUsage(), capacity, w)
	case "ltrf":
		k.a = shareOf(a.GetUsage(), capacity, w, ltrf)
	case "hmrf":
		agg, dom := aggregate(a.GetUsage(), capacity, w), dominant(a.GetUsage(), capacity, w)
		if a.GetHasBeta() && a.GetBeta() < 1 {
			if !starving {
				k.class = classSharingLoss
			}
			k.a, k.b, k.c = a.GetBeta(), agg, dom
		} else {
			k.a, k.b = agg, dom
		}
	default:
		// Policies whose order needs more than the report holds (account
		// trees, queues): order by β, which every long-term policy
		// raises for the accounts that lag.
		known = false
		k.a = math.Inf(1)
		if a.GetHasBeta() {
			k.a = a.GetBeta()
		}
	}
	return k, known
}

func shareOf(v, capacity map[string]float64, w float64, r string) float64 {
	if capacity[r] <= 0 || w <= 0 {
		return 0
	}
	return v[r] / (capacity[r] * w)
}

func dominant(v, capacity map[string]float64, w float64) float64 {
	s := 0.0
	for r := range v {
		s = math.Max(s, shareOf(v, capacity, w, r))
	}
	return s
}

func aggregate(v, capacity map[string]float64, w float64) float64 {
	s := 0.0
	for r := range v {
		s += shareOf(v, capacity, w, r)
	}
	return s
}

func (k rankKey) compare(o rankKey) int {
	return cmp.Or(cmp.Compare(k.class, o.class), cmp.Compare(k.a, o.a), cmp.Compare(k.b, o.b), cmp.Compare(k.c, o.c), cmp.Compare(k.account, o.account))
}

// explainRank places the job's account among the accounts with pending
// tasks.
func explainRank(e *explanation, s *longfairv1.Settings, r *longfairv1.FairnessReport) {
	total := 0.0
	for _, a := range r.GetAccounts() {
		total += a.GetWeight()
	}
	timeout := s.GetTimeout().AsDuration()
	var keys []rankKey
	known := true
	var mine *longfairv1.AccountFairness
	for _, a := range r.GetAccounts() {
		if a.GetAccount() == e.Account {
			mine = a
			if a.GetHasBeta() {
				b := a.GetBeta()
				e.Beta = &b
			}
		}
		if a.GetPendingTasks() == 0 {
			continue
		}
		w := 0.0
		if total > 0 {
			w = a.GetWeight() / total
		}
		starving := timeout > 0 && a.GetWaiting().AsDuration() > timeout
		k, ok := accountKey(s.GetPolicy(), s.GetLtrfResource(), a, w, r.GetCapacity(), starving)
		known = known && ok
		keys = append(keys, k)
	}
	slices.SortFunc(keys, rankKey.compare)
	for i, k := range keys {
		if k.account == e.Account {
			e.Rank, e.Ranked = i+1, len(keys)
		}
	}
	rule, ok := policyRule(s.GetPolicy())
	if !known || !ok {
		rule = fmt.Sprintf("%s orders accounts by more than the fairness report shows; this rank orders them by β, lowest first", s.GetPolicy())
	}
	e.RankNote = rule
	if mine == nil || e.Rank == 0 {
		e.add("rank", "%s is not in the fairness report with pending tasks yet; under %s %s", e.Account, s.GetPolicy(), rule)
		return
	}
	beta := "no β yet (it has had no baseline to fall short of)"
	if mine.GetHasBeta() {
		beta = fmt.Sprintf("β %.3f", mine.GetBeta())
		if mine.GetBeta() < 1 {
			beta += ", under sharing loss"
		}
	}
	first := ""
	if e.Rank > 1 {
		first = fmt.Sprintf("; %s goes first now", keys[0].account)
	}
	e.add("rank", "%s ranks %d of %d accounts with pending tasks under %s (%s, weight %s of %s)%s: %s",
		e.Account, e.Rank, e.Ranked, s.GetPolicy(), beta, fmtNumber(mine.GetWeight()), fmtNumber(total), first, rule)
}

// explainTimeout says how close the account is to the starvation
// time-out, past which it goes before everyone.
func explainTimeout(e *explanation, s *longfairv1.Settings, r *longfairv1.FairnessReport, account string) {
	timeout := s.GetTimeout().AsDuration()
	if timeout <= 0 {
		e.add("time-out", "the starvation time-out is off ('longfair policy set --starvation-timeout 30m' turns it on)")
		return
	}
	for _, a := range r.GetAccounts() {
		if a.GetAccount() != account {
			continue
		}
		waited := a.GetWaiting().AsDuration()
		if waited > timeout {
			e.add("time-out", "%s has waited %s for an allocation, past the %s starvation time-out: it goes before every account that is not starving", account, fmtDur(waited), fmtDur(timeout))
		} else {
			e.add("time-out", "%s has waited %s of the %s starvation time-out; past it, it goes before every account that is not starving", account, fmtDur(waited), fmtDur(timeout))
		}
	}
}

func fmtNumber(x float64) string {
	return fmt.Sprintf("%.4g", x)
}
