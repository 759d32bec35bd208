package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches url and parses it with the Prometheus text parser, which
// is what promtool and the Prometheus server use.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the /metrics output does not parse as Prometheus text: %v", err)
	}
	return fams
}

func TestMetricsRecordPassesAndCommits(t *testing.T) {
	m := New()
	passes := []struct {
		d          time.Duration
		placements int
	}{{3 * time.Millisecond, 5}, {time.Second, 2}, {50 * time.Microsecond, 0}}
	for _, p := range passes {
		m.ObservePass(p.d, p.placements)
	}
	m.ObserveDropped(1)
	m.ObserveDropped(0)
	commits := []time.Duration{time.Millisecond, 2 * time.Millisecond, 9 * time.Second}
	for _, d := range commits {
		m.ObserveCommit(d)
	}
	srv := httptest.NewServer(NewHTTPHandler(m, func() error { return nil }, nil))
	defer srv.Close()
	fams := scrape(t, srv.URL+"/metrics")

	var wantPlacements, wantSum float64
	var passSecs []float64
	for _, p := range passes {
		wantPlacements += float64(p.placements)
		wantSum += p.d.Seconds()
		passSecs = append(passSecs, p.d.Seconds())
	}
	checkHistogram(t, fams, "longfair_sched_pass_seconds", passSecs)
	var commitSecs []float64
	for _, d := range commits {
		commitSecs = append(commitSecs, d.Seconds())
	}
	checkHistogram(t, fams, "longfair_raft_commit_seconds", commitSecs)
	if got := counter(t, fams, "longfair_sched_placements_total"); got != wantPlacements {
		t.Errorf("placements_total = %v, want %v", got, wantPlacements)
	}
	if got := counter(t, fams, "longfair_sched_placements_dropped_total"); got != 1 {
		t.Errorf("placements_dropped_total = %v, want 1", got)
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[name] == nil {
			t.Errorf("the runtime metric %s is missing", name)
		}
	}
}

// checkHistogram compares a parsed histogram with the observations, its
// cumulative bucket counts recomputed from them.
func checkHistogram(t *testing.T, fams map[string]*dto.MetricFamily, name string, obs []float64) {
	t.Helper()
	f := fams[name]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.GetMetric()) != 1 {
		t.Fatalf("%s is not one histogram: %v", name, f)
	}
	h := f.GetMetric()[0].GetHistogram()
	var sum float64
	for _, o := range obs {
		sum += o
	}
	if h.GetSampleCount() != uint64(len(obs)) || math.Abs(h.GetSampleSum()-sum) > 1e-9 {
		t.Errorf("%s count %d sum %v, want %d and %v", name, h.GetSampleCount(), h.GetSampleSum(), len(obs), sum)
	}
	if len(h.GetBucket()) < 5 {
		t.Fatalf("%s has %d buckets", name, len(h.GetBucket()))
	}
	for _, b := range h.GetBucket() {
		var want uint64
		for _, o := range obs {
			if o <= b.GetUpperBound() {
				want++
			}
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("%s bucket le=%v holds %d, want %d", name, b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

func counter(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("%s is missing or has several series: %v", name, f)
	}
	return f.GetMetric()[0].GetCounter().GetValue()
}

func TestMetricsRegistriesAreSeparate(t *testing.T) {
	a, b := New(), New()
	a.ObservePass(time.Millisecond, 3)
	fb, err := b.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fb {
		if f.GetName() == "longfair_sched_placements_total" && f.GetMetric()[0].GetCounter().GetValue() != 0 {
			t.Fatal("a pass observed on one Metrics shows up in another")
		}
	}
	var nilMetrics *Metrics
	nilMetrics.ObservePass(time.Second, 1) // must not panic
	nilMetrics.ObserveCommit(time.Second)
	nilMetrics.ObserveDropped(2)
}

func TestMetricsRegisterScrapeTimeCollectors(t *testing.T) {
	m := New()
	depth := 7.0
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "longfair_test_depth", Help: "a value read at scrape time"}, func() float64 { return depth })
	if err := m.Register(g); err != nil {
		t.Fatal(err)
	}
	again := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "longfair_test_depth", Help: "a value read at scrape time"}, func() float64 { return 0 })
	if err := m.Register(again); err == nil {
		t.Error("a second collector of the same metric was accepted")
	}
	srv := httptest.NewServer(NewHTTPHandler(m, func() error { return nil }, nil))
	defer srv.Close()
	for _, want := range []float64{7, 9} {
		depth = want
		f := scrape(t, srv.URL+"/metrics")["longfair_test_depth"]
		if got := f.GetMetric()[0].GetGauge().GetValue(); got != want {
			t.Errorf("scrape read %v, want the value at scrape time %v", got, want)
		}
	}
}

func TestHealthAndReadiness(t *testing.T) {
	var notReady error
	srv := httptest.NewServer(NewHTTPHandler(New(), func() error { return notReady }, nil))
	defer srv.Close()
	get := func(method, path string) (int, string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("GET", "/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, _ := get("GET", "/readyz"); code != 200 {
		t.Errorf("/readyz while ready = %d", code)
	}
	notReady = errString("no raft leader is known")
	if code, body := get("GET", "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no raft leader") {
		t.Errorf("/readyz while not ready = %d %q, want 503 with the reason", code, body)
	}
	if code, _ := get("GET", "/healthz"); code != 200 {
		t.Errorf("/healthz follows readiness (%d); it must only say the process runs", code)
	}
	if code, _ := get("POST", "/healthz"); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", code)
	}
	if code, _ := get("GET", "/nothing"); code != http.StatusNotFound {
		t.Errorf("GET /nothing = %d, want 404", code)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
