package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func policyGroup() *cmdGroup {
	return group("policy", "Shows and changes the cluster's scheduling settings: policy, fairness window, time-out, placement, billing.", []subcommand{
		{"show", "show the settings", policyShowCommand(), nil},
		{"set", "change settings", policySetCommand(), nil},
	})
}

const policyShowHelp = `Usage: longfair policy show [flags]

Shows the scheduling policy, the fairness window, the starvation time-out,
the placement strategy, the quantum, the billing weights (SU per hour per
unit of each resource) and the resources the cluster knows.

Example:
  longfair policy show
`

func policyShowCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("policy show", policyShowHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("policy show", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		s, err := c.Operator().GetSettings(ctx, &longfairv1.GetSettingsRequest{})
		if err != nil {
			return err
		}
		return printSettings(out, f.output, s)
	})
}

func printSettings(out cmdIO, format string, s *longfairv1.Settings) error {
	t := table{header: []string{"SETTING", "VALUE"}}
	t.add("policy", s.GetPolicy())
	t.add("window", s.GetWindow())
	timeout := "off"
	if s.GetTimeout().AsDuration() > 0 {
		timeout = fmtDuration(s.GetTimeout())
	}
	t.add("timeout", timeout)
	t.add("placement", s.GetPlacement())
	t.add("backfill", orDash(s.GetBackfill()))
	t.add("quantum", fmtDuration(s.GetQuantum()))
	t.add("ltrf_resource", orDash(s.GetLtrfResource()))
	t.add("billing_weights", fmtBilling(s.GetBillingWeights()))
	t.add("billing_rule", orDash(s.GetBillingRule()))
	t.add("resources", strings.Join(s.GetResources(), ", "))
	addPaperSettings(&t, s)
	return writeListing(out.stdout, format, t, s)
}

