package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// The usage report's CSV carries requested vs used per row: how many of
// the ended attempts were measured, CPU seconds used and allocated, their
// ratio, the largest peak and its request; a row nothing measured shows
// dashes, not a 0% that would read as idle.
func TestUsageReportShowsRequestedVsUsed(t *testing.T) {
	used, alloc := 4500.0, 7200.0
	rows := []*longfairv1.UsageRow{
		{Key: "astro", Tasks: 3, Runtime: durationpb.New(3600e9), Usage: map[string]float64{"cpu": 7200}, ChargedMicroSu: 2e6,
			EndedTasks: 3, MeasuredTasks: 2, CpuUsedSeconds: used, CpuAllocatedSeconds: alloc, PeakMemBytes: 900 << 20, PeakMemRequestedBytes: 1 << 30},
		{Key: "bio", Tasks: 1, Runtime: durationpb.New(60e9), Usage: map[string]float64{"cpu": 60}, EndedTasks: 1},
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, "csv", usageTable("account", rows, false)); err != nil {
		t.Fatal(err)
	}
	got := readCSV(t, buf.String())
	want := map[string][]string{
		"astro": {"2/3", fmt.Sprintf("%.2f", used), fmt.Sprintf("%.2f", alloc), fmt.Sprintf("%.1f%%", 100*used/alloc), "900M", "1G"},
		"bio":   {"0/1", "-", "-", "-", "-", "-"},
	}
	cols := []string{"MEASURED", "CPU_USED_SECONDS", "CPU_ALLOC_SECONDS", "CPU_EFF", "MEM_PEAK", "MEM_REQUESTED"}
	for key, w := range want {
		for i, col := range cols {
			if c := got[key][col]; c != w[i] {
				t.Errorf("%s %s = %q, want %q\n%s", key, col, c, w[i], buf.String())
			}
		}
	}
}

// The ledger export's CSV and JSON lines carry a measured charge's usage
// exactly, and leave it out of an unmeasured charge and of other kinds.
func TestLedgerExportCarriesMeasuredUsage(t *testing.T) {
	entries := []*longfairv1.JournalEntry{
		{Seq: 1, Kind: "grant", Id: "g1", Account: "astro", AmountMicroSu: 1e9},
		{Seq: 2, Kind: "charge", Id: "job-1.task-0.attempt-1", Account: "astro", AmountMicroSu: 5e6,
			CpuSeconds: proto.Float64(12.5), CpuAllocatedSeconds: proto.Float64(20), PeakMemBytes: proto.Int64(104857600), MemRequestedBytes: proto.Int64(268435456)},
		{Seq: 3, Kind: "charge", Id: "job-1.task-1.attempt-1", Account: "astro", AmountMicroSu: 5e6},
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, "csv", journalTable(entries, true)); err != nil {
		t.Fatal(err)
	}
	got := readCSV(t, buf.String())
	cols := []string{"CPU_SECONDS", "CPU_ALLOCATED_SECONDS", "PEAK_MEM_BYTES", "MEM_REQUESTED_BYTES"}
	want := map[string][]string{
		"g1":                     {"", "", "", ""},
		"job-1.task-0.attempt-1": {"12.5", "20", "104857600", "268435456"},
		"job-1.task-1.attempt-1": {"", "", "", ""},
	}
	for id, w := range want {
		for i, col := range cols {
			if c, ok := got[id][col]; !ok || c != w[i] {
				t.Errorf("%s %s = %q (present %v), want %q\n%s", id, col, c, ok, w[i], buf.String())
			}
		}
	}

	for i, e := range entries {
		buf.Reset()
		if err := writeJSONLine(&buf, e); err != nil {
			t.Fatal(err)
		}
		var line map[string]any
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		_, has := line["cpu_seconds"]
		if has != (i == 1) || (i == 1 && (line["cpu_seconds"] != 12.5 || line["peak_mem_bytes"] != "104857600")) {
			t.Errorf("JSON line of entry %d: %s", e.GetSeq(), buf.String())
		}
	}
}

// readCSV maps each row's first cell to its cells by header.
func readCSV(t *testing.T, text string) map[string]map[string]string {
	t.Helper()
	records, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, r := range records[1:] {
		key := r[0]
		if records[0][0] == "SEQ" {
			key = r[3] // the journal's ID column
		}
		out[key] = map[string]string{}
		for i, h := range records[0] {
			out[key][h] = r[i]
		}
	}
	return out
}
