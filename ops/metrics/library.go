package metrics

import (
	"fmt"

	gometrics "github.com/hashicorp/go-metrics/compat"
	gmprometheus "github.com/hashicorp/go-metrics/compat/prometheus"
)

// RouteLibraryMetrics makes this registry the sink of go-metrics, through
// which hashicorp/raft and raft-boltdb time what they do, so that
// /metrics shows where a commit's time goes beside longfair's own
// figures: each log append with its disk syncs
// (longfair_raft_boltdb_storeLogs, on the leader and on every follower),
// the leader's dispatch of new entries (longfair_raft_leader_dispatchLog),
// each AppendEntries round trip to a follower
// (longfair_raft_replication_appendEntries_rpc{peer_id}), an entry's time
// from dispatch to commit (longfair_raft_commitTime), each apply to the
// state (longfair_raft_fsm_apply), elections, snapshots and the log
// store's page and transaction statistics. Timers are summaries in
// milliseconds, go-metrics' unit (longfair's own are in seconds). No
// series expires: go-metrics' sink would drop one not updated for a
// minute, counters included, so an election counter would vanish and
// come back from zero, and an alert on its increase would never fire.
//
// go-metrics has one sink per process, so this is for a process that runs
// one server ('longfair server'). The function it returns, called when
// the server stops, sends go-metrics to a sink that drops everything and
// takes the library's series off this registry.
func (m *Metrics) RouteLibraryMetrics() (undo func(), err error) {
	sink, err := gmprometheus.NewPrometheusSinkFrom(gmprometheus.PrometheusOpts{
		Registerer: m.reg,
		Expiration: 0, // never
		Name:       Namespace + "_library_metrics",
	})
	if err != nil {
		return nil, fmt.Errorf("register the Raft library's metrics: %w", err)
	}
	cfg := gometrics.DefaultConfig(Namespace)
	// The registry's own Go collector reports the runtime; go-metrics'
	// would poll it every second in a goroutine of its own.
	cfg.EnableRuntimeMetrics = false
	cfg.EnableHostname = false
	if _, err := gometrics.NewGlobal(cfg, sink); err != nil {
		m.reg.Unregister(sink)
		return nil, fmt.Errorf("route the Raft library's metrics: %w", err)
	}
	return func() {
		_, _ = gometrics.NewGlobal(cfg, &gometrics.BlackholeSink{})
		m.reg.Unregister(sink)
	}, nil
}
