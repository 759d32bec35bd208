package reproduce

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

// bpfPolicies are the policies BPF is compared with in its paper: DRF (the
// fairness bound) and strict priority (the latency bound).
var bpfPolicies = []sched.Policy{sched.DRF, sched.SP, sched.BPF}

// BPFComparison is one latency workload replayed under drf, sp and bpf.
type BPFComparison struct {
	Workload string
	// Runs are in the order drf, sp, bpf.
	Runs []*sim.LatencyResult
}

// CompareBPF replays lw under drf, sp and bpf with cfg's other settings.
func CompareBPF(lw *sim.LatencyWorkload, cfg sim.Config) (*BPFComparison, error) {
	out := &BPFComparison{Workload: lw.Name, Runs: make([]*sim.LatencyResult, len(bpfPolicies))}
	errs := make([]error, len(bpfPolicies))
	cfg.Trace = sim.Serialized(cfg.Trace)
	sim.InParallel(len(bpfPolicies), func(i int) {
		p := bpfPolicies[i]
		c := cfg
		c.Settings.Policy = p
		out.Runs[i], errs[i] = sim.RunLatency(lw, c)
		if errs[i] != nil {
			errs[i] = fmt.Errorf("%s: %w", p, errs[i])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// Run returns the replay under policy p.
func (c *BPFComparison) Run(p sched.Policy) *sim.LatencyResult {
	for i, q := range bpfPolicies {
		if q == p {
			return c.Runs[i]
		}
	}
	return nil
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

// BPFByThroughputQueues replays the BPF scenario with each number of
// throughput queues under drf, sp and bpf (the paper's Table 3).
func BPFByThroughputQueues(opt BPFScenarioOptions, counts []int, cfg sim.Config) ([]*BPFComparison, error) {
	return compareBPFScenarios(opt, counts, func(o *BPFScenarioOptions, n int) { o.Throughput = n }, cfg)
}

// BPFByBurstScale replays the BPF scenario with the latency queue's jobs
// scaled beyond its declaration (the paper's Figures 7 and 8).
func BPFByBurstScale(opt BPFScenarioOptions, scales []int, cfg sim.Config) ([]*BPFComparison, error) {
	return compareBPFScenarios(opt, scales, func(o *BPFScenarioOptions, s int) { o.Scale = s }, cfg)
}

// compareBPFScenarios compares the policies on the BPF scenario with each
// of values set into opt by set.
func compareBPFScenarios(opt BPFScenarioOptions, values []int, set func(*BPFScenarioOptions, int), cfg sim.Config) ([]*BPFComparison, error) {
	var out []*BPFComparison
	for _, v := range values {
		o := opt
		set(&o, v)
		lw, err := BPFScenario(o)
		if err != nil {
			return nil, err
		}
		c, err := CompareBPF(lw, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// WriteBPFByThroughputQueues writes the latency queue's mean job completion
// under each policy against the number of throughput queues, and the factor
// of improvement of bpf over drf (the paper's Table 3: 1.18 to 5.38).
func WriteBPFByThroughputQueues(out io.Writer, cs []*BPFComparison, counts []int) error {
	var b strings.Builder
	fmt.Fprintln(&b, "BPF: one latency queue beside N backlogged throughput queues; mean completion of the latency queue's jobs")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TQs\tdrf\tsp\tbpf\tdrf/bpf (paper 1.18–5.38)\tbpf/sp\tbpf class\t")
	for i, c := range cs {
		d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.2f×\t%.2f\t%v\t\n", counts[i],
			sim.FormatDuration(d.LatencyCompletion()), sim.FormatDuration(s.LatencyCompletion()), sim.FormatDuration(p.LatencyCompletion()),
			ratio(d.LatencyCompletion(), p.LatencyCompletion()), ratio(p.LatencyCompletion(), s.LatencyCompletion()), p.Queues[0].Class)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteBPFByBurstScale writes the throughput queues' mean job completion
// and long-term shares under each policy as the latency queue's jobs grow
// beyond what it declared (the paper's Figure 7: bpf protects batch jobs up
// to 3.05× against sp; Figure 8: bpf keeps drf's shares).
func WriteBPFByBurstScale(out io.Writer, cs []*BPFComparison, scales []int) error {
	var b strings.Builder
	fmt.Fprintln(&b, "BPF: the latency queue's jobs scaled beyond its declared burst; throughput queues' mean job completion and")
	fmt.Fprintln(&b, "long-term dominant shares (while every throughput queue had work waiting), LQ's share beside them")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LQ scale\tTQ drf\tTQ sp\tTQ bpf\tsp/bpf (paper ≤ 3.05)\tTQ share drf\tsp\tbpf\tLQ share drf\tsp\tbpf\t")
	for i, c := range cs {
		d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
		fmt.Fprintf(tw, "%d×\t%s\t%s\t%s\t%.2f×\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", scales[i],
			sim.FormatDuration(d.ThroughputCompletion()), sim.FormatDuration(s.ThroughputCompletion()), sim.FormatDuration(p.ThroughputCompletion()),
			ratio(s.ThroughputCompletion(), p.ThroughputCompletion()),
			d.ThroughputShare(), s.ThroughputShare(), p.ThroughputShare(),
			d.LatencyShare(), s.LatencyShare(), p.LatencyShare())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteBPFQueues writes one comparison queue by queue: bpf's admission
// decision and each queue's mean job completion under each policy (the
// paper's Figure 10 for §5.2.5).
func WriteBPFQueues(out io.Writer, c *BPFComparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", c.Workload)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "queue\tbpf admission\tdrf\tsp\tbpf\tbpf on time\t")
	d, s, p := c.Run(sched.DRF), c.Run(sched.SP), c.Run(sched.BPF)
	for i := range p.Queues {
		onTime := "–"
		if p.Queues[i].Latency {
			onTime = fmt.Sprintf("%d/%d", p.Queues[i].OnTime, p.Queues[i].Jobs)
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\t\n", p.Queues[i].Name, p.Queues[i].Class,
			sim.FormatDuration(d.Queues[i].MeanCompletion), sim.FormatDuration(s.Queues[i].MeanCompletion), sim.FormatDuration(p.Queues[i].MeanCompletion), onTime)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range p.Queues {
		fmt.Fprintf(&b, "%s: %s\n", p.Queues[i].Name, p.Admissions[i].Reason)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteLatencyQueues writes, queue by queue, bpf's admission decision (when
// one of the runs is bpf's) and each run's mean job completion, jobs done
// by the latency queue's deadline and long-term share.
func WriteLatencyQueues(out io.Writer, runs []*sim.LatencyResult) error {
	if len(runs) == 0 {
		return nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	var admissions []sched.Admission
	fmt.Fprint(tw, "queue\t")
	for _, r := range runs {
		if r.Admissions != nil {
			admissions = r.Admissions
			fmt.Fprint(tw, "bpf admission\t")
			break
		}
	}
	for _, r := range runs {
		fmt.Fprintf(tw, "%s completion\ton time\tshare\t", r.Policy)
	}
	fmt.Fprintln(tw)
	for i, q := range runs[0].Queues {
		fmt.Fprintf(tw, "%s\t", q.Name)
		if admissions != nil {
			fmt.Fprintf(tw, "%v\t", admissions[i].Class)
		}
		for _, r := range runs {
			q := r.Queues[i]
			onTime := "–"
			if q.Latency {
				onTime = fmt.Sprintf("%d/%d", q.OnTime, q.Jobs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t", sim.FormatDuration(q.MeanCompletion), onTime, q.Share)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(&b, "share: dominant share of the queue's mean allocation while every throughput queue had work waiting")
	for i, d := range admissions {
		fmt.Fprintf(&b, "%s: %s\n", runs[0].Queues[i].Name, d.Reason)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
