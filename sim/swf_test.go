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
	f := []int{job, submit, -1, run, alloc, -1, -1, req, -1, -1, 1, user, group, -1, -1, -1, -1, -1}
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
	w, sum, err := LoadSWF("log.swf", strings.NewReader(in), SWFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 6 || sum.Jobs != 4 || sum.NoRuntime != 1 || sum.NoProcs != 1 || sum.ShortRuns != 1 || sum.HeaderRecords != 6 {
		t.Errorf("summary %+v, want 6 records, 4 jobs, 1 without run time, 1 without processors, 1 short", sum)
	}
	if sum.Procs != 128 || !equalVectors(w.Nodes[0].Capacity, ledger.Vector{128}) || len(w.Nodes) != 1 {
		t.Errorf("machine %v from %s, want one node of MaxProcs 128", w.Nodes, sum.ProcsFrom)
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
	w, _, err = LoadSWF("g.swf", strings.NewReader(in), SWFOptions{Procs: 16})
	if err != nil {
		t.Fatal(err)
	}
	if w.Nodes[0].Capacity[0] != 16 {
		t.Errorf("capacity %v, want the option's 16 over the header", w.Nodes[0].Capacity)
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
// or when neither allocated nor requested processors are positive.
func countSWF(t *testing.T, path string) (records, skipped, header int) {
	t.Helper()
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
		if line == "" || line[0] == ';' {
			continue
		}
		records++
		f := strings.Fields(line)
		run, _ := strconv.ParseFloat(f[3], 64)
		alloc, _ := strconv.ParseFloat(f[4], 64)
		req, _ := strconv.ParseFloat(f[7], 64)
		if run < 0 || (alloc <= 0 && req <= 0) {
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
