package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Config says how to replay a workload.
type Config struct {
	// Settings are the policy settings the engine runs with.
	Settings sched.Settings
	// Window is the fairness book's window; the zero Window is none.
	Window ledger.Window
	// MaxSamples bounds the β-over-time samples kept (about; 0 means 1000).
	MaxSamples int
	// Trace, when set, is told every arrival, task start and task end, in
	// the order the replay applies them.
	Trace func(TraceEvent)

	// everyPass turns off skipping passes that provably place nothing; tests
	// use it to check that skipping changes nothing.
	everyPass bool
}

// Run replays the workload under cfg and reports what happened. It runs
// until every job has completed or can never run (or until the workload's
// horizon), driven by events only: time jumps from one arrival or
// completion to the next, and a scheduling pass runs only when resources
// were freed or work arrived.
func Run(w *Workload, cfg Config) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Settings.Validate(w.Resources); err != nil {
		return nil, fmt.Errorf("policy settings: %w", err)
	}
	if err := cfg.Window.Validate(); err != nil {
		return nil, fmt.Errorf("fairness window: %w", err)
	}
	r := newReplay(w, cfg)
	for {
		t, ok := r.nextTime()
		if !ok || (w.Horizon > 0 && t >= w.Horizon) {
			break
		}
		r.advanceTo(t)
		if err := r.step(t); err != nil {
			return nil, err
		}
	}
	return r.finish(), nil
}

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
	deps      [][]int // jobs submitted when job i completes
	nodeTasks []int   // tasks running per node
	unsched   []Unschedulable

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
	groupIndex  map[uint64]int
	placedAccts []int
	placedMark  []bool
	freed       []int // nodes that had tasks end at this time
	freedMark   []bool
	newHeads    []int // accounts whose empty queue got a job at this time
	scaled      ledger.Vector
	sum         ledger.Vector
	active      []ledger.TaskGroup

	sampler sampler
	slots   slotRecorder

	nEvents, nPasses, nPlacements int
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
}

func newReplay(w *Workload, cfg Config) *replay {
	n := len(w.Resources)
	r := &replay{
		w:           w,
		cfg:         cfg,
		eng:         sched.NewEngine(),
		book:        ledger.NewFairnessBook(cfg.Window, n),
		capacity:    w.Capacity(),
		jobs:        make([]jobState, len(w.Jobs)),
		accts:       make([]acctState, len(w.Accounts)),
		deps:        make([][]int, len(w.Jobs)),
		nodeTasks:   make([]int, len(w.Nodes)),
		running:     ledger.NewVector(n),
		used:        ledger.NewVector(n),
		touchedMark: make([]bool, len(w.Accounts)),
		placedMark:  make([]bool, len(w.Accounts)),
		freedMark:   make([]bool, len(w.Nodes)),
		groupIndex:  map[uint64]int{},
		scaled:      ledger.NewVector(n),
		sum:         ledger.NewVector(n),
	}
	r.view = sched.View{Resources: w.Resources, Settings: cfg.Settings}
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
			Name: a.Name, Weight: a.Weight,
			Running: ledger.NewVector(n), Usage: acct.fair.Usage, Baseline: acct.fair.Baseline,
			BaselineRate: acct.rate,
		})
	}
	r.linkJobs()
	r.classify()
	r.sampler = newSampler(w, cfg.MaxSamples)
	r.slots = slotRecorder{slot: w.Slot}
	return r
}

