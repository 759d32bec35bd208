package reproduce

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sim"
)

// The FAWKES paper's weighting experiment (§7.3, WKLD-D): three MR-clusters
// of 10 core nodes on 48 resources, with extremely uneven load: c-1 gets a
// steady trickle of small jobs, c-2 bursts of jobs of every size, c-3 a
// steady stream of small jobs, about three times c-1's. Job counts and
// sizes follow Table 2 and §5.3 (small 1 GB, medium 50 GB, large 100 GB of
// 128 MB blocks); the block counts of medium and large jobs are scaled by
// 1/10 so that a run lasts hours, not days, on 48 slots.
const (
	// FawkesSlots is the paper's 48 resources: 12 nodes of 4 task slots.
	FawkesSlots     = 48
	fawkesNodeSlots = 4
	// FawkesCoreShare is the minimum share of each MR-cluster: its 10
	// core nodes of 48, as a fraction of its contribution share (1/3):
	// the fawkes guarantee to run the experiment with.
	FawkesCoreShare = 10.0 / 48 * 3
)

// FawkesOptions parameterize the bursty three-partition workload.
type FawkesOptions struct {
	// Seed makes every random choice.
	Seed uint64
	// Span is how long jobs keep arriving; zero means two hours.
	Span time.Duration
}

// fawkesJobTasks is the number of map tasks of a job of a size: small
// (1 GB = 8 blocks), medium and large (50 and 100 GB, scaled to 40 and 80
// blocks).
func fawkesJobTasks(size string) int {
	switch size {
	case "large":
		return 80
	case "medium":
		return 40
	}
	return 8
}

// FawkesBursty generates the workload of FAWKES's §7.3 scenario 1
// (WKLD-D): three equal accounts c-1, c-2, c-3 on 48 one-slot resources.
// c-1 submits 165 small jobs and c-3 555 small jobs at seeded exponential
// inter-arrival times over the span; c-2 submits 188 jobs of mixed sizes
// (60% small, 25% medium, 15% large) in bursts of about 30 jobs within two
// minutes, a burst every span/6. Map tasks take 20–40 s (seeded).
func FawkesBursty(opt FawkesOptions) (*sim.Workload, error) {
	span := opt.Span
	if span == 0 {
		span = 2 * time.Hour
	}
	if span < 10*time.Minute {
		return nil, fmt.Errorf("fawkes workload span %v is too short: give at least 10m", span)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6661776b6573)) // "fawkes"
	w := &sim.Workload{
		Name:      "FAWKES WKLD-D (three MR-clusters, bursty c-2)",
		Resources: []string{"cpu"},
		Units:     []string{"slots"},
		Notes: []string{
			"FAWKES §7.3 scenario 1: c-1 165 small jobs, c-2 188 jobs of every size in bursts, c-3 555 small jobs",
			"medium and large jobs scaled to 40 and 80 map tasks; tasks take 20–40 s; minimum share 10 core nodes of 48",
		},
	}
	for i := range FawkesSlots / fawkesNodeSlots {
		w.Nodes = append(w.Nodes, sim.Node{ID: fmt.Sprintf("das4-%02d", i+1), Capacity: ledger.Vector{fawkesNodeSlots}})
	}
	for _, name := range []string{"c-1", "c-2", "c-3"} {
		w.Accounts = append(w.Accounts, sim.Account{Name: name, Weight: 1})
	}
	steady := func(account, jobs int) {
		gap := span.Seconds() / float64(jobs)
		t := 0.0
		for range jobs {
			t += rng.ExpFloat64() * gap
			addBurstyJob(w, rng, account, "small", ledger.Time(t*float64(time.Second)))
		}
	}
	steady(0, 165)
	const bursts, burstJobs = 6, 188
	for b := range bursts {
		start := span.Seconds() * float64(b) / bursts
		n := burstJobs / bursts
		if b < burstJobs%bursts {
			n++
		}
		for range n {
			size := "small"
			switch x := rng.Float64(); {
			case x < 0.15:
				size = "large"
			case x < 0.40:
				size = "medium"
			}
			at := start + rng.Float64()*(2*time.Minute).Seconds()
			addBurstyJob(w, rng, 1, size, ledger.Time(at*float64(time.Second)))
		}
	}
	steady(2, 555)
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("fawkes workload: %w", err)
	}
	return w, nil
}

// addBurstyJob appends one job of the given size class to w.
func addBurstyJob(w *sim.Workload, rng *rand.Rand, account int, size string, submit ledger.Time) {
	runtime := time.Duration(20+rng.IntN(21)) * time.Second
	w.Jobs = append(w.Jobs, sim.Job{
		ID: uint64(len(w.Jobs) + 1), Name: size, Account: account, Submit: submit,
		Demand: ledger.Vector{1}, Tasks: fawkesJobTasks(size), Runtime: runtime,
	})
}
