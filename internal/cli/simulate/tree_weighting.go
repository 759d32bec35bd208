package simulate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
	"github.com/longfair/longfair/sim"
	"github.com/longfair/longfair/sim/reproduce"
)

// The DFF and FAWKES papers' inputs, the account tree and FAWKES weighting
// of longfair sim.
const simTreeFawkesUsage = `
The DFF and FAWKES papers' inputs (each instead of one of INPUT above):
  --dff            the DFF paper's CPU–MIC cluster (§4.1: 7 nodes of <48 CPU
                   threads, 136 GB, 3 MICs>) with its Table 1 jobs in the
                   hierarchy of Fig. 1. Without --policy: compares hdrf and
                   dff, per node and with the MICs pooled (--dff-pooled: only
                   the pooled model), and shows the account tree.
  --fawkes-bursty  the FAWKES paper's §7.3 scenario (WKLD-D): three
                   partitions c-1, c-2, c-3 of uneven, bursty load on 48
                   slots (--fawkes-span, default 2h, of arrivals). Without
                   --policy: compares the fawkes weightings (all, or those
                   --fawkes-weighting lists) by each partition's slowdown.

Account tree (hdrf, dff; any input):
  --tree FILE      {"groups": {"physics": 2, "physics/theory": 1},
                    "accounts": {"alice": "physics/theory"}}: group weights,
                   and the group of each account (the others stay under the
                   root).

FAWKES weighting (fawkes; any input):
  --fawkes-weighting W   td (default), jd, dd, pu, du, ru, js, jt, tt, eq, none
  --fawkes-interval T    how often the weights are recomputed (default 2m)
  --fawkes-tau τ         resize only when Var(D) over the interval exceeds τ,
                         in (share·s)² (default 10; negative: always)
  --fawkes-guarantee G   minimum share of an account with work, as a fraction
                         of its contribution share (default 0; --fawkes-bursty:
                         the paper's 10 core nodes of 48)
  --fawkes-psi ψ, --fawkes-base a, --fawkes-disk RESOURCE   RU's ψ (0.5), JT's
                         and TT's a (2), the resource DU watches (disk, else mem)
`

// treeFawkesOptions are the DFF and FAWKES flags.
type treeFawkesOptions struct {
	dff, dffPooled bool
	bursty         bool
	span           time.Duration
	tree           string
	weightings     []fawkes.Weighting
	fawkes         fawkes.Config
	guaranteeSet   bool
	policySet      bool
}

func (o *treeFawkesOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.dff, "dff", false, "replay the DFF paper's CPU–MIC cluster and Table 1 jobs")
	fs.BoolVar(&o.dffPooled, "dff-pooled", false, "dff: model the 21 MICs as one pool instead of 3 per node")
	fs.BoolVar(&o.bursty, "fawkes-bursty", false, "replay the FAWKES paper's three partitions of bursty, uneven load")
	fs.DurationVar(&o.span, "fawkes-span", 2*time.Hour, "fawkes-bursty: how long jobs keep arriving")
	fs.StringVar(&o.tree, "tree", "", "arrange the accounts in the account tree of the JSON `FILE` (hdrf, dff)")
	fs.Func("fawkes-weighting", "fawkes weighting: td, jd, dd, pu, du, ru, js, jt, tt, eq or none (a comma-separated list with --fawkes-bursty)", func(s string) error {
		for _, name := range strings.Split(s, ",") {
			w, err := fawkes.ParseWeighting(strings.TrimSpace(name))
			if err != nil {
				return err
			}
			o.weightings = append(o.weightings, w)
		}
		return nil
	})
	fs.DurationVar(&o.fawkes.Interval, "fawkes-interval", fawkes.DefaultInterval, "fawkes: how often the weights are recomputed")
	fs.Float64Var(&o.fawkes.Threshold, "fawkes-tau", fawkes.DefaultThreshold, "fawkes: resize only when Var(D) exceeds τ, in (share·s)²; negative: at every interval")
	fs.Float64Var(&o.fawkes.Guarantee, "fawkes-guarantee", 0, "fawkes: minimum share of an account with work, as a fraction of its contribution share, in [0,1]")
	fs.Float64Var(&o.fawkes.Psi, "fawkes-psi", fawkes.DefaultPsi, "fawkes ru: weight ψ of processor usage against disk usage, in (0,1]")
	fs.Float64Var(&o.fawkes.Base, "fawkes-base", fawkes.DefaultBase, "fawkes jt, tt: the base a > 1 of a^(−completed/waiting)")
	fs.StringVar(&o.fawkes.Disk, "fawkes-disk", "", "fawkes du, ru: the resource to watch as disk (default disk, else mem)")
}

