package reproduce

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sched/fawkes"
	"github.com/longfair/longfair/sim"
)

// FawkesRun is one weighting's replay of the FAWKES experiment.
type FawkesRun struct {
	Weighting fawkes.Weighting
	Result    *sim.Result
}

// FawkesExperiment is the FAWKES paper's §7.3 scenario 1 under several
// weightings of the fawkes policy.
type FawkesExperiment struct {
	Workload *sim.Workload
	Config   fawkes.Config // the weighting's settings but for the weighting itself
	Runs     []FawkesRun
	// MostLoaded is the account that submitted the most tasks (c-2).
	MostLoaded int
}

// FawkesPaperConfig is the FAWKES paper's setting of §7.3: weights updated
// every T = 120 s, τ = 10, and each partition guaranteed its 10 core nodes
// of 48.
func FawkesPaperConfig() fawkes.Config {
	return fawkes.Config{Interval: 2 * time.Minute, Threshold: fawkes.DefaultThreshold, Guarantee: FawkesCoreShare}
}

// RunFawkesExperiment replays FawkesBursty(opt) under the fawkes policy
// with each weighting (all of them when weightings is empty), the rest of
// FAWKES's configuration from cfg and the quantum, placement and time-out
// from settings.
func RunFawkesExperiment(opt FawkesOptions, weightings []fawkes.Weighting, cfg fawkes.Config, settings sched.Settings) (*FawkesExperiment, error) {
	w, err := FawkesBursty(opt)
	if err != nil {
		return nil, err
	}
	if len(weightings) == 0 {
		weightings = fawkes.Weightings()
	}
	x := &FawkesExperiment{Workload: w, Config: cfg.WithDefaults()}
	tasks := make([]int, len(w.Accounts))
	for _, j := range w.Jobs {
		tasks[j.Account] += j.Tasks
	}
	for a := range tasks {
		if tasks[a] > tasks[x.MostLoaded] {
			x.MostLoaded = a
		}
	}
	for _, wt := range weightings {
		s := settings
		s.Policy = sched.Fawkes
		s.Fawkes = cfg
		s.Fawkes.Weighting = wt
		res, err := sim.Run(w, sim.Config{Settings: s})
		if err != nil {
			return nil, fmt.Errorf("fawkes experiment, weighting %s: %w", wt, err)
		}
		x.Runs = append(x.Runs, FawkesRun{Weighting: wt, Result: res})
	}
	return x, nil
}

// Run returns the replay under a weighting, nil when it was not run.
func (x *FawkesExperiment) Run(w fawkes.Weighting) *sim.Result {
	for _, r := range x.Runs {
		if r.Weighting == w {
			return r.Result
		}
	}
	return nil
}

// WriteFawkesTable writes the FAWKES experiment: per weighting the mean job
// slowdown of every partition, the most loaded partition's change against
// equal shares, the global discrimination and the number of resizes.
func WriteFawkesTable(out io.Writer, x *FawkesExperiment) error {
	ew := sim.NewErrWriter(out)
	w := x.Workload
	ew.Printf("Workload: %s\n", w.Name)
	ew.Printf("Cluster: %d nodes, %s; ", len(w.Nodes), sim.FormatVector(w.Resources, w.Capacity()))
	tasks := make([]int, len(w.Accounts))
	for _, j := range w.Jobs {
		tasks[j.Account] += j.Tasks
	}
	for a, acct := range w.Accounts {
		ew.Printf("%s %d tasks%s", acct.Name, tasks[a], map[bool]string{true: "\n", false: ", "}[a == len(w.Accounts)-1])
	}
	for _, n := range w.Notes {
		ew.Printf("  %s\n", n)
	}
	ew.Printf("fawkes: T = %v, τ = %g (share·s)², each partition guaranteed %.3g of its contribution share\n\n",
		x.Config.Interval, x.Config.Threshold, x.Config.Guarantee)
	eq := x.Run(fawkes.Equal)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "weighting\t"
	for _, a := range w.Accounts {
		head += a.Name + " slowdown\t"
	}
	head += w.Accounts[x.MostLoaded].Name + " vs eq\tVar(D) (share·s)²\tresizes\tmakespan\t"
	fmt.Fprintln(tw, head)
	for _, run := range x.Runs {
		res := run.Result
		row := string(run.Weighting) + "\t"
		for _, a := range res.Accounts {
			row += fmt.Sprintf("%.2f\t", a.MeanSlowdown)
		}
		vsEq := "-"
		if eq != nil && run.Weighting != fawkes.Equal {
			e, r := eq.Accounts[x.MostLoaded].MeanSlowdown, res.Accounts[x.MostLoaded].MeanSlowdown
			vsEq = fmt.Sprintf("%+.1f%%", 100*(r-e)/e)
		}
		row += fmt.Sprintf("%s\t%.0f\t%d/%d\t%s\t", vsEq, res.DiscriminationVariance, res.Fawkes.Resizes, len(res.Fawkes.Ticks), sim.FormatDuration(res.Makespan))
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	ew.Printf("\nslowdown: mean over the partition's jobs of completion time over the job's time alone on an empty cluster.\n")
	ew.Printf("Var(D): FAWKES's global discrimination over the run, D_i = ∫(share held − share due) dt.\n")
	ew.Printf("The paper (§7.3, Fig. 9) saw TD lower the average job slowdown by about 25%%, in the most loaded partition, against equal shares.\n")
	if d := describeWeightings(x); d != "" {
		ew.Printf("%s", d)
	}
	return ew.Err()
}

func describeWeightings(x *FawkesExperiment) string {
	var b strings.Builder
	for _, run := range x.Runs {
		if run.Weighting == fawkes.DU || run.Weighting == fawkes.RU {
			fmt.Fprintf(&b, "du, ru: longfair tasks write no output data; DU watches %s here, so on this one-resource cluster du and ru equal pu.\n",
				x.Workload.Resources[x.Config.DiskResource(x.Workload.Resources)])
			break
		}
	}
	return b.String()
}
