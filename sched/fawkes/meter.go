package fawkes

import (
	"math"

	"github.com/longfair/longfair/ledger"
)

// Meter follows the accounts through one interval after another: it
// integrates their samples and the share of the cluster each holds, counts
// their completions, and at the end of each interval computes the new
// weights and decides whether to resize (Tick). It keeps no clock; every
// call says what time it is, and times must not go backwards.
type Meter struct {
	cfg         Config
	since, last ledger.Time
	now         []Sample
	held        []float64
	sum         []Averages
	heldSum     []float64
}

// NewMeter starts a meter for n accounts at time start. cfg's zero fields
// mean their defaults.
func NewMeter(cfg Config, n int, start ledger.Time) *Meter {
	return &Meter{
		cfg: cfg.WithDefaults(), since: start, last: start,
		now: make([]Sample, n), held: make([]float64, n), sum: make([]Averages, n), heldSum: make([]float64, n),
	}
}

// Config is the meter's configuration, defaults filled in.
func (m *Meter) Config() Config { return m.cfg }

// Advance integrates every account's current sample and held share up to t.
func (m *Meter) Advance(t ledger.Time) {
	dt := t.Sub(m.last).Seconds()
	if dt <= 0 {
		return
	}
	for i := range m.now {
		s, a := &m.now[i], &m.sum[i]
		a.WaitingJobs += s.WaitingJobs * dt
		a.WaitingTasks += s.WaitingTasks * dt
		a.WaitingWork += s.WaitingWork * dt
		a.ProcessorUse += s.ProcessorUse * dt
		a.DiskUse += s.DiskUse * dt
		a.Slowdown += s.Slowdown*dt + s.SlowdownGrowth*dt*dt/2
		s.Slowdown += s.SlowdownGrowth * dt
		m.heldSum[i] += m.held[i] * dt
	}
	m.last = t
}

// Set gives account i's state from the last Advance on: its sample and the
// fraction of the cluster it holds, c_i.
func (m *Meter) Set(i int, s Sample, held float64) {
	m.now[i] = s
	m.held[i] = held
}

// Completed counts jobs and tasks account i completed.
func (m *Meter) Completed(i int, jobs, tasks int) {
	m.sum[i].CompletedJobs += float64(jobs)
	m.sum[i].CompletedTasks += float64(tasks)
}

// NextTick is when the current interval ends.
func (m *Meter) NextTick() ledger.Time { return m.since.Add(m.cfg.Interval) }

// Decision is what a Tick concluded.
type Decision struct {
	// Averages are the accounts' samples averaged over the interval.
	Averages []Averages
	// Weights are the new weights, and Shares the partitions they give.
	Weights, Shares []float64
	// Discrimination is D_i over the interval against those shares:
	// ∫c_i dt − share_i·T, in share·seconds (0 for inactive accounts), and
	// Variance the global discrimination factor Var(D) over the active
	// accounts.
	Discrimination []float64
	Variance       float64
	// Resize says whether to give the accounts the new shares: the
	// variance exceeds τ, or the weighting is a baseline (none, eq), which
	// always holds its shares.
	Resize bool
}

// Tick ends the interval at t (advancing to it first) and starts the next:
// it computes the new weights from the interval's averages, the shares they
// give with the minimum shares mins, the discrimination against them, and
// whether to resize. active says which accounts have work.
func (m *Meter) Tick(t ledger.Time, active []bool, mins []float64) Decision {
	m.Advance(t)
	span := t.Sub(m.since).Seconds()
	d := Decision{Averages: make([]Averages, len(m.now))}
	for i := range m.now {
		a := m.sum[i]
		if span > 0 {
			a.WaitingJobs /= span
			a.WaitingTasks /= span
			a.WaitingWork /= span
			a.ProcessorUse /= span
			a.DiskUse /= span
			a.Slowdown /= span
		} else {
			a.Sample = m.now[i]
		}
		d.Averages[i] = a
	}
	d.Weights = Weights(m.cfg, d.Averages, active)
	d.Shares = Shares(m.cfg, d.Weights, mins, active)
	d.Discrimination = make([]float64, len(m.now))
	var ds []float64
	for i := range m.now {
		if active[i] {
			d.Discrimination[i] = m.heldSum[i] - d.Shares[i]*span
			ds = append(ds, d.Discrimination[i])
		}
	}
	d.Variance = Variance(ds)
	d.Resize = d.Variance > m.cfg.Threshold || m.cfg.Weighting == Equal || m.cfg.Weighting == None
	for i := range m.sum {
		m.sum[i] = Averages{}
		m.heldSum[i] = 0
	}
	m.since = t
	return d
}

// Variance is E[D²] − E[D]² over the values, the paper's global
// discrimination factor (Eq. 3); 0 for none.
func Variance(d []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	mean, sq := 0.0, 0.0
	for _, x := range d {
		mean += x
		sq += x * x
	}
	n := float64(len(d))
	mean /= n
	return math.Max(0, sq/n-mean*mean)
}

// Held is the fraction of the cluster an allocation holds, c_i: the mean
// over the resources the cluster has of the allocation's share of each. On
// a cluster of one resource it is exactly FAWKES's fraction of resources.
func Held(allocation, capacity ledger.Vector) float64 {
	s, n := 0.0, 0
	for j, c := range capacity {
		if c > 0 {
			s += allocation[j] / c
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
