package reproduce

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sim"
)

// MacroOptions parameterize the macro-benchmark.
type MacroOptions struct {
	// Seed makes every random choice; the same seed gives the same workload.
	Seed uint64
	// FacebookTimes, when set, is the path of SWIM's
	// FB-2009_samples_24_times_1hr_1.tsv: User1's submission times and the
	// size order of its jobs come from the trace's first 100 jobs, as in the
	// paper. When empty, submissions are seeded exponential inter-arrivals
	// with the trace's mean gap and bins are shuffled with the seed.
	FacebookTimes string
}

// stage is one map or reduce stage of a benchmark job.
type stage struct {
	tasks   int
	demand  ledger.Vector // <cores, GB>
	runtime time.Duration
}

// benchmark is a job type: a map stage and an optional reduce stage.
type benchmark struct {
	name        string
	mapStage    stage
	reduceStage *stage
	count       int // jobs of this type (Facebook bins)
}

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

// facebookBins is the paper's Table 3. Task counts, demands and job counts
// are the paper's; task runtimes are not given there and are chosen to be
// plausible for Hive queries on one HDFS block per task: selections 20 s,
// grep 30 s, aggregation maps 40 s, join maps 50 s, reduces 60–90 s.
var facebookBins = []benchmark{
	{"rankings selection", stage{1, ledger.Vector{1, 1}, sec(20)}, nil, 38},
	{"grep search", stage{2, ledger.Vector{1, 1.5}, sec(30)}, nil, 18},
	{"uservisits aggregation", stage{10, ledger.Vector{2, 0.5}, sec(40)}, &stage{2, ledger.Vector{4, 2}, sec(60)}, 14},
	{"rankings selection", stage{50, ledger.Vector{4, 1}, sec(20)}, nil, 10},
	{"uservisits aggregation", stage{100, ledger.Vector{2, 1.5}, sec(40)}, &stage{10, ledger.Vector{2, 2}, sec(60)}, 6},
	{"rankings selection", stage{200, ledger.Vector{3, 2}, sec(20)}, nil, 6},
	{"grep search", stage{400, ledger.Vector{2, 1}, sec(30)}, nil, 4},
	{"rankings-uservisits join", stage{400, ledger.Vector{1, 2}, sec(50)}, &stage{30, ledger.Vector{2, 0.5}, sec(90)}, 2},
	{"grep search", stage{800, ledger.Vector{2, 0.5}, sec(30)}, &stage{60, ledger.Vector{1, 3}, sec(60)}, 2},
}

// purdueBenchmarks are User2's jobs: the five Purdue MapReduce benchmarks
// the paper names, on 40 GB of input (320 map tasks of one 128 MiB block).
// Demands and runtimes are ours: WordCount is CPU-heavy, TeraSort and
// InvertedIndex memory-heavy, Grep and HistogramMovies light.
var purdueBenchmarks = []benchmark{
	{"WordCount", stage{320, ledger.Vector{2, 1}, sec(40)}, &stage{16, ledger.Vector{1, 3}, sec(60)}, 0},
	{"TeraSort", stage{320, ledger.Vector{1, 2}, sec(30)}, &stage{32, ledger.Vector{1, 4}, sec(90)}, 0},
	{"Grep", stage{320, ledger.Vector{1, 1}, sec(20)}, &stage{1, ledger.Vector{1, 2}, sec(10)}, 0},
	{"InvertedIndex", stage{320, ledger.Vector{1, 2}, sec(45)}, &stage{16, ledger.Vector{1, 3}, sec(90)}, 0},
	{"HistogramMovies", stage{320, ledger.Vector{1, 1}, sec(25)}, &stage{4, ledger.Vector{1, 2}, sec(20)}, 0},
}

// sparkBenchmarks are User3's jobs, with the paper's worker counts and
// demands; a worker (executor) runs for the whole job, which we take as
// 60–90 s of iterations.
var sparkBenchmarks = []benchmark{
	{"kmeans", stage{100, ledger.Vector{2, 2}, sec(60)}, nil, 10},
	{"LR", stage{150, ledger.Vector{2, 1}, sec(45)}, nil, 10},
	{"ALS", stage{100, ledger.Vector{1, 2}, sec(90)}, nil, 10},
}

// tpchQueries are User4's Hive queries on 40 GB: a scan stage and an
// aggregation stage each. Sizes follow the queries' weight: Q9 (a six-way
// join) is the heaviest, Q1 and Q12 are single scans.
var tpchQueries = []benchmark{
	{"Q1", stage{160, ledger.Vector{1, 1.5}, sec(30)}, &stage{8, ledger.Vector{1, 2}, sec(40)}, 5},
	{"Q9", stage{320, ledger.Vector{1, 2}, sec(45)}, &stage{32, ledger.Vector{1, 3}, sec(60)}, 5},
	{"Q12", stage{200, ledger.Vector{1, 1}, sec(30)}, &stage{8, ledger.Vector{1, 2}, sec(30)}, 5},
	{"Q17", stage{240, ledger.Vector{1, 2}, sec(40)}, &stage{16, ledger.Vector{1, 3}, sec(50)}, 5},
}

// Macro-benchmark schedule constants from the paper.
const (
	macroFacebookJobs = 100
	purdueJobs        = 20
	purdueInterval    = 3 * time.Minute
	sparkThinkTime    = 2 * time.Minute
	// facebookMeanGap is the mean gap between the first 100 submissions of
	// FB-2009_samples_24_times_1hr_1.tsv, used when the trace is absent.
	facebookMeanGap = 16 * time.Second
)

