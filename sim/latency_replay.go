package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// LatencyWorkload is a workload whose accounts are BPF queues: latency
// queues with a declared burst, and throughput queues.
type LatencyWorkload struct {
	*Workload
	// Latency holds account a's latency queue declaration at index a, nil
	// for a throughput queue. A latency queue's jobs are its bursts: they
	// should arrive at Start + n·Period.
	Latency []*sched.LatencySpec
}

// Validate checks the workload and the declarations.
func (lw *LatencyWorkload) Validate() error {
	if lw.Workload == nil {
		return fmt.Errorf("latency workload without a workload")
	}
	if err := lw.Workload.Validate(); err != nil {
		return err
	}
	if len(lw.Latency) != len(lw.Accounts) {
		return fmt.Errorf("workload %q: %d latency declarations for %d accounts: give one per account, nil for a throughput queue", lw.Name, len(lw.Latency), len(lw.Accounts))
	}
	for a, spec := range lw.Latency {
		if spec != nil {
			if err := spec.Validate(len(lw.Resources)); err != nil {
				return fmt.Errorf("workload %q account %q: %w", lw.Name, lw.Accounts[a].Name, err)
			}
		}
	}
	return nil
}

// QueueResult is one queue's outcome in a latency replay.
type QueueResult struct {
	Name    string
	Latency bool
	// Class is what bpf's admission control decided (elastic for every
	// queue under other policies, which have no admission control).
	Class sched.QueueClass
	// Jobs counts completed jobs, MeanCompletion their mean completion time
	// from submission to the last task's end; OnTime counts the latency
	// queue's jobs done within its deadline.
	Jobs           int
	MeanCompletion time.Duration
	OnTime         int
	// Share is the dominant share of the queue's mean allocation over the
	// time every throughput queue had work waiting: its long-term share of
	// a contended cluster.
	Share float64
}

// LatencyResult is a replay of a LatencyWorkload.
type LatencyResult struct {
	*Result
	// Admissions holds bpf's decision for each account; empty under other
	// policies.
	Admissions []sched.Admission
	Queues     []QueueResult
	// Contended is how long every throughput queue had work waiting.
	Contended time.Duration
}

// RunLatency replays lw like Run, with its accounts as BPF queues: under bpf
// admission control first classes every queue, in the order they arrive
// (a latency queue at its Start, a throughput queue at its first job), and
// a queue that would be rejected is an error; under every policy the
// replay keeps what each latency queue's current burst has been given
// (sched.LatencyQueue.Used: every task started since the burst began, for
// its whole run), which bpf bounds. Policies other than bpf and sp ignore
// the queues.
func RunLatency(lw *LatencyWorkload, cfg Config) (*LatencyResult, error) {
	if err := lw.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Settings.Validate(lw.Resources); err != nil {
		return nil, fmt.Errorf("policy settings: %w", err)
	}
	if err := cfg.Window.Validate(); err != nil {
		return nil, fmt.Errorf("fairness window: %w", err)
	}
	out := &LatencyResult{Queues: make([]QueueResult, len(lw.Accounts))}
	classes := make([]sched.QueueClass, len(lw.Accounts))
	if cfg.Settings.Policy == sched.BPF {
		var err error
		if out.Admissions, err = admitQueues(lw); err != nil {
			return nil, err
		}
		for a, d := range out.Admissions {
			if d.Class == sched.Rejected {
				return nil, fmt.Errorf("workload %q: admission control rejects queue %q (%s): leave it out of the workload", lw.Name, lw.Accounts[a].Name, d.Reason)
			}
			classes[a] = d.Class
		}
	}
	obs := newQueueObserver(lw)
	queues := make([]*sched.LatencyQueue, len(lw.Accounts))
	bursts := make([]ledger.Time, len(lw.Accounts))
	user := cfg.Trace
	cfg.Trace = func(e TraceEvent) {
		obs.observe(e)
		if e.Kind == Start {
			job := &lw.Jobs[e.Job]
			if q := queues[job.Account]; q != nil {
				q.Used.AddScaled(job.Demand, float64(e.Tasks)*job.Runtime.Seconds())
			}
		}
		if user != nil {
			user(e)
		}
	}
	r := newReplay(lw.Workload, cfg)
	for a, spec := range lw.Latency {
		if spec != nil {
			queues[a] = &sched.LatencyQueue{LatencySpec: *spec, Class: classes[a], Used: ledger.NewVector(len(lw.Resources))}
			r.view.Accounts[a].Latency = queues[a]
			bursts[a] = math.MinInt64 // no burst seen yet
		}
	}
	for {
		t, ok := r.nextTime()
		if !ok || (lw.Horizon > 0 && t >= lw.Horizon) {
			break
		}
		for a, q := range queues {
			if q != nil && q.BurstStart(t) != bursts[a] {
				bursts[a] = q.BurstStart(t) // a new burst: nothing given yet
				clear(q.Used)
			}
		}
		r.advanceTo(t)
		if err := r.step(t); err != nil {
			return nil, err
		}
	}
	out.Result = r.finish()
	obs.results(out, classes)
	return out, nil
}

