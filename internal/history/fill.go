package history

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/longfair/longfair/fsm"
	"github.com/longfair/longfair/ledger"
)

// Spec is the history to make.
type Spec struct {
	// Attempts is how many task attempts the history holds.
	Attempts int
	// Accounts, each with one user; Nodes, each of 64 cores and 256 GiB.
	Accounts, Nodes int
	// TasksPerJob is each array's size.
	TasksPerJob int
	// Start and Span place the submissions evenly in [Start, Start+Span).
	Start ledger.Time
	Span  time.Duration
}

// CentreYear is a year of a 500-node centre's jobs with 50 accounts, in
// arrays of 100 tasks, for attempts task attempts.
func CentreYear(attempts int) Spec {
	return Spec{Attempts: attempts, Accounts: 50, Nodes: 500, TasksPerJob: 100,
		Start: ledger.Time(1_735_689_600 * int64(time.Second)), Span: 365 * 24 * time.Hour}
}

// entriesPerBatch is how many commands go into one ApplyBatch: one bbolt
// commit each, as the servers batch entries under load.
const entriesPerBatch = 64

// Filler applies a history's commands to an FSM, in order, from raft
// index 1.
type Filler struct {
	f     *fsm.FSM
	index uint64
	batch []*raft.Log
	err   error // the first command that could not be encoded
}

// Fill applies spec's history to f, which must be empty, and returns the
// last raft index it applied. ctx stops it between batches.
func Fill(ctx context.Context, f *fsm.FSM, spec Spec) (uint64, error) {
	if spec.Attempts < 1 || spec.Accounts < 1 || spec.Nodes < 1 || spec.TasksPerJob < 1 || spec.Span <= 0 {
		return 0, fmt.Errorf("history spec %+v: every count and the span must be positive", spec)
	}
	fl := &Filler{f: f}
	t := spec.Start
	for a := range spec.Accounts {
		name := fmt.Sprintf("acct%03d", a)
		fl.add(t, &fsm.CreateAccount{Name: name})
		fl.add(t, &fsm.CreateUser{Name: fmt.Sprintf("user%03d", a), Accounts: []string{name}})
		// Enough for the account's share of every attempt at an hour each.
		fl.add(t, &fsm.Grant{ID: name + "-year", Account: name, Amount: ledger.SU(spec.Attempts) * 100 * ledger.MicroPerSU})
	}
	nodes := make([]string, spec.Nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%04d", i)
		fl.add(t, &fsm.NodeUp{ID: nodes[i], Capacity: map[string]float64{"cpu": 64, "mem": 256 << 30}})
	}
	if err := fl.flush(); err != nil {
		return 0, err
	}
	jobs := (spec.Attempts + spec.TasksPerJob - 1) / spec.TasksPerJob
	step := spec.Span / time.Duration(jobs)
	next := 0
	for j := range jobs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		tasks := min(spec.TasksPerJob, spec.Attempts-j*spec.TasksPerJob)
		a := j % spec.Accounts
		submitted := spec.Start.Add(time.Duration(j) * step)
		id := uint64(j + 1)
		fl.add(submitted, &fsm.SubmitJob{
			Account: fmt.Sprintf("acct%03d", a), User: fmt.Sprintf("user%03d", a), Name: fmt.Sprintf("sweep-%d", j),
			Demand: map[string]float64{"cpu": 1, "mem": 2 << 30}, Tasks: int64(tasks), Walltime: time.Hour,
			Command: []string{"./sweep"},
		})
		ps := make([]fsm.TaskPlacement, tasks)
		started := make([]fsm.TaskEvent, tasks)
		ended := make([]fsm.TaskEvent, tasks)
		for k := range tasks {
			ps[k] = fsm.TaskPlacement{JobID: id, Task: int64(k), Node: nodes[next]}
			next = (next + 1) % len(nodes)
			started[k] = fsm.TaskEvent{JobID: id, Task: int64(k), Attempt: 1, Kind: fsm.TaskStarted}
			code := int32(0)
			if (j*spec.TasksPerJob+k)%37 == 0 {
				code = 1
			}
			ended[k] = fsm.TaskEvent{JobID: id, Task: int64(k), Attempt: 1, Kind: fsm.TaskExited, ExitCode: code,
				Runtime: time.Duration(60+(j*7+k*13)%1800) * time.Second}
		}
		fl.add(submitted.Add(time.Second), &fsm.Assign{Placements: ps})
		fl.add(submitted.Add(2*time.Second), &fsm.TaskEvents{Events: started})
		fl.add(submitted.Add(step/2), &fsm.TaskEvents{Events: ended})
		if len(fl.batch) >= entriesPerBatch {
			if err := fl.flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := fl.flush(); err != nil {
		return 0, err
	}
	return fl.index, nil
}

// add queues cmd, stamped at t, as the next entry.
func (fl *Filler) add(t ledger.Time, cmd fsm.Command) {
	data, err := fsm.Encode(t, cmd)
	if err != nil {
		if fl.err == nil {
			fl.err = fmt.Errorf("history: encode %T: %w", cmd, err)
		}
		return
	}
	fl.index++
	fl.batch = append(fl.batch, &raft.Log{Index: fl.index, Term: 1, Type: raft.LogCommand, Data: data})
}

// flush applies the queued entries in one batch; a refused command is an
// error (the history would not be the one asked for).
func (fl *Filler) flush() error {
	if fl.err != nil {
		return fl.err
	}
	if len(fl.batch) == 0 {
		return nil
	}
	for i, resp := range fl.f.ApplyBatch(fl.batch) {
		if r, ok := resp.(*fsm.Result); !ok || r.Err != nil {
			return fmt.Errorf("history: entry %d (%d of its batch) was refused: %v", fl.batch[i].Index, i, resp)
		}
	}
	fl.batch = fl.batch[:0]
	return nil
}
