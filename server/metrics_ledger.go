package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/longfair/longfair/ledger"
)

// ledgerCollector computes the cluster and per-account metrics from this
// server's replica of the FSM at scrape time, so they are never kept
// twice and never disagree with the API. Every server reports its own
// replica: a follower's values trail the leader's by its replication lag
// (see longfair_raft_applied_index). Aggregate them by picking one
// server, for example the one with longfair_raft_state{state="leader"} == 1.
type ledgerCollector struct{ s *Server }

var (
	fsmHealthyDesc  = metricDesc("fsm", "healthy", "1 while this server's state store applies the log, 0 once it failed (restart the server).")
	fsmDivergedDesc = metricDesc("fsm", "diverged", "1 while this server's state differs from the group's at the last compared checkpoint (restore it), else 0.")
	fsmAppliedDesc  = metricDesc("fsm", "applied_index", "Raft index of the last entry this server's state store holds durably.")
	settingsDesc    = metricDesc("", "settings_info", "Always 1; the labels name the scheduling policy, fairness window and placement in force.",
		"policy", "window", "placement")
	pendingTotalDesc = metricDesc("queue", "pending_tasks", "Tasks waiting to be placed, over all accounts (the queue depth).")
	runningTotalDesc = metricDesc("queue", "running_tasks", "Tasks placed or running, over all accounts.")
	nodesDesc        = metricDesc("", "nodes", "Worker nodes by state: up or down.", "state")
	capacityDesc     = metricDesc("cluster", "capacity", "Capacity of the up worker nodes, per resource (cpu cores, mem bytes, mic devices, ...).", "resource")
	freeDesc         = metricDesc("cluster", "free", "Unallocated capacity of the up worker nodes, per resource.", "resource")

	accWeightDesc   = metricDesc("account", "weight", "The account's weight w_i used by the policies.", "account")
	accShareDesc    = metricDesc("account", "share", "The account's non-sharing partition S_i = R·w_i/Σw, per resource.", "account", "resource")
	accUsageDesc    = metricDesc("account", "usage_resource_seconds", "Ü_i: the account's accumulated usage ∫U_i dt under the fairness window, per resource, in resource units × seconds.", "account", "resource")
	accBaselineDesc = metricDesc("account", "baseline_resource_seconds", "The integral of the account's non-sharing baseline under the fairness window, per resource.", "account", "resource")
	accBetaDesc     = metricDesc("account", "beta", "β_i, the account's sharing degree: below 1 is sharing loss. Absent while the account has no baseline (nothing to make up).", "account")
	accAllocDesc    = metricDesc("account", "allocation", "U_i: what the account's running tasks hold now, per resource.", "account", "resource")
	accPendingDesc  = metricDesc("account", "pending_tasks", "The account's tasks waiting to be placed.", "account")
	accRunningDesc  = metricDesc("account", "running_tasks", "The account's tasks placed or running.", "account")
	accWaitingDesc  = metricDesc("account", "waiting_seconds", "How long the account has waited for an allocation while it had pending tasks (0 with none pending).", "account")
	accGrantedDesc  = metricDesc("account", "su_granted", "Service units ever granted to the account.", "account")
	accChargedDesc  = metricDesc("account", "su_charged", "Service units charged to the account for tasks that ran.", "account")
	accHeldDesc     = metricDesc("account", "su_held", "Service units reserved by holds of queued and running jobs.", "account")
	accExpiredDesc  = metricDesc("account", "su_expired", "Service units of expired grants that were never used.", "account")
	accAvailDesc    = metricDesc("account", "su_available", "Service units available for new jobs: the SU balance.", "account")
)

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{fsmHealthyDesc, fsmDivergedDesc, fsmAppliedDesc, settingsDesc, pendingTotalDesc, runningTotalDesc,
		nodesDesc, capacityDesc, freeDesc, accWeightDesc, accShareDesc, accUsageDesc, accBaselineDesc, accBetaDesc,
		accAllocDesc, accPendingDesc, accRunningDesc, accWaitingDesc, accGrantedDesc, accChargedDesc, accHeldDesc,
		accExpiredDesc, accAvailDesc} {
		ch <- d
	}
}

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.s.fsm
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(fsmHealthyDesc, boolGauge(f.Err() == nil))
	gauge(fsmDivergedDesc, boolGauge(f.Diverged() != nil))
	applied, _ := f.AppliedIndex()
	gauge(fsmAppliedDesc, float64(applied))

	at := now()
	report, err := f.Fairness("", at)
	if err != nil {
		// The state is closed (shutting down, or swapping in a restored
		// snapshot): report only what is known for sure.
		c.s.logger.Debug("metrics: ledger state not readable", "error", err)
		return
	}
	settings := f.Settings()
	gauge(settingsDesc, 1, string(settings.Policy), settings.Window.String(), string(settings.Placement))

	var pending, running int64
	for _, a := range report.Accounts {
		name := a.Account
		pending += a.Pending
		running += a.Running
		gauge(accWeightDesc, a.Weight, name)
		perResource(gauge, accShareDesc, a.Share, name)
		perResource(gauge, accUsageDesc, a.Usage, name)
		perResource(gauge, accBaselineDesc, a.Baseline, name)
		perResource(gauge, accAllocDesc, a.Allocation, name)
		if a.HasBeta {
			gauge(accBetaDesc, a.Beta, name)
		}
		gauge(accPendingDesc, float64(a.Pending), name)
		gauge(accRunningDesc, float64(a.Running), name)
		gauge(accWaitingDesc, a.Waiting.Seconds(), name)
		b, err := f.Balance(name, at)
		if err != nil {
			continue // deleted between the two reads
		}
		gauge(accGrantedDesc, suFloat(b.Granted), name)
		gauge(accChargedDesc, suFloat(b.Charged), name)
		gauge(accHeldDesc, suFloat(b.Held), name)
		gauge(accExpiredDesc, suFloat(b.Expired), name)
		gauge(accAvailDesc, suFloat(b.Available), name)
	}
	gauge(pendingTotalDesc, float64(pending))
	gauge(runningTotalDesc, float64(running))

	var up, down float64
	free := make(map[string]float64, len(report.Resources))
	for _, r := range report.Resources {
		free[r] = 0
	}
	for _, n := range f.Nodes() {
		if !n.Up {
			down++
			continue
		}
		up++
		for r, q := range n.Free {
			free[r] += q
		}
	}
	gauge(nodesDesc, up, "up")
	gauge(nodesDesc, down, "down")
	perResource(gauge, capacityDesc, report.Capacity)
	perResource(gauge, freeDesc, free)
}

// perResource writes one series per resource, with the resource label
// after the given labels (the registry sorts the series).
func perResource(gauge func(*prometheus.Desc, float64, ...string), d *prometheus.Desc, v map[string]float64, labels ...string) {
	for r, q := range v {
		gauge(d, q, append(labels[:len(labels):len(labels)], r)...)
	}
}

// suFloat converts micro-SU to SU.
func suFloat(s ledger.SU) float64 { return float64(s) / float64(ledger.MicroPerSU) }
