package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// knownServersFile remembers the gossip addresses of the servers this one
// has seen, so a restarted server finds the pool again even when its
// --join list is empty or stale (Serf's snapshot does the same for Consul).
// Without it, a restarted server would rejoin Raft but not gossip, and
// could not learn where to forward writes.
const knownServersFile = "known-servers.json"

func loadKnownServers(dataDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, knownServersFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read known servers: %w", err)
	}
	var addrs []string
	if err := json.Unmarshal(b, &addrs); err != nil {
		// A damaged hint is not worth refusing to start over; the --join
		// list still works.
		return nil, nil
	}
	return addrs, nil
}

func saveKnownServers(dataDir string, addrs []string) error {
	b, err := json.Marshal(addrs)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, knownServersFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, knownServersFile))
}

// rememberServersLoop saves the gossip addresses of the other live servers
// whenever the set changes.
func (s *Server) rememberServersLoop(ctx context.Context) {
	changed := s.gossip.subscribe()
	defer s.gossip.unsubscribe(changed)
	var saved []string
	for {
		var addrs []string
		for _, m := range s.gossip.Servers() {
			if m.ID != s.cfg.NodeID {
				addrs = append(addrs, m.Gossip)
			}
		}
		slices.Sort(addrs)
		if len(addrs) > 0 && !slices.Equal(addrs, saved) {
			if err := saveKnownServers(s.cfg.DataDir, addrs); err != nil {
				s.logger.Warn("cannot save known servers", "error", err)
			} else {
				saved = addrs
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// rejoinInterval is how often a server that belongs to a group but hears
// no leader tries the gossip pool again.
const rejoinInterval = 2 * time.Second

// rejoinLoop heals the case gossip alone does not: a server that belongs
// to a Raft group but hears from no leader, because its peers do not know
// where it is (it restarted on a new address before they declared its old
// self dead) or because the pool split. It joins the configured and
// remembered servers again; once they accept it, the leader learns its
// address from gossip and updates the Raft configuration.
func (s *Server) rejoinLoop(ctx context.Context) {
	tick := time.NewTicker(rejoinInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if s.raft.LastIndex() == 0 || s.Leader() != "" {
			continue
		}
		known, _ := loadKnownServers(s.cfg.DataDir)
		addrs := joinList(s.cfg.Join, known)
		if len(addrs) == 0 {
			continue
		}
		if n, err := s.gossip.join(addrs); err != nil && n == 0 {
			s.logger.Debug("rejoining gossip pool failed", "error", err)
		}
	}
}
