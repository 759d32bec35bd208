package simulate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
	"github.com/longfair/longfair/sim/reproduce"
)

// The QKnobler and BPF papers' inputs and experiments of longfair sim.
const simPapersUsage = `  --google FILE    a Google cluster-usage trace 2011 task_events part (.csv or
                   .csv.gz): each task submitted, started and finished inside
                   the part is a job of one task; users are accounts of equal
                   weight; --nodes machines of <0.5, 0.5> (default 10).
  --qknobler-testbed  the QKnobler paper's testbed mix (§7.2.1): the
                   macro-benchmark's jobs with weights 1:2:3:4.
  --bpf N          the BPF paper's setting (§5.1): one latency queue bursting
                   every 300 s (30 s of the whole cluster's memory declared)
                   beside N backlogged throughput queues on --nodes nodes of
                   <32 cores, 64 GB> (default 40); --lq-scale S sends S times
                   the declared burst; --bursts (default 10). Reports each
                   queue's job completion and long-term share. A list
                   (--bpf 1,2,4,8 or --lq-scale 1,2,4,8) prints the paper's
                   comparison of drf, sp and bpf over it instead.
  --bpf-queues     the BPF paper's §5.2.5: three latency queues and one
                   throughput queue; shows bpf's admission decisions.

QKnobler knob sweep (any input):
  --qknobler-sweep 0,0.25,0.5,0.75,1   replays qknobler at each ρ and drf, and
                   reports θ (soft fairness), ε (efficiency), Theorem 1's
                   bound and the speedups.
`

// paperOptions are the QKnobler and BPF flags.
type paperOptions struct {
	google          string
	qknoblerTestbed bool
	sweep           string
	bpf, lqScale    string
	bursts          int
	bpfQueues       bool

	rhos   []float64
	tqs    []int
	scales []int
}

func (p *paperOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&p.google, "google", "", "replay the Google 2011 task_events `FILE`")
	fs.BoolVar(&p.qknoblerTestbed, "qknobler-testbed", false, "replay the QKnobler paper's testbed mix (macro-benchmark jobs, weights 1:2:3:4)")
	fs.StringVar(&p.sweep, "qknobler-sweep", "", "replay qknobler at each knob of this comma-separated `LIST` in [0,1] beside drf and report θ and efficiency")
	fs.StringVar(&p.bpf, "bpf", "", "replay the BPF paper's setting with `N` throughput queues (a list compares drf, sp, bpf over it)")
	fs.StringVar(&p.lqScale, "lq-scale", "1", "bpf: the latency queue's jobs are `S` times its declared burst (a list compares drf, sp, bpf over it)")
	fs.IntVar(&p.bursts, "bursts", 10, "bpf: the latency queue's number of bursts")
	fs.BoolVar(&p.bpfQueues, "bpf-queues", false, "replay the BPF paper's three latency queues (§5.2.5)")
}

// inputs lists which of this file's inputs were given.
func (p *paperOptions) inputs() []bool {
	return []bool{p.google != "", p.qknoblerTestbed, p.bpf != "", p.bpfQueues}
}

// parse checks the flags once the flag set is parsed.
func (p *paperOptions) parse(fs *flag.FlagSet, format string) error {
	var err error
	if p.sweep != "" {
		if p.rhos, err = parseList(p.sweep, parseFloat); err != nil {
			return fmt.Errorf("--qknobler-sweep: %w", err)
		}
		for _, r := range p.rhos {
			if !(r >= 0 && r <= 1) {
				return fmt.Errorf("--qknobler-sweep: knob %v is out of range: give values in [0, 1], e.g. 0,0.25,0.5,0.75,1", r)
			}
		}
		if isSet(fs, "policy") {
			return errors.New("--qknobler-sweep compares qknobler at each knob with drf: leave out --policy")
		}
		if format != "table" {
			return errors.New("--qknobler-sweep reports a table: leave out --format")
		}
		if p.bpf != "" || p.bpfQueues {
			return errors.New("--qknobler-sweep replays one workload under qknobler: it does not take the bpf inputs")
		}
	}
	if p.bpf != "" {
		if p.tqs, err = parseList(p.bpf, strconv.Atoi); err != nil {
			return fmt.Errorf("--bpf: %w", err)
		}
		if p.scales, err = parseList(p.lqScale, strconv.Atoi); err != nil {
			return fmt.Errorf("--lq-scale: %w", err)
		}
		for _, n := range append(append([]int(nil), p.tqs...), p.scales...) {
			if n < 1 {
				return fmt.Errorf("--bpf and --lq-scale take positive numbers, got %d", n)
			}
		}
		if len(p.tqs) > 1 && len(p.scales) > 1 {
			return errors.New("give a list to one of --bpf and --lq-scale at a time")
		}
		if (len(p.tqs) > 1 || len(p.scales) > 1) && isSet(fs, "policy") {
			return errors.New("--bpf or --lq-scale with a list compares drf, sp and bpf: leave out --policy")
		}
	}
	if p.bursts < 1 {
		return fmt.Errorf("--bursts %d: give a positive number of bursts", p.bursts)
	}
	return nil
}

