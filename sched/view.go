package sched

import (
	"time"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched/fawkes"
)

// View is everything one scheduling pass looks at. The engine reads it and
// does not keep it; the caller owns it.
type View struct {
	// Now is the time of the pass.
	Now ledger.Time
	// Resources names the entries of every Vector in the view (cpu, mem, mic…).
	Resources []string
	// Accounts in a stable order: on a full tie, the account listed first wins.
	Accounts []Account
	// Nodes that are up, with their capacity and free resources.
	Nodes    []Node
	Settings Settings
	// Groups gives the weights of the inner nodes of the account tree that
	// hdrf and dff share the cluster over (organisation → group → account).
	// A group is named by its path from the root, "org" or "org/group"; a
	// group that an account's Group names but that is not listed here has
	// weight 1. Empty, with no account naming a group, the tree is flat.
	// Other policies ignore the tree.
	Groups []Group
}

// Group is one inner node of the account tree: its path from the root
// ("org/group", slash separated) and its weight among its siblings.
type Group struct {
	Path   string
	Weight float64
}

// Account is one account's state as the engine needs it.
type Account struct {
	Name string
	// Weight w_i, by default the account's contribution K_i. Zero weights are
	// allowed; when every weight is zero all accounts count as equal.
	Weight float64
	// Running is U_i: what the account's running tasks hold now.
	Running ledger.Vector
	// Usage is Ü_i at Now, from the fairness book (resource-seconds).
	Usage ledger.Vector
	// Baseline is ∫ of the non-sharing baseline at Now, from the fairness book.
	Baseline ledger.Vector
	// BaselineRate is the non-sharing allocation for the current quantum
	// (ledger.NonSharingRate over the account's active tasks).
	BaselineRate ledger.Vector
	// WaitingSince is when the account last got an allocation, or when its
	// oldest pending task arrived if that is later: the starvation clock.
	WaitingSince ledger.Time
	// Queue holds the account's pending jobs in queue order. Tasks of one job
	// are identical; the engine places them in index order and never skips
	// past a job whose next task does not fit what is free — only past one
	// that no node of the view could hold even idle.
	Queue []Job
	// Group is the path of the account's parent in the account tree
	// ("org/group"); empty puts the account directly under the root. Only
	// hdrf and dff use the tree; the account is a leaf of it, weighted by
	// Weight among its siblings.
	Group string
	// Share is the fraction of the cluster (0 to 1) the account's partition
	// holds under fawkes, as FAWKES weighting last set it (package
	// sched/fawkes). When no account has a share, fawkes partitions the
	// cluster by Weight among the accounts with work. Other policies ignore
	// it.
	Share float64
	// Latency makes the account a latency queue under bpf and sp: periodic
	// bursts with a declared demand and deadline, and the class admission
	// control gave it (see bpf.go and AdmitQueue). Nil is a throughput
	// queue. Other policies ignore it.
	Latency *LatencyQueue
}

// Job is a pending job array: Pending identical tasks starting at FirstIndex.
// A task of a parallel job spans Nodes nodes at once, PerNode on each, all
// placed together or not at all (gang.go).
type Job struct {
	ID uint64
	// Demand is what one task holds in all: what fairness counts, the
	// policy ranks by and the ledger charges. For a parallel job it is
	// Nodes × PerNode.
	Demand ledger.Vector
	// Nodes is how many nodes one task spans; 0 and 1 mean one node,
	// which then holds all of Demand.
	Nodes int
	// PerNode is what a task of a parallel job (Nodes > 1) takes on each
	// of its nodes; unused otherwise.
	PerNode ledger.Vector
	// Exclusive takes each node whole: the per-node demand is a node
	// class's capacity, and a task goes only on idle nodes of exactly that
	// capacity (exclusive.go).
	Exclusive bool
	// Boost is an admin's priority for the job (0: none). An account
	// whose next job is boosted is served before every account the
	// policy ranks, the highest boost first (rank.go); the view lists an
	// account's boosted jobs first.
	Boost      int
	FirstIndex int
	Pending    int
	// Walltime is how long each task is expected to run (the job's time
	// limit live, its run time in the simulator); zero when unknown. Only
	// bpf's shortest-remaining-first order among soft queues uses it.
	Walltime time.Duration
}

// Node is a worker node as the engine sees it.
type Node struct {
	ID       string
	Capacity ledger.Vector
	Free     ledger.Vector
	// Releases are what its running tasks give back when they end at the
	// latest (start + walltime), for backfill's reservation; tasks without
	// a walltime are not listed. Ignored without backfill.
	Releases []Release
	// QueueFree is the room left in the node's look-ahead queue (package
	// fsm: lookahead.go). The engine ignores it; LookAhead schedules
	// into it.
	QueueFree ledger.Vector
}

// Placement puts one task on one node. Account, Job and Node index the
// View's slices; Task is the task's index within its job array. A task of
// a parallel job gets all its nodes in Nodes, Node first (its head, where
// its script runs); Nodes is nil for a one-node task, and is valid until
// the next pass.
type Placement struct {
	Account int
	Job     int
	Task    int
	Node    int
	Nodes   []int
	// Queued puts the task in the node's look-ahead queue (LookAhead).
	Queued bool
}

// Settings are the cluster's policy settings.
type Settings struct {
	Policy Policy
	// Quantum is how far ahead fairness is projected; the live default is one
	// minute, the slotted simulator uses one slot.
	Quantum time.Duration
	// Timeout is the starvation time-out: an account waiting longer than this
	// since its last allocation goes first. Zero disables it.
	Timeout time.Duration
	// Placement chooses the node for a task.
	Placement PlacementStrategy
	// Backfill is what a pass does at the first job that cannot start:
	// reserve for it (easy) or for the first Reservations such jobs
	// (conservative), stop (none), or go on filling (greedy, the zero
	// value) (backfill.go).
	Backfill Backfill
	// Reservations is K, how many of the first jobs that cannot start
	// conservative backfill reserves for; zero is DefaultReservations.
	// Other backfill modes ignore it (EASY is K = 1).
	Reservations int
	// LTRFResource is the index of the one resource ltrf is fair on.
	LTRFResource int
	// QKnoblerRho is qknobler's knob ρ in [0,1]: the fraction of its DRF
	// dominant share each account gets before the rest goes to the most
	// efficient tasks. 1 is exactly drf; 0 is efficiency only. Other
	// policies ignore it.
	QKnoblerRho float64
	// Fawkes configures FAWKES weighting: how the accounts' shares under
	// fawkes are recomputed every interval (package sched/fawkes). The
	// engine itself reads only the shares (Account.Share); the leader and
	// the simulator run the weighting. The zero value is the paper's
	// defaults.
	Fawkes fawkes.Config
}
