package sim

import (
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// replay is the state of one run.
type replay struct {
	w        *Workload
	cfg      Config
	eng      *sched.Engine
	book     *ledger.FairnessBook
	view     sched.View
	capacity ledger.Vector

	jobs      []jobState
	accts     []acctState
	deps      [][]int // jobs submitted when job i completes; nil while no job waits for another
	nodeTasks []int   // tasks running per node
	unsched   []Unschedulable
	// completions is each user-visible job's completion time, -1 until it
	// completes (and for later stages).
	completions []time.Duration

	events eventHeap
	order  []int // independent jobs by submission time
	next   int   // first job of order not yet submitted

	now, lastT   ledger.Time
	start        ledger.Time
	begun        bool
	pending      int           // tasks waiting in all queues
	runningTasks int           // tasks running in the cluster
	running      ledger.Vector // what they hold
	used         ledger.Vector // ∫running dt, for utilization

	touched     []int
	touchedMark []bool
	arrivals    []int
	groups      []startGroup
	// gangs holds the nodes of each running parallel task, by the index
	// its end event carries; freeGangs are slots to reuse.
	gangs     [][]int
	freeGangs []int32
	fitCounts []fitCount // driver_pass.go: fitsFree's counts, this time step
	// backfill says whether the view's nodes list their running tasks'
	// releases (Node.Releases) for the engine's reservation. holdsBack
	// says a pass may end with queue heads that fit the free nodes (EASY
	// and conservative around their reservations, none at the first job that cannot start),
	// which pass skipping must allow for (mayPlace).
	backfill, holdsBack bool
	// capFree is cfg.Settings.Policy.CapFree(), looked up once (mayPlace).
	capFree     bool
	groupIndex  map[uint64]int
	placedAccts []int
	placedMark  []bool
	freed       []int // nodes that had tasks end at this time
	freedMark   []bool
	newHeads    []int // accounts whose empty queue got a job at this time
	scaled      ledger.Vector
	sum         ledger.Vector
	rate, room  ledger.Vector // baselineRate's result and scratch
	active      []ledger.TaskGroup

	sampler sampler
	slots   slotRecorder

	nEvents, nPasses, nPlacements int
	maxWait                       time.Duration

	weighting weightingState // weighting_replay.go
}

type jobState struct {
	arrived, firstStart, end ledger.Time
	hasArrived, hasStarted   bool
	unschedulable            bool
	started, finished        int
	// root is the first stage of the user-visible job this job belongs to;
	// on the root, stagesLeft counts its stages not yet complete and ideal
	// is the job's duration alone on an empty cluster.
	root       int
	stagesLeft int
	ideal      time.Duration
}

type acctState struct {
	fair         ledger.AccountFairness // scratch whose Usage and Baseline are the view's
	share        ledger.Vector          // static partition R·w/Σw
	rate         ledger.Vector          // baseline rate last given to the book (and the view)
	active       []int                  // arrived, unfinished jobs in arrival order (finished ones removed lazily)
	queue        []sched.Job            // the memory the view's queue is a window of (enqueue)
	activeMem    []int                  // the memory active is a window of
	activeDead   int
	runningTasks int
	pending      int
	lastAlloc    ledger.Time
	allocated    bool
	firstArrival ledger.Time
	arrived      bool

	usage         ledger.Vector // resource-seconds over the whole run
	tasksRun      int
	slotStarted   int
	jobs          int
	waitSum       float64 // seconds
	completionSum float64
	slowdownSum   float64
}

type startGroup struct {
	job, node, count int
	// nodes are a parallel task's nodes (count is then 1); nil otherwise.
	nodes []int
}

func newReplay(w *Workload, cfg Config) *replay {
	n := len(w.Resources)
	r := &replay{
		w:           w,
		cfg:         cfg,
		eng:         sched.NewEngine().TrustViews(),
		book:        ledger.NewFairnessBook(cfg.Window, n),
		capacity:    w.Capacity(),
		jobs:        make([]jobState, len(w.Jobs)),
		accts:       make([]acctState, len(w.Accounts)),
		nodeTasks:   make([]int, len(w.Nodes)),
		running:     ledger.NewVector(n),
		used:        ledger.NewVector(n),
		touchedMark: make([]bool, len(w.Accounts)),
		placedMark:  make([]bool, len(w.Accounts)),
		freedMark:   make([]bool, len(w.Nodes)),
		groupIndex:  map[uint64]int{},
		scaled:      ledger.NewVector(n),
		sum:         ledger.NewVector(n),
		rate:        ledger.NewVector(n),
		room:        ledger.NewVector(n),
		backfill:    reserves(cfg.Settings.Backfill),
		holdsBack:   reserves(cfg.Settings.Backfill) || cfg.Settings.Backfill == sched.BackfillNone,
		capFree:     cfg.Settings.Policy.CapFree(),
	}
	r.view = sched.View{Resources: w.Resources, Settings: cfg.Settings, Groups: w.Groups}
	for i := range w.Nodes {
		nd := &w.Nodes[i]
		r.view.Nodes = append(r.view.Nodes, sched.Node{ID: nd.ID, Capacity: nd.Capacity.Clone(), Free: nd.Capacity.Clone()})
	}
	totalWeight := 0.0
	for _, a := range w.Accounts {
		totalWeight += a.Weight
	}
	for i, a := range w.Accounts {
		weight, total := a.Weight, totalWeight
		if total <= 0 { // nobody contributes: everyone counts as equal
			weight, total = 1, float64(len(w.Accounts))
		}
		acct := &r.accts[i]
		acct.share = ledger.Share(r.capacity, weight, total)
		acct.rate = ledger.NewVector(n)
		acct.usage = ledger.NewVector(n)
		acct.fair = ledger.AccountFairness{
			Usage: ledger.NewVector(n), Baseline: ledger.NewVector(n),
			Rate: ledger.NewVector(n), BaselineRate: ledger.NewVector(n),
		}
		r.view.Accounts = append(r.view.Accounts, sched.Account{
			Name: a.Name, Weight: a.Weight, Group: a.Group,
			Running: ledger.NewVector(n), Usage: acct.fair.Usage, Baseline: acct.fair.Baseline,
			BaselineRate: acct.rate,
		})
	}
	r.completions = make([]time.Duration, len(w.Jobs))
	for i := range r.completions {
		r.completions[i] = -1
	}
	r.linkJobs()
	r.classify()
	r.sampler = newSampler(w, cfg.MaxSamples)
	r.slots = slotRecorder{slot: w.Slot}
	r.initWeighting() // weighting_replay.go: discrimination, FAWKES weighting
	return r
}

// linkJobs orders independent jobs by submission, records who waits for
// whom, and groups stages into user-visible jobs.
func (r *replay) linkJobs() {
	r.order = make([]int, 0, len(r.w.Jobs))
	for i := range r.w.Jobs {
		j := &r.w.Jobs[i]
		js := &r.jobs[i]
		js.root = i
		if j.After == nil {
			r.order = append(r.order, i)
		} else {
			if r.deps == nil {
				// Only now: a log without dependencies (most) would
				// have the collector scan a slice per job for nothing.
				r.deps = make([][]int, len(r.w.Jobs))
			}
			r.deps[j.After.Job] = append(r.deps[j.After.Job], i)
			if j.After.Continues {
				js.root = r.jobs[j.After.Job].root
				r.jobs[js.root].ideal += j.After.Delay
			}
		}
		root := &r.jobs[js.root]
		root.stagesLeft++
		root.ideal += j.Runtime
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		return cmpTime(r.w.Jobs[a].Submit, r.w.Jobs[b].Submit)
	})
}

func cmpTime(a, b ledger.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reserves reports whether backfill mode b makes reservations.
func reserves(b sched.Backfill) bool {
	return b == sched.BackfillEASY || b == sched.BackfillConservative
}
