package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// SWFOptions choose how a Standard Workload Format log becomes a workload.
type SWFOptions struct {
	// AccountBy is "user" (field 12, the default) or "group" (field 13).
	AccountBy string
	// Top, when positive, keeps the Top heaviest accounts (by processor-
	// seconds) and folds the rest into one account named "others". Logs have
	// hundreds of users, which makes every per-user partition tiny.
	Top int
	// Procs, when positive, is the machine size in processors; otherwise it
	// comes from the log's "; MaxProcs:" header, or "; MaxNodes:" without it.
	Procs int
	// Nodes, when positive, is the machine's node count; otherwise it comes
	// from the log's "; MaxNodes:" header, or is Procs (one processor per
	// node) without it.
	Nodes int
	// OneNode models the machine as one node of Procs processors, each job
	// one task of its processor count: the loader's model before it knew
	// nodes, kept to compare with results made with it.
	OneNode bool
}

// SWFSummary says what a log held and what the loader did with it.
type SWFSummary struct {
	Records int // job records read
	Jobs    int // records turned into jobs
	// Skipped counts records left out, by reason.
	NoRuntime, NoProcs, NoSubmit int
	// ShortRuns counts jobs that ran under one second and are replayed as
	// one second long.
	ShortRuns int
	// HeaderRecords is the header's MaxRecords (0 when absent). For cleaned
	// logs it equals Records; raw-log headers describe the whole raw log.
	HeaderRecords int
	Procs         int    // machine size used
	ProcsFrom     string // where Procs came from
	// Nodes and CoresPerNode are the machine's node count and node size
	// (Procs/Nodes), and NodesFrom where Nodes came from; with OneNode,
	// one node of Procs.
	Nodes, CoresPerNode int
	NodesFrom           string
	// TooWide counts jobs that asked for more processors than the machine
	// has; they are left out (with OneNode they are kept, and the replay
	// reports them as never able to run).
	TooWide int
	// NoRequestedTime counts jobs without a requested time, whose walltime
	// is their run time; OverRequest jobs that ran longer than they
	// requested (the replay runs them for their run time all the same).
	NoRequestedTime, OverRequest int
	Accounts                     int // distinct users or groups before folding
}

// Skipped is the number of records left out.
func (s *SWFSummary) Skipped() int { return s.NoRuntime + s.NoProcs + s.NoSubmit + s.TooWide }

// The SWF fields the loader reads (1-based, as the format numbers them).
const (
	swfJob       = 1
	swfSubmit    = 2
	swfRun       = 4
	swfAllocated = 5
	swfRequested = 8
	swfReqTime   = 9
	swfUser      = 12
	swfGroup     = 13
	swfFields    = 18
)

var swfFieldNames = map[int]string{
	swfJob: "job number", swfSubmit: "submit time", swfRun: "run time",
	swfAllocated: "allocated processors", swfRequested: "requested processors", swfReqTime: "requested time",
	swfUser: "user id", swfGroup: "group id",
}

// LoadSWFFile reads an SWF log, plain or gzip-compressed.
func LoadSWFFile(path string, opt SWFOptions) (*Workload, *SWFSummary, error) {
	r, closeFn, err := openTrace(path)
	if err != nil {
		return nil, nil, err
	}
	defer closeFn()
	return LoadSWF(path, r, opt)
}

