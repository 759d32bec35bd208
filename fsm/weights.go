package fsm

import (
	"github.com/longfair/longfair/ledger"
)

// WeightSource says where an account's effective weight comes from.
type WeightSource string

// Weight sources, in order of precedence.
const (
	// WeightAdmin: an admin set the weight.
	WeightAdmin WeightSource = "admin"
	// WeightContribution: an admin set the contribution K_i; w_i = K_i.
	WeightContribution WeightSource = "contribution"
	// WeightNodes: w_i is the share of the cluster's capacity the account's
	// own up nodes make up, averaged over the resources the cluster has
	// (0 when it contributed none). Admin weights and contributions are
	// compared with these fractions, so give them on the same scale (0.25
	// for a quarter of the cluster).
	WeightNodes WeightSource = "nodes"
)

// recomputeWeights refreshes the capacity of the up nodes and every
// account's effective weight.
func (s *state) recomputeWeights() {
	n := len(s.settings.Resources)
	s.capacity = ledger.NewVector(n)
	contributed := make(map[string]ledger.Vector)
	for _, id := range sortedKeys(s.nodes) {
		nd := s.nodes[id]
		if !nd.rec.Up {
			continue
		}
		s.capacity.Add(nd.rec.Capacity)
		if nd.rec.Account != "" {
			if contributed[nd.rec.Account] == nil {
				contributed[nd.rec.Account] = ledger.NewVector(n)
			}
			contributed[nd.rec.Account].Add(nd.rec.Capacity)
		}
	}
	clear(s.weights)
	clear(s.weightFrom)
	s.totalWeight = 0
	for _, name := range s.accountNames {
		a := s.accounts[name]
		var w float64
		switch {
		case a.AdminWeight != nil:
			w, s.weightFrom[name] = *a.AdminWeight, WeightAdmin
		case a.Contribution != nil:
			w, s.weightFrom[name] = *a.Contribution, WeightContribution
		default:
			w, s.weightFrom[name] = capacityFraction(contributed[name], s.capacity), WeightNodes
		}
		s.weights[name] = w
		s.totalWeight += w
	}
}

// capacityFraction is the mean over resources the cluster has of part/whole.
func capacityFraction(part, whole ledger.Vector) float64 {
	if part == nil {
		return 0
	}
	sum, count := 0.0, 0
	for j, x := range whole {
		if x > 0 {
			sum += part[j] / x
			count++
		}
	}
	if count == 0 {
		return 0
	}
	return sum / float64(count)
}

// contributedBy sums the capacity of the up nodes an account contributed.
func (s *state) contributedBy(account string) ledger.Vector {
	v := ledger.NewVector(len(s.settings.Resources))
	for _, id := range sortedKeys(s.nodes) {
		if nd := s.nodes[id]; nd.rec.Up && nd.rec.Account == account {
			v.Add(nd.rec.Capacity)
		}
	}
	return v
}

// share is an account's non-sharing partition S_i = R·w_i/Σw; when no
// account has a weight, all count as equal (as the policy engine does).
func (s *state) share(account string) ledger.Vector {
	if s.totalWeight <= 0 {
		return ledger.Share(s.capacity, 1, float64(len(s.accountNames)))
	}
	return ledger.Share(s.capacity, s.weights[account], s.totalWeight)
}

// baselineRate is what the account would run alone in its partition: the
// largest prefix of its active tasks, running first and then pending in
// queue order, that fits in its share. Only the prefix that can matter is
// gathered — up to the first group that overflows the share — so the cost
// does not grow with a long queue.
func (s *state) baselineRate(account string) ledger.Vector {
	share := s.share(account)
	used := ledger.NewVector(len(share))
	var groups []ledger.TaskGroup
	add := func(j *jobRecord, count int64) bool {
		groups = append(groups, ledger.TaskGroup{Demand: j.Demand, Count: int(count)})
		used.AddScaled(j.Demand, float64(count))
		return share.Fits(used)
	}
	fits := true
	for _, id := range s.runningJobs[account] {
		if fits = add(s.jobs[id], s.jobs[id].Running); !fits {
			break
		}
	}
	if fits {
		for _, id := range s.accountJobs[account] {
			if j := s.jobs[id]; j.pending() > 0 && !add(j, j.pending()) {
				break
			}
		}
	}
	return ledger.NonSharingRate(share, groups)
}
