package reproduce

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

// DFFOutcome is one policy's run of the DFF experiment.
type DFFOutcome struct {
	Policy sched.Policy
	// Completion is each Table 1 job's completion time (all are submitted
	// at zero), Total their sum: the paper's "total complete time".
	Completion []time.Duration
	Total      time.Duration
	Makespan   time.Duration
	// MICTasks is the mean number of MIC tasks running while the MIC jobs
	// (4 and 5) had tasks waiting to start.
	MICTasks float64
	// MICWaitingForCPU is how long, in MIC-task-slot seconds, free MICs
	// went unused while a MIC job waited because their node had no CPU
	// thread left: the paper's "MIC jobs wait for CPU".
	MICWaitingForCPU float64
	Result           *sim.Result
}

// DFFComparison is H-DRF against DFF on one variant of the cluster.
type DFFComparison struct {
	Options    DFFOptions
	Workload   *sim.Workload
	Tree       []sched.TreeNode // the account tree with its Fair Resources at the start
	HDRF, DFF  DFFOutcome
	TotalDelta float64 // (DFF − H-DRF) / H-DRF total completion time
}

// RunDFFExperiment replays the DFF paper's Table 1 jobs on its CPU–MIC
// cluster under hdrf and dff, with settings' quantum, placement and
// time-out (the policy is set for each run).
func RunDFFExperiment(opt DFFOptions, settings sched.Settings) (*DFFComparison, error) {
	w, err := DFFCluster(opt)
	if err != nil {
		return nil, err
	}
	c := &DFFComparison{Options: opt, Workload: w}
	if c.Tree, err = sched.AccountTree(dffInitialView(w)); err != nil {
		return nil, err
	}
	for _, p := range []sched.Policy{sched.HDRF, sched.DFF} {
		s := settings
		s.Policy = p
		out, err := runDFF(w, s)
		if err != nil {
			return nil, err
		}
		if p == sched.HDRF {
			c.HDRF = out
		} else {
			c.DFF = out
		}
	}
	c.TotalDelta = (c.DFF.Total.Seconds() - c.HDRF.Total.Seconds()) / c.HDRF.Total.Seconds()
	return c, nil
}

// dffInitialView is the view of the first pass: nothing running, every job
// pending.
func dffInitialView(w *sim.Workload) *sched.View {
	n := len(w.Resources)
	v := &sched.View{Resources: w.Resources, Groups: w.Groups, Settings: sched.DefaultSettings()}
	v.Settings.Policy = sched.DFF
	for _, nd := range w.Nodes {
		v.Nodes = append(v.Nodes, sched.Node{ID: nd.ID, Capacity: nd.Capacity, Free: nd.Capacity})
	}
	for a, acct := range w.Accounts {
		sa := sched.Account{Name: acct.Name, Weight: acct.Weight, Group: acct.Group,
			Running: ledger.NewVector(n), Usage: ledger.NewVector(n), Baseline: ledger.NewVector(n), BaselineRate: ledger.NewVector(n)}
		for j, job := range w.Jobs {
			if job.Account == a {
				sa.Queue = append(sa.Queue, sched.Job{ID: uint64(j), Demand: job.Demand, Pending: job.Tasks})
			}
		}
		v.Accounts = append(v.Accounts, sa)
	}
	return v
}

// micWatch follows a DFF replay through its trace: what every node has
// free, and the MIC jobs' waiting and running tasks.
type micWatch struct {
	w                *sim.Workload
	free             []ledger.Vector
	pending, running int
	last             ledger.Time
	micNow, waitNow  float64 // running MIC tasks and MIC slots waiting for CPU, since last; micNow < 0 when no MIC task waits
	micSum, waiting  float64
	waitSum          float64
}

// micAccount reports whether account a runs MIC tasks (jobs 4 and 5).
func micAccount(a int) bool { return a >= 3 }

func (m *micWatch) event(e sim.TraceEvent) {
	job := &m.w.Jobs[e.Job]
	k := float64(e.Tasks)
	switch e.Kind {
	case sim.Arrive:
		if micAccount(job.Account) {
			m.pending += e.Tasks
		}
	case sim.Start:
		m.free[e.Node].AddScaled(job.Demand, -k)
		if micAccount(job.Account) {
			m.pending -= e.Tasks
			m.running += e.Tasks
		}
	case sim.End:
		m.free[e.Node].AddScaled(job.Demand, k)
		if micAccount(job.Account) {
			m.running -= e.Tasks
		}
	case sim.Settled:
		dt := e.Time.Sub(m.last).Seconds()
		m.waitSum += m.waitNow * dt
		if m.micNow >= 0 {
			m.micSum += m.micNow * dt
			m.waiting += dt
		}
		m.last = e.Time
		m.micNow, m.waitNow = -1, 0
		if m.pending > 0 {
			m.micNow = float64(m.running)
			mic := len(m.w.Resources) - 1
			for _, f := range m.free {
				if f[mic] >= 2-1e-9 && f[0] < 1-1e-9 {
					m.waitNow += float64(int(f[mic]+1e-9) / 2)
				}
			}
		}
	}
}

