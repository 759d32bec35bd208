package server

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// readyMaxLag is how many committed entries a follower may have left to
// apply and still count as caught up. Under load a follower is always a
// few batches behind the commit index; one that is thousands behind
// (restarting, or installing a snapshot) would answer reads from old state.
const readyMaxLag = 1024

// Ready reports nil when this server can serve requests, or why not: its
// state store failed, Raft is not running, no leader is known (the group
// has lost its quorum or is electing), the leader has not yet applied what
// earlier leaders committed, or this follower is catching up. /readyz
// answers with it; /healthz only says the process runs.
func (s *Server) Ready() error {
	if err := s.fsm.Err(); err != nil {
		return fmt.Errorf("the state store failed (%v): restart the server to catch up from the log", err)
	}
	if d := s.fsm.Diverged(); d != nil {
		return d
	}
	if s.raft == nil {
		return errors.New("the server has not started raft yet")
	}
	state := s.raft.State()
	if state == raft.Shutdown {
		return errors.New("raft is shut down: the server is stopping")
	}
	_, leader := s.raft.LeaderWithID()
	switch {
	case leader == "":
		return fmt.Errorf("no raft leader is known (this server is a %s): the group is electing one or has lost its quorum; check that a majority of servers is up", state)
	case string(leader) == s.cfg.NodeID:
		if !s.leaderReady.Load() {
			return errors.New("this server was just elected leader and is still applying what earlier leaders committed")
		}
		return nil
	}
	commit, applied := s.raft.CommitIndex(), s.raft.AppliedIndex()
	if commit > applied+readyMaxLag {
		return fmt.Errorf("catching up: applied index %d is %d entries behind the commit index %d", applied, commit-applied, commit)
	}
	return nil
}
