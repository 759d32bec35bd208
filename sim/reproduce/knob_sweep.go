package reproduce

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

// QKnoblerPoint is one knob setting of a QKnobler sweep.
type QKnoblerPoint struct {
	Rho    float64
	Result *sim.Result
	// Theta is θ averaged over the time some account waited (QKnoblerMeter
	// MeanContended); ThetaMax the largest at any instant.
	Theta, ThetaMax float64
	// ThetaBound is Theorem 1's θ for the accounts' mean task demands.
	ThetaBound float64
	// Efficiency is Formula (7), Σ_k of the share of resource k in use,
	// averaged over the time some account waited (QKnoblerMeter
	// EfficiencyContended); Utilization is the same over the whole replay,
	// which is total work over makespan.
	Efficiency, Utilization float64
	// Speedup is the makespan at ρ = 1 over this one (the paper's Figure 8);
	// CompletionSpeedup the same for mean job completion time.
	Speedup, CompletionSpeedup float64
}

// QKnoblerSweepResult is a sweep of qknobler's knob with drf beside it.
type QKnoblerSweepResult struct {
	Workload string
	Points   []QKnoblerPoint // by ρ ascending; ρ = 1 is always there
	// DRF is the same replay under drf, with its θ as for a point.
	DRF QKnoblerPoint
	// IdenticalToDRF says whether qknobler at ρ = 1 started every task at
	// the same time on the same node as drf did.
	IdenticalToDRF bool
	// SharingIncentive is Theorem 2's smallest ρ that guarantees every
	// account at least its own partition's tasks, for the mean demands.
	SharingIncentive float64
}

// QKnoblerSweep replays w under qknobler at each knob in rhos (ρ = 1 is
// added when missing, as the reference of the speedups) and under drf, with
// cfg's other settings, and measures θ and efficiency.
func QKnoblerSweep(w *sim.Workload, cfg sim.Config, rhos []float64) (*QKnoblerSweepResult, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	rhos = slices.Clone(rhos)
	if !slices.Contains(rhos, 1) {
		rhos = append(rhos, 1)
	}
	slices.Sort(rhos)
	rhos = slices.Compact(rhos)
	type run struct {
		policy sched.Policy
		rho    float64
		point  QKnoblerPoint
		starts []sim.TraceEvent
		err    error
	}
	runs := []*run{{policy: sched.DRF, rho: 1}}
	for _, rho := range rhos {
		runs = append(runs, &run{policy: sched.QKnobler, rho: rho})
	}
	capacity := w.Capacity()
	weights := make([]float64, len(w.Accounts))
	for a := range w.Accounts {
		weights[a] = w.Accounts[a].Weight
	}
	if w.TotalWeight() == 0 {
		for a := range weights {
			weights[a] = 1
		}
	}
	demands := sim.MeanDemands(w)
	trace := sim.Serialized(cfg.Trace)
	sim.InParallel(len(runs), func(i int) {
		r := runs[i]
		c := cfg
		c.Settings.Policy, c.Settings.QKnoblerRho = r.policy, r.rho
		meter := sim.NewQKnoblerMeter(w)
		c.Trace = func(e sim.TraceEvent) {
			meter.Observe(e)
			if e.Kind == sim.Start {
				r.starts = append(r.starts, e)
			}
			if trace != nil {
				trace(e)
			}
		}
		res, err := sim.Run(w, c)
		if err != nil {
			r.err = fmt.Errorf("qknobler sweep, %s at ρ = %v: %w", r.policy, r.rho, err)
			return
		}
		bound, err := sched.QKnoblerThetaBound(capacity, weights, demands, r.rho)
		if err != nil {
			r.err = fmt.Errorf("qknobler sweep, Theorem 1 at ρ = %v: %w", r.rho, err)
			return
		}
		r.point = QKnoblerPoint{Rho: r.rho, Result: res, Theta: meter.MeanContended(), ThetaMax: meter.Max(), ThetaBound: bound,
			Efficiency: meter.EfficiencyContended()}
		for _, u := range res.Utilization {
			r.point.Utilization += u
		}
	})
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := &QKnoblerSweepResult{Workload: w.Name}
	var ref *run
	for _, r := range runs[1:] {
		if r.rho == 1 {
			ref = r
		}
	}
	out.IdenticalToDRF = slices.EqualFunc(ref.starts, runs[0].starts, sim.TraceEvent.Equal)
	for _, r := range runs {
		p := &r.point
		if p.Result.Makespan > 0 {
			p.Speedup = ref.point.Result.Makespan.Seconds() / p.Result.Makespan.Seconds()
		}
		if c := p.Result.MeanCompletion(); c > 0 {
			p.CompletionSpeedup = ref.point.Result.MeanCompletion().Seconds() / c.Seconds()
		}
	}
	out.DRF = runs[0].point
	for _, r := range runs[1:] {
		out.Points = append(out.Points, r.point)
	}
	si, err := sched.QKnoblerSharingIncentive(capacity, weights, demands)
	if err != nil {
		return nil, err
	}
	out.SharingIncentive = si
	return out, nil
}

// WriteQKnoblerSweep writes the sweep as a table.
func WriteQKnoblerSweep(out io.Writer, s *QKnoblerSweepResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "qknobler knob sweep on %s\n", s.Workload)
	fmt.Fprintln(&b, "ε: efficiency, Σ over resources of the share in use (Formula 7), mean while work waited (all: over the whole replay);")
	fmt.Fprintln(&b, "θ: soft fairness, the largest gap of weighted dominant shares between an account holding resources and one waiting,")
	fmt.Fprintln(&b, "mean while work waited, and max; θ bound: Theorem 1 for each account's mean task demand; speedups over ρ = 1.")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tρ\tmakespan\tspeedup\tmean completion\tspeedup\tε\tε all\tθ mean\tθ max\tθ bound\t")
	row := func(name, rho string, p QKnoblerPoint, bound string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f×\t%s\t%.3f×\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", name, rho,
			sim.FormatDuration(p.Result.Makespan), p.Speedup, sim.FormatDuration(p.Result.MeanCompletion().Round(time.Second)),
			p.CompletionSpeedup, p.Efficiency, p.Utilization, p.Theta, p.ThetaMax, bound)
	}
	row("drf", "–", s.DRF, "–")
	for _, p := range s.Points {
		row("qknobler", fmt.Sprintf("%.2f", p.Rho), p, fmt.Sprintf("%.3f", p.ThetaBound))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	same := "no"
	if s.IdenticalToDRF {
		same = "yes"
	}
	fmt.Fprintf(&b, "qknobler at ρ = 1 started every task when and where drf did: %s\n", same)
	fmt.Fprintf(&b, "sharing incentive guaranteed (Theorem 2) for ρ ≥ %.3f\n", s.SharingIncentive)
	_, err := io.WriteString(out, b.String())
	return err
}
