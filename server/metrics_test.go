package server_test

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ledger"
)

// withHTTP gives each test server an operations listener on a free port.
func withHTTP(cfg *server.Config) { cfg.HTTPAddr = "127.0.0.1:0" }

// scrapeMetrics reads a server's /metrics over HTTP and parses it with
// the Prometheus text parser (what promtool and Prometheus use), with the
// strict legacy name rules.
func scrapeMetrics(t testing.TB, s *server.Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", s.NodeID(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s", s.NodeID(), resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the /metrics output of %s does not parse as Prometheus text: %v", s.NodeID(), err)
	}
	return fams
}

// sample returns the value of the series of name whose labels include
// want, and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if have[want[i]] != want[i+1] {
				continue next
			}
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// mustSample is sample for a series the test needs.
func mustSample(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := sample(fams, name, labels...)
	if !ok {
		t.Fatalf("no series %s%v in /metrics", name, labels)
	}
	return v
}

func closeTo(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestMetricsParseAndAgreeWithTheLedger runs an account's tasks on a
// worker, stops the worker and queues another account's tasks, so that
// nothing moves any more, then checks /metrics against references the
// test computes on its own: SU from the journal recomputed by Verify, Ü
// from the tasks' own placement and end times, β from Ü and the baseline,
// queue depth from what was submitted, placements from the tasks that ran.
func TestMetricsParseAndAgreeWithTheLedger(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 1, withHTTP)
	leader := c.WaitLeader(ctx)
	astro, astroUser := setupAccount(ctx, t, c, "astro")
	bio, bioUser := setupAccount(ctx, t, c, "bio")
	w := testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, leader, "w1")

	jobs := longfairv1.NewJobsClient(c.Conn(leader))
	const ran = 6
	resp, err := jobs.SubmitJob(ctx, testcluster.ShellJob(astro, astroUser, "ran", ran, map[string]float64{"cpu": 1}, time.Minute, "sleep 0.05"))
	if err != nil {
		t.Fatal(err)
	}
	done := resp.GetJob().GetId()
	if j := testcluster.WaitJobEnded(ctx, t, c, done); j.GetSucceededTasks() != ran {
		t.Fatalf("job = %v", j)
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	w.Shutdown(sctx)
	scancel()
	testcluster.WaitFor(ctx, t, "w1 down", func() bool {
		n := leader.FSM().Nodes()
		return len(n) == 1 && !n[0].Up
	})
	const queued = 3
	if _, err := jobs.SubmitJob(ctx, testcluster.ShellJob(bio, bioUser, "queued", queued, map[string]float64{"cpu": 1}, time.Minute, "true")); err != nil {
		t.Fatal(err)
	}

	fams := scrapeMetrics(t, leader)

	// Raft: a one-server group whose only member leads and is ready.
	for state, want := range map[string]float64{"leader": 1, "follower": 0, "candidate": 0, "shutdown": 0} {
		if got := mustSample(t, fams, "longfair_raft_state", "state", state); got != want {
			t.Errorf("raft_state{state=%q} = %v, want %v", state, got, want)
		}
	}
	for name, want := range map[string]float64{"longfair_raft_voters": 1, "longfair_raft_has_leader": 1, "longfair_ready": 1, "longfair_fsm_healthy": 1} {
		if got := mustSample(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if applied, commit := mustSample(t, fams, "longfair_raft_applied_index"), mustSample(t, fams, "longfair_raft_commit_index"); applied < 10 || applied > commit {
		t.Errorf("raft applied index %v, commit index %v", applied, commit)
	}
	// Six creations and two submissions at least went through Raft here.
	if n := mustSample(t, fams, "longfair_raft_commit_seconds"); n < 8 {
		t.Errorf("raft_commit_seconds counted %v commits, want at least 8", n)
	}

	// Scheduling: every task ran once, so the placements the passes
	// proposed, less those the ledger dropped, are the tasks.
	placed := mustSample(t, fams, "longfair_sched_placements_total") - mustSample(t, fams, "longfair_sched_placements_dropped_total")
	if placed != ran {
		t.Errorf("placements proposed less dropped = %v, want the %d tasks that ran", placed, ran)
	}
	if n := mustSample(t, fams, "longfair_sched_pass_seconds"); n < 1 {
		t.Error("no scheduling pass was observed")
	}

	// Queue depth and nodes.
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"longfair_queue_pending_tasks", nil, queued},
		{"longfair_queue_running_tasks", nil, 0},
		{"longfair_account_pending_tasks", []string{"account", bio}, queued},
		{"longfair_account_pending_tasks", []string{"account", astro}, 0},
		{"longfair_nodes", []string{"state", "up"}, 0},
		{"longfair_nodes", []string{"state", "down"}, 1},
		{"longfair_settings_info", []string{"policy", "hmrf", "window", "none"}, 1},
	} {
		if got := mustSample(t, fams, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}

	// SU: the balances recomputed from the hash-chained journal.
	report, err := leader.FSM().Verify()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range report.Accounts {
		for _, m := range []struct {
			name string
			want ledger.SU
		}{
			{"longfair_account_su_granted", b.Granted}, {"longfair_account_su_charged", b.Charged},
			{"longfair_account_su_held", b.Held}, {"longfair_account_su_expired", b.Expired},
			{"longfair_account_su_available", b.Available},
		} {
			if got, want := mustSample(t, fams, m.name, "account", b.Account), float64(m.want)/1e6; !closeTo(got, want) {
				t.Errorf("%s{account=%q} = %v, the journal says %v", m.name, b.Account, got, want)
			}
		}
	}

	// Ü and charges from the tasks themselves: each held one cpu from its
	// placement (or, for one that waited in its node's look-ahead queue,
	// its start) to its end, and was charged on its own.
	var cpuSeconds float64
	var charged int64
	for _, task := range testcluster.AllTasks(ctx, t, c, done) {
		from := task.GetAssignedAt()
		if task.GetQueued() {
			from = task.GetStartedAt()
		}
		cpuSeconds += task.GetEndedAt().AsTime().Sub(from.AsTime()).Seconds()
		charged += task.GetChargedMicroSu()
	}
	if got := mustSample(t, fams, "longfair_account_usage_resource_seconds", "account", astro, "resource", "cpu"); math.Abs(got-cpuSeconds) > 1e-6 {
		t.Errorf("Ü of %s in cpu = %v s, its tasks held cpu for %v s", astro, got, cpuSeconds)
	}
	if got := mustSample(t, fams, "longfair_account_su_charged", "account", astro); !closeTo(got, float64(charged)/1e6) || charged == 0 {
		t.Errorf("su_charged of %s = %v, its tasks were charged %v SU", astro, got, float64(charged)/1e6)
	}
	if got := mustSample(t, fams, "longfair_account_usage_resource_seconds", "account", bio, "resource", "cpu"); got != 0 {
		t.Errorf("Ü of %s, which never ran, = %v", bio, got)
	}

	// β is the smallest ratio of Ü to the baseline over resources with a
	// baseline (formulas 2-3 of the paper), from the series beside it.
	for _, acc := range []string{astro, bio} {
		want, has := math.Inf(1), false
		for _, r := range []string{"cpu", "mem"} {
			base, ok := sample(fams, "longfair_account_baseline_resource_seconds", "account", acc, "resource", r)
			if !ok || base <= 0 {
				continue
			}
			use := mustSample(t, fams, "longfair_account_usage_resource_seconds", "account", acc, "resource", r)
			want, has = math.Min(want, use/base), true
		}
		got, ok := sample(fams, "longfair_account_beta", "account", acc)
		if ok != has || has && !closeTo(got, want) {
			t.Errorf("beta of %s = %v (present %v), want %v (present %v)", acc, got, ok, want, has)
		}
	}
	if _, ok := sample(fams, "longfair_account_beta", "account", astro); !ok {
		t.Errorf("%s ran with a baseline and has no beta series", astro)
	}

	// Weights as the API reports them.
	for _, acc := range []string{astro, bio} {
		a, err := longfairv1.NewAccountsClient(c.Conn(leader)).GetAccount(ctx, &longfairv1.GetAccountRequest{Name: acc})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustSample(t, fams, "longfair_account_weight", "account", acc); got != a.GetWeight() {
			t.Errorf("weight of %s = %v, the API says %v", acc, got, a.GetWeight())
		}
	}
	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s has no HELP text", name)
		}
	}
	t.Logf("%d metric families", len(fams))
}
