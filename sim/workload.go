package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Workload is what a simulation replays: a cluster (resources and nodes), the
// accounts that share it, and their jobs.
type Workload struct {
	// Name says where the workload came from, for reports.
	Name string
	// Resources names the entries of every Vector (cpu, mem, …).
	Resources []string
	// Units gives each resource's unit for reports ("cores", "GB"); optional.
	Units []string
	Nodes []Node
	// Accounts in a stable order; the order breaks full ties in the engine.
	Accounts []Account
	// Jobs in any order; independent jobs arrive at Submit, dependent jobs
	// when their predecessor completes.
	Jobs []Job
	// Slot is the slot length of slotted input (the paper's examples); zero
	// otherwise. With a slot, results are also reported per slot.
	Slot time.Duration
	// Horizon, when positive, ends the replay at that time even if tasks
	// remain (slotted input ends after its last slot).
	Horizon ledger.Time
	// Notes say what a loader skipped or assumed, for the report.
	Notes []string
	// Groups are the weights of the account tree's inner nodes, for hdrf
	// and dff (see Account.Group and LoadTree); unlisted groups weigh 1.
	Groups []sched.Group
}

// Node is one machine of the simulated cluster.
type Node struct {
	ID       string
	Capacity ledger.Vector
}

// Account is a unit of fairness: a research group, a user of a trace.
type Account struct {
	Name string
	// Weight is the account's contribution K_i; its partition is R·w_i/Σw.
	Weight float64
	// Group is the path of the account's parent in the account tree
	// ("org/group"), empty for the root; only hdrf and dff use the tree.
	Group string
}

// Job is an array of identical tasks; each task runs on one node, or, for
// a parallel job (Nodes > 1), on Nodes nodes at once.
type Job struct {
	// ID is the job's number in its source (trace job number), for reports.
	ID uint64
	// Name is a label such as "kmeans" or "map"; optional.
	Name string
	// Account indexes Workload.Accounts.
	Account int
	// Submit is when the job arrives; ignored when After is set.
	Submit ledger.Time
	// Demand is what each task holds while it runs, on all its nodes
	// together: what fairness, usage and utilization count.
	Demand ledger.Vector
	// Nodes is how many distinct nodes each task spans, all at once (an
	// MPI run); 0 and 1 mean one node, which holds all of Demand. A task of
	// Nodes > 1 holds PerNode on each of its nodes, and Demand must be
	// Nodes × PerNode.
	Nodes   int
	PerNode ledger.Vector
	// Walltime is how long a task is expected to run at most, as its user
	// declared it (an SWF log's requested time): what backfill plans
	// with. Zero means Runtime. Tasks run for Runtime whatever it says.
	Walltime time.Duration
	// Tasks is the number of tasks in the array.
	Tasks int
	// Runtime is how long each task runs once started.
	Runtime time.Duration
	// After, when set, submits this job only once an earlier job completes.
	After *Dependency
}

// Dependency makes a job wait for an earlier one: it is submitted Delay after
// job Job (an index into Workload.Jobs, smaller than the dependent's own)
// completes.
type Dependency struct {
	Job   int
	Delay time.Duration
	// Continues marks a later stage of the same user-visible job (a reduce
	// after its map): completion and wait are then measured from the first
	// stage's submission. Without it the job is a new one (a closed-loop
	// stream submitting its next job after the previous one finishes).
	Continues bool
}

// TotalTasks returns the number of tasks in all jobs.
func (w *Workload) TotalTasks() int {
	n := 0
	for i := range w.Jobs {
		n += w.Jobs[i].Tasks
	}
	return n
}

// Capacity returns the sum of every node's capacity.
func (w *Workload) Capacity() ledger.Vector {
	c := ledger.NewVector(len(w.Resources))
	for i := range w.Nodes {
		c.Add(w.Nodes[i].Capacity)
	}
	return c
}

