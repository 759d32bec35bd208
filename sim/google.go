package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// The Google cluster-usage trace 2011 (clusterdata-2011-2) is what the
// QKnobler paper replays (§7.3). A task_events part is a time slice of the
// whole cell's task life cycles; LoadGoogle keeps the tasks whose submission,
// last start and finish all fall in the slice, and replays them on a few
// machines of the cell's most common shape so that users contend.
//
// Each task becomes a job of one task: tasks of one trace job start and
// finish at their own times. Requests are the trace's, normalized so that 1
// is the largest machine's CPU or memory.

// GoogleMachine is the capacity of the most common machine of the 2011
// cell (6,672 of 12,583): half the largest machine's CPUs and memory. Each
// call returns a new vector, so no caller can change another's machines.
func GoogleMachine() ledger.Vector { return ledger.Vector{0.5, 0.4995} }

// GoogleOptions shape a Google trace replay.
type GoogleOptions struct {
	// Machines is the number of GoogleMachine nodes; 0 means 10, which
	// puts part 235 of the trace (about 15 machines' worth of CPU requests
	// on average, in bursts) under sustained contention.
	Machines int
}

// Google task event types (schema.csv, "event type").
const (
	googleSubmit   = 0
	googleSchedule = 1
	googleFinish   = 4
)

// googleTask is one task's life cycle as far as the slice shows it.
type googleTask struct {
	submit, start, finish int64 // µs; −1 when not seen
	cpu, mem              float64
	user                  string
	job                   string
	index                 string
	line                  int // of the first event, for ordering
}

// LoadGoogle reads a Google task_events file (plain or gzip).
func LoadGoogle(path string, opt GoogleOptions) (*Workload, error) {
	r, closeFn, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return ReadGoogle(path, r, opt)
}

// ReadGoogle reads Google task events from r; name is for messages.
func ReadGoogle(name string, r io.Reader, opt GoogleOptions) (*Workload, error) {
	if opt.Machines < 0 {
		return nil, fmt.Errorf("google trace %s: %d machines: give a positive number, or 0 for the default", name, opt.Machines)
	}
	machines := opt.Machines
	if machines == 0 {
		machines = 10
	}
	tasks := map[string]*googleTask{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < 11 {
			return nil, inputErrorf(name, line, "", "%d fields, a task event has 13 (time, missing info, job ID, task index, machine ID, event type, user, scheduling class, priority, CPU request, memory request, disk request, different machines)", len(f))
		}
		at, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || at < 0 {
			return nil, inputErrorf(name, line, "time", "%q is not a non-negative number of microseconds", f[0])
		}
		kind, err := strconv.Atoi(f[5])
		if err != nil {
			return nil, inputErrorf(name, line, "event type", "%q is not an integer", f[5])
		}
		key := f[2] + "/" + f[3]
		t := tasks[key]
		if t == nil {
			t = &googleTask{submit: -1, start: -1, finish: -1, job: f[2], index: f[3], line: line}
			tasks[key] = t
		}
		if f[6] != "" {
			t.user = f[6]
		}
		for i, dst := range []*float64{&t.cpu, &t.mem} {
			if s := f[9+i]; s != "" {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || v < 0 || v > 1 {
					return nil, inputErrorf(name, line, []string{"CPU request", "memory request"}[i], "%q is not a number in [0, 1]", s)
				}
				*dst = v
			}
		}
		switch kind {
		case googleSubmit:
			if t.submit < 0 {
				t.submit = at
			}
		case googleSchedule:
			t.start, t.finish = at, -1 // a restart after eviction or failure
		case googleFinish:
			if t.start >= 0 {
				t.finish = at
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("google trace %s: %w", name, err)
	}
	return googleWorkload(name, tasks, machines)
}

func googleWorkload(name string, tasks map[string]*googleTask, machines int) (*Workload, error) {
	var kept []*googleTask
	outside, zero := 0, 0
	for _, t := range tasks {
		switch {
		case t.submit < 0 || t.finish <= t.start || t.user == "":
			outside++
		case t.cpu == 0 && t.mem == 0:
			zero++
		default:
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, inputErrorf(name, 0, "", "no task was submitted, started and finished inside this part of the trace: give a task_events file")
	}
	slices.SortFunc(kept, func(a, b *googleTask) int {
		return cmp.Or(cmp.Compare(a.submit, b.submit), cmp.Compare(a.line, b.line))
	})
	w := &Workload{
		Name:      fmt.Sprintf("google trace %s: %d tasks on %d machines", name, len(kept), machines),
		Resources: []string{"cpu", "mem"},
		Units:     []string{"machines", "machines"},
	}
	for i := range machines {
		w.Nodes = append(w.Nodes, Node{ID: fmt.Sprintf("m%03d", i+1), Capacity: GoogleMachine()})
	}
	users := map[string]int{}
	first := kept[0].submit
	for i, t := range kept {
		a, ok := users[t.user]
		if !ok {
			a = len(w.Accounts)
			users[t.user] = a
			w.Accounts = append(w.Accounts, Account{Name: fmt.Sprintf("user%02d", a+1), Weight: 1})
		}
		w.Jobs = append(w.Jobs, Job{
			ID: uint64(i + 1), Name: t.job + "/" + t.index, Account: a,
			Submit:  ledger.Time(t.submit-first) * ledger.Time(time.Microsecond),
			Demand:  ledger.Vector{t.cpu, t.mem},
			Tasks:   1,
			Runtime: time.Duration(t.finish-t.start) * time.Microsecond,
		})
	}
	w.Notes = append(w.Notes,
		fmt.Sprintf("kept %d tasks submitted, started and finished inside the slice; %d tasks cross its edges, %d request nothing", len(kept), outside, zero),
		"each task is a job of one task; users are the trace's hashed users, with equal weights; requests and machines are normalized to the largest machine")
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("google trace %s: %w", name, err)
	}
	return w, nil
}
