package sim

import (
	"math"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// QKnoblerMeter measures the QKnobler paper's two quantities over a replay:
// the soft fairness θ (sched.SoftFairness) and the efficiency ε of Formula
// (7), Σ_k of the share of resource k in use. It follows the replay's trace
// (Config.Trace), keeps what each account holds and how many of its tasks
// wait, and integrates both over time between settled instants, where they
// are piecewise constant. It works for any policy, so drf and qknobler
// compare on the same footing.
type QKnoblerMeter struct {
	w        *Workload
	capacity ledger.Vector
	runnable []bool // per job: its task fits some node (else it never waits in a queue)
	shares   []sched.AccountShare
	waiting  []int
	held     ledger.Vector // what all running tasks hold

	begun       bool
	last        ledger.Time
	current     float64 // θ since last
	efficiency  float64 // ε since last
	waited      bool    // someone waited since last
	first       ledger.Time
	integral    float64 // ∫θ dt in seconds
	max         float64
	contended   float64 // seconds with some account waiting
	thetaInWait float64 // ∫θ dt over those seconds
	effInWait   float64 // ∫ε dt over those seconds
}

// NewQKnoblerMeter returns a meter for replays of w.
func NewQKnoblerMeter(w *Workload) *QKnoblerMeter {
	m := &QKnoblerMeter{w: w, capacity: w.Capacity(), runnable: make([]bool, len(w.Jobs)),
		shares: make([]sched.AccountShare, len(w.Accounts)), waiting: make([]int, len(w.Accounts)),
		held: ledger.NewVector(len(w.Resources))}
	for j := range w.Jobs {
		m.runnable[j] = w.holds(&w.Jobs[j])
	}
	for a := range w.Accounts {
		m.shares[a] = sched.AccountShare{Weight: w.Accounts[a].Weight, Held: ledger.NewVector(len(w.Resources))}
	}
	if total := w.TotalWeight(); total == 0 {
		for a := range m.shares {
			m.shares[a].Weight = 1
		}
	}
	return m
}

// Observe is the Config.Trace callback; chain it when you need your own.
func (m *QKnoblerMeter) Observe(e TraceEvent) {
	switch e.Kind {
	case Arrive:
		if m.runnable[e.Job] {
			m.waiting[m.w.Jobs[e.Job].Account] += e.Tasks
		}
	case Start:
		job := &m.w.Jobs[e.Job]
		m.waiting[job.Account] -= e.Tasks
		m.shares[job.Account].Held.AddScaled(job.Demand, float64(e.Tasks))
		m.held.AddScaled(job.Demand, float64(e.Tasks))
	case End:
		job := &m.w.Jobs[e.Job]
		for _, held := range []ledger.Vector{m.shares[job.Account].Held, m.held} {
			held.AddScaled(job.Demand, -float64(e.Tasks))
			for k := range held {
				held[k] = math.Max(held[k], 0)
			}
		}
	case Settled:
		m.settle(e.Time)
	}
}

func (m *QKnoblerMeter) settle(t ledger.Time) {
	if !m.begun {
		m.begun, m.first = true, t
	} else if dt := t.Sub(m.last).Seconds(); dt > 0 {
		m.integral += m.current * dt
		if m.waited {
			m.contended += dt
			m.thetaInWait += m.current * dt
			m.effInWait += m.efficiency * dt
		}
	}
	m.last = t
	m.waited = m.anyWaiting()
	m.efficiency = 0
	for k, c := range m.capacity {
		if c > 0 {
			m.efficiency += m.held[k] / c
		}
	}
	for a := range m.shares {
		m.shares[a].Waiting = m.waiting[a] > 0
	}
	theta, err := sched.SoftFairness(m.capacity, m.shares)
	if err != nil {
		theta = 0 // shapes come from a validated workload; cannot happen
	}
	m.current = theta
	m.max = math.Max(m.max, theta)
}

func (m *QKnoblerMeter) anyWaiting() bool {
	for _, n := range m.waiting {
		if n > 0 {
			return true
		}
	}
	return false
}

// Mean is θ averaged over the replay, from the first event to the last.
func (m *QKnoblerMeter) Mean() float64 {
	if span := m.last.Sub(m.first).Seconds(); span > 0 {
		return m.integral / span
	}
	return 0
}

// MeanContended is θ averaged over the time some account's tasks waited:
// the fairness of the allocation when there was something to be unfair
// about.
func (m *QKnoblerMeter) MeanContended() float64 {
	if m.contended > 0 {
		return m.thetaInWait / m.contended
	}
	return 0
}

// Max is the largest θ at any settled instant.
func (m *QKnoblerMeter) Max() float64 { return m.max }

// EfficiencyContended is ε averaged over the time some account's tasks
// waited: how well the policy packs the cluster when it has the choice.
// (Averaged over the whole replay ε is only total work over makespan.)
func (m *QKnoblerMeter) EfficiencyContended() float64 {
	if m.contended > 0 {
		return m.effInWait / m.contended
	}
	return 0
}

// TotalWeight is the sum of the accounts' weights.
func (w *Workload) TotalWeight() float64 {
	total := 0.0
	for _, a := range w.Accounts {
		total += a.Weight
	}
	return total
}

// MeanDemands returns each account's mean task demand over the workload
// (tasks weighted equally), as Theorem 1's d_i; an account without jobs gets
// a zero vector.
func MeanDemands(w *Workload) []ledger.Vector {
	sum := make([]ledger.Vector, len(w.Accounts))
	count := make([]float64, len(w.Accounts))
	for a := range sum {
		sum[a] = ledger.NewVector(len(w.Resources))
	}
	for _, j := range w.Jobs {
		sum[j.Account].AddScaled(j.Demand, float64(j.Tasks))
		count[j.Account] += float64(j.Tasks)
	}
	for a := range sum {
		if count[a] > 0 {
			sum[a].Scale(1 / count[a])
		}
	}
	return sum
}