// inputs lists which of this file's inputs were given.
func (o *treeFawkesOptions) inputs() []bool { return []bool{o.dff, o.bursty} }

// parse checks the flags once the flag set is parsed.
func (o *treeFawkesOptions) parse(fs *flag.FlagSet, opt *simOptions) error {
	o.policySet = isSet(fs, "policy")
	o.guaranteeSet = isSet(fs, "fawkes-guarantee")
	if o.dffPooled && !o.dff {
		return errors.New("--dff-pooled changes the --dff cluster: give --dff too")
	}
	if o.fawkes.Interval <= 0 {
		return fmt.Errorf("--fawkes-interval %v: give a positive interval, e.g. 2m", o.fawkes.Interval)
	}
	if o.fawkes.Psi == 0 {
		return errors.New("--fawkes-psi 0 is du: choose --fawkes-weighting du instead, or give ψ in (0,1]")
	}
	if len(o.weightings) > 1 && (!o.bursty || o.policySet) {
		return errors.New("--fawkes-weighting takes a list only with --fawkes-bursty and no --policy, to compare weightings; give one weighting otherwise")
	}
	if len(o.weightings) == 1 {
		o.fawkes.Weighting = o.weightings[0]
	}
	if o.bursty && !o.guaranteeSet {
		o.fawkes.Guarantee = reproduce.FawkesCoreShare
	}
	if err := o.fawkes.Validate(nil); err != nil {
		return fmt.Errorf("fawkes flags: %w", err)
	}
	if (o.dff || o.bursty) && !o.policySet && opt.format != "table" {
		return errors.New("--dff and --fawkes-bursty without --policy print the paper's comparison as a table: leave out --format, or give --policy")
	}
	if o.span < 10*time.Minute {
		return fmt.Errorf("--fawkes-span %v: give at least 10m", o.span)
	}
	return nil
}

// load loads this file's inputs; ok is false for other inputs.
func (o *treeFawkesOptions) load(opt *simOptions) (w *sim.Workload, ok bool, err error) {
	switch {
	case o.dff:
		w, err = reproduce.DFFCluster(reproduce.DFFOptions{PooledMICs: o.dffPooled})
		return w, true, err
	case o.bursty:
		w, err = reproduce.FawkesBursty(reproduce.FawkesOptions{Seed: opt.seed, Span: o.span})
		return w, true, err
	}
	return nil, false, nil
}

// applyTree arranges the workload's accounts in the --tree file's tree and
// checks the fawkes disk resource against the workload.
func (o *treeFawkesOptions) applyTree(w *sim.Workload) error {
	if err := o.fawkes.Validate(w.Resources); err != nil {
		return fmt.Errorf("--fawkes-disk: %w", err)
	}
	if o.tree == "" {
		return nil
	}
	f, err := os.Open(o.tree)
	if err != nil {
		return fmt.Errorf("--tree: %w", err)
	}
	defer f.Close()
	return sim.LoadTree(o.tree, f, w)
}

// runTreeFawkesExperiments runs the DFF and FAWKES comparisons, which
// report more than the usual table; done is false for everything else.
func runTreeFawkesExperiments(opt *simOptions, stdout io.Writer) (done bool, err error) {
	o := &opt.tf
	if o.policySet {
		return false, nil
	}
	settings := simSettings(opt)
	settings.Fawkes = o.fawkes
	switch {
	case o.dff:
		var cmps []*reproduce.DFFComparison
		variants := []bool{false, true}
		if o.dffPooled {
			variants = []bool{true}
		}
		for _, pooled := range variants {
			c, err := reproduce.RunDFFExperiment(reproduce.DFFOptions{PooledMICs: pooled}, settings)
			if err != nil {
				return true, err
			}
			cmps = append(cmps, c)
		}
		return true, reproduce.WriteDFFTable(stdout, cmps)
	case o.bursty:
		cfg := o.fawkes
		cfg.Weighting = ""
		x, err := reproduce.RunFawkesExperiment(reproduce.FawkesOptions{Seed: opt.seed, Span: o.span}, o.weightings, cfg, settings)
		if err != nil {
			return true, err
		}
		return true, reproduce.WriteFawkesTable(stdout, x)
	}
	return false, nil
}

// fawkesSettings puts the FAWKES flags into the settings of every policy.
func (o *treeFawkesOptions) fawkesSettings(s sched.Settings) sched.Settings {
	s.Fawkes = o.fawkes
	return s
}
