package sched

import (
	"fmt"
	"math"
	"time"

	"github.com/longfair/longfair/ledger"
)

// BPF (bounded priority fairness, "Mitigating the Burstiness-Fairness
// Tradeoff in Multi-Resource Clusters") serves two kinds of queue. An account
// is a queue: a throughput queue (Account.Latency nil) cares only about its
// long-term share; a latency queue declares periodic bursts (LatencySpec) and
// wants each burst done quickly. Admission control (AdmitQueue) puts every
// queue in a class, and a bpf pass serves:
//
//  1. hard-guarantee latency queues, each up to its burst demand d_i while its
//     current burst has used less than d_i·t_i (Algorithm 1, line 43);
//  2. soft-guarantee latency queues the same way, shortest remaining
//     processing time first (SRPT, line 46);
//  3. the elastic queues by DRF over what is left (line 49): throughput
//     queues and latency queues admitted without a guarantee;
//  4. what a guaranteed queue wants beyond its guarantee, by DRF among those
//     queues, from what the elastic queues leave unused ("that demand is
//     only served when the system has unused resources without hurting the
//     isolation for TQs", §1). A guaranteed queue gets d_i·t_i per period
//     and no more while others wait: that is what bounds its priority.
//
// Tasks are never preempted: a burst that arrives on a full cluster gets its
// priority as running tasks end, and keeps it past its deadline until it has
// had its d_i·t_i (the paper's footnote 2). What a burst has had is counted
// when tasks start, each for its whole expected run (LatencyQueue.Used), so
// that a burst is never handed more than d_i·t_i even though what runs
// cannot be taken back.
//
// sp, strict priority (the paper's baseline), serves every latency queue
// before any throughput queue, with no bound and DRF among the latency
// queues.

// QueueClass is the class admission control gives a queue under bpf.
type QueueClass uint8

// Queue classes. The zero value is Elastic: a throughput queue, or a latency
// queue that only gets its long-term fair share.
const (
	Elastic  QueueClass = iota // long-term fair share only (DRF over what is left)
	Hard                       // burst guaranteed, served first
	Soft                       // burst served when hard queues leave room, SRPT among soft
	Rejected                   // not admitted: only an admission outcome, never in a view
)

var queueClassNames = [...]string{Elastic: "elastic", Hard: "hard", Soft: "soft", Rejected: "rejected"}

// String names the class: elastic, hard, soft or rejected.
func (c QueueClass) String() string {
	if int(c) < len(queueClassNames) {
		return queueClassNames[c]
	}
	return fmt.Sprintf("QueueClass(%d)", uint8(c))
}

