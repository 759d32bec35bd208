package server

import (
	"time"

	"github.com/longfair/longfair/ops/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics is this server's metrics registry: what GET /metrics on its
// HTTP listener serves. The Raft and ledger metrics in it are read at
// scrape time from Raft and from this server's replica of the FSM; the
// scheduling and commit metrics count what this server did while it led.
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// libraryMetricsInterval is how often raft-boltdb reports its store's
// statistics (free pages, the freelist's size, transactions).
const libraryMetricsInterval = 5 * time.Second

// newServerMetrics builds the registry with the server's scrape-time
// collectors.
func newServerMetrics(s *Server) (*metrics.Metrics, error) {
	m := metrics.New()
	if err := m.Register(&raftCollector{s: s}, &ledgerCollector{s: s}); err != nil {
		return nil, err
	}
	return m, nil
}

// metricDesc is a prometheus.Desc of a longfair metric.
func metricDesc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, subsystem, name), help, labels, nil)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
