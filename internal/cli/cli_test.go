package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

func TestSubmitDemandFlags(t *testing.T) {
	for _, tc := range []struct {
		r    resourceFlags
		want map[string]float64
	}{
		{resourceFlags{}, map[string]float64{"cpu": 1}},
		{resourceFlags{cpu: "2", mem: "4G", mic: "1"}, map[string]float64{"cpu": 2, "mem": 4 << 30, "mic": 1}},
		{resourceFlags{mem: "512M"}, map[string]float64{"mem": 512 << 20}},
		{resourceFlags{cpu: "1", res: ListFlag{"gpu=2", "fpga=1"}}, map[string]float64{"cpu": 1, "gpu": 2, "fpga": 1}},
	} {
		got, err := tc.r.demand()
		if err != nil {
			t.Fatalf("%+v: %v", tc.r, err)
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%+v: demand %v, want %v", tc.r, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Fatalf("%+v: demand %v, want %v", tc.r, got, tc.want)
			}
		}
	}
	if _, err := (&resourceFlags{cpu: "1", res: ListFlag{"cpu=2"}}).demand(); err == nil {
		t.Error("cpu given twice was accepted")
	}
}

func TestParseTimes(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"now", now},
		{"-7d", now.Add(-7 * 24 * time.Hour)},
		{"now-24h", now.Add(-24 * time.Hour)},
		{"-1d12h", now.Add(-36 * time.Hour)},
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.Local)},
		{"2026-03-01 18:30", time.Date(2026, 3, 1, 18, 30, 0, 0, time.Local)},
		{"2026-03-01T18:30:00Z", time.Date(2026, 3, 1, 18, 30, 0, 0, time.UTC)},
	} {
		got, err := parseTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if got, err := parseTimeOrAfter("90d", now); err != nil || !got.Equal(now.Add(90*24*time.Hour)) {
		t.Errorf("parseTimeOrAfter(90d) = %v, %v", got, err)
	}
	for _, bad := range []string{"yesterday", "2026-13-01", "-x", "7dd", "d"} {
		if _, err := parseTime(bad, now); err == nil {
			t.Errorf("parseTime(%q) accepted", bad)
		}
	}
}

func TestParseBillingWeightsWithUnits(t *testing.T) {
	got, err := parseBilling([]string{"cpu=1", "mem=0.25/G", "mic=4"})
	if err != nil {
		t.Fatal(err)
	}
	if got["cpu"] != 1 || got["mic"] != 4 || got["mem"] != 0.25/float64(1<<30) {
		t.Fatalf("got %v", got)
	}
	// What is written back reads back to the same weights.
	again, err := parseBilling(strings.Fields(strings.TrimSuffix(fmtBilling(got), " (SU per hour per unit)")))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range got {
		if d := again[k] - v; d > 1e-15 || d < -1e-15 {
			t.Fatalf("%s: %v reads back as %v", k, v, again[k])
		}
	}
	for _, bad := range []string{"cpu", "mem=1/X", "=1"} {
		if _, err := parseBilling([]string{bad}); err == nil {
			t.Errorf("parseBilling(%q) accepted", bad)
		}
	}
}

func TestParseTaskRef(t *testing.T) {
	if j, i, err := parseTaskRef("12.3"); err != nil || j != 12 || i != 3 {
		t.Errorf("12.3 = %d, %d, %v", j, i, err)
	}
	if j, i, err := parseTaskRef("7/0"); err != nil || j != 7 || i != 0 {
		t.Errorf("7/0 = %d, %d, %v", j, i, err)
	}
	for _, bad := range []string{"12", "0.1", "x.1", "1.-1", "1.x"} {
		if _, _, err := parseTaskRef(bad); err == nil {
			t.Errorf("parseTaskRef(%q) accepted", bad)
		}
	}
}

// TestListingFormatsAgree renders one listing in all three formats: the
// CSV must hold the table's cells, and the JSON the API messages.
func TestListingFormatsAgree(t *testing.T) {
	jobs := []*longfairv1.Job{
		{Id: 7, Account: "astro", User: "ann", Name: "a, \"quoted\" name", Tasks: 4, PendingTasks: 3, RunningTasks: 1,
			Demand: map[string]float64{"cpu": 2, "mem": 4 << 30}, State: longfairv1.JobState_JOB_STATE_RUNNING},
		{Id: 6, Account: "bio", User: "bob", Tasks: 1, SucceededTasks: 1, Demand: map[string]float64{"mic": 1},
			State: longfairv1.JobState_JOB_STATE_SUCCEEDED, ChargedMicroSu: 1_500_000},
	}
	tab := jobsTable(jobs)
	var csvOut, tableOut, jsonOut bytes.Buffer
	if err := writeListing(&csvOut, "csv", tab, messages(jobs)); err != nil {
		t.Fatal(err)
	}
	if err := writeListing(&tableOut, "table", tab, messages(jobs)); err != nil {
		t.Fatal(err)
	}
	if err := writeListing(&jsonOut, "json", tab, messages(jobs)); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 3 || strings.Join(records[0], ",") != strings.Join(tab.header, ",") {
		t.Fatalf("csv %q", records)
	}
	for i, row := range tab.rows {
		if strings.Join(records[i+1], "\x00") != strings.Join(row, "\x00") {
			t.Errorf("csv row %q, table row %q", records[i+1], row)
		}
		if !strings.Contains(tableOut.String(), row[0]+" ") {
			t.Errorf("table has no row for job %s:\n%s", row[0], tableOut.String())
		}
	}
	if !strings.Contains(tableOut.String(), "cpu=2 mem=4G") || !strings.Contains(tableOut.String(), "1.5") {
		t.Errorf("table does not show demand and SU for people:\n%s", tableOut.String())
	}
	var parsed []struct {
		ID      string             `json:"id"`
		State   string             `json:"state"`
		Demand  map[string]float64 `json:"demand"`
		Charged string             `json:"charged_micro_su"`
		Failed  string             `json:"failed_tasks"`
	}
	if err := json.Unmarshal(jsonOut.Bytes(), &parsed); err != nil {
		t.Fatalf("json: %v\n%s", err, jsonOut.String())
	}
	if len(parsed) != 2 || parsed[0].ID != "7" || parsed[0].State != "JOB_STATE_RUNNING" || parsed[0].Demand["mem"] != 4<<30 ||
		parsed[1].Charged != "1500000" || parsed[1].Failed != "0" {
		t.Fatalf("json %+v", parsed)
	}
}