// linkJobs orders independent jobs by submission, records who waits for
// whom, and groups stages into user-visible jobs.
func (r *replay) linkJobs() {
	for i := range r.w.Jobs {
		j := &r.w.Jobs[i]
		js := &r.jobs[i]
		js.root = i
		if j.After == nil {
			r.order = append(r.order, i)
		} else {
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

// nextTime is the time of the next event, if any.
func (r *replay) nextTime() (ledger.Time, bool) {
	var t ledger.Time
	ok := false
	if r.next < len(r.order) {
		t, ok = r.w.Jobs[r.order[r.next]].Submit, true
	}
	if r.events.len() > 0 && (!ok || r.events.top().at < t) {
		t, ok = r.events.top().at, true
	}
	return t, ok
}

// advanceTo integrates utilization and closes the slots that ended by t.
func (r *replay) advanceTo(t ledger.Time) {
	if r.begun && t > r.lastT {
		r.used.AddScaled(r.running, t.Sub(r.lastT).Seconds())
	}
	r.lastT = t
	r.slots.flush(r, t)
}

// step applies everything that happens at time t and schedules once.
func (r *replay) step(t ledger.Time) error {
	r.now = t
	r.view.Now = t
	changed := false
	r.arrivals = r.arrivals[:0]
	for r.events.len() > 0 && r.events.top().at == t {
		e := r.events.pop()
		r.nEvents++
		if e.kind == evArrive {
			r.arrivals = append(r.arrivals, int(e.job))
			continue
		}
		r.complete(e)
		changed = true
	}
	// Completions may submit dependents with no delay: they arrive now.
	for r.events.len() > 0 && r.events.top().at == t {
		e := r.events.pop()
		r.nEvents++
		r.arrivals = append(r.arrivals, int(e.job))
	}
	for r.next < len(r.order) && r.w.Jobs[r.order[r.next]].Submit == t {
		r.arrivals = append(r.arrivals, r.order[r.next])
		r.next++
		r.nEvents++
	}
	// Same-time arrivals queue in workload order, whatever made them.
	slices.Sort(r.arrivals)
	for _, j := range r.arrivals {
		if r.arrive(j) {
			changed = true
		}
	}
	r.updateBaselines()
	if changed && r.pending > 0 && (r.cfg.everyPass || r.mayPlace()) {
		if err := r.pass(); err != nil {
			return err
		}
	}
	for _, n := range r.freed {
		r.freedMark[n] = false
	}
	r.freed, r.newHeads = r.freed[:0], r.newHeads[:0]
	r.sampler.maybe(r, t)
	r.trace(TraceEvent{Kind: Settled, Time: t})
	return nil
}

func (r *replay) trace(e TraceEvent) {
	if r.cfg.Trace != nil {
		r.cfg.Trace(e)
	}
}

func (r *replay) touch(a int) {
	if !r.touchedMark[a] {
		r.touchedMark[a] = true
		r.touched = append(r.touched, a)
	}
}

// arrive submits job j; it reports whether the job joined a queue.
func (r *replay) arrive(j int) bool {
	job := &r.w.Jobs[j]
	js := &r.jobs[j]
	js.arrived, js.hasArrived = r.now, true
	if !r.begun {
		r.begun, r.start = true, r.now
	}
	r.trace(TraceEvent{Kind: Arrive, Time: r.now, Job: j, Tasks: job.Tasks})
	if js.unschedulable {
		return false
	}
	a := job.Account
	if acct := &r.accts[a]; !acct.arrived {
		acct.firstArrival, acct.arrived = r.now, true
	}
	va := &r.view.Accounts[a]
	if len(va.Queue) == 0 {
		r.newHeads = append(r.newHeads, a)
	}
	va.Queue = append(va.Queue, sched.Job{ID: uint64(j), Demand: job.Demand, Pending: job.Tasks})
	acct := &r.accts[a]
	acct.active = append(acct.active, j)
	acct.pending += job.Tasks
	r.pending += job.Tasks
	r.touch(a)
	return true
}

// complete applies a group of tasks ending.
func (r *replay) complete(e event) {
	j, node, count := int(e.job), int(e.node), int(e.count)
	job := &r.w.Jobs[j]
	a := job.Account
	acct := &r.accts[a]
	va := &r.view.Accounts[a]
	k := float64(count)

	nd := &r.view.Nodes[node]
	if !r.freedMark[node] {
		r.freedMark[node] = true
		r.freed = append(r.freed, node)
	}
	r.nodeTasks[node] -= count
	if r.nodeTasks[node] == 0 {
		copy(nd.Free, nd.Capacity) // exactly, not the residue of adds and subtracts
	} else {
		nd.Free.AddScaled(job.Demand, k)
		for x := range nd.Free {
			nd.Free[x] = min(nd.Free[x], nd.Capacity[x])
		}
	}
	acct.runningTasks -= count
	release(va.Running, job.Demand, k, acct.runningTasks)
	r.runningTasks -= count
	release(r.running, job.Demand, k, r.runningTasks)

	r.scaled = scaledInto(r.scaled, job.Demand, k)
	r.book.TaskEnded(r.w.Accounts[a].Name, r.scaled, e.started, r.now)
	js := &r.jobs[j]
	js.finished += count
	r.trace(TraceEvent{Kind: End, Time: r.now, Job: j, Node: node, Tasks: count})
	r.touch(a)
	if js.finished == job.Tasks {
		r.jobDone(j)
	}
}

// release takes k×demand out of a running vector, exactly to zero when no
// task is left.
func release(v, demand ledger.Vector, k float64, left int) {
	if left == 0 {
		clear(v)
		return
	}
	v.AddScaled(demand, -k)
	for x := range v {
		v[x] = max(v[x], 0)
	}
}

func scaledInto(dst, demand ledger.Vector, k float64) ledger.Vector {
	for x := range dst {
		dst[x] = demand[x] * k
	}
	return dst
}

// jobDone records a job's completion and submits the jobs waiting for it.
func (r *replay) jobDone(j int) {
	job := &r.w.Jobs[j]
	js := &r.jobs[j]
	js.end = r.now
	acct := &r.accts[job.Account]
	acct.activeDead++
	root := &r.jobs[js.root]
	if root.stagesLeft--; root.stagesLeft == 0 {
		rootAcct := &r.accts[r.w.Jobs[js.root].Account]
		completion := r.now.Sub(root.arrived)
		rootAcct.jobs++
		rootAcct.waitSum += root.firstStart.Sub(root.arrived).Seconds()
		rootAcct.completionSum += completion.Seconds()
		rootAcct.slowdownSum += max(1, completion.Seconds()/max(root.ideal, slowdownFloor).Seconds())
	}
	for _, d := range r.deps[j] {
		r.events.push(event{at: r.now.Add(r.w.Jobs[d].After.Delay), job: int32(d), kind: evArrive})
	}
}

// slowdownFloor bounds slowdown for very short jobs, as is usual for traces
// where a job of a second would otherwise show a slowdown in the thousands.
const slowdownFloor = 10 * time.Second
