package simulate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/place"
	"github.com/longfair/longfair/sim"
	"github.com/longfair/longfair/sim/reproduce"
)

const simUsage = `Usage: longfair sim INPUT [flags]

Replays a workload through longfair's policy engine and fairness book with a
virtual clock, under one or more policies side by side, and reports per
account the sharing degree β (≥ 1: at least what the account's own partition
would have given it), usage against contribution, job wait, completion and
slowdown, plus utilization and makespan.

Example:
  longfair sim --macro --policy hmrf,ltdrf,ltaf,drf,static
  longfair sim --slotted table1.json --policy hmrf,drf --format json
  longfair sim --swf ../shared/data/HPC2N-2002-2.2-alea-subset.swf --top 8 --window decay:7d --plot beta.svg
  longfair sim --google ../shared/data/google-2011/task_events-part-00235-of-00500.csv.gz --qknobler-sweep 0,0.25,0.5,0.75,1
  longfair sim --bpf 8 --lq-scale 8 --policy drf,sp,bpf

INPUT (exactly one):
  --slotted FILE   the paper's slotted examples as JSON:
                   {"capacity":{"cpu":100,"mem":100},
                    "accounts":[{"name":"A","weight":1,"task":{"cpu":1,"mem":4}},...],
                    "slots":[{"A":30,"B":4},{"A":20,"B":24},...]}
                   (new tasks per slot; tasks run one slot; one machine; the
                   quantum is one slot; the replay ends after the last slot)
  --swf FILE       a Parallel Workloads Archive log (.swf or .swf.gz). The
                   machine is MaxNodes nodes of MaxProcs/MaxNodes cpus (one
                   cpu per node without MaxNodes); a job of P processors
                   (allocated, else requested) runs on ceil(P/cpus) whole
                   nodes at once, planned by backfill with its requested
                   time (else its run time); jobs wider than the machine,
                   records without run time or processors are skipped and
                   counted; runs under 1 s are replayed as 1 s.
                   --swf-one-node replays the log on ONE node of MaxProcs
                   cpus instead, as earlier versions did.
  --swim FILE      a SWIM Facebook trace (FB-*.tsv): maps of 128 MiB of input
                   at 8 MiB/s, reduces of 1 GiB of shuffle at 8 MiB/s;
                   accounts are size classes tiny/small/medium/large.
  --macro          the H-MRF paper's macro-benchmark (§7.1): 59 nodes of
                   <4 cores, 15 GB>, four accounts of equal contribution.
  --synthetic N    a random workload of N tasks (see --accounts, --nodes).
` + simPapersUsage + simTreeFawkesUsage + `
Flags:
`

// simOptions are the parsed command line.
type simOptions struct {
	policies        []sched.Policy
	backfills       []sched.Backfill // nil: the zero mode, no job-time columns
	reservations    int              // K for conservative backfill; 0: the default
	swfOneNode      bool
	window          ledger.Window
	timeout         time.Duration
	placement       place.Strategy
	quantum         time.Duration
	quantumSet      bool
	ltrfResource    string
	qknoblerRho     float64
	format, plot    string
	slotted, swf    string
	swim, fbTimes   string
	macro           bool
	synthetic       int
	seed            uint64
	accountBy       string
	top, procs      int
	nodes, accounts int
	maxSamples      int
	paper           paperOptions      // experiments.go
	tf              treeFawkesOptions // tree_weighting.go
}