// LoadSWF reads a Standard Workload Format log (Parallel Workloads Archive).
// A job asks for P processors, the allocated ones or, when those are
// missing, the requested ones, with the single resource cpu.
//
// The machine is its header's MaxNodes nodes of MaxProcs/MaxNodes
// processors each (the options override either). A log without MaxNodes is
// taken as one processor per node, as on the archive's MPPs (SP2, CM-5,
// iPSC), where MaxNodes equals MaxProcs; a MaxProcs that nodes do not
// divide is an error, not a guess. A job of P processors runs on
// ceil(P/c) nodes of c processors, all at once (a parallel job, placed
// whole), holding every processor of each: these machines gave jobs whole
// nodes, so a job of 3 processors on nodes of 2 held 4, and fairness and
// utilization count the 4. A job wider than the machine is left out and
// counted (TooWide).
//
// The walltime backfill plans with is the job's requested time (field 9),
// or its run time when the log has none; tasks run for their run time
// either way, even past the request (the log's machine let them).
//
// With OneNode the machine is instead one node of MaxProcs processors and
// every job one task of P processors there, with no walltime: the model
// before nodes, kept so earlier results can be made again.
//
// Records with no run time, no processor count or no submit time are
// skipped and counted; jobs that ran under a second are replayed as one
// second long. name is used in errors.
func LoadSWF(name string, r io.Reader, opt SWFOptions) (*Workload, *SWFSummary, error) {
	byField := swfUser
	switch opt.AccountBy {
	case "", "user":
	case "group":
		byField = swfGroup
	default:
		return nil, nil, fmt.Errorf("account-by %q: choose user or group", opt.AccountBy)
	}
	if opt.Top < 0 || opt.Procs < 0 || opt.Nodes < 0 {
		return nil, nil, fmt.Errorf("top %d, procs %d and nodes %d must not be negative", opt.Top, opt.Procs, opt.Nodes)
	}
	sum := &SWFSummary{}
	var header struct{ maxProcs, maxNodes int }
	type rec struct {
		id      uint64
		account int64
		submit  ledger.Time
		procs   float64
		runtime time.Duration
		reqTime time.Duration
	}
	var recs []rec
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line[0] == ';' {
			if err := swfHeader(name, lineNo, line, &header.maxProcs, &header.maxNodes, &sum.HeaderRecords); err != nil {
				return nil, nil, err
			}
			continue
		}
		sum.Records++
		fields := strings.Fields(line)
		if len(fields) < swfFields {
			return nil, nil, inputErrorf(name, lineNo, "", "has %d fields; SWF job records have %d whitespace-separated fields", len(fields), swfFields)
		}
		num := func(f int) (float64, error) {
			x, err := strconv.ParseFloat(fields[f-1], 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, inputErrorf(name, lineNo, fmt.Sprintf("field %d (%s)", f, swfFieldNames[f]), "%q is not a number", fields[f-1])
			}
			return x, nil
		}
		var v [swfFields + 1]float64
		for _, f := range []int{swfJob, swfSubmit, swfRun, swfAllocated, swfRequested, swfReqTime, byField} {
			x, err := num(f)
			if err != nil {
				return nil, nil, err
			}
			v[f] = x
		}
		procs := v[swfAllocated]
		if procs <= 0 {
			procs = v[swfRequested]
		}
		switch {
		case v[swfRun] < 0:
			sum.NoRuntime++
			continue
		case procs <= 0:
			sum.NoProcs++
			continue
		case v[swfSubmit] < 0:
			sum.NoSubmit++
			continue
		}
		runtime := time.Duration(v[swfRun] * float64(time.Second))
		if runtime < time.Second {
			runtime = time.Second
			sum.ShortRuns++
		}
		recs = append(recs, rec{
			id:      uint64(math.Max(v[swfJob], 0)),
			account: int64(v[byField]),
			submit:  ledger.Time(v[swfSubmit] * float64(time.Second)),
			procs:   math.Ceil(procs),
			runtime: runtime,
			reqTime: time.Duration(max(v[swfReqTime], 0) * float64(time.Second)),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", name, err)
	}
	switch {
	case opt.Procs > 0:
		sum.Procs, sum.ProcsFrom = opt.Procs, "the procs option"
	case header.maxProcs > 0:
		sum.Procs, sum.ProcsFrom = header.maxProcs, "the MaxProcs header"
	case header.maxNodes > 0:
		sum.Procs, sum.ProcsFrom = header.maxNodes, "the MaxNodes header"
	default:
		return nil, nil, inputErrorf(name, 0, "", "the log has no \"; MaxProcs:\" or \"; MaxNodes:\" header: give the machine size in processors (--procs N)")
	}
	if err := swfMachine(name, opt, header.maxNodes, sum); err != nil {
		return nil, nil, err
	}
	if !opt.OneNode {
		// A job wider than the machine could never start; the log's
		// machine ran it, so its header understates the machine or the
		// record is wrong. Either way it cannot be replayed here.
		kept := recs[:0]
		for _, r := range recs {
			if r.procs > float64(sum.Procs) {
				sum.TooWide++
				continue
			}
			kept = append(kept, r)
		}
		recs = kept
	}
	if len(recs) == 0 {
		return nil, nil, inputErrorf(name, 0, "", "no usable job records (%d read, %d skipped)", sum.Records, sum.Skipped())
	}

	// Rank accounts by processor-seconds: the report lists the heaviest first
	// and --top keeps them.
	load := map[int64]float64{}
	for _, r := range recs {
		load[r.account] += r.procs * r.runtime.Seconds()
	}
	ids := make([]int64, 0, len(load))
	for id := range load {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if c := cmp.Compare(load[b], load[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sum.Accounts = len(ids)
	prefix := "u"
	if byField == swfGroup {
		prefix = "g"
	}
	w := &Workload{
		Name:      name,
		Resources: []string{"cpu"},
		Units:     []string{"procs"},
	}
	if opt.OneNode {
		w.Nodes = []Node{{ID: "machine", Capacity: ledger.Vector{float64(sum.Procs)}}}
	} else {
		w.Nodes = make([]Node, sum.Nodes)
		width := len(strconv.Itoa(sum.Nodes - 1))
		for i := range w.Nodes {
			w.Nodes[i] = Node{ID: fmt.Sprintf("n%0*d", width, i), Capacity: ledger.Vector{float64(sum.CoresPerNode)}}
		}
	}
	accountOf := make(map[int64]int, len(ids))
	for i, id := range ids {
		if opt.Top > 0 && i >= opt.Top {
			if i == opt.Top {
				w.Accounts = append(w.Accounts, Account{Name: "others", Weight: 1})
			}
			accountOf[id] = opt.Top
			continue
		}
		nm := prefix + strconv.FormatInt(id, 10)
		if id < 0 {
			nm = prefix + "-unknown"
		}
		accountOf[id] = len(w.Accounts)
		w.Accounts = append(w.Accounts, Account{Name: nm, Weight: 1})
	}
	w.Jobs = make([]Job, len(recs))
	cores := float64(sum.CoresPerNode)
	for i, r := range recs {
		j := Job{ID: r.id, Account: accountOf[r.account], Submit: r.submit,
			Demand: ledger.Vector{r.procs}, Tasks: 1, Runtime: r.runtime}
		if !opt.OneNode {
			// Whole nodes (see LoadSWF): ceil(P/cores) nodes of all their
			// cores, one node's worth on a node of its own.
			nodes := math.Ceil(r.procs / cores)
			j.Demand = ledger.Vector{nodes * cores}
			if nodes > 1 {
				j.Nodes, j.PerNode = int(nodes), ledger.Vector{cores}
			}
			j.Walltime = r.reqTime
			switch {
			case r.reqTime <= 0:
				j.Walltime = r.runtime
				sum.NoRequestedTime++
			case r.runtime > r.reqTime:
				sum.OverRequest++
			}
		}
		w.Jobs[i] = j
	}
	sum.Jobs = len(w.Jobs)
	skipped := fmt.Sprintf("SWF: %d records, %d jobs; skipped %d without run time, %d without processors, %d without submit time",
		sum.Records, sum.Jobs, sum.NoRuntime, sum.NoProcs, sum.NoSubmit)
	machine := fmt.Sprintf("machine: one node of %d processors (from %s); each job is one task of its processor count", sum.Procs, sum.ProcsFrom)
	if !opt.OneNode {
		skipped += fmt.Sprintf(", %d wider than the machine", sum.TooWide)
		machine = fmt.Sprintf("machine: %d nodes (from %s) of %d processors (%d from %s); a job of P processors runs on ceil(P/%d) whole nodes at once",
			sum.Nodes, sum.NodesFrom, sum.CoresPerNode, sum.Procs, sum.ProcsFrom, sum.CoresPerNode)
	}
	w.Notes = append(w.Notes, skipped, machine,
		fmt.Sprintf("accounts: %d distinct by %s, equal weights", sum.Accounts, map[int]string{swfUser: "user", swfGroup: "group"}[byField]))
	if !opt.OneNode {
		w.Notes = append(w.Notes, fmt.Sprintf("walltime (what backfill plans with): the requested time; %d jobs without one use their run time; %d ran longer than they requested and run their run time",
			sum.NoRequestedTime, sum.OverRequest))
	}
	if opt.Top > 0 && len(ids) > opt.Top {
		w.Notes = append(w.Notes, fmt.Sprintf("kept the %d heaviest accounts; %d others folded into \"others\"", opt.Top, len(ids)-opt.Top))
	}
	if sum.ShortRuns > 0 {
		w.Notes = append(w.Notes, fmt.Sprintf("%d jobs ran under 1 s and are replayed as 1 s", sum.ShortRuns))
	}
	if err := w.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, sum, nil
}

// swfMachine sets the machine's processors, nodes and node size in sum
// from the options and the header (maxNodes; sum.Procs is already set).
func swfMachine(name string, opt SWFOptions, maxNodes int, sum *SWFSummary) error {
	if opt.OneNode {
		sum.Nodes, sum.CoresPerNode, sum.NodesFrom = 1, sum.Procs, "the one-node option"
		return nil
	}
	switch {
	case opt.Nodes > 0:
		sum.Nodes, sum.NodesFrom = opt.Nodes, "the nodes option"
	case maxNodes > 0:
		sum.Nodes, sum.NodesFrom = maxNodes, "the MaxNodes header"
	default:
		sum.Nodes, sum.NodesFrom = sum.Procs, "no MaxNodes header: one processor per node"
	}
	if sum.Nodes > sum.Procs || sum.Procs%sum.Nodes != 0 {
		return inputErrorf(name, 0, "", "%d processors (from %s) do not make %d equal nodes (from %s): give --procs and --nodes so that nodes divide processors",
			sum.Procs, sum.ProcsFrom, sum.Nodes, sum.NodesFrom)
	}
	sum.CoresPerNode = sum.Procs / sum.Nodes
	return nil
}

// swfHeader reads the header comments the loader uses: "; MaxProcs: 240".
func swfHeader(file string, lineNo int, line string, maxProcs, maxNodes, maxRecords *int) error {
	key, val, ok := strings.Cut(strings.TrimSpace(line[1:]), ":")
	if !ok {
		return nil
	}
	var dst *int
	switch strings.TrimSpace(key) {
	case "MaxProcs":
		dst = maxProcs
	case "MaxNodes":
		dst = maxNodes
	case "MaxRecords":
		dst = maxRecords
	default:
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(val))
	if err != nil || n < 0 {
		return inputErrorf(file, lineNo, strings.TrimSpace(key), "%q is not a whole non-negative number", strings.TrimSpace(val))
	}
	*dst = n
	return nil
}
