package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
)

// An operator moves one server of a running group to raft-wal as
// deploy/README.md says: stop it, 'longfair convert-log', start it with
// --raft-log-store wal. The group keeps working with the two stores side
// by side; the moved server's /metrics shows raft-wal's counters instead
// of raft-boltdb's statistics; and at the end every replica holds the same
// state and its ledger verifies.
func TestAServerMovesToTheWALLogStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startCluster(ctx, t, 3)
	acct, user := c.account(ctx, "wal")
	c.submit(ctx, acct, user, "before", 1, map[string]float64{"cpu": 1}, time.Minute, "true")

	leader := c.leader(ctx)
	s := c.servers[0]
	if s == leader {
		s = c.servers[1]
	}
	s.Signal(syscall.SIGTERM)
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatalf("%s did not stop", s.ID)
	}
	s.dead = true
	out, err := exec.CommandContext(ctx, binary, "convert-log", "--data-dir", filepath.Join(c.dir, s.ID), "--to", "wal").CombinedOutput()
	if err != nil {
		t.Fatalf("convert-log: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "from boltdb to wal") {
		t.Fatalf("convert-log says %q", out)
	}
	s.Args = append(s.Args, "--raft-log-store", "wal")
	c.restartServer(ctx, t, s)
	c.submit(ctx, acct, user, "after", 1, map[string]float64{"cpu": 1}, time.Minute, "true")
	// The submission is committed once the leader and the other follower
	// hold it; the moved server appends it when the leader reaches it.
	leader = c.leader(ctx)
	testcluster.WaitFor(ctx, t, s.ID+" to apply what the leader applied", func() bool {
		want, err1 := appliedIndex(ctx, leader.HTTP)
		got, err2 := appliedIndex(ctx, s.HTTP)
		return err1 == nil && err2 == nil && got >= want
	})

	for _, p := range c.live() {
		fams := scrapeProc(ctx, t, p.HTTP)
		wal, bolt := fams["longfair_raft_wal_log_appends"], fams["longfair_raft_boltdb_numFreePages"]
		if p == s {
			if len(wal.GetMetric()) == 0 || wal.GetMetric()[0].GetCounter().GetValue() == 0 {
				t.Errorf("%s, moved to wal, shows no raft-wal log appends on /metrics", p.ID)
			}
			if bolt != nil {
				t.Errorf("%s, moved to wal, still shows raft-boltdb's statistics", p.ID)
			}
		} else if wal != nil || bolt == nil {
			t.Errorf("%s, on boltdb, shows raft-wal counters (%v) or no raft-boltdb statistics (%v)", p.ID, wal != nil, bolt == nil)
		}
	}
	c.checkReplicas(ctx, t)
}