func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a comma-separated list of numbers", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// load loads this file's plain inputs; ok is false for other inputs.
func (p *paperOptions) load(opt *simOptions) (w *sim.Workload, ok bool, err error) {
	switch {
	case p.google != "":
		w, err = sim.LoadGoogle(p.google, sim.GoogleOptions{Machines: opt.nodes})
		if err != nil {
			err = fmt.Errorf("--google: %w", err)
		}
		return w, true, err
	case p.qknoblerTestbed:
		times := opt.fbTimes
		if times == "" {
			times = findSharedData("FB-2009_samples_24_times_1hr_1.tsv")
		}
		w, err = reproduce.QKnoblerTestbed(reproduce.MacroOptions{Seed: opt.seed, FacebookTimes: times})
		return w, true, err
	}
	return nil, false, nil
}

// runPaperExperiments runs the BPF inputs and the QKnobler sweep, which
// report more than the usual table; done is false for everything else.
func runPaperExperiments(opt *simOptions, stdout io.Writer) (done bool, err error) {
	p := &opt.paper
	switch {
	case p.sweep != "":
		w, err := loadSimWorkload(opt)
		if err != nil {
			return true, err
		}
		s, err := reproduce.QKnoblerSweep(w, sim.Config{Settings: simSettings(opt), Window: opt.window, MaxSamples: opt.maxSamples}, p.rhos)
		if err != nil {
			return true, err
		}
		return true, reproduce.WriteQKnoblerSweep(stdout, s)
	case p.bpf != "":
		o := reproduce.BPFScenarioOptions{Nodes: opt.nodes, Throughput: p.tqs[0], Bursts: p.bursts, Scale: p.scales[0], Seed: opt.seed}
		cfg := sim.Config{Settings: simSettings(opt), Window: opt.window, MaxSamples: opt.maxSamples}
		switch {
		case len(p.tqs) > 1:
			cs, err := reproduce.BPFByThroughputQueues(o, p.tqs, cfg)
			if err != nil {
				return true, err
			}
			return true, reproduce.WriteBPFByThroughputQueues(stdout, cs, p.tqs)
		case len(p.scales) > 1:
			cs, err := reproduce.BPFByBurstScale(o, p.scales, cfg)
			if err != nil {
				return true, err
			}
			return true, reproduce.WriteBPFByBurstScale(stdout, cs, p.scales)
		}
		lw, err := reproduce.BPFScenario(o)
		if err != nil {
			return true, err
		}
		return true, runLatencyPolicies(lw, opt, stdout)
	case p.bpfQueues:
		nodes := opt.nodes
		if nodes == 0 {
			nodes = 40
		}
		lw, err := reproduce.BPFThreeQueues(nodes, p.bursts, opt.seed)
		if err != nil {
			return true, err
		}
		return true, runLatencyPolicies(lw, opt, stdout)
	}
	return false, nil
}

// simSettings are the settings the command line gives every policy.
func simSettings(opt *simOptions) sched.Settings {
	s := sched.DefaultSettings()
	s.Quantum, s.Timeout, s.Placement, s.QKnoblerRho = opt.quantum, opt.timeout, opt.placement, opt.qknoblerRho
	return s
}

// runLatencyPolicies replays a latency workload under every policy of the
// command line and writes the usual report, then (as a table) each queue's
// admission and job completion.
func runLatencyPolicies(lw *sim.LatencyWorkload, opt *simOptions, stdout io.Writer) error {
	runs := make([]*sim.LatencyResult, len(opt.policies))
	errs := make([]error, len(opt.policies))
	sim.InParallel(len(opt.policies), func(i int) {
		p := opt.policies[i]
		s := simSettings(opt)
		s.Policy = p
		runs[i], errs[i] = sim.RunLatency(lw, sim.Config{Settings: s, Window: opt.window, MaxSamples: opt.maxSamples})
		if errs[i] != nil {
			errs[i] = fmt.Errorf("policy %s: %w", p, errs[i])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	results := make([]*sim.Result, len(runs))
	for i, r := range runs {
		results[i] = r.Result
	}
	var err error
	switch opt.format {
	case "json":
		return sim.WriteJSON(stdout, results)
	case "csv":
		return sim.WriteCSV(stdout, results)
	default:
		err = sim.WriteTable(stdout, lw.Workload, results)
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintln(stdout)
	return reproduce.WriteLatencyQueues(stdout, runs)
}