// admitQueues runs bpf's admission control over the queues in the order
// they arrive and returns the decisions in account order.
func admitQueues(lw *LatencyWorkload) ([]sched.Admission, error) {
	arrival := make([]ledger.Time, len(lw.Accounts))
	for a := range arrival {
		arrival[a] = math.MaxInt64
		if spec := lw.Latency[a]; spec != nil {
			arrival[a] = spec.Start
		}
	}
	for _, j := range lw.Jobs {
		if lw.Latency[j.Account] == nil && j.After == nil {
			arrival[j.Account] = min(arrival[j.Account], j.Submit)
		}
	}
	order := make([]int, len(lw.Accounts))
	for a := range order {
		order[a] = a
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(arrival[x], arrival[y]) })
	queues := make([]sched.QueueRequest, len(order))
	for i, a := range order {
		queues[i] = sched.QueueRequest{Name: lw.Accounts[a].Name, Weight: lw.Accounts[a].Weight, Latency: lw.Latency[a]}
	}
	decided, err := sched.AdmitAll(lw.Resources, lw.Capacity(), queues)
	if err != nil {
		return nil, fmt.Errorf("workload %q: admission control: %w", lw.Name, err)
	}
	out := make([]sched.Admission, len(order))
	for i, a := range order {
		out[a] = decided[i]
	}
	return out, nil
}

// queueObserver follows a latency replay's trace for per-queue results.
type queueObserver struct {
	lw       *LatencyWorkload
	capacity ledger.Vector
	runnable []bool // per job: its task fits some node
	arrived  []ledger.Time
	done     []int // tasks ended, per job
	pending  []int // per account
	held     []ledger.Vector
	used     []ledger.Vector // ∫held dt while every throughput queue waits
	last     ledger.Time
	begun    bool
	busy     bool // every throughput queue had work waiting since last
	span     float64

	jobs   []int
	sum    []float64 // completion seconds
	onTime []int
	anyTQ  bool
}

func newQueueObserver(lw *LatencyWorkload) *queueObserver {
	o := &queueObserver{lw: lw, capacity: lw.Capacity(),
		runnable: make([]bool, len(lw.Jobs)), arrived: make([]ledger.Time, len(lw.Jobs)), done: make([]int, len(lw.Jobs)),
		pending: make([]int, len(lw.Accounts)), held: make([]ledger.Vector, len(lw.Accounts)), used: make([]ledger.Vector, len(lw.Accounts)),
		jobs: make([]int, len(lw.Accounts)), sum: make([]float64, len(lw.Accounts)), onTime: make([]int, len(lw.Accounts))}
	for a := range lw.Accounts {
		o.held[a], o.used[a] = ledger.NewVector(len(lw.Resources)), ledger.NewVector(len(lw.Resources))
		o.anyTQ = o.anyTQ || lw.Latency[a] == nil
	}
	for j := range lw.Jobs {
		o.runnable[j] = lw.holds(&lw.Jobs[j])
	}
	return o
}

