package metrics

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
)

// What hashicorp/raft and raft-boltdb report through go-metrics shows on
// /metrics once routed, timers as summaries in milliseconds with their
// labels; once undone, nothing more arrives and the series are gone.
func TestLibraryMetricsShowOnTheRegistry(t *testing.T) {
	m := New()
	undo, err := m.RouteLibraryMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(undo) // again at the end is harmless
	routed := gometrics.Default()
	srv := httptest.NewServer(m.Handler(slog.New(slog.DiscardHandler)))
	defer srv.Close()

	// As raft-boltdb and hashicorp/raft report them.
	gometrics.MeasureSince([]string{"raft", "boltdb", "storeLogs"}, time.Now().Add(-3*time.Millisecond))
	gometrics.MeasureSince([]string{"raft", "boltdb", "storeLogs"}, time.Now().Add(-5*time.Millisecond))
	gometrics.MeasureSinceWithLabels([]string{"raft", "replication", "appendEntries", "rpc"}, time.Now().Add(-2*time.Millisecond),
		[]gometrics.Label{{Name: "peer_id", Value: "s2"}})
	gometrics.IncrCounter([]string{"raft", "apply"}, 1)

	fams := scrape(t, srv.URL)
	store := fams["longfair_raft_boltdb_storeLogs"]
	if store == nil || len(store.GetMetric()) != 1 {
		t.Fatalf("no longfair_raft_boltdb_storeLogs summary on /metrics: %v", store)
	}
	s := store.GetMetric()[0].GetSummary()
	if s.GetSampleCount() != 2 || s.GetSampleSum() < 8 || s.GetSampleSum() > 1000 {
		t.Fatalf("storeLogs: %d samples summing to %v, want 2 summing to about 8 (milliseconds)", s.GetSampleCount(), s.GetSampleSum())
	}
	rpc := fams["longfair_raft_replication_appendEntries_rpc"]
	if rpc == nil || len(rpc.GetMetric()) != 1 || len(rpc.GetMetric()[0].GetLabel()) != 1 || rpc.GetMetric()[0].GetLabel()[0].GetValue() != "s2" {
		t.Fatalf("appendEntries rpc: %v, want one series labelled peer_id=s2", rpc)
	}
	if c := fams["longfair_raft_apply"]; c == nil || c.GetMetric()[0].GetCounter().GetValue() != 1 {
		t.Fatalf("raft apply counter: %v, want 1", c)
	}
	// longfair's own are still there.
	if fams["longfair_raft_commit_seconds"] == nil {
		t.Fatal("longfair's own commit histogram is missing beside the library's")
	}

	undo()
	if gometrics.Default() == routed {
		t.Fatal("go-metrics still reports to this registry's sink after undo")
	}
	gometrics.MeasureSince([]string{"raft", "boltdb", "storeLogs"}, time.Now())
	if fams := scrape(t, srv.URL); fams["longfair_raft_boltdb_storeLogs"] != nil {
		t.Fatalf("the library's series are still served after undo: %v", fams["longfair_raft_boltdb_storeLogs"])
	}
}
