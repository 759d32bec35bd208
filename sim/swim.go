package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// The macro-benchmark cluster (its workload is sim/reproduce.Macro) of the H-MRF paper (§7.1): 59 EC2 m3.xlarge
// slaves of <4 cores, 15 GB>.
const (
	MacroNodes     = 59
	MacroNodeCores = 4.0
	MacroNodeMemGB = 15.0
)

// How a SWIM job's byte counts become tasks. SWIM traces give only bytes; the
// model is Hadoop's: one map task per HDFS split of input, reduce tasks sized
// by the shuffle, and tasks that process data at a fixed rate. The constants
// are plausible for the 2009–2010 Facebook cluster (64–128 MiB blocks, tens
// of MB/s of disk per task slot, shared).
const (
	// SWIMSplitBytes is the input one map task reads.
	SWIMSplitBytes = 128 << 20
	// SWIMMapRate is how fast a map task processes its input, in bytes/s.
	SWIMMapRate = 8 << 20
	// SWIMReduceBytes is the shuffle input one reduce task takes.
	SWIMReduceBytes = 1 << 30
	// SWIMReduceRate is how fast a reduce task processes its shuffle input
	// and writes its output, in bytes/s.
	SWIMReduceRate = 8 << 20
)

// SWIM demands, in the workload's units <cores, GB>: a map task holds one
// core and 1 GB, a reduce task one core and 2 GB (it buffers the shuffle).
var (
	swimMapDemand    = ledger.Vector{1, 1}
	swimReduceDemand = ledger.Vector{1, 2}
)

// SWIMOptions choose the cluster a SWIM trace replays on.
type SWIMOptions struct {
	// Nodes is the number of <4 cores, 15 GB> nodes (the H-MRF paper's EC2
	// m3.xlarge slaves); 0 means 59, the paper's cluster.
	Nodes int
}

// SWIM accounts are size classes, by the job's number of map tasks: the
// traces have no user ids, and size classes are how Facebook's fair
// scheduler pools were organised (small interactive queries apart from
// large batch jobs).
var swimAccounts = []struct {
	name     string
	maxTasks int // inclusive; the last class has no bound
}{
	{"tiny", 1}, {"small", 50}, {"medium", 500}, {"large", math.MaxInt},
}

// LoadSWIMFile reads a SWIM trace file.
func LoadSWIMFile(path string, opt SWIMOptions) (*Workload, error) {
	r, closeFn, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return LoadSWIM(path, r, opt)
}

// LoadSWIM reads a SWIM Facebook trace: tab-separated lines of job id,
// submit time (s), gap to the previous submission (s), map input bytes,
// shuffle bytes and reduce output bytes. Each trace job becomes a map job of
// ceil(input/SWIMSplitBytes) tasks (at least one) and, when it shuffles
// anything, a reduce stage of ceil(shuffle/SWIMReduceBytes) tasks submitted
// when the maps complete. Accounts are size classes by map tasks: tiny (1),
// small (≤50), medium (≤500) and large, with equal weights.
func LoadSWIM(name string, r io.Reader, opt SWIMOptions) (*Workload, error) {
	nodes := opt.Nodes
	if nodes < 0 {
		return nil, fmt.Errorf("nodes %d must not be negative", nodes)
	}
	if nodes == 0 {
		nodes = MacroNodes
	}
	w := &Workload{Name: name, Resources: []string{"cpu", "mem"}, Units: []string{"cores", "GB"}}
	for i := range nodes {
		w.Nodes = append(w.Nodes, Node{ID: fmt.Sprintf("node%03d", i+1), Capacity: ledger.Vector{MacroNodeCores, MacroNodeMemGB}})
	}
	for _, a := range swimAccounts {
		w.Accounts = append(w.Accounts, Account{Name: a.name, Weight: 1})
	}
	sc := bufio.NewScanner(r)
	lineNo, traceJobs := 0, 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != 6 {
			return nil, inputErrorf(name, lineNo, "", "has %d tab-separated fields; SWIM lines have 6 (job id, submit s, gap s, map input, shuffle and reduce output bytes)", len(fields))
		}
		submit, err := strconv.ParseFloat(strings.TrimSpace(fields[1]), 64)
		if err != nil || submit < 0 || math.IsInf(submit, 0) || math.IsNaN(submit) {
			return nil, inputErrorf(name, lineNo, "field 2 (submit_time_seconds)", "%q is not a non-negative number of seconds", fields[1])
		}
		var bytes [3]float64
		for k, label := range []string{"field 4 (map_input_bytes)", "field 5 (shuffle_bytes)", "field 6 (reduce_output_bytes)"} {
			b, err := strconv.ParseFloat(strings.TrimSpace(fields[3+k]), 64)
			if err != nil || b < 0 || math.IsInf(b, 0) || math.IsNaN(b) {
				return nil, inputErrorf(name, lineNo, label, "%q is not a non-negative byte count", fields[3+k])
			}
			bytes[k] = b
		}
		traceJobs++
		id := swimJobID(fields[0], lineNo)
		input, shuffle, output := bytes[0], bytes[1], bytes[2]
		maps := int(math.Max(1, math.Ceil(input/SWIMSplitBytes)))
		account := 0
		for account < len(swimAccounts)-1 && maps > swimAccounts[account].maxTasks {
			account++
		}
		mapJob := len(w.Jobs)
		w.Jobs = append(w.Jobs, Job{
			ID: id, Name: "map", Account: account,
			Submit:  ledger.Time(submit * float64(time.Second)),
			Demand:  swimMapDemand.Clone(),
			Tasks:   maps,
			Runtime: rateRuntime(input/float64(maps), SWIMMapRate),
		})
		if shuffle > 0 {
			reduces := int(math.Max(1, math.Ceil(shuffle/SWIMReduceBytes)))
			w.Jobs = append(w.Jobs, Job{
				ID: id, Name: "reduce", Account: account,
				Demand:  swimReduceDemand.Clone(),
				Tasks:   reduces,
				Runtime: rateRuntime((shuffle+output)/float64(reduces), SWIMReduceRate),
				After:   &Dependency{Job: mapJob, Continues: true},
			})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if traceJobs == 0 {
		return nil, inputErrorf(name, 0, "", "holds no jobs")
	}
	w.Notes = append(w.Notes,
		fmt.Sprintf("SWIM: %d trace jobs as %d map/reduce stages on %d nodes of <%g cores, %g GB>", traceJobs, len(w.Jobs), nodes, MacroNodeCores, MacroNodeMemGB),
		fmt.Sprintf("tasks: one map per %d MiB of input at %d MiB/s; one reduce per %d MiB of shuffle at %d MiB/s; accounts are size classes by map tasks (tiny 1, small ≤50, medium ≤500, large)",
			SWIMSplitBytes>>20, SWIMMapRate>>20, SWIMReduceBytes>>20, SWIMReduceRate>>20))
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

// rateRuntime is how long processing bytes takes at rate, at least a second.
func rateRuntime(bytes, rate float64) time.Duration {
	return max(time.Second, time.Duration(bytes/rate*float64(time.Second)))
}

// swimJobID takes the number out of "job123"; other ids number by line.
func swimJobID(s string, line int) uint64 {
	if n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(s), "job"), 10, 64); err == nil {
		return n
	}
	return uint64(line)
}