func (o *queueObserver) observe(e TraceEvent) {
	switch e.Kind {
	case Arrive:
		o.arrived[e.Job] = e.Time
		if o.runnable[e.Job] {
			o.pending[o.lw.Jobs[e.Job].Account] += e.Tasks
		}
	case Start:
		job := &o.lw.Jobs[e.Job]
		o.pending[job.Account] -= e.Tasks
		o.held[job.Account].AddScaled(job.Demand, float64(e.Tasks))
	case End:
		job := &o.lw.Jobs[e.Job]
		a := job.Account
		o.held[a].AddScaled(job.Demand, -float64(e.Tasks))
		if o.done[e.Job] += e.Tasks; o.done[e.Job] == job.Tasks {
			completion := e.Time.Sub(o.arrived[e.Job])
			o.jobs[a]++
			o.sum[a] += completion.Seconds()
			if spec := o.lw.Latency[a]; spec != nil && completion <= spec.Deadline {
				o.onTime[a]++
			}
		}
	case Settled:
		if o.begun && o.busy {
			dt := e.Time.Sub(o.last).Seconds()
			o.span += dt
			for a := range o.held {
				o.used[a].AddScaled(o.held[a], dt)
			}
		}
		o.begun, o.last = true, e.Time
		o.busy = o.anyTQ
		for a := range o.pending {
			if o.lw.Latency[a] == nil && o.pending[a] <= 0 {
				o.busy = false
			}
		}
	}
}

func (o *queueObserver) results(out *LatencyResult, classes []sched.QueueClass) {
	out.Contended = seconds(o.span)
	for a := range out.Queues {
		q := QueueResult{Name: o.lw.Accounts[a].Name, Latency: o.lw.Latency[a] != nil, Class: classes[a], Jobs: o.jobs[a], OnTime: o.onTime[a]}
		if o.jobs[a] > 0 {
			q.MeanCompletion = seconds(o.sum[a] / float64(o.jobs[a]))
		}
		if o.span > 0 {
			for k, c := range o.capacity {
				if c > 0 {
					q.Share = math.Max(q.Share, o.used[a][k]/(c*o.span))
				}
			}
		}
		out.Queues[a] = q
	}
}

// LatencyCompletion is the mean completion time of the latency queues'
// jobs; ThroughputCompletion the same for the throughput queues' jobs;
// ThroughputShare the throughput queues' mean long-term share and
// LatencyShare the latency queues'.
func (r *LatencyResult) LatencyCompletion() time.Duration { return r.meanCompletion(true) }

// ThroughputCompletion: see LatencyCompletion.
func (r *LatencyResult) ThroughputCompletion() time.Duration { return r.meanCompletion(false) }

// ThroughputShare: see LatencyCompletion.
func (r *LatencyResult) ThroughputShare() float64 { return r.meanShare(false) }

// LatencyShare: see LatencyCompletion.
func (r *LatencyResult) LatencyShare() float64 { return r.meanShare(true) }

func (r *LatencyResult) meanCompletion(latency bool) time.Duration {
	sum, n := 0.0, 0
	for _, q := range r.Queues {
		if q.Latency == latency {
			sum += q.MeanCompletion.Seconds() * float64(q.Jobs)
			n += q.Jobs
		}
	}
	if n == 0 {
		return 0
	}
	return seconds(sum / float64(n))
}

func (r *LatencyResult) meanShare(latency bool) float64 {
	sum, n := 0.0, 0
	for _, q := range r.Queues {
		if q.Latency == latency {
			sum += q.Share
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
