package server

import (
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"
)

// raftCollector reads this server's Raft state at scrape time.
type raftCollector struct{ s *Server }

var (
	raftStateDesc = metricDesc("raft", "state",
		"1 for this server's Raft state (leader, follower, candidate, shutdown), 0 for the others.", "state")
	raftTermDesc      = metricDesc("raft", "term", "This server's current Raft term.")
	raftLastIndexDesc = metricDesc("raft", "last_log_index", "Index of the last entry in this server's Raft log.")
	raftCommitDesc    = metricDesc("raft", "commit_index", "Highest Raft log index this server knows to be committed.")
	raftAppliedDesc   = metricDesc("raft", "applied_index", "Highest Raft log index this server has applied to its state.")
	raftContactDesc   = metricDesc("raft", "last_contact_seconds",
		"Seconds since this follower last heard from the leader (absent on the leader and before any contact).")
	raftVotersDesc    = metricDesc("raft", "voters", "Voting servers in the Raft configuration this server knows.")
	raftHasLeaderDesc = metricDesc("raft", "has_leader", "1 when this server knows a leader, 0 when the group has none it can see.")
	readyDesc         = metricDesc("", "ready", "1 when this server is ready to serve (what GET /readyz answers), else 0.")
)

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{raftStateDesc, raftTermDesc, raftLastIndexDesc, raftCommitDesc,
		raftAppliedDesc, raftContactDesc, raftVotersDesc, raftHasLeaderDesc, readyDesc} {
		ch <- d
	}
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.s.raft
	if r == nil {
		return // not started: there is no Raft state to report
	}
	state := r.State()
	for _, st := range []raft.RaftState{raft.Leader, raft.Follower, raft.Candidate, raft.Shutdown} {
		ch <- prometheus.MustNewConstMetric(raftStateDesc, prometheus.GaugeValue, boolGauge(st == state), strings.ToLower(st.String()))
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(raftTermDesc, float64(r.CurrentTerm()))
	gauge(raftLastIndexDesc, float64(r.LastIndex()))
	gauge(raftCommitDesc, float64(r.CommitIndex()))
	gauge(raftAppliedDesc, float64(r.AppliedIndex()))
	if last := r.LastContact(); state == raft.Follower && !last.IsZero() {
		gauge(raftContactDesc, time.Since(last).Seconds())
	}
	if f := r.GetConfiguration(); f.Error() == nil {
		voters := 0
		for _, srv := range f.Configuration().Servers {
			if srv.Suffrage == raft.Voter {
				voters++
			}
		}
		gauge(raftVotersDesc, float64(voters))
	}
	_, leader := r.LeaderWithID()
	gauge(raftHasLeaderDesc, boolGauge(leader != ""))
	gauge(readyDesc, boolGauge(c.s.Ready() == nil))
}
