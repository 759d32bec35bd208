package ledger

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// This file holds an independent reference for the fairness book: it keeps
// the whole event history and recomputes every figure from the window's
// definition, with no incremental state, and a generator of random event
// streams to feed both.

// opKind is what one step of a generated event stream does.
type opKind int

const (
	opStart opKind = iota
	opEnd
	opRate
	opQuery
)

type op struct {
	kind    opKind
	account string
	vec     Vector // demand or baseline rate
	started Time   // opEnd: when the ending task started
	at      Time
}

// apply feeds one non-query op to a book.
func (o op) apply(b *FairnessBook) {
	switch o.kind {
	case opStart:
		b.TaskStarted(o.account, o.vec, o.at)
	case opEnd:
		b.TaskEnded(o.account, o.vec, o.started, o.at)
	case opRate:
		b.SetBaselineRate(o.account, o.vec, o.at)
	}
}

func (o op) String() string {
	return fmt.Sprintf("{%d %s %v started=%d at=%d}", o.kind, o.account, o.vec, o.started, o.at)
}

// refTask is one task in the reference history; a task not yet ended has
// ended false.
type refTask struct {
	account    string
	demand     Vector
	start, end Time
	ended      bool
}

type refRate struct {
	rate Vector
	at   Time
}

// reference is the brute-force model: the full list of tasks and of baseline
// rate changes, per account.
type reference struct {
	resources int
	tasks     []refTask
	rates     map[string][]refRate
}

func newReference(resources int) *reference {
	return &reference{resources: resources, rates: make(map[string][]refRate)}
}

// record adds a non-query op to the history. Times in generated streams
// never go backwards, so the reference needs no clamping.
func (r *reference) record(o op) {
	switch o.kind {
	case opStart:
		r.tasks = append(r.tasks, refTask{account: o.account, demand: o.vec.Clone(), start: o.at})
	case opEnd:
		for i := range r.tasks {
			t := &r.tasks[i]
			if !t.ended && t.account == o.account && t.start == o.started && equalRates(t.demand, o.vec) {
				t.end, t.ended = o.at, true
				return
			}
		}
		panic("reference: end of a task that is not running: " + o.String())
	case opRate:
		r.rates[o.account] = append(r.rates[o.account], refRate{o.vec.Clone(), o.at})
	}
}

// weight is ∫_a^b of the window's weight at query time q, for a ≤ b ≤ q:
// how many seconds of a constant rate over [a, b] count at q.
func weight(w Window, a, b, q Time) float64 {
	switch w.Kind {
	case WindowTumbling:
		l := Time(w.Length)
		windowStart := q - ((q%l)+l)%l // q rounded down to a multiple of l
		a = max(a, windowStart)
		if b <= a {
			return 0
		}
		return float64(b-a) / 1e9
	case WindowSliding:
		a = max(a, q-Time(w.Length))
		if b <= a {
			return 0
		}
		return float64(b-a) / 1e9
	case WindowDecay:
		// ∫_a^b 2^(−(q−x)/H) dx
		h := w.Length.Seconds()
		ageA, ageB := float64(q-a)/1e9, float64(q-b)/1e9
		return h / math.Ln2 * (math.Exp2(-ageB/h) - math.Exp2(-ageA/h))
	default:
		return float64(b-a) / 1e9
	}
}

// usage is Ü of the account at q by the window's definition.
func (r *reference) usage(w Window, account string, q Time) Vector {
	u := NewVector(r.resources)
	for _, t := range r.tasks {
		if t.account != account || t.start > q {
			continue
		}
		end := q
		if t.ended && t.end <= q {
			end = t.end
		}
		var secs float64
		if w.Kind == WindowSliding {
			// The paper's sliding window: a task counts in full if it ended
			// within [q−L, q], and so far if it is still running.
			if t.ended && t.end < q-Time(w.Length) {
				continue
			}
			secs = float64(end-t.start) / 1e9
		} else {
			secs = weight(w, t.start, end, q)
		}
		u.AddScaled(t.demand, secs)
	}
	return u
}

