package sim

import (
	"fmt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Tree arranges a workload's accounts in a tree for hdrf and dff: the
// groups' weights and each account's parent group.
type Tree struct {
	// Groups are the inner nodes with their weights (paths such as "org"
	// or "org/group"; unlisted groups weigh 1).
	Groups []sched.Group
	// Parent is each account's group path, by account index; "" or a
	// short slice puts accounts directly under the root.
	Parent []string
}

// PaperResult is a replay's Result with what the other papers' policies
// add: FAWKES's discrimination of every account (for every policy), and
// under fawkes the weighting's intervals.
type PaperResult struct {
	*Result
	Discrimination Discrimination
	// Ticks are the fawkes weighting intervals; Resizes counts those that
	// changed the partitions.
	Ticks   []FawkesTick
	Resizes int
	// Partitions are the fawkes shares over time: every change, from
	// resizes and from accounts gaining or running out of work.
	Partitions []PartitionChange
}

// PartitionChange is the fawkes shares from Time on.
type PartitionChange struct {
	Time   ledger.Time
	Shares []float64
}

// RunPaper replays the workload like Run, with the accounts arranged in
// tree (nil for a flat tree), FAWKES weighting when the policy is fawkes
// (cfg.Settings.Fawkes says how), and the discrimination measured.
func RunPaper(w *Workload, tree *Tree, cfg Config) (*PaperResult, error) {
	if tree != nil && len(tree.Parent) > len(w.Accounts) {
		return nil, fmt.Errorf("account tree names parents for %d accounts, the workload has %d", len(tree.Parent), len(w.Accounts))
	}
	out := &PaperResult{}
	weights := make([]float64, len(w.Accounts))
	for i, a := range w.Accounts {
		weights[i] = a.Weight
	}
	isFawkes := cfg.Settings.Policy == sched.Fawkes
	disc := newDiscTracker(weights, isFawkes)
	var fw *fawkesReplay
	started := false
	h := replayHooks{
		setup: func(r *replay) {
			if tree != nil {
				r.view.Groups = tree.Groups
				for a, p := range tree.Parent {
					r.view.Accounts[a].Group = p
				}
			}
			if isFawkes {
				fw = newFawkesReplay(r, disc)
			}
		},
		settled: func(r *replay, t ledger.Time) bool {
			if fw == nil {
				for a := range r.accts {
					disc.setActive(a, r.activeAccount(a), t)
				}
				return false
			}
			if !started {
				fw.start(t)
				started = true
			}
			return fw.settled(r, t)
		},
		done: func(r *replay, res *Result) {
			usage := make([]ledger.Vector, len(res.Accounts))
			for a := range res.Accounts {
				usage[a] = res.Accounts[a].Usage
			}
			out.Discrimination = disc.result(res.End, usage, r.capacity)
			if fw != nil {
				out.Ticks, out.Partitions = fw.ticks, fw.changes
				for _, tk := range fw.ticks {
					if tk.Resized {
						out.Resizes++
					}
				}
			}
		},
	}
	if isFawkes {
		h.wake = func(r *replay) (ledger.Time, bool) {
			if !started {
				return 0, false
			}
			return fw.meter.NextTick(), true
		}
		h.woken = func(r *replay, t ledger.Time) bool { return fw.tick(r, t) }
	}
	res, err := runHooked(w, cfg, h)
	if err != nil {
		return nil, err
	}
	out.Result = res
	return out, nil
}