func runDFF(w *sim.Workload, s sched.Settings) (DFFOutcome, error) {
	m := &micWatch{w: w, micNow: -1}
	for _, n := range w.Nodes {
		m.free = append(m.free, n.Capacity.Clone())
	}
	res, err := sim.Run(w, sim.Config{Settings: s, Trace: m.event})
	if err != nil {
		return DFFOutcome{}, fmt.Errorf("dff experiment under %s: %w", s.Policy, err)
	}
	out := DFFOutcome{Policy: s.Policy, Result: res, Makespan: res.Makespan, MICWaitingForCPU: m.waitSum}
	for _, a := range res.Accounts {
		out.Completion = append(out.Completion, a.MeanCompletion)
		out.Total += a.MeanCompletion
	}
	if m.waiting > 0 {
		out.MICTasks = m.micSum / m.waiting
	}
	return out, nil
}

// WriteDFFTable writes the DFF experiment: the account tree with its Fair
// Resources, then per variant each job's completion time under H-DRF and
// DFF, the totals and their change, and how the MIC jobs fared.
func WriteDFFTable(w io.Writer, cmps []*DFFComparison) error {
	ew := sim.NewErrWriter(w)
	if len(cmps) == 0 {
		return nil
	}
	c0 := cmps[0]
	ew.Printf("Workload: %s\n", strings.TrimSuffix(c0.Workload.Name, ", MICs pooled"))
	for _, n := range c0.Workload.Notes {
		ew.Printf("  %s\n", n)
	}
	ew.Printf("\nAccount tree (weights; DFF Fair Resource <cpu, mem, mic> at the start):\n")
	writeAccountTree(ew, c0.Workload.Resources, c0.Tree)
	for _, c := range cmps {
		model := "7 nodes × 3 MICs (a 2-MIC task fits once per node)"
		if c.Options.PooledMICs {
			model = "MICs pooled (336 threads, 952 GB, 21 MICs as one pool)"
		}
		ew.Printf("\n%s:\n", model)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "job\tdemand <cpu,mem,mic>\ttasks\tH-DRF\tDFF\tchange\t")
		for i, j := range dffTable1 {
			h, d := c.HDRF.Completion[i], c.DFF.Completion[i]
			fmt.Fprintf(tw, "%s (%s)\t%v\t%d\t%s\t%s\t%+.1f%%\t\n", j.name, j.group, []float64(j.demand), j.tasks,
				sim.FormatDuration(h), sim.FormatDuration(d), 100*(d.Seconds()-h.Seconds())/h.Seconds())
		}
		fmt.Fprintf(tw, "total\t\t\t%s\t%s\t%+.1f%%\t\n", sim.FormatDuration(c.HDRF.Total), sim.FormatDuration(c.DFF.Total), 100*c.TotalDelta)
		tw.Flush()
		ew.Printf("MIC tasks running while MIC jobs had tasks waiting: H-DRF %.2f, DFF %.2f (mean)\n", c.HDRF.MICTasks, c.DFF.MICTasks)
		ew.Printf("free MIC slots idle for lack of a CPU thread while MIC jobs waited: H-DRF %.0f slot·s, DFF %.0f slot·s\n",
			c.HDRF.MICWaitingForCPU, c.DFF.MICWaitingForCPU)
		ew.Printf("makespan: H-DRF %s, DFF %s\n", sim.FormatDuration(c.HDRF.Makespan), sim.FormatDuration(c.DFF.Makespan))
	}
	ew.Printf("\nThe paper (Fig. 3) saw the total completion time fall by about 11.9%% under DFF.\n")
	return ew.Err()
}

// writeAccountTree writes an account tree, indented, with weights and Fair
// Resources.
func writeAccountTree(ew *sim.ErrWriter, resources []string, nodes []sched.TreeNode) {
	for _, n := range nodes {
		name := n.Name
		if n.Depth == 0 {
			name = "cluster"
		}
		ew.Printf("  %s%-*s weight %g  FR %s\n", strings.Repeat("  ", n.Depth), max(1, 12-2*n.Depth), name, n.Weight, sim.FormatVector(resources, n.FairResource))
	}
}
