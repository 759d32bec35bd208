package sim

import (
	"bufio"
	"compress/gzip"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/shareddata"
	"github.com/longfair/longfair/ledger"
)

// swfLine builds an 18-field SWF record from the fields the loader reads.
func swfLine(job, submit, run, alloc, req, user, group int) string {
	return swfLineReq(job, submit, run, alloc, req, -1, user, group)
}

// swfLineReq is swfLine with a requested time (field 9).
func swfLineReq(job, submit, run, alloc, req, reqTime, user, group int) string {
	f := []int{job, submit, -1, run, alloc, -1, -1, req, reqTime, -1, 1, user, group, -1, -1, -1, -1, -1}
	s := make([]string, len(f))
	for i, x := range f {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

func TestLoadSWFReadsJobsSkipsIncompleteRecordsAndRanksAccounts(t *testing.T) {
	in := strings.Join([]string{
		"; Version: 2.2",
		"; MaxNodes: 64",
		"; MaxProcs: 128",
		"; MaxRecords: 6",
		swfLine(1, 0, 100, 4, 4, 7, 1),
		swfLine(2, 10, -1, 8, 8, 7, 1),   // no run time
		swfLine(3, 20, 50, -1, 16, 3, 2), // allocated missing: requested
		swfLine(4, 30, 60, -1, -1, 3, 2), // no processors
		swfLine(5, 40, 0, 2, 2, 9, 2),    // under a second
		"",
		swfLine(6, 50, 1000, 1, 1, 9, 2),
	}, "\n")
	w, sum, err := LoadSWF("log.swf", strings.NewReader(in), SWFOptions{OneNode: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 6 || sum.Jobs != 4 || sum.NoRuntime != 1 || sum.NoProcs != 1 || sum.ShortRuns != 1 || sum.HeaderRecords != 6 {
		t.Errorf("summary %+v, want 6 records, 4 jobs, 1 without run time, 1 without processors, 1 short", sum)
	}
	if sum.Procs != 128 || !equalVectors(w.Nodes[0].Capacity, ledger.Vector{128}) || len(w.Nodes) != 1 {
		t.Errorf("machine %v from %s, want one node of MaxProcs 128", w.Nodes, sum.ProcsFrom)
	}
	// The same log on its 64 nodes of 2 processors: job 3's 16 processors
	// are 8 whole nodes.
	wn, sumN, err := LoadSWF("log.swf", strings.NewReader(in), SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wn.Nodes) != 64 || sumN.CoresPerNode != 2 || !equalVectors(wn.Nodes[63].Capacity, ledger.Vector{2}) || sumN.Jobs != 4 {
		t.Errorf("machine of %d nodes, %d per node (summary %+v), want 64 of 2 and the same 4 jobs", len(wn.Nodes), sumN.CoresPerNode, sumN)
	}
	// Processor-seconds: u3 16×50=800, u9 2×1+1×1000=1002, u7 4×100=400.
	var names []string
	for _, a := range w.Accounts {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "u9,u3,u7" {
		t.Errorf("accounts %s, want u9,u3,u7 (heaviest first)", got)
	}
	byID := map[uint64]Job{}
	for _, j := range w.Jobs {
		byID[j.ID] = j
	}
	if j := byID[3]; j.Demand[0] != 16 || w.Accounts[j.Account].Name != "u3" || j.Runtime != 50*time.Second || j.Submit != ledger.Time(20*time.Second) {
		t.Errorf("job 3 %+v, want 16 requested procs for 50 s at 20 s by u3", j)
	}
	if j := byID[5]; j.Runtime != time.Second {
		t.Errorf("job 5 runtime %v, want the 1 s floor", j.Runtime)
	}
}

func TestLoadSWFGroupsTopAndProcsOption(t *testing.T) {
	in := strings.Join([]string{
		"; MaxNodes: 32",
		swfLine(1, 0, 100, 4, 4, 1, 5),
		swfLine(2, 0, 100, 2, 2, 2, 6),
		swfLine(3, 0, 100, 1, 1, 3, 7),
		swfLine(4, 0, 100, 8, 8, 4, 8),
	}, "\n")
	w, sum, err := LoadSWF("g.swf", strings.NewReader(in), SWFOptions{AccountBy: "group", Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Procs != 32 || sum.Accounts != 4 {
		t.Errorf("procs %d (from %s) accounts %d, want MaxNodes 32 and 4 groups", sum.Procs, sum.ProcsFrom, sum.Accounts)
	}
	var names []string
	for _, a := range w.Accounts {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "g8,g5,others" {
		t.Errorf("accounts %s, want g8,g5,others", got)
	}
	others := 0
	for _, j := range w.Jobs {
		if w.Accounts[j.Account].Name == "others" {
			others++
		}
	}
	if others != 2 {
		t.Errorf("%d jobs in others, want the 2 of the folded groups", others)
	}
	w, _, err = LoadSWF("g.swf", strings.NewReader(in), SWFOptions{Procs: 16, OneNode: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Nodes[0].Capacity[0] != 16 {
		t.Errorf("capacity %v, want the option's 16 over the header", w.Nodes[0].Capacity)
	}
	// 16 processors cannot make the header's 32 nodes; the options can
	// say what the machine is instead.
	if _, _, err := LoadSWF("g.swf", strings.NewReader(in), SWFOptions{Procs: 16}); err == nil || !strings.Contains(err.Error(), "--nodes") {
		t.Errorf("16 procs on 32 nodes: error %v, want one naming --nodes", err)
	}
	w, sum, err = LoadSWF("g.swf", strings.NewReader(in), SWFOptions{Procs: 16, Nodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 4 || w.Nodes[0].Capacity[0] != 4 || sum.NodesFrom != "the nodes option" {
		t.Errorf("%d nodes of %v (nodes from %s), want the options' 4 nodes of 4", len(w.Nodes), w.Nodes[0].Capacity, sum.NodesFrom)
	}
}

func TestLoadSWFSpansJobsOverWholeNodesWithRequestedWalltimes(t *testing.T) {
	in := strings.Join([]string{
		"; MaxNodes: 4",
		"; MaxProcs: 16",
		swfLineReq(1, 0, 100, 1, 1, 200, 1, 1),   // one processor: a whole node
		swfLineReq(2, 0, 100, 4, 4, -1, 1, 1),    // one node; no requested time
		swfLineReq(3, 0, 300, 5, 5, 250, 1, 1),   // two nodes; ran past its request
		swfLineReq(4, 0, 100, -1, 16, 900, 2, 1), // the whole machine (requested procs)
		swfLineReq(5, 0, 100, 17, 17, 900, 2, 1), // wider than the machine
	}, "\n")
	w, sum, err := LoadSWF("n.swf", strings.NewReader(in), SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 4 || sum.CoresPerNode != 4 || sum.Nodes != 4 || sum.Procs != 16 {
		t.Fatalf("machine %d nodes (summary %+v), want 4 nodes of 4", len(w.Nodes), sum)
	}
	if sum.TooWide != 1 || sum.Jobs != 4 || sum.Skipped() != 1 || sum.NoRequestedTime != 1 || sum.OverRequest != 1 {
		t.Errorf("summary %+v, want 4 jobs, 1 too wide (skipped), 1 without requested time, 1 over its request", sum)
	}
	byID := map[uint64]Job{}
	for _, j := range w.Jobs {
		byID[j.ID] = j
	}
	want := []struct {
		id       uint64
		nodes    int
		demand   float64
		walltime time.Duration
	}{
		{1, 0, 4, 200 * time.Second},
		{2, 0, 4, 100 * time.Second},
		{3, 2, 8, 250 * time.Second},
		{4, 4, 16, 900 * time.Second},
	}
	for _, c := range want {
		j, ok := byID[c.id]
		if !ok {
			t.Errorf("job %d missing", c.id)
			continue
		}
		if j.Nodes != c.nodes || j.Demand[0] != c.demand || j.Walltime != c.walltime || (c.nodes > 1 && j.PerNode[0] != 4) {
			t.Errorf("job %d: %d nodes of %v, demand %v, walltime %v; want %d nodes of 4, demand %v, walltime %v",
				c.id, j.Nodes, j.PerNode, j.Demand, j.Walltime, c.nodes, c.demand, c.walltime)
		}
	}
	if _, ok := byID[5]; ok {
		t.Error("job 5, wider than the machine, was kept")
	}
	// Without MaxNodes each processor is a node.
	w, sum, err = LoadSWF("p.swf", strings.NewReader("; MaxProcs: 8\n"+swfLine(1, 0, 10, 3, 3, 1, 1)), SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 8 || sum.CoresPerNode != 1 || w.Jobs[0].Nodes != 3 || w.Jobs[0].PerNode[0] != 1 {
		t.Errorf("MaxProcs only: %d nodes of %d, job %+v; want 8 nodes of 1 and the job on 3", len(w.Nodes), sum.CoresPerNode, w.Jobs[0])
	}
}

func TestLoadSWFErrors(t *testing.T) {
	good := swfLine(1, 0, 10, 1, 1, 1, 1)
	cases := []struct {
		name  string
		in    string
		opt   SWFOptions
		line  int
		field string
		says  string
	}{
		{"short record", "; MaxProcs: 8\n" + good + "\n1 2 3", SWFOptions{}, 3, "", "has 3 fields"},
		{"bad number", "; MaxProcs: 8\n" + strings.Replace(good, " 10 ", " ten ", 1), SWFOptions{}, 2, "field 4 (run time)", "not a number"},
		{"bad user", "; MaxProcs: 8\n1 0 -1 10 1 -1 -1 1 -1 -1 1 x 1 -1 -1 -1 -1 -1", SWFOptions{}, 2, "field 12 (user id)", "not a number"},
		{"bad header", "; MaxProcs: lots\n" + good, SWFOptions{}, 1, "MaxProcs", "whole non-negative"},
		{"no machine size", good, SWFOptions{}, 0, "", "--procs"},
		{"no jobs", "; MaxProcs: 8\n" + swfLine(1, 0, -1, 1, 1, 1, 1), SWFOptions{}, 0, "", "no usable job records"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := LoadSWF("t.swf", strings.NewReader(c.in), c.opt)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			if ie.File != "t.swf" || ie.Line != c.line || ie.Field != c.field || !strings.Contains(ie.Msg, c.says) {
				t.Errorf("got %q (line %d field %q); want line %d field %q saying %q", err, ie.Line, ie.Field, c.line, c.field, c.says)
			}
		})
	}
	if _, _, err := LoadSWF("t.swf", strings.NewReader(good), SWFOptions{AccountBy: "queue"}); err == nil || !strings.Contains(err.Error(), "user or group") {
		t.Errorf("account-by queue: error %v, want one naming user or group", err)
	}
	if _, _, err := LoadSWF("t.swf", strings.NewReader(good), SWFOptions{Top: -1}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("top -1: error %v, want a refusal", err)
	}
	if _, _, err := LoadSWFFile("/nonexistent/log.swf", SWFOptions{}); err == nil || !strings.Contains(err.Error(), "log.swf") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}

// countSWF counts a log's job records and the records the loader must skip,
// independently of the loader: a record is skipped when its run time is -1
// or when neither allocated nor requested processors are positive, or when
// they are more than the header's MaxProcs.
func countSWF(t *testing.T, path string) (records, skipped, header int) {
	t.Helper()
	var maxProcs float64
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sc *bufio.Scanner
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc = bufio.NewScanner(zr)
	} else {
		sc = bufio.NewScanner(f)
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "; MaxRecords:") {
			header, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "; MaxRecords:")))
		}
		if p, ok := strings.CutPrefix(line, "; MaxProcs:"); ok {
			maxProcs, _ = strconv.ParseFloat(strings.TrimSpace(p), 64)
		}
		if line == "" || line[0] == ';' {
			continue
		}
		records++
		f := strings.Fields(line)
		run, _ := strconv.ParseFloat(f[3], 64)
		alloc, _ := strconv.ParseFloat(f[4], 64)
		req, _ := strconv.ParseFloat(f[7], 64)
		procs := alloc
		if procs <= 0 {
			procs = req
		}
		// Jobs wider than the machine are left out too (the header comes
		// before the records).
		if run < 0 || procs <= 0 || procs > maxProcs {
			skipped++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return records, skipped, header
}

func TestLoadSWFRealTraces(t *testing.T) {
	for _, name := range []string{"HPC2N-2002-2.2-alea-subset.swf", "KTH-SP2-1996-2.1-cln.swf.gz"} {
		t.Run(name, func(t *testing.T) {
			path := shareddata.Path(t, name)
			records, skipped, header := countSWF(t, path)
			w, sum, err := LoadSWFFile(path, SWFOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != records || sum.Jobs != records-skipped || len(w.Jobs) != sum.Jobs {
				t.Errorf("loaded %d of %d records (%d jobs); want %d records, %d jobs", sum.Records, records, len(w.Jobs), records, records-skipped)
			}
			// A cleaned log's header counts exactly its records; the HPC2N
			// file is a subset whose header still describes the raw log.
			if strings.Contains(name, "-cln") && sum.HeaderRecords != sum.Records {
				t.Errorf("header says %d records, file has %d", sum.HeaderRecords, sum.Records)
			}
			if header != sum.HeaderRecords {
				t.Errorf("header MaxRecords %d, loader read %d", header, sum.HeaderRecords)
			}
			if sum.Procs <= 0 || len(w.Accounts) < 2 {
				t.Errorf("machine %d procs, %d accounts: want the header's size and many users", sum.Procs, len(w.Accounts))
			}
		})
	}
}