func runSim(args []string, stdout, stderr io.Writer) error {
	opt, err := parseSimFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if done, err := runPaperExperiments(opt, stdout); done {
		return err
	}
	if done, err := runTreeFawkesExperiments(opt, stdout); done {
		return err
	}
	w, err := loadSimWorkload(opt)
	if err != nil {
		return err
	}
	if err := opt.tf.applyTree(w); err != nil {
		return err
	}
	results, err := runPolicies(w, opt)
	if err != nil {
		return err
	}
	switch opt.format {
	case "json":
		err = sim.WriteJSON(stdout, results)
	case "csv":
		err = sim.WriteCSV(stdout, results)
	default:
		err = sim.WriteTable(stdout, w, results)
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if opt.plot != "" {
		if err := writePlotFile(opt.plot, results); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s\n", opt.plot)
	}
	return nil
}

func parseSimFlags(args []string, stdout io.Writer) (*simOptions, error) {
	opt := &simOptions{}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(stdout, simUsage)
		cli.PrintFlags(stdout, fs)
	}
	policies := fs.String("policy", "hmrf", "policy, or a comma-separated list run side by side: "+policyNames())
	window := fs.String("window", "none", "fairness window: none, tumbling:L, sliding:L or decay:H (H the half-life), e.g. decay:7d")
	timeout := fs.String("timeout", "", "starvation time-out, e.g. 30m, or off (default: the window's length, off without a window)")
	placement := fs.String("placement", string(place.Affinity), "node choice: affinity, bestfit or spread")
	quantum := fs.Duration("quantum", sched.DefaultQuantum, "how far ahead fairness is projected in a pass (slotted input: one slot)")
	fs.StringVar(&opt.ltrfResource, "ltrf-resource", "", "the one resource ltrf is fair on (default: the first resource)")
	fs.Float64Var(&opt.qknoblerRho, "qknobler-rho", sched.DefaultQKnoblerRho, "qknobler's knob ρ in [0,1]: 1 is drf, 0 efficiency only (0.5 as in the QKnobler paper's Fig. 8b)")
	fs.StringVar(&opt.format, "format", "table", "report format: table, json or csv")
	fs.StringVar(&opt.plot, "plot", "", "also write an SVG of β over time per account, one panel per policy, to this file")
	fs.StringVar(&opt.slotted, "slotted", "", "replay the paper-style slotted JSON `FILE`")
	fs.StringVar(&opt.swf, "swf", "", "replay the SWF log `FILE` (plain or .gz)")
	fs.StringVar(&opt.swim, "swim", "", "replay the SWIM Facebook trace `FILE`")
	fs.BoolVar(&opt.macro, "macro", false, "replay the H-MRF paper's macro-benchmark")
	fs.IntVar(&opt.synthetic, "synthetic", 0, "replay a synthetic workload of `N` tasks")
	fs.Uint64Var(&opt.seed, "seed", 1, "seed of the generators (--macro, --synthetic)")
	fs.StringVar(&opt.accountBy, "account-by", "user", "SWF: account = user or group")
	fs.IntVar(&opt.top, "top", 0, "SWF: keep the N heaviest accounts and fold the rest into \"others\" (0: keep all)")
	fs.IntVar(&opt.procs, "procs", 0, "SWF: machine size in processors (default: the MaxProcs/MaxNodes header)")
	fs.BoolVar(&opt.swfOneNode, "swf-one-node", false, "SWF: model the machine as one node of all its processors, each job one task (the model before nodes)")
	backfill := fs.String("backfill", "", "what a pass does at the first job that cannot start: easy (reserve for it), conservative (reserve for the first --reservations such jobs), none (stop) or greedy (go on filling; the default), or a comma-separated list run side by side with each policy; the report then adds mean and max wait and bounded slowdown")
	fs.IntVar(&opt.reservations, "reservations", 0, fmt.Sprintf("K, how many of the first jobs that cannot start --backfill conservative reserves for (0: the default, %d)", sched.DefaultReservations))
	fs.IntVar(&opt.nodes, "nodes", 0, "SWF: nodes (default: the MaxNodes header); SWIM: nodes of <4 cores, 15 GB> (default 59); synthetic: nodes of <32 cores, 128 GB> (default 256); google: machines (default 10); bpf: nodes of <32 cores, 64 GB> (default 40)")
	fs.IntVar(&opt.accounts, "accounts", 0, "synthetic: number of accounts (default 16)")
	fs.StringVar(&opt.fbTimes, "fb-times", "", "macro: SWIM trace for User1's submission times (default: FB-2009_samples_24_times_1hr_1.tsv in ../shared/data when found)")
	fs.IntVar(&opt.maxSamples, "samples", 1000, "β-over-time points kept per account (about)")
	opt.paper.register(fs)
	opt.tf.register(fs)
	pos, _, err := cli.ParseGNU(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
	}
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, fmt.Errorf("unexpected argument %q: inputs are given with --slotted, --swf, --swim, --macro or --synthetic", pos[0])
	}
	opt.quantumSet = isSet(fs, "quantum")
	inputs := 0
	for _, given := range append(append([]bool{opt.slotted != "", opt.swf != "", opt.swim != "", opt.macro, isSet(fs, "synthetic")}, opt.paper.inputs()...), opt.tf.inputs()...) {
		if given {
			inputs++
		}
	}
	if inputs != 1 {
		return nil, errors.New("give exactly one input: --slotted FILE, --swf FILE, --swim FILE, --macro, --synthetic N, --google FILE, --qknobler-testbed, --bpf N, --bpf-queues, --dff or --fawkes-bursty (see longfair sim --help)")
	}
	for _, name := range strings.Split(*policies, ",") {
		p, err := sched.ParsePolicy(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("--policy: %w", err)
		}
		opt.policies = append(opt.policies, p)
	}
	if opt.window, err = ledger.ParseWindow(*window); err != nil {
		return nil, fmt.Errorf("--window: %w", err)
	}
	opt.timeout = opt.window.DefaultTimeout()
	switch t := strings.TrimSpace(*timeout); t {
	case "":
	case "off":
		opt.timeout = 0
	default:
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--timeout %q: give a positive duration such as 30m or 24h, or off to disable the starvation time-out", t)
		}
		opt.timeout = d
	}
	if opt.placement, err = place.ParseStrategy(*placement); err != nil {
		return nil, fmt.Errorf("--placement: %w", err)
	}
	if *quantum <= 0 {
		return nil, fmt.Errorf("--quantum %v: the quantum must be positive, e.g. 1m", *quantum)
	}
	opt.quantum = *quantum
	switch opt.format {
	case "table", "json", "csv":
	default:
		return nil, fmt.Errorf("--format %q: choose table, json or csv", opt.format)
	}
	if opt.synthetic < 0 || opt.top < 0 || opt.procs < 0 || opt.nodes < 0 || opt.accounts < 0 || opt.maxSamples < 0 {
		return nil, errors.New("--synthetic, --top, --procs, --nodes, --accounts and --samples must not be negative")
	}
	if opt.reservations < 0 {
		return nil, fmt.Errorf("--reservations %d: give how many jobs conservative backfill reserves for, 1 or more (0 is the default, %d)", opt.reservations, sched.DefaultReservations)
	}
	if isSet(fs, "backfill") {
		for _, name := range strings.Split(*backfill, ",") {
			b, err := sched.ParseBackfill(strings.TrimSpace(name))
			if err != nil {
				return nil, fmt.Errorf("--backfill: %w", err)
			}
			opt.backfills = append(opt.backfills, b)
		}
	}
	if isSet(fs, "synthetic") && opt.synthetic == 0 {
		return nil, errors.New("--synthetic N: give a positive number of tasks, e.g. --synthetic 100000")
	}
	if err := opt.paper.parse(fs, opt.format); err != nil {
		return nil, err
	}
	if err := opt.tf.parse(fs, opt); err != nil {
		return nil, err
	}
	return opt, nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func policyNames() string {
	var names []string
	for _, p := range sched.Policies() {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}

func loadSimWorkload(opt *simOptions) (*sim.Workload, error) {
	if w, ok, err := opt.paper.load(opt); ok {
		return w, err
	}
	if w, ok, err := opt.tf.load(opt); ok {
		return w, err
	}
	switch {
	case opt.slotted != "":
		f, err := os.Open(opt.slotted)
		if err != nil {
			return nil, fmt.Errorf("--slotted: %w", err)
		}
		defer f.Close()
		return sim.LoadSlotted(opt.slotted, f)
	case opt.swf != "":
		w, _, err := sim.LoadSWFFile(opt.swf, sim.SWFOptions{AccountBy: opt.accountBy, Top: opt.top, Procs: opt.procs, Nodes: opt.nodes, OneNode: opt.swfOneNode})
		return w, err
	case opt.swim != "":
		return sim.LoadSWIMFile(opt.swim, sim.SWIMOptions{Nodes: opt.nodes})
	case opt.macro:
		times := opt.fbTimes
		if times == "" {
			times = findSharedData("FB-2009_samples_24_times_1hr_1.tsv")
		}
		return reproduce.Macro(reproduce.MacroOptions{Seed: opt.seed, FacebookTimes: times})
	default:
		return sim.Synthetic(sim.SyntheticOptions{Tasks: opt.synthetic, Accounts: opt.accounts, Nodes: opt.nodes, Seed: opt.seed})
	}
}

// findSharedData looks for name in shared/data beside the working directory
// or any of its parents (the repository sits next to ../shared/data), and
// returns "" when it is not there.
func findSharedData(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", "data", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// runPolicies replays the workload under every policy, in parallel: the
// runs share nothing but the read-only workload.
func runPolicies(w *sim.Workload, opt *simOptions) ([]*sim.Result, error) {
	base := sched.DefaultSettings() // keeps the defaults of settings this command has no flag for
	base.Quantum, base.Timeout, base.Placement = opt.quantum, opt.timeout, opt.placement
	base.QKnoblerRho = opt.qknoblerRho
	base = opt.tf.fawkesSettings(base)
	if w.Slot > 0 && !opt.quantumSet {
		base.Quantum = w.Slot
	}
	if opt.ltrfResource != "" {
		i := -1
		for k, r := range w.Resources {
			if r == opt.ltrfResource {
				i = k
			}
		}
		if i < 0 {
			return nil, fmt.Errorf("--ltrf-resource %q: the workload's resources are %s", opt.ltrfResource, strings.Join(w.Resources, ", "))
		}
		base.LTRFResource = i
	}
	if err := base.Validate(w.Resources); err != nil {
		return nil, fmt.Errorf("--qknobler-rho: %w", err)
	}
	backfills := opt.backfills
	if backfills == nil {
		backfills = []sched.Backfill{""}
	}
	// Each policy under each backfill mode, policy by policy.
	n := len(opt.policies) * len(backfills)
	results := make([]*sim.Result, n)
	errs := make([]error, n)
	sim.InParallel(n, func(i int) {
		p, b := opt.policies[i/len(backfills)], backfills[i%len(backfills)]
		s := base
		s.Policy, s.Backfill, s.Reservations = p, b, opt.reservations
		results[i], errs[i] = sim.Run(w, sim.Config{Settings: s, Window: opt.window, MaxSamples: opt.maxSamples})
		if errs[i] != nil {
			errs[i] = fmt.Errorf("policy %s, backfill %s: %w", p, b, errs[i])
		}
	})
	return results, errors.Join(errs...)
}

func writePlotFile(path string, results []*sim.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	if err := sim.WritePlot(f, results); err != nil {
		f.Close()
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return nil
}
