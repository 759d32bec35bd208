package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every longfair metric name.
const Namespace = "longfair"

// Metrics is one process's Prometheus registry and the instruments its
// code observes as things happen: scheduling passes and Raft commits.
// Everything that can be read from state (Raft indexes, queue depth,
// per-account β, Ü and SU) is not kept here but computed at scrape time by
// collectors registered with Register, so nothing is counted twice.
//
// The Observe methods may be called on a nil *Metrics and then do nothing,
// so code paths that run without metrics (benchmarks, tools) need no checks.
type Metrics struct {
	reg *prometheus.Registry

	passSeconds   prometheus.Histogram
	placements    prometheus.Counter
	dropped       prometheus.Counter
	commitSeconds prometheus.Histogram
}

// New returns a fresh registry holding the Go runtime and process
// collectors and longfair's event instruments.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		passSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "sched", Name: "pass_seconds",
			Help: "Time of one scheduling pass on the leader: reading the view and running the policy engine, until its placements are proposed.",
			// 100µs to about 26s: a pass over a handful of accounts takes
			// well under a millisecond, one over thousands of accounts and
			// nodes can take seconds.
			Buckets: prometheus.ExponentialBuckets(100e-6, 4, 10),
		}),
		placements: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "sched", Name: "placements_total",
			Help: "Task placements the scheduling passes of this server proposed while it led.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "sched", Name: "placements_dropped_total",
			Help: "Proposed placements the ledger refused as stale (node gone, capacity taken, task no longer pending).",
		}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "raft", Name: "commit_seconds",
			Help: "Time from proposing a log entry on the leader (one command, or several committed together) until a quorum stored it and the leader's state applied it.",
			// 250µs to about 4s; a healthy LAN group commits in milliseconds.
			Buckets: prometheus.ExponentialBuckets(250e-6, 2, 15),
		}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.passSeconds, m.placements, m.dropped, m.commitSeconds,
	)
	return m
}

// Register adds collectors that compute their metrics at scrape time. Two
// collectors that describe the same metric are refused.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return fmt.Errorf("register metrics collector: %w", err)
		}
	}
	return nil
}

// Gatherer is the registry, for reading the metrics without HTTP.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// ObservePass records one scheduling pass that ran the policy engine: how
// long it took and how many placements it proposed.
func (m *Metrics) ObservePass(d time.Duration, placements int) {
	if m == nil {
		return
	}
	m.passSeconds.Observe(d.Seconds())
	m.placements.Add(float64(max(placements, 0)))
}

// ObserveDropped records placements the ledger refused as stale.
func (m *Metrics) ObserveDropped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.dropped.Add(float64(n))
}

// ObserveCommit records how long one proposed command took to commit and
// apply.
func (m *Metrics) ObserveCommit(d time.Duration) {
	if m == nil {
		return
	}
	m.commitSeconds.Observe(d.Seconds())
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it). A collector that fails is
// logged and left out; the rest of the scrape is still served.
func (m *Metrics) Handler(logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          promLogger{logger},
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
		// Bounds concurrent scrapes, so a misconfigured scraper cannot
		// make the server compute the per-account metrics many times at once.
		MaxRequestsInFlight: 4,
		Timeout:             30 * time.Second,
	})
}

// promLogger passes promhttp's error log to slog.
type promLogger struct{ log *slog.Logger }

func (p promLogger) Println(v ...any) { p.log.Warn("serving metrics", "error", fmt.Sprint(v...)) }
