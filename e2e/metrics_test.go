package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// An operator sees where a commit's time goes on each server's /metrics:
// 'longfair server' routes hashicorp/raft's and raft-boltdb's own timings
// there. After one submission the leader shows its log appends, their
// dispatch and the commit, and its AppendEntries round trips to each
// follower; each follower shows its own log appends; every server shows
// its log store's page and transaction statistics.
func TestServersShowRaftsOwnTimings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	acct, user := c.account(ctx, "obs")
	c.submit(ctx, acct, user, "timed", 1, map[string]float64{"cpu": 1}, time.Minute, "true")
	leader := c.leader(ctx)
	for _, s := range c.live() {
		want := []string{"longfair_raft_rpc_appendEntries_storeLogs"}
		if s.ID == leader.ID {
			want = []string{"longfair_raft_boltdb_storeLogs", "longfair_raft_leader_dispatchLog", "longfair_raft_commitTime",
				"longfair_raft_replication_appendEntries_rpc"}
		}
		fams := scrapeProc(ctx, t, s.HTTP)
		// The log store's own statistics, reported from the start.
		if fams["longfair_raft_boltdb_numFreePages"] == nil || fams["longfair_raft_boltdb_txstats_write"] == nil {
			t.Errorf("%s: /metrics has no raft-boltdb store statistics (numFreePages, txstats_write)", s.ID)
		}
		for _, name := range want {
			f := fams[name]
			if f == nil || len(f.GetMetric()) == 0 {
				t.Errorf("%s: /metrics has no %s", s.ID, name)
				continue
			}
			for _, m := range f.GetMetric() {
				if sm := m.GetSummary(); sm.GetSampleCount() == 0 || sm.GetSampleSum() <= 0 {
					t.Errorf("%s: %s %v has %d samples summing to %v ms, want some time measured", s.ID, name, m.GetLabel(), sm.GetSampleCount(), sm.GetSampleSum())
				}
			}
		}
		if s.ID == leader.ID {
			if peers := len(fams["longfair_raft_replication_appendEntries_rpc"].GetMetric()); peers != 2 {
				t.Errorf("the leader times AppendEntries to %d followers, want 2 (one series per peer_id)", peers)
			}
		}
	}
}

// scrapeProc reads a server process's /metrics and parses it as
// Prometheus does.
func scrapeProc(ctx context.Context, t *testing.T, httpAddr string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+httpAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", httpAddr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", httpAddr, resp.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the /metrics of %s does not parse as Prometheus text: %v", httpAddr, err)
	}
	return fams
}