// Macro generates the H-MRF paper's macro-benchmark (§7.1): 59 nodes of
// <4 cores, 15 GB> shared by four accounts of equal contribution (15 nodes
// each). User1 runs the synthetic Facebook workload of Table 3; User2 submits
// a Purdue MapReduce benchmark every 3 minutes; User3 runs 10 each of Spark
// kmeans, LR and ALS in a closed loop that waits 2 minutes after each job
// completes; User4 runs 5 instances of TPC-H Q1, Q9, Q12 and Q17 in a closed
// loop, one after another.
func Macro(opt MacroOptions) (*sim.Workload, error) {
	rng := rand.New(rand.NewPCG(opt.Seed, 0x6d6163726f)) // "macro"
	w := &sim.Workload{
		Name:      "macro-benchmark (H-MRF §7.1)",
		Resources: []string{"cpu", "mem"},
		Units:     []string{"cores", "GB"},
	}
	for i := range sim.MacroNodes {
		w.Nodes = append(w.Nodes, sim.Node{ID: fmt.Sprintf("node%02d", i+1), Capacity: ledger.Vector{sim.MacroNodeCores, sim.MacroNodeMemGB}})
	}
	for _, name := range []string{"User1", "User2", "User3", "User4"} {
		w.Accounts = append(w.Accounts, sim.Account{Name: name, Weight: 15})
	}
	if err := macroFacebook(w, rng, opt.FacebookTimes); err != nil {
		return nil, err
	}
	for i := range purdueJobs {
		b := purdueBenchmarks[rng.IntN(len(purdueBenchmarks))]
		addBenchmark(w, 1, b, ledger.Time(time.Duration(i)*purdueInterval), nil)
	}
	var order []benchmark
	for range 10 {
		order = append(order, sparkBenchmarks...)
	}
	closedLoop(w, 2, order, sparkThinkTime)
	order = order[:0]
	for range 5 {
		order = append(order, tpchQueries...)
	}
	closedLoop(w, 3, order, 0)
	w.Notes = append(w.Notes, "task runtimes are not in the paper; see sim/reproduce/macro.go for the values chosen")
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("macro-benchmark: %w", err)
	}
	return w, nil
}

// macroFacebook adds User1's 100 jobs.
func macroFacebook(w *sim.Workload, rng *rand.Rand, timesPath string) error {
	bins := make([]int, 0, macroFacebookJobs)
	for b, bin := range facebookBins {
		for range bin.count {
			bins = append(bins, b)
		}
	}
	submits := make([]ledger.Time, macroFacebookJobs)
	if timesPath != "" {
		trace, err := sim.LoadSWIMFile(timesPath, sim.SWIMOptions{})
		if err != nil {
			return fmt.Errorf("macro-benchmark Facebook submission times: %w", err)
		}
		type tj struct {
			submit ledger.Time
			input  int // map tasks, the trace's size
			order  int
		}
		var first []tj
		for _, j := range trace.Jobs {
			if j.After == nil && len(first) < macroFacebookJobs {
				first = append(first, tj{j.Submit, j.Tasks, len(first)})
			}
		}
		if len(first) < macroFacebookJobs {
			return fmt.Errorf("macro-benchmark: %s has %d jobs, need %d", timesPath, len(first), macroFacebookJobs)
		}
		// The smallest trace jobs get the smallest bins, so that the big
		// jobs arrive when the trace's big jobs did.
		bySize := slices.Clone(first)
		slices.SortStableFunc(bySize, func(a, b tj) int { return cmp.Compare(a.input, b.input) })
		assigned := make([]int, macroFacebookJobs)
		for rank, j := range bySize {
			assigned[j.order] = bins[rank]
		}
		for i, j := range first {
			submits[i] = j.submit
		}
		bins = assigned
		w.Notes = append(w.Notes, "User1 submission times: the first 100 jobs of "+timesPath)
	} else {
		rng.Shuffle(len(bins), func(i, j int) { bins[i], bins[j] = bins[j], bins[i] })
		t := 0.0
		for i := range submits {
			t += rng.ExpFloat64() * facebookMeanGap.Seconds()
			submits[i] = ledger.Time(t * float64(time.Second))
		}
		w.Notes = append(w.Notes, "User1 submission times: seeded exponential inter-arrivals (the SWIM trace was not found)")
	}
	for i, b := range bins {
		addBenchmark(w, 0, facebookBins[b], submits[i], nil)
	}
	return nil
}

// addBenchmark adds one benchmark job (its map stage, then its reduce stage
// as a continuation) and returns the index of its last stage.
func addBenchmark(w *sim.Workload, account int, b benchmark, submit ledger.Time, after *sim.Dependency) int {
	id := uint64(len(w.Jobs) + 1)
	first := len(w.Jobs)
	w.Jobs = append(w.Jobs, sim.Job{
		ID: id, Name: b.name, Account: account, Submit: submit,
		Demand: b.mapStage.demand.Clone(), Tasks: b.mapStage.tasks, Runtime: b.mapStage.runtime, After: after,
	})
	if b.reduceStage == nil {
		return first
	}
	w.Jobs = append(w.Jobs, sim.Job{
		ID: id, Name: b.name + " reduce", Account: account,
		Demand: b.reduceStage.demand.Clone(), Tasks: b.reduceStage.tasks, Runtime: b.reduceStage.runtime,
		After: &sim.Dependency{Job: first, Continues: true},
	})
	return first + 1
}

// closedLoop adds jobs that each wait for the previous one to complete, plus
// think time, before being submitted; the first is submitted at time zero.
func closedLoop(w *sim.Workload, account int, order []benchmark, think time.Duration) {
	last := -1
	for _, b := range order {
		var after *sim.Dependency
		if last >= 0 {
			after = &sim.Dependency{Job: last, Delay: think}
		}
		last = addBenchmark(w, account, b, 0, after)
	}
}