// fmtBilling writes billing weights per hour, memory per GiB.
func fmtBilling(w map[string]float64) string {
	var parts []string
	for _, k := range resourceOrder(w) {
		if k == "mem" {
			parts = append(parts, fmt.Sprintf("mem=%s/G", fmtNumber(w[k]*(1<<30))))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", k, fmtNumber(w[k])))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ") + " (SU per hour per unit)"
}

const policySetHelp = `Usage: longfair policy set [flags]

Changes the settings given; the others stay. The leader uses the new
settings from its next scheduling pass.

  --policy     hmrf (default), ltdrf, ltaf, drf, af, ltrf, static, or another
               policy the servers know
  --window     how much history counts: none, tumbling:L, sliding:L, decay:H
               (half-life, e.g. decay:7d)
  --starvation-timeout  an account waiting longer than this for an
               allocation goes first (0s: off)
  --placement  affinity, bestfit or spread

Billing weights are SU per hour per unit of a resource; for sizes give the
unit after a slash: mem=0.25/G is 0.25 SU per GiB-hour. --billing-rule max
(the default) bills a task its largest weighted resource, as Slurm's
PriorityFlags=MAX_TRES: give weights that price a whole node of each
resource alike, and a task pays for the largest share of a node it takes.
--billing-rule sum bills every weighted resource. A resource with weight 0
is free.

The other papers' policies have settings of their own:
  --qknobler-rho ρ        qknobler: the fraction of its DRF share each account
                          gets before the rest goes to the most efficient
                          tasks, in [0, 1] (1 is drf; 0.5 until set)
  --fawkes-weighting W    fawkes: td (default), jd, dd, pu, du, ru, js, jt,
                          tt, eq or none
  --fawkes-interval T     how often the weights are recomputed (default 2m)
  --fawkes-tau τ          resize only when Var(D) over the interval exceeds
                          τ, in (share·s)² (default 10; negative: always)
  --fawkes-guarantee G    minimum share of an account with work, as a
                          fraction of its contribution share, in [0, 1]
  --fawkes-psi ψ, --fawkes-base a, --fawkes-disk RESOURCE   RU's ψ (0.5),
                          JT's and TT's a (2), the resource DU watches
  (0 for --fawkes-interval, -tau, -psi or -base means the default)

Examples:
  longfair policy set --policy hmrf --window decay:7d --starvation-timeout 30m
  longfair policy set --billing-weight cpu=1,mem=0.25/G,mic=4
  longfair policy set --billing-rule max
  longfair policy set --add-resource gpu --billing-weight cpu=1,mem=0.25/G,mic=8,gpu=4
  longfair policy set --policy qknobler --qknobler-rho 0.75
  longfair policy set --policy fawkes --fawkes-weighting td --fawkes-guarantee 0.5
`

// optionalDuration is a duration flag that remembers whether it was given.
type optionalDuration struct {
	v   time.Duration
	set bool
}

func (o *optionalDuration) String() string {
	if !o.set {
		return ""
	}
	return o.v.String()
}

func (o *optionalDuration) Set(s string) error {
	d, ok := parseDays(s)
	if !ok {
		return fmt.Errorf("%q is not a duration such as 30m, 12h or 7d", s)
	}
	o.v, o.set = d, true
	return nil
}

func policySetCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		policy, window, placement, ltrf string
		billingRule, backfill           string
		starvation, quantum             optionalDuration
		billing, addResources           ListFlag
		papers                          paperPolicyFlags
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&policy, "policy", "", "scheduling `policy`")
		fs.StringVar(&window, "window", "", "fairness `window`")
		fs.Var(&starvation, "starvation-timeout", "starvation time-out (`duration`; 0s turns it off)")
		fs.StringVar(&placement, "placement", "", "placement `strategy`")
		fs.StringVar(&backfill, "backfill", "", "at the first job in the policy's order that cannot start: `easy` (reserve for it, the default), none (start nothing after it) or greedy (start whatever fits; wide jobs can starve)")
		fs.Var(&quantum, "quantum", "how far ahead fairness is projected (`duration`)")
		fs.StringVar(&ltrf, "ltrf-resource", "", "the `resource` ltrf is fair on")
		fs.Var(&billing, "billing-weight", "`name=SU_per_hour[/unit]`; repeat or comma-separate; replaces all billing weights")
		fs.StringVar(&billingRule, "billing-rule", "", "how weighted resources make a task's rate: `max` (the largest) or sum")
		fs.Var(&addResources, "add-resource", "declare a new resource `name`, with its --billing-weight; repeat or comma-separate")
		papers.register(fs)
	}
	return clientCommand("policy set", policySetHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("policy set", args, 0, 0, ""); err != nil {
			return err
		}
		req := &longfairv1.UpdateSettingsRequest{AddResources: addResources}
		set := func(v string) *string {
			if v == "" {
				return nil
			}
			return &v
		}
		req.Policy, req.Window, req.Placement, req.LtrfResource = set(policy), set(window), set(placement), set(ltrf)
		req.BillingRule, req.Backfill = set(billingRule), set(backfill)
		if starvation.set {
			req.Timeout = durationpb.New(starvation.v)
		}
		if quantum.set {
			req.Quantum = durationpb.New(quantum.v)
		}
		if len(billing) > 0 {
			w, err := parseBilling(billing)
			if err != nil {
				return err
			}
			req.BillingWeights = w
		}
		hasPapers := papers.apply(req)
		if req.Policy == nil && req.Window == nil && req.Placement == nil && req.Backfill == nil && req.LtrfResource == nil && req.Timeout == nil &&
			req.Quantum == nil && len(req.BillingWeights) == 0 && req.BillingRule == nil && len(req.AddResources) == 0 && !hasPapers {
			return Usagef("nothing to change: give at least one setting (see --help)")
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		s, err := c.Operator().UpdateSettings(ctx, req)
		if err != nil {
			return err
		}
		return printSettings(out, f.output, s)
	})
}

// parseBilling reads name=weight or name=weight/unit pairs.
func parseBilling(items []string) (map[string]float64, error) {
	out := make(map[string]float64)
	for _, it := range items {
		name, val, ok := strings.Cut(it, "=")
		if !ok || name == "" {
			return nil, Usagef("--billing-weight %q is not name=SU_per_hour (for example cpu=1 or mem=0.25/G)", it)
		}
		num, unit, hasUnit := strings.Cut(val, "/")
		w, err := client.ParseQuantity(num)
		if err != nil {
			return nil, Usagef("--billing-weight %s: %v", name, err)
		}
		if hasUnit {
			per, err := client.ParseQuantity("1" + unit)
			if err != nil || per == 0 {
				return nil, Usagef("--billing-weight %s: unit %q is not a size unit such as G or M", name, unit)
			}
			w /= per
		}
		out[name] = w
	}
	return out, nil
}