// MarshalText writes the class's name.
func (c QueueClass) MarshalText() ([]byte, error) {
	if int(c) >= len(queueClassNames) {
		return nil, fmt.Errorf("unknown queue class %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a class's name.
func (c *QueueClass) UnmarshalText(b []byte) error {
	for i, name := range queueClassNames {
		if name == string(b) {
			*c = QueueClass(i)
			return nil
		}
	}
	return fmt.Errorf("unknown queue class %q: valid classes are elastic, hard, soft, rejected", b)
}

// LatencySpec is what a latency queue declares (BPF §3.1): its n-th burst
// arrives at T(n) = Start + n·Period, holds up to Burst while it runs, and
// must be done by T(n) + Deadline.
type LatencySpec struct {
	Start    ledger.Time   `json:"start"`
	Period   time.Duration `json:"period"`
	Deadline time.Duration `json:"deadline"`
	Burst    ledger.Vector `json:"burst"`
}

// Validate checks the spec against the cluster's number of resources and
// says what to change when it is wrong.
func (s *LatencySpec) Validate(resources int) error {
	if s.Period <= 0 {
		return fmt.Errorf("latency queue period %v must be positive, e.g. 5m", s.Period)
	}
	if s.Deadline <= 0 || s.Deadline > s.Period {
		return fmt.Errorf("latency queue deadline %v must be positive and at most the period %v: a burst must be done before the next one arrives", s.Deadline, s.Period)
	}
	if err := s.Burst.Validate(resources); err != nil {
		return fmt.Errorf("latency queue burst: %w", err)
	}
	if s.Burst.IsZero() {
		return fmt.Errorf("latency queue burst is zero: give what a burst holds while it runs, e.g. cpu 64, mem 128")
	}
	return nil
}

// BurstStart is T(n) of the burst under way at now: the latest
// Start + n·Period not after now (n may be negative before Start).
func (s *LatencySpec) BurstStart(now ledger.Time) ledger.Time {
	p := int64(s.Period)
	n := int64(now-s.Start) / p
	if now < s.Start && int64(now-s.Start)%p != 0 {
		n-- // round towards −∞
	}
	return s.Start + ledger.Time(n*p)
}

// Budget is d·t, the resource-seconds one burst is guaranteed.
func (s *LatencySpec) Budget() ledger.Vector {
	b := s.Burst.Clone()
	b.Scale(s.Deadline.Seconds())
	return b
}

// LatencyQueue is a latency queue's state in a View.
type LatencyQueue struct {
	LatencySpec
	// Class is what admission control decided (bpf only; sp ignores it).
	Class QueueClass
	// Used is what the current burst has been given, in resource-seconds:
	// for every task of the queue started since BurstStart(View.Now), its
	// demand times its expected run time (the job's Walltime, else the
	// Deadline). The caller keeps it; nil counts as nothing given yet.
	Used ledger.Vector
}

// validate checks a latency queue in a view.
func (q *LatencyQueue) validate(resources int) error {
	if err := q.LatencySpec.Validate(resources); err != nil {
		return err
	}
	if q.Class > Soft {
		return fmt.Errorf("latency queue class %v: a queue in a view is hard, soft or elastic (rejected queues are not admitted)", q.Class)
	}
	if q.Used != nil {
		if err := q.Used.Validate(resources); err != nil {
			return fmt.Errorf("latency queue usage this burst: %w", err)
		}
	}
	return nil
}

// Expected is how long a task of job is expected to run, in seconds, as
// Used counts it: the job's walltime, else the queue's deadline (a burst's
// task is not meant to outlast it).
func (q *LatencyQueue) Expected(job *Job) float64 {
	if job.Walltime > 0 {
		return job.Walltime.Seconds()
	}
	return q.Deadline.Seconds()
}

// bpfScratch is bpf's per-pass memory.
type bpfScratch struct {
	work  []ledger.Vector // soft queues: resource-seconds of pending work
	given []ledger.Vector // guaranteed queues: Used plus this pass's placements
	limit []ledger.Vector // guaranteed queues: d·t
	need  ledger.Vector   // scratch: running or given plus the next task
	guard []bool          // latency queue with a guarantee (bpf) or priority (sp)
}

// classGuaranteed ranks latency queues served under a guarantee (bpf) or
// with priority (sp) after starving accounts and before everyone else;
// classSpare ranks the demand of guaranteed queues beyond their guarantee
// after everyone else.
const (
	classGuaranteed = classSharingLoss
	classSpare      = classNormal + 1
)

// Sub-ranks within classGuaranteed, in rankKey.a.
const (
	rankHard = 0
	rankSoft = 1
)

// bpfPass runs a pass under bpf or sp, after prepare.
func (e *Engine) bpfPass(v *View) {
	strict := v.Settings.Policy == SP
	b := &e.bpf
	n := len(v.Resources)
	b.guard = resize(b.guard, len(v.Accounts))
	b.given = resize(b.given, len(v.Accounts))
	b.limit = resize(b.limit, len(v.Accounts))
	b.work = resize(b.work, len(v.Accounts))
	for a := range v.Accounts {
		lq := v.Accounts[a].Latency
		b.guard[a] = lq != nil && (strict || lq.Class != Elastic)
		if !b.guard[a] || strict {
			continue
		}
		b.given[a] = resize(b.given[a], n)
		clear(b.given[a])
		if lq.Used != nil {
			b.given[a].Add(lq.Used)
		}
		b.limit[a] = copyInto(b.limit[a], lq.Burst)
		b.limit[a].Scale(lq.Deadline.Seconds())
		if lq.Class == Soft {
			b.work[a] = pendingWork(b.work[a], v.Accounts[a].Queue, n, &e.fleet)
		}
	}
	e.fillByKey(v, func(a int) rankKey {
		f := &e.fair[a]
		dom := dominantShare(f.running, e.capacity, f.weight)
		switch {
		case !b.guard[a]:
			return rankKey{class: classNormal, a: dom}
		case strict:
			return rankKey{class: classGuaranteed, a: dom}
		}
		if !e.withinGuarantee(v, a) {
			// Beyond the burst's declared demand or its d·t: spare room only.
			return rankKey{class: classSpare, a: dom}
		}
		lq := v.Accounts[a].Latency
		if lq.Class == Hard {
			return rankKey{class: classGuaranteed, a: rankHard, b: dom}
		}
		return rankKey{class: classGuaranteed, a: rankSoft, b: remainingTime(b.work[a], lq.Burst), c: dom}
	}, func(a int, job *Job) {
		if !b.guard[a] || strict {
			return
		}
		lq := v.Accounts[a].Latency
		b.given[a].AddScaled(job.Demand, lq.Expected(job))
		if lq.Class == Soft {
			b.work[a].AddScaled(job.Demand, -taskSeconds(job))
		}
	})
}

// withinGuarantee reports whether guaranteed queue a's next task stays
// within its burst: what it holds stays within d, and what its burst has
// been given within d·t.
func (e *Engine) withinGuarantee(v *View, a int) bool {
	b := &e.bpf
	lq := v.Accounts[a].Latency
	cur := e.cursor[a]
	job := &v.Accounts[a].Queue[cur.job]
	b.need = copyInto(b.need, e.fair[a].running)
	b.need.Add(job.Demand)
	if !lq.Burst.Fits(b.need) {
		return false
	}
	b.need = copyInto(b.need, b.given[a])
	b.need.AddScaled(job.Demand, lq.Expected(job))
	return b.limit[a].Fits(b.need)
}

// taskSeconds is a task's expected run time in seconds: its job's walltime,
// or one second when the job has none, so that tasks still order by size.
func taskSeconds(job *Job) float64 {
	if s := job.Walltime.Seconds(); s > 0 {
		return s
	}
	return 1
}

// pendingWork is Σ pending tasks × run time × demand over the queue's jobs
// that the nodes of fl hold: the work still to do, in resource-seconds
// (see taskSeconds).
func pendingWork(dst ledger.Vector, queue []Job, resources int, fl *fleet) ledger.Vector {
	dst = resize(dst, resources)
	clear(dst)
	for i := range queue {
		if queue[i].Pending > 0 && fl.holds(&queue[i]) {
			dst.AddScaled(queue[i].Demand, float64(queue[i].Pending)*taskSeconds(&queue[i]))
		}
	}
	return dst
}

// remainingTime is how long the pending work takes at the burst's
// guaranteed rate: max_k work_k/d_k, the SRPT order among soft queues.
func remainingTime(work, burst ledger.Vector) float64 {
	t := 0.0
	for k, d := range burst {
		switch {
		case work[k] <= 0:
		case d > 0:
			t = math.Max(t, work[k]/d)
		default:
			return math.Inf(1) // needs a resource its guarantee does not cover
		}
	}
	return t
}

// bpfPolicy is the row of bpf or sp: both run bpfPass, which ranks by queue
// class (sp: latency queues strictly first) and admits latency bursts.
func bpfPolicy(p Policy) policyRow {
	return policyRow{
		name:    p,
		pass:    func(e *Engine, v *View) bool { e.bpfPass(v); return true },
		inexact: func(*Settings) bool { return true },
	}
}