// baseline is ∫baseline of the account at q by the window's definition.
func (r *reference) baseline(w Window, account string, q Time) Vector {
	v := NewVector(r.resources)
	rates := r.rates[account]
	for k, seg := range rates {
		if seg.at > q {
			break
		}
		end := q
		if k+1 < len(rates) && rates[k+1].at < q {
			end = rates[k+1].at
		}
		v.AddScaled(seg.rate, weight(w, seg.at, end, q))
	}
	return v
}

// rate is U_i: the summed demand of the account's tasks running at q.
func (r *reference) rate(account string) Vector {
	v := NewVector(r.resources)
	for _, t := range r.tasks {
		if t.account == account && !t.ended {
			v.Add(t.demand)
		}
	}
	return v
}

// lastAllocation is the time of the account's last task start.
func (r *reference) lastAllocation(account string) (Time, bool) {
	var last Time
	found := false
	for _, t := range r.tasks {
		if t.account == account {
			last, found = max(last, t.start), true
		}
	}
	return last, found
}

// genConfig shapes a generated event stream.
type genConfig struct {
	accounts []string
	steps    int
	origin   Time          // time of the first event
	maxStep  time.Duration // largest gap between consecutive events
	// grain, when set, makes every gap and look-ahead a whole number of
	// grains, so that events land exactly on window edges and boundaries.
	grain time.Duration
}

// resources of generated streams: cpu cores, memory bytes, mic devices.
const genResources = 3

func randomDemand(rng *rand.Rand) Vector {
	cpus := []float64{0, 0.5, 1, 2, 4, 16, 64}
	return Vector{cpus[rng.IntN(len(cpus))], math.Round(rng.Float64() * 6.4e10), float64(rng.IntN(3))}
}

// randomOps generates a random but well-formed event stream: times never go
// backwards (and often repeat), ends match running tasks, baseline rates are
// sometimes zero and sometimes unchanged, and queries look at the present or
// up to a day ahead.
func randomOps(seed uint64, cfg genConfig) []op {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	type running struct {
		demand  Vector
		started Time
	}
	live := make(map[string][]running)
	lastRate := make(map[string]Vector)
	span := func(limit time.Duration) Time {
		if cfg.grain > 0 {
			return Time(rng.Int64N(int64(limit/cfg.grain)+1)) * Time(cfg.grain)
		}
		return Time(rng.Int64N(int64(limit)))
	}
	now := cfg.origin
	ops := make([]op, 0, cfg.steps)
	for range cfg.steps {
		if rng.IntN(4) != 0 {
			now += span(cfg.maxStep)
		}
		acct := cfg.accounts[rng.IntN(len(cfg.accounts))]
		switch p := rng.IntN(100); {
		case p < 35:
			d := randomDemand(rng)
			live[acct] = append(live[acct], running{d, now})
			ops = append(ops, op{kind: opStart, account: acct, vec: d, at: now})
		case p < 65:
			tasks := live[acct]
			if len(tasks) == 0 {
				continue
			}
			i := rng.IntN(len(tasks))
			t := tasks[i]
			live[acct] = append(tasks[:i], tasks[i+1:]...)
			ops = append(ops, op{kind: opEnd, account: acct, vec: t.demand, started: t.started, at: now})
		case p < 80:
			var r Vector
			switch rng.IntN(5) {
			case 0:
				r = NewVector(genResources)
			case 1:
				r = lastRate[acct].Clone()
				if r == nil {
					r = NewVector(genResources)
				}
			default:
				r = randomDemand(rng)
				r.Scale(float64(1 + rng.IntN(8)))
			}
			lastRate[acct] = r
			ops = append(ops, op{kind: opRate, account: acct, vec: r, at: now})
		default:
			ahead := Time(0)
			if rng.IntN(2) == 0 {
				ahead = span(24 * time.Hour)
			}
			q := acct
			if rng.IntN(10) == 0 {
				q = "nobody"
			}
			ops = append(ops, op{kind: opQuery, account: q, at: now + ahead})
		}
	}
	return ops
}