// Validate checks that the workload is one the driver can replay and says
// what is wrong when it is not.
func (w *Workload) Validate() error {
	n := len(w.Resources)
	if n == 0 {
		return fmt.Errorf("workload %q names no resources: give at least one, such as cpu", w.Name)
	}
	seen := make(map[string]bool, n)
	for _, r := range w.Resources {
		if r == "" || seen[r] {
			return fmt.Errorf("workload %q: resource names must be non-empty and distinct, got %q", w.Name, w.Resources)
		}
		seen[r] = true
	}
	if len(w.Units) != 0 && len(w.Units) != n {
		return fmt.Errorf("workload %q has %d units for %d resources", w.Name, len(w.Units), n)
	}
	if len(w.Nodes) == 0 {
		return fmt.Errorf("workload %q has no nodes: the cluster needs at least one", w.Name)
	}
	if len(w.Nodes) > math.MaxInt32 || len(w.Jobs) > math.MaxInt32 {
		return fmt.Errorf("workload %q has %d nodes and %d jobs: at most %d of each", w.Name, len(w.Nodes), len(w.Jobs), math.MaxInt32)
	}
	for i := range w.Nodes {
		if err := w.Nodes[i].Capacity.Validate(n); err != nil {
			return fmt.Errorf("workload %q node %q capacity: %w", w.Name, w.Nodes[i].ID, err)
		}
	}
	if len(w.Accounts) == 0 {
		return fmt.Errorf("workload %q has no accounts", w.Name)
	}
	names := make(map[string]bool, len(w.Accounts))
	for _, a := range w.Accounts {
		if a.Name == "" || names[a.Name] {
			return fmt.Errorf("workload %q: account names must be non-empty and distinct, %q is not", w.Name, a.Name)
		}
		names[a.Name] = true
		if math.IsNaN(a.Weight) || math.IsInf(a.Weight, 0) || a.Weight < 0 {
			return fmt.Errorf("workload %q account %q: weight %v must be finite and non-negative", w.Name, a.Name, a.Weight)
		}
	}
	if err := w.validateTree(); err != nil { // tree.go
		return err
	}
	for i := range w.Jobs {
		if err := w.validateJob(i); err != nil {
			return fmt.Errorf("workload %q job %d (id %d): %w", w.Name, i, w.Jobs[i].ID, err)
		}
	}
	if w.Slot < 0 || w.Horizon < 0 {
		return fmt.Errorf("workload %q: slot %v and horizon %d must not be negative", w.Name, w.Slot, w.Horizon)
	}
	return nil
}

func (w *Workload) validateJob(i int) error {
	j := &w.Jobs[i]
	if j.Account < 0 || j.Account >= len(w.Accounts) {
		return fmt.Errorf("account index %d is out of range [0,%d)", j.Account, len(w.Accounts))
	}
	if err := j.Demand.Validate(len(w.Resources)); err != nil {
		return fmt.Errorf("demand: %w", err)
	}
	if j.Demand.IsZero() {
		return fmt.Errorf("demand is zero: a task must demand some resource")
	}
	if j.Nodes < 0 || j.Nodes > math.MaxInt32 {
		return fmt.Errorf("spans %d nodes: want 1 or more (0 means 1)", j.Nodes)
	}
	if j.Nodes > 1 {
		if err := j.PerNode.Validate(len(w.Resources)); err != nil {
			return fmt.Errorf("demand per node: %w", err)
		}
		for x, d := range j.Demand {
			want := float64(j.Nodes) * j.PerNode[x]
			if math.Abs(d-want) > 1e-9*max(1, want) {
				return fmt.Errorf("demand %v is not its %d nodes × %v per node: give Demand = Nodes × PerNode", j.Demand, j.Nodes, j.PerNode)
			}
		}
	}
	if j.Walltime < 0 {
		return fmt.Errorf("walltime %v must not be negative (0: the runtime)", j.Walltime)
	}
	if j.Tasks < 1 || j.Tasks > math.MaxInt32 {
		return fmt.Errorf("has %d tasks: a job needs at least one and at most %d", j.Tasks, math.MaxInt32)
	}
	if j.Runtime <= 0 {
		return fmt.Errorf("task runtime %v must be positive", j.Runtime)
	}
	if j.After != nil {
		if j.After.Job < 0 || j.After.Job >= i {
			return fmt.Errorf("depends on job %d: a job may only wait for an earlier job", j.After.Job)
		}
		if j.After.Delay < 0 {
			return fmt.Errorf("dependency delay %v must not be negative", j.After.Delay)
		}
	} else if j.Submit < 0 {
		return fmt.Errorf("submit time %d must not be negative", j.Submit)
	}
	return nil
}

// nodeDemand is what one task of the job holds on each of its nodes.
func (j *Job) nodeDemand() ledger.Vector {
	if j.Nodes > 1 {
		return j.PerNode
	}
	return j.Demand
}

// walltime is the task's expected run time for planning: the declared
// walltime, or the runtime when none is declared.
func (j *Job) walltime() time.Duration {
	if j.Walltime > 0 {
		return j.Walltime
	}
	return j.Runtime
}

// holds reports whether the cluster could run one task of job j if it were
// idle: a node whose capacity fits the task, or, for a parallel job, Nodes
// distinct such nodes.
func (w *Workload) holds(j *Job) bool {
	need, d := max(j.Nodes, 1), j.nodeDemand()
	for i := range w.Nodes {
		if w.Nodes[i].Capacity.Fits(d) {
			if need--; need == 0 {
				return true
			}
		}
	}
	return false
}
