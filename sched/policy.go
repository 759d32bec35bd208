package sched

import (
	"fmt"
	"strings"

	"github.com/longfair/longfair/sched/place"
)

// Policy names an allocation policy.
type Policy string

// The policies of the H-MRF paper and their baselines.
const (
	DRF    Policy = "drf"    // dominant resource fairness, memoryless
	AF     Policy = "af"     // asset fairness, memoryless
	LTDRF  Policy = "ltdrf"  // long-term DRF (paper §5.1)
	LTAF   Policy = "ltaf"   // long-term asset fairness (paper §5.2)
	HMRF   Policy = "hmrf"   // hybrid multi-resource fairness (Algorithm 1)
	LTRF   Policy = "ltrf"   // single-resource long-term fairness
	Static Policy = "static" // non-sharing partitions R·w_i/Σw
)

// The other papers' policies.
const (
	QKnobler Policy = "qknobler" // fairness up to ρ of DRF's share, then efficiency (qknobler.go)
	BPF      Policy = "bpf"      // bounded priority fairness for latency and throughput queues (bpf.go)
	SP       Policy = "sp"       // strict priority for latency queues, the baseline of bpf (bpf.go)
)

// The policies of the DFF and FAWKES papers. hdrf and dff share the cluster
// over the account tree (View.Groups, Account.Group); fawkes confines each
// account to the partition FAWKES weighting gives it (Account.Share).
const (
	HDRF   Policy = "hdrf"   // hierarchical DRF (Bhattacharya et al.), the baseline DFF improves on
	DFF    Policy = "dff"    // dominant fairness fairness (Wang et al., Algorithms 1–3)
	Fawkes Policy = "fawkes" // FAWKES partitions sized by dynamic weights (Ghiţ et al.)
)

// Policies lists every policy the engine knows, in the order help shows them.
func Policies() []Policy {
	return []Policy{HMRF, LTDRF, LTAF, DRF, AF, LTRF, Static, QKnobler, BPF, SP, HDRF, DFF, Fawkes}
}

// ParsePolicy turns a name into a Policy, or says which names are valid.
func ParsePolicy(name string) (Policy, error) {
	for _, p := range Policies() {
		if string(p) == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(Policies()))
	for _, p := range Policies() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("unknown policy %q: valid policies are %s", name, strings.Join(names, ", "))
}

// PlacementStrategy chooses among the nodes a task fits on; see package place.
type PlacementStrategy = place.Strategy

// Placement strategies, re-exported from package place.
const (
	Affinity = place.Affinity
	BestFit  = place.BestFit
	Spread   = place.Spread
)
