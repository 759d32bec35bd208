package sched

import (
	"fmt"
	"strings"

	"github.com/longfair/longfair/ledger"
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

// Policies lists every policy the engine knows, in the order help shows them
// (the order of policyTable).
func Policies() []Policy {
	rows := policyTable()
	out := make([]Policy, len(rows))
	for i := range rows {
		out[i] = rows[i].name
	}
	return out
}

// ParsePolicy turns a name into a Policy, or says which names are valid.
func ParsePolicy(name string) (Policy, error) {
	if _, ok := lookupPolicy(Policy(name)); ok {
		return Policy(name), nil
	}
	names := make([]string, 0, len(Policies()))
	for _, p := range Policies() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("unknown policy %q: valid policies are %s", name, strings.Join(names, ", "))
}

// A policyRow is everything the engine knows of one policy. Each policy
// family's file returns its rows (rank.go: the progressive-filling
// policies; qknobler.go, bpf.go, tree_pass.go, fawkes_policy.go: the
// policies with a pass or a cap of their own), and policyTable lists them.
// A field left nil is "as progressive filling does".
type policyRow struct {
	name Policy
	// key ranks an account in the progressive-filling pass (engine.go),
	// smaller first, from its fairness state projected to the end of the
	// quantum; nil for a policy whose own pass always ranks.
	key func(f *fairness, capacity ledger.Vector, s *Settings) rankKey
	// prepare runs after the pass's set-up and before any pass: the caps
	// a policy puts on accounts (static's and fawkes's partitions).
	prepare func(e *Engine, v *View)
	// pass, when set, runs the policy's own pass and reports true; false
	// leaves the pass to progressive filling (qknobler at ρ = 1 is drf).
	pass func(e *Engine, v *View) bool
	// capFree: the policy keeps no account from a task that fits a node's
	// free resources (no partition, admission or limit), so a pass can
	// place something only where a node freed room or a new task arrived;
	// the simulator skips the other passes (sim's mayPlace).
	capFree bool
	// longTerm: the policy ranks accounts by what they have used over the
	// fairness window, not by what they run now (LongTerm).
	longTerm bool
	// rule says in words how the policy orders accounts, for explain.
	rule string
	// inexact reports whether explain cannot rank by the policy's own key
	// under these settings (then it ranks by β and says so).
	inexact func(s *Settings) bool
	// settings checks the policy's own settings fields; active tells
	// whether it is the policy in force (a stored value is checked even
	// when it is not, so that switching to it cannot fail later).
	settings func(s *Settings, resources []string, active bool) error
}

// policyTable is the engine's policies, one row each, in the order help
// shows them. Adding a policy is a file (its key or pass, its settings and
// their checks, its golden scenario) and one row here.
func policyTable() []policyRow {
	return append(fillingPolicies(),
		qknoblerPolicy(),
		bpfPolicy(BPF), bpfPolicy(SP),
		treePolicy(HDRF), treePolicy(DFF),
		fawkesPolicy(),
	)
}

// lookupPolicy returns the row of policy p.
func lookupPolicy(p Policy) (policyRow, bool) {
	for _, r := range policyTable() {
		if r.name == p {
			return r, true
		}
	}
	return policyRow{}, false
}

// CapFree reports whether the policy keeps no account from a task that
// fits some node's free resources (see policyRow.capFree): then a pass can
// place something only where a node freed room or a new task arrived.
func (p Policy) CapFree() bool {
	r, ok := lookupPolicy(p)
	return ok && r.capFree
}

// LongTerm reports whether the policy ranks accounts by what they have
// used over the fairness window (their accumulated usage), not by what
// they run at the moment: the policies a look-ahead pass may fill queues
// for (LookAheadView).
func (p Policy) LongTerm() bool {
	r, ok := lookupPolicy(p)
	return ok && r.longTerm
}

// PlacementStrategy chooses among the nodes a task fits on; see package place.
type PlacementStrategy = place.Strategy

// Placement strategies, re-exported from package place.
const (
	Affinity = place.Affinity
	BestFit  = place.BestFit
	Spread   = place.Spread
)
